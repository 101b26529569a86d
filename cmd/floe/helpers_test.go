package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

// openDemoTable resolves name with the configuration in dir and opens its
// catalog, as a verb would.
func openDemoTable(t *testing.T, dir, name string) (catalog.Catalog, lake.Ident, string) {
	t.Helper()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	f.ConfigPath = filepath.Join(dir, "floe.yaml")
	id, err := f.ResolveTable(name)
	require.NoError(t, err)
	cat, err := f.Catalog(context.Background(), id.Catalog)
	require.NoError(t, err)
	return cat, id, f.ConfigPath
}

// newTestFactory is newFactory for a test: what the factory opens
// (catalogs, state store, engines) is closed when t ends, as Main closes
// its factory.
func newTestFactory(t testing.TB, io *IOStreams) *factory {
	t.Helper()
	f := newFactory(io)
	t.Cleanup(func() { require.NoError(t, f.Close()) })
	return f
}

// buildFloe returns the floe binary (pure Go) for tests that run it as a
// real process, built once per test binary (binOnce) into a directory
// TestMain removes. It is built with make build's flags (-trimpath,
// CGO_ENABLED=0), so that after make build — as in CI — only the link is
// left to do; the seven tests that run the binary share that one link.
func buildFloe(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the floe binary")
	}
	bin, err := testBin.build()
	require.NoError(t, err)
	return bin
}

// floeBinary is the floe binary the tests share: built on first use into
// dir, removed by TestMain after the tests.
type floeBinary struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// testBin is the package's one shared binary: a test-only cache, like the
// go command's own build cache, not state a verb reads.
var testBin floeBinary

func (b *floeBinary) build() (string, error) {
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "floe-test-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "floe")
		build := exec.Command("go", "build", "-trimpath", "-o", b.bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build floe: %w\n%s", err, out)
		}
	})
	return b.bin, b.err
}

// remove deletes the binary's directory, if it was built.
func (b *floeBinary) remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// testAsOf is the fixed end of the demo's event and query time range in
// tests (floe demo --as-of), so that the warehouse the tests build — its
// partitions, files and queries — is the same on any day. Table metadata
// (snapshot times, file ages) still follows the wall clock, since iceberg-go
// stamps each commit with it; only the generated data is pinned.
const testAsOf = "2026-11-24T12:00:00Z"

// demoConfig writes the embedded default configuration, its data_dir in a
// new temporary directory, to floe.yaml there, for a demo warehouse built
// on it, and returns the directory.
func demoConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	yaml := strings.Replace(string(config.DefaultYAML()), "data_dir: ./floe-data", "data_dir: "+filepath.Join(dir, "floe-data"), 1)
	require.NotEqual(t, string(config.DefaultYAML()), yaml, "the embedded default sets data_dir: ./floe-data")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(yaml), 0o644))
	return dir
}

// demoArgs are the args of a demo run in tests: args plus the fixed --as-of.
func demoArgs(args ...string) []string {
	return append([]string{"demo", "--as-of", testAsOf}, args...)
}

// sinceAsOf is a --since window that reaches the 30 days before testAsOf
// from whatever day the test runs, so that query-window verbs see the same
// demo queries on any day.
func sinceAsOf() string {
	asOf, err := time.Parse(time.RFC3339, testAsOf)
	if err != nil {
		panic(err)
	}
	return (30*24*time.Hour + max(0, time.Since(asOf))).Round(time.Second).String()
}

// runResultOf reads a verb's --output json of a run (optimize, compact,
// expire, orphans --apply, rewrite-manifests).
func runResultOf(t *testing.T, out []byte) control.RunResult {
	t.Helper()
	var res control.RunResult
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.NotEmpty(t, res.Run.ID, "%s", out)
	return res
}

// dryRunOf reads a verb's --output json of a dry run.
func dryRunOf(t *testing.T, out []byte) control.DryRun {
	t.Helper()
	var dry control.DryRun
	require.NoError(t, json.Unmarshal(out, &dry), "%s", out)
	require.True(t, dry.DryRun, "%s", out)
	return dry
}

// reportOf is the report of step name of res's run.
func reportOf(t *testing.T, res control.RunResult, name string) control.StepReport {
	t.Helper()
	for _, s := range res.Run.Steps {
		if s.Name == name {
			return s.Report
		}
	}
	t.Fatalf("run %s has no %s step", res.Run.ID, name)
	return control.StepReport{}
}

// rowSum digests the live rows of tbl's current snapshot with DuckDB's own
// Parquet reader (iceberg-go's scan without the duckdb build tag): a reader
// that shares no code with floe's rewriter, so that a crash test's "the rows
// are unchanged" does not rest on floe reading its own writes.
func rowSum(t testing.TB, tbl *table.Table) oracle.Sum {
	t.Helper()
	s, err := oracle.ChecksumPreferDuckDB(t.Context(), tbl)
	require.NoError(t, err)
	return s
}
