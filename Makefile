# floe — see README.md. Everything here needs only Go and gcc (cgo is used
# by the DuckDB-based test oracle and benchmarks, never by the floe binary).
GO        ?= go
TAGS      ?= duckdb
PKGS      ?= ./...
BIN       ?= bin/floe
FUZZTIME  ?= 10s

.PHONY: all build install test test-s3 versitygw goreleaser release-snapshot release-check image test-short demo bench bench-rewrite profile-doc bench-rewrite-flat bench-layout bench-plan bench-health bench-manifests bench-scale bench-scale-dashboard bench-store fuzz fuzz-long lint clean

all: lint build test

## build: the floe binary, pure Go (CGO_ENABLED=0), compiled as the release's (-trimpath;
## .goreleaser.yaml), so that make release-check reuses its compiled packages
build:
	@test -x $(BIN) || echo "building $(BIN): the first build compiles every dependency and takes a few minutes; later builds take seconds"
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -o $(BIN) ./cmd/floe

## install: the floe binary into $$(go env GOPATH)/bin (or GOBIN), pure Go
install:
	CGO_ENABLED=0 $(GO) install -trimpath -buildvcs=auto ./cmd/floe

## goreleaser: GoReleaser, built from its own tools module (internal/tools/goreleaser,
## kept out of floe's go.mod); the first build compiles for several minutes
GORELEASER ?= $(CURDIR)/bin/goreleaser
goreleaser:
	$(GO) build -C internal/tools/goreleaser -o $(GORELEASER) github.com/goreleaser/goreleaser/v2

## release-snapshot: every release archive (linux, darwin × amd64, arm64: static binaries) and
## their checksums into dist/, as a release would make them, nothing published; then checked
## (.ci/check-release: the host's binary names this commit, every archive is there and matches
## its checksum). Four cross builds of every package: tens of minutes on two cores
release-snapshot: goreleaser
	$(GORELEASER) release --snapshot --clean --skip=publish
	.ci/check-release --all

## release-check: what CI runs instead: GoReleaser checks .goreleaser.yaml, builds the host's
## target alone with the release's flags, and .ci/check-release checks that binary
release-check: goreleaser
	$(GORELEASER) check
	$(GORELEASER) build --snapshot --clean --single-target
	.ci/check-release

## image: the container image (Dockerfile: distroless static, nonroot) from a static linux
## binary built with the release's flags; needs a container builder (docker) that answers
IMAGE      ?= floe:dev
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
DOCKER     ?= docker
image:
	@$(DOCKER) info >/dev/null 2>&1 || { echo "make image: no container builder answers ($(DOCKER) info failed): start one, or set DOCKER" >&2; exit 1; }
	rm -rf bin/image && mkdir -p bin/image
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -buildvcs=auto -ldflags '-s -w' -o bin/image/floe ./cmd/floe
	$(DOCKER) build --platform linux/$(IMAGE_ARCH) -f Dockerfile -t $(IMAGE) bin/image

## test: every test, with the DuckDB oracle (-tags duckdb), race-free, fuzz seeds included
test:
	$(GO) test -tags '$(TAGS)' -timeout 30m -count=1 $(PKGS)

## test-s3: the tests of every package whose tests reach tables through the shared test
## lake, their warehouses on a versitygw S3 server (a child process per warehouse; POSIX
## backend on a temp dir), and the S3 fault tests (stalls, outages) on the in-process fake.
## Left out: ./bench/layout, whose harness generates TPC-H tables to measure file skipping
## (unfinished after 12 minutes on S3 on a shared 2-core machine; its reads and writes are
## those of ./simulator and ./rewriter),
## so that make test-s3 fits in CI beside make test (see docs/storage.md, Testing on S3)
S3PKGS    ?= ./internal/testlake ./lake ./simulator ./analyzer ./collectors/ingest ./internal/sample \
             ./rewriter ./rewriter/trino ./control ./control/server ./cmd/floe
VERSITYGW ?= $(CURDIR)/bin/versitygw
test-s3: versitygw
	FLOE_TEST_STORE=versitygw FLOE_TEST_VERSITYGW=$(VERSITYGW) $(GO) test -tags '$(TAGS)' -timeout 30m -count=1 $(S3PKGS)

