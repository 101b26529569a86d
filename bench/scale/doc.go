// Package scale benchmarks floe's daemon over a lake of many small real
// tables (internal/scalelake, in the embedded SQL catalog): N tables (1,000
// and 10,000 by default, FLOE_BENCH_SCALE_TABLES="1000,10000"), a real
// control.Scheduler and control.Service over a SQLite state store, as
// `floe serve` runs them, with an injected clock and the daemon's alerts
// and gauges.
//
// For each N it times, in wall seconds, CPU seconds (getrusage) and peak
// RSS (VmHWM, reset before each phase), and counts the metadata files and
// manifests read per table (internal/testlake's CountingCatalog):
//
//   - cold: the first pass, which reads every table (and compacts the
//     tenth of tables the generator gave 12 appends);
//   - unchanged: a pass with nothing changed, which must read no table
//     metadata (5 repetitions, median);
//   - changed: a pass after 10% of the tables had four commits each,
//     which makes their compaction due (it runs);
//   - restart: the first pass of a new Scheduler and Service over the same
//     state store, which reads every table once again;
//   - peer: the same pass with nothing changed by a Service that keeps no
//     table state (Deps.StateCacheFiles < 0: change detection off), which
//     reads every table each pass; the ratio peer/unchanged is the figure.
//
// Then the API and the dashboard at N tables, through the real
// control/server handler: GET /api/v1/tables?limit=100 (the first request
// waits for the table index to measure the lake) and GET /, first and warm.
// The dashboard in Chromium at 10,000 tables is the control/server test
// TestDashboardAtScaleInChromium with FLOE_DASHBOARD_TABLES=10000, which
// `make bench-scale-dashboard` runs and whose screenshot it keeps under
// bench/results/.
//
// The due step is compaction, not expiry: expiry and orphan removal
// find a table's siblings (control.Catalogs.Siblings), which the pass's
// service decides from the locations it has read, but which a benchmark
// of compaction keeps out of the figures.
//
// Generation is setup: it is timed and printed, never counted in a pass.
// The benchmark runs only when asked (`make bench-scale`, or
// `go test -run '^$' -bench BenchmarkScale ./bench/scale`); its result is
// bench/results/scale.json. FLOE_BENCH_SCALE_PROFILE=DIR writes a CPU
// profile of the unchanged passes at each size to DIR/unchanged-N.pprof.
package scale