## versitygw: the S3 server of make test-s3, built from its own tools module (internal/tools/versitygw)
versitygw:
	$(GO) build -C internal/tools/versitygw -o $(VERSITYGW) github.com/versity/versitygw/cmd/versitygw

## test-short: without the DuckDB oracle (no cgo)
test-short:
	CGO_ENABLED=0 $(GO) test -short -timeout 20m $(PKGS)

## demo: build floe and run the whole flow on the embedded default warehouse
demo: build
	./$(BIN) demo --reset

## bench: the comparative benchmarks, one after the other; results land in bench/results/
bench: bench-rewrite bench-rewrite-partitioned bench-layout bench-plan bench-health bench-manifests bench-scale

## bench-rewrite: 10M rows compacted by sort, z-order and Hilbert, vs DuckDB
bench-rewrite:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkRewrite$$' -benchtime 1x -timeout 90m ./bench/rewrite

## profile-doc: regenerate docs/rewriter-profile.md from bench/results/rewrite.json (after make bench-rewrite)
profile-doc:
	$(GO) test -tags '$(TAGS)' -count=1 -run 'TestProfileDocIsCurrent$$' ./bench/rewrite -args -update-profile-doc

## bench-rewrite-partitioned: the same 10M rows in 30 daily partitions, one group per partition, vs DuckDB
bench-rewrite-partitioned:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkRewritePartitioned$$' -benchtime 1x -timeout 90m ./bench/rewrite

## bench-rewrite-flat: floe's peak RSS at 10M and 40M rows (generates a 40M-row table first)
bench-rewrite-flat:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkRewriteFlat$$' -benchtime 1x -timeout 120m ./bench/rewrite

## bench-layout: projected vs measured file skipping of the layout candidates (TPC-H)
bench-layout:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench BenchmarkLayout -benchtime 1x -timeout 90m ./bench/layout

## bench-plan: projecting every layout candidate vs one rewrite of the same table, 6M and 60M rows
## (FLOE_BENCH_PLAN_ROWS changes the sizes; generates the tables first)
bench-plan:
	$(GO) test -run '^$$' -bench BenchmarkPlan -benchtime 1x -timeout 120m ./bench/plan

## bench-health: health on a generated table of 50,000 data files in 2,000 snapshots
## (FLOE_BENCH_COMMITS and FLOE_BENCH_FILES_PER_COMMIT change the shape)
bench-health:
	$(GO) test -run '^$$' -bench BenchmarkHealth -benchtime 1x -timeout 60m ./bench/health

## bench-manifests: reading the manifests of 1,000 generated tables, iceberg-go's reader vs floe's
## (FLOE_BENCH_MANIFESTS_TABLES changes the size)
bench-manifests:
	$(GO) test -run '^$$' -bench BenchmarkManifests -benchtime 1x -timeout 60m ./bench/manifests

## bench-scale: the daemon's passes (cold, nothing changed, 10% changed, after a restart) and the
## table list and dashboard at 1,000 and 10,000 generated tables (FLOE_BENCH_SCALE_TABLES changes the sizes)
bench-scale:
	$(GO) test -run '^$$' -bench BenchmarkScale -benchtime 1x -timeout 180m ./bench/scale

## bench-scale-dashboard: the dashboard at 10,000 generated tables in Chromium (search, paging, sort);
## its screenshots land in bench/results/scale-dashboard/
bench-scale-dashboard:
	FLOE_DASHBOARD_TABLES=10000 FLOE_TEST_ARTIFACTS=$(CURDIR)/bench/results/scale-dashboard \
		$(GO) test -count=1 -run '^TestDashboardAtScaleInChromium$$' -timeout 60m ./control/server

## bench-store: the state store's side of collection, SQLite and PostgreSQL side by side
## (events/s in batches of 500; starts a throwaway PostgreSQL, so needs initdb: .ci/run installs it)
bench-store:
	$(GO) test -run '^$$' -bench BenchmarkCollectStore -benchtime 1x -timeout 30m ./bench/collectstore

## fuzz: every fuzz target on its seeds only (fast; part of make test too)
fuzz:
	$(GO) test -tags '$(TAGS)' -run '^Fuzz' $(PKGS)

## fuzz-long: run each fuzz target for FUZZTIME
fuzz-long:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## lint: go vet, gofmt and go mod tidy must be clean
lint:
	$(GO) vet -tags '$(TAGS)' $(PKGS)
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt -l:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin dist floe-data
