package rewrite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/rewrite"
)

// TestMain doubles as the benchmark's child process: with
// rewrite.ChildEnv set, it runs that one job and exits.
func TestMain(m *testing.M) {
	if served, err := rewrite.ServeChild(context.Background(), os.Stdout); served {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if floeChild.dir != "" {
		if err := os.RemoveAll(floeChild.dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if code == 0 {
		// iceberg-go's SQL catalog has no Close: its database/sql pool stays.
		if err := goleak.Find(goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// floeChild is the pure-Go child floe's jobs run in, built once per test
// binary (rewrite.BuildFloeChild) and removed by TestMain.
var floeChild struct {
	once      sync.Once
	dir, path string
	err       error
}

func floeExe(tb testing.TB) string {
	tb.Helper()
	floeChild.once.Do(func() {
		floeChild.dir, floeChild.err = os.MkdirTemp("", "floechild-")
		if floeChild.err == nil {
			floeChild.path, floeChild.err = rewrite.BuildFloeChild(context.Background(), floeChild.dir)
		}
	})
	require.NoError(tb, floeChild.err)
	return floeChild.path
}

// defaultLayouts are compared by the benchmark: a linear sort on two
// columns, and z-order and Hilbert on two.
var defaultLayouts = []string{
	"sort(l_shipdate, l_orderkey)",
	"zorder(l_shipdate, l_partkey)",
	"hilbert(l_shipdate, l_partkey)",
}

func exe(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	require.NoError(t, err)
	return p
}

// TestFloeChildIsPureGo checks what floe's side of the benchmarks runs
// in: an executable built without cgo, as the floe binary is, that serves
// jobs; and that CheckPureGo does refuse one that links cgo.
func TestFloeChildIsPureGo(t *testing.T) {
	require.NoError(t, rewrite.CheckPureGo(floeExe(t)))
	_, u, err := rewrite.Run(t.Context(), floeExe(t), rewrite.Job{Engine: rewrite.EngineIdle})
	require.NoError(t, err)
	require.Positive(t, u.MaxRSSBytes)
	if rewrite.DuckDBAvailable { // DuckDB is linked through cgo
		require.ErrorContains(t, rewrite.CheckPureGo(exe(t)), "CGO_ENABLED=1")
	}
}

// TestCompareSmall runs the whole comparison at test size with a budget
// small enough to spill and a target small enough for several files: both
// engines must write every input row once, globally ordered, in files of
// the same row counts.
func TestCompareSmall(t *testing.T) {
	ctx := t.Context()
	ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: t.TempDir(), Rows: 100_000, Files: 20, Seed: 7})
	require.NoError(t, err)
	require.Len(t, ds.Paths, 20)

	results, err := rewrite.Compare(ctx, rewrite.Config{
		Exe: exe(t), FloeExe: floeExe(t), Dataset: ds, Layouts: defaultLayouts, WorkDir: t.TempDir(),
		MemoryBytes: 16 << 20, TargetFileSizeBytes: 2 << 20, FloeOnly: !rewrite.DuckDBAvailable, Floor: true, Phases: true,
	})
	require.NoError(t, err)
	require.Len(t, results, len(defaultLayouts))
	for _, r := range results {
		t.Run(rewrite.Slug(r.Layout), func(t *testing.T) {
			require.Equal(t, int64(100_000), r.Floe.Rows)
			require.Greater(t, r.Floe.Files, 1, "a 2 MiB target must cut several files")
			require.Positive(t, r.Floe.SpilledRuns, "a 16 MiB budget must spill")
			require.Equal(t, r.Input, r.FloeSum)
			require.Zero(t, r.FloeOrder.Violations)
			require.Positive(t, r.Floe.MaxRSSBytes)
			require.Positive(t, r.Floe.CPU)

			// The floor: every input row once, in a process measured as
			// floe's is; its profile has none of a layout's work, floe's
			// has some.
			require.Equal(t, int64(100_000), r.Floor.Rows)
			require.Equal(t, r.Input, r.FloorSum)
			require.Positive(t, r.Floor.CPU)
			require.Positive(t, r.Floor.MaxRSSBytes)
			require.Positive(t, r.FloorCPURatio())
			require.Positive(t, r.FloePhases.Total)
			require.Positive(t, r.FloorPhases.Total)
			layoutWork := func(s rewrite.PhaseSplit) float64 {
				return s.Seconds[rewrite.PhaseKey] + s.Seconds[rewrite.PhaseSort] + s.Seconds[rewrite.PhaseGather] + s.Seconds[rewrite.PhaseVerify]
			}
			require.Zero(t, layoutWork(r.FloorPhases), "the floor neither keys, sorts, gathers nor verifies: %v", r.FloorPhases.Seconds)
			require.Positive(t, layoutWork(r.FloePhases), "floe's profile: %v", r.FloePhases.Seconds)
			var sum float64
			for _, p := range rewrite.Phases {
				sum += rewrite.PhaseCPUPerMillionRows(r.Floe, r.FloePhases, p)
			}
			require.InDelta(t, r.Floe.CPUPerMillionRows(), sum, 1e-9, "the phases add up to the measured CPU")
			if !rewrite.DuckDBAvailable {
				t.Log("DuckDB side skipped: build with -tags duckdb")
				return
			}
			require.Equal(t, r.Floe.Rows, r.DuckDB.Rows)
			require.Equal(t, r.Floe.Files, r.DuckDB.Files)
			require.Equal(t, r.Input, r.DuckDBSum)
			require.Zero(t, r.DuckDBOrder.Violations)
			require.Positive(t, r.DuckDB.MaxRSSBytes)
		})
	}
	var sb strings.Builder
	require.NoError(t, rewrite.WriteTable(&sb, results))
	t.Log("\n" + sb.String())
}

// TestComparePartitionedSmall runs the comparison on a partitioned table:
// floe must rewrite one group per partition, each ordered within itself,
// and DuckDB the same partitions into files of the same row counts.
func TestComparePartitionedSmall(t *testing.T) {
	ctx := t.Context()
	ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: t.TempDir(), Rows: 60_000, Files: 24, Seed: 5, Partitions: 6})
	require.NoError(t, err)
	require.Len(t, ds.Paths, 24)
	tbl, err := ds.LoadTable(ctx)
	require.NoError(t, err)
	spec := tbl.Spec()
	require.Equal(t, 1, spec.NumFields())

	results, err := rewrite.Compare(ctx, rewrite.Config{
		Exe: exe(t), FloeExe: floeExe(t), Dataset: ds, Layouts: defaultLayouts[:2], WorkDir: t.TempDir(),
		MemoryBytes: 4 << 20, TargetFileSizeBytes: 64 << 10, FloeOnly: !rewrite.DuckDBAvailable,
	})
	require.NoError(t, err)
	for _, r := range results {
		t.Run(rewrite.Slug(r.Layout), func(t *testing.T) {
			require.Equal(t, int64(60_000), r.Floe.Rows)
			require.Equal(t, 6, r.Floe.Groups, "one group per partition")
			require.Greater(t, r.Floe.Files, r.Floe.Groups, "a 64 KiB target cuts several files in some partition")
			require.Equal(t, r.Input, r.FloeSum)
			require.Zero(t, r.FloeOrder.Violations)
			if !rewrite.DuckDBAvailable {
				return
			}
			require.Equal(t, 6, r.DuckDB.Groups)
			require.Equal(t, r.Floe.Files, r.DuckDB.Files)
			require.Equal(t, r.Input, r.DuckDBSum)
			require.Zero(t, r.DuckDBOrder.Violations)
		})
	}
	// Across partitions the files are not in one order: the check is per
	// partition, and it does see rows out of order across them.
	oc, err := rewrite.CheckOrder(ctx, ds.Paths, defaultLayouts[0], ds.QuantilesFile)
	require.NoError(t, err)
	require.Positive(t, oc.Violations)
}

// TestChecksCatchBadOutput makes sure the checks Compare relies on can fail:
// the unsorted input is out of order, and a dropped or duplicated file
// changes the digest.
func TestChecksCatchBadOutput(t *testing.T) {
	ctx := t.Context()
	ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: t.TempDir(), Rows: 3_000, Files: 3, Seed: 1})
	require.NoError(t, err)
	full, err := rewrite.Checksum(ctx, ds.Paths)
	require.NoError(t, err)
	require.Equal(t, int64(3_000), full.Rows)

	cases := []struct {
		name  string
		paths []string
		same  bool
	}{
		{name: "reordered-files", paths: []string{ds.Paths[2], ds.Paths[0], ds.Paths[1]}, same: true},
		{name: "file-dropped", paths: ds.Paths[1:]},
		{name: "file-duplicated", paths: append(slices.Clone(ds.Paths), ds.Paths[0])},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rewrite.Checksum(ctx, tc.paths)
			require.NoError(t, err)
			if tc.same {
				require.Equal(t, full, got)
			} else {
				require.NotEqual(t, full, got)
			}
			dg, err := rewrite.Digest(ctx, tc.paths)
			require.NoError(t, err)
			want, err := rewrite.Digest(ctx, ds.Paths)
			require.NoError(t, err)
			require.Equal(t, tc.same, dg == want)
		})
	}
	for _, layout := range defaultLayouts {
		oc, err := rewrite.CheckOrder(ctx, ds.Paths, layout, ds.QuantilesFile)
		require.NoError(t, err)
		require.Equal(t, int64(3_000), oc.Rows)
		require.Greater(t, oc.Violations, int64(500), "%s: random rows are far from ordered", layout)
	}
}

// TestPrepareDatasetReusesAndIsDeterministic checks the cache: the same
// options reuse the files, and the same seed elsewhere gives the same rows.
func TestPrepareDatasetReusesAndIsDeterministic(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	opts := rewrite.DatasetOptions{Dir: dir, Rows: 5_000, Files: 5, Seed: 3}
	a, err := rewrite.PrepareDataset(ctx, opts)
	require.NoError(t, err)
	st, err := os.Stat(a.Paths[0])
	require.NoError(t, err)
	again, err := rewrite.PrepareDataset(ctx, opts)
	require.NoError(t, err)
	require.Equal(t, a, again)
	st2, err := os.Stat(again.Paths[0])
	require.NoError(t, err)
	require.Equal(t, st.ModTime(), st2.ModTime(), "reused, not regenerated")

	opts.Dir = t.TempDir()
	b, err := rewrite.PrepareDataset(ctx, opts)
	require.NoError(t, err)
	sa, err := rewrite.Digest(ctx, a.Paths)
	require.NoError(t, err)
	sb, err := rewrite.Digest(ctx, b.Paths)
	require.NoError(t, err)
	require.Equal(t, sa, sb)

	opts.Seed = 4
	c, err := rewrite.PrepareDataset(ctx, opts)
	require.NoError(t, err)
	sc, err := rewrite.Digest(ctx, c.Paths)
	require.NoError(t, err)
	require.NotEqual(t, sa, sc)

	// A missing data file invalidates the cache.
	require.NoError(t, os.Remove(c.Paths[1]))
	c2, err := rewrite.PrepareDataset(ctx, opts)
	require.NoError(t, err)
	sc2, err := rewrite.Digest(ctx, c2.Paths)
	require.NoError(t, err)
	require.Equal(t, sc, sc2)
}

// BenchmarkRewrite compares floe's compaction with DuckDB's on the same
// table (FLOE_BENCH_ROWS rows in FLOE_BENCH_FILES files, default 10,000,000
// in 400; 200,000 in 40 with -short). Run it with
//
//	go test -tags duckdb -run '^$' -bench 'BenchmarkRewrite$' -benchtime 1x ./bench/rewrite
//
// Other knobs: FLOE_BENCH_DIR (dataset cache; default a directory under
// the system temp dir), FLOE_BENCH_REPS (default 3; medians, with min and max),
// FLOE_BENCH_MEMORY (floe's budget, bytes; default 512 MiB),
// FLOE_BENCH_LAYOUTS (';'-separated), FLOE_BENCH_CPUPROFILE (a directory
// for floe's and the floor's CPU profiles, kept), FLOE_BENCH_FLOE_ONLY (non-empty:
// skip DuckDB and write no result file, for quick before/after figures of
// floe alone), FLOE_BENCH_NO_FLOOR (non-empty: skip the Parquet floor and
// the phase split). The table is printed and the figures are written to
// bench/results/rewrite.json; docs/rewriter-profile.md is generated from
// that file (TestProfileDocIsCurrent).
func BenchmarkRewrite(b *testing.B) {
	benchRewrite(b, "rewrite", 0)
}

// BenchmarkRewritePartitioned is [BenchmarkRewrite] on the same rows in
// FLOE_BENCH_PARTITIONS daily partitions (default 30; 6 with -short), in the
// streaming shape: each of the table's files holds one day's rows. floe
// rewrites one group per partition with rewriter.RewriteGroups, several at
// once within its one memory budget; DuckDB rewrites the partitions one
// after the other, each sort with all its threads, and cuts each
// partition's files at floe's row counts. The figures are written to
// bench/results/rewrite-partitioned.json.
func BenchmarkRewritePartitioned(b *testing.B) {
	parts := int64(bench.EnvInt(b, "FLOE_BENCH_PARTITIONS", 30))
	if testing.Short() {
		parts = 6
	}
	benchRewrite(b, "rewrite-partitioned", int(parts))
}

// benchRewrite compares the engines on a dataset of that many partitions
// (0: unpartitioned) and writes the result under name.
func benchRewrite(b *testing.B, name string, partitions int) {
	if !rewrite.DuckDBAvailable {
		b.Skip("needs DuckDB: run with -tags duckdb")
	}
	ctx := b.Context()
	rows, files := int64(bench.EnvInt(b, "FLOE_BENCH_ROWS", 10_000_000)), int64(bench.EnvInt(b, "FLOE_BENCH_FILES", 400))
	if testing.Short() {
		rows, files = 200_000, 40
	}
	reps := int64(bench.EnvInt(b, "FLOE_BENCH_REPS", 3))
	memory := int64(bench.EnvInt(b, "FLOE_BENCH_MEMORY", rewrite.DefaultMemoryBytes))
	layouts := defaultLayouts
	if s := os.Getenv("FLOE_BENCH_LAYOUTS"); s != "" {
		layouts = strings.Split(s, ";")
	}
	dir, work := benchDirs(b)
	profiles := os.Getenv("FLOE_BENCH_CPUPROFILE")
	if profiles != "" {
		require.NoError(b, os.MkdirAll(profiles, 0o755))
	}
	floeOnly := os.Getenv("FLOE_BENCH_FLOE_ONLY") != ""
	noFloor := os.Getenv("FLOE_BENCH_NO_FLOOR") != ""

	start := time.Now()
	ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: dir, Rows: rows, Files: int(files), Seed: 1, Partitions: partitions})
	require.NoError(b, err)
	b.Logf("dataset: %d rows in %d files, %d partitions, %.0f MiB, ready in %s (%s)", ds.Rows, len(ds.Paths), partitions,
		float64(ds.InputBytes)/(1<<20), time.Since(start).Round(time.Second), ds.Dir)
	_, idleUsage, err := rewrite.Run(ctx, exe(b), rewrite.Job{Engine: rewrite.EngineIdle})
	require.NoError(b, err)
	_, floeIdle, err := rewrite.Run(ctx, floeExe(b), rewrite.Job{Engine: rewrite.EngineIdle})
	require.NoError(b, err)

	res := bench.NewResult(name)
	res.Params["rows"] = rows
	if partitions > 0 {
		res.Params["partitions"] = partitions
		res.Params["partition_spec"] = "day(l_receiptdate)"
	}
	res.Params["files"] = len(ds.Paths)
	res.Params["input_bytes"] = ds.InputBytes
	res.Params["reps"] = reps
	res.Params["memory_bytes"] = memory
	res.Params["target_file_size_bytes"] = rewrite.DefaultTargetFileSizeBytes
	res.Params["layouts"] = layouts
	res.Figures["idle_duckdb_child_rss_mib"] = mib(idleUsage.MaxRSSBytes)
	res.Figures["idle_floe_child_rss_mib"] = mib(floeIdle.MaxRSSBytes)
	res.Notes = append(res.Notes,
		"each engine runs in a child process: floe in a pure-Go executable (bench/rewrite/floechild, CGO_ENABLED=0, as the floe binary is built), DuckDB in the benchmark's test binary, which links it; wall time is measured by the parent, user+sys CPU comes from the child's rusage",
		"DuckDB: CREATE TEMP TABLE s AS SELECT * FROM read_parquet(...) ORDER BY key, then one COPY (SELECT ... FROM s LIMIT n OFFSET k) per output file, cut at floe's file row counts; default threads and memory limit; zstd",
		"z-order and Hilbert: DuckDB sorts by floe's key, precomputed into a copy of the input (column _floe_key, not timed); floe computes its keys inside the timed run",
		"peak RSS is the child's own VmHWM (/proc/self/status) read before it exits: ru_maxrss of a child started by Go includes the parent's RSS at fork time (vfork/CLONE_VM, exec keeps the old address space's high-water mark), so it is recorded only as *.rusage_maxrss_mib",
		"outputs of both engines checked: same rows as the input (DuckDB checksum) and globally ordered by the layout key",
		"figures are medians over the reps; *_median/_min/_max give the spread of wall times and of the per-rep throughput ratio (floe's run over the DuckDB run after it); cpu_s_per_mrows is user+sys CPU per million rows, which depends on the CPU, not the core count; output_bytes_ratio is floe's output size over DuckDB's for the same files",
		fmt.Sprintf("baseline RSS of each child doing nothing: floe's %.0f MiB, DuckDB's %.0f MiB (each engine's peak includes its own)", mib(floeIdle.MaxRSSBytes), mib(idleUsage.MaxRSSBytes)))

	if !noFloor {
		res.Notes = append(res.Notes,
			"floor: floe's input read with arrow-go (pqarrow) and written unsorted through floe's own Parquet writer with the options floe's rewrite gives it (rewriter.GroupOptions.WriterOptions: codec and level, row-group size, file target, dictionary rule; partitions spread as rewriter.RewriteGroups spreads them), in floe's pure-Go child; its files are checked to hold the input's rows; *.floe_floor_cpu_ratio is floe's CPU per million rows over the floor's",
			"phases: a CPU profile (runtime/pprof) of floe's and the floor's first run per layout, each sample given a phase by the functions on its stack (bench/rewrite ClassifyStack: the leaf-most named function wins; the content check claims what runs under it); *.phase.<phase>.cpu_s_per_mrows is the phase's share of the samples times the engine's median cpu_s_per_mrows; *.profiled_cpu_share is the sampled CPU over the profiled run's rusage CPU")
	}
	if partitions > 0 {
		res.Notes = append(res.Notes, "partitioned: each of the table's files holds one day's rows (day(l_receiptdate)); floe rewrites one group per partition with rewriter.RewriteGroups (GOMAXPROCS groups at once, the memory budget split between them); DuckDB rewrites the partitions one after the other, each sort with all its threads, cut at floe's file row counts of that partition; both engines' files are checked for order within each partition")
	}
	var all []rewrite.LayoutResult
	for _, layout := range layouts {
		b.Run("layout="+rewrite.Slug(layout), func(b *testing.B) {
			var r []rewrite.LayoutResult
			for b.Loop() {
				var err error
				r, err = rewrite.Compare(ctx, rewrite.Config{
					Exe: exe(b), FloeExe: floeExe(b), Dataset: ds, Layouts: []string{layout}, Reps: int(reps), MemoryBytes: memory,
					WorkDir: work, CPUProfileDir: profiles, FloeOnly: floeOnly, Floor: !noFloor, Phases: !noFloor,
				})
				require.NoError(b, err)
			}
			lr := r[0]
			all = append(all, lr)
			b.ReportMetric(lr.Floe.RowsPerSecond(), "floe-rows/s")
			b.ReportMetric(lr.DuckDB.RowsPerSecond(), "duckdb-rows/s")
			b.ReportMetric(lr.ThroughputRatio(), "throughput-x")
			b.ReportMetric(mib(lr.Floe.MaxRSSBytes), "floe-rss-MiB")
			b.ReportMetric(mib(lr.DuckDB.MaxRSSBytes), "duckdb-rss-MiB")
			b.ReportMetric(lr.RSSRatio(), "rss-x")
			s := rewrite.Slug(layout)
			for engine, m := range map[string]rewrite.Measure{"floe": lr.Floe, "duckdb": lr.DuckDB} {
				res.Figures[s+"."+engine+".wall_s"] = m.Wall.Seconds()
				res.Figures[s+"."+engine+".cpu_s"] = m.CPU.Seconds()
				res.Figures[s+"."+engine+".peak_rss_mib"] = mib(m.MaxRSSBytes)
				res.Figures[s+"."+engine+".rusage_maxrss_mib"] = mib(m.RusageMaxRSSBytes)
				res.Figures[s+"."+engine+".minor_faults"] = float64(m.MinorFaults)
				res.Figures[s+"."+engine+".rows_per_s"] = m.RowsPerSecond()
				res.Figures[s+"."+engine+".files"] = float64(m.Files)
				res.Figures[s+"."+engine+".groups"] = float64(m.Groups)
				res.Figures[s+"."+engine+".output_bytes"] = float64(m.OutputBytes)
				res.Figures[s+"."+engine+".cpu_s_per_mrows"] = m.CPUPerMillionRows()
			}
			walls := func(ms []rewrite.Measure) []float64 {
				var out []float64
				for _, m := range ms {
					out = append(out, m.Wall.Seconds())
				}
				return out
			}
			res.SetSpread(s+".floe.wall_s", walls(lr.FloeRuns))
			res.SetSpread(s+".duckdb.wall_s", walls(lr.DuckDBRuns))
			res.SetSpread(s+".throughput_ratio", lr.RunRatios())
			res.Figures[s+".output_bytes_ratio"] = lr.OutputBytesRatio()
			res.Figures[s+".floe.peak_arrow_mib"] = mib(lr.Floe.PeakArrowBytes)
			res.Figures[s+".floe.peak_pool_mib"] = mib(lr.Floe.PeakPoolBytes)
			res.Figures[s+".floe.spilled_runs"] = float64(lr.Floe.SpilledRuns)
			res.Figures[s+".floe.verify_s"] = lr.Floe.Verify.Seconds()
			if lr.Floe.Wall > 0 {
				// The share of floe's wall time spent reading its output
				// back to check it: the price of "nothing changed".
				res.Figures[s+".floe.verify_share"] = lr.Floe.Verify.Seconds() / lr.Floe.Wall.Seconds()
			}
			res.Figures[s+".throughput_ratio"] = lr.ThroughputRatio()
			res.Figures[s+".rss_ratio"] = lr.RSSRatio()
			recordFloor(res, s, lr)
		})
	}

	// A benchmark with sub-benchmarks prints no log of its own: write the
	// table to stdout, next to the benchmark lines.
	var sb strings.Builder
	require.NoError(b, rewrite.WriteTable(&sb, all))
	_, err = fmt.Fprint(os.Stdout, "\n"+sb.String()+"\n")
	require.NoError(b, err)
	if testing.Short() || floeOnly {
		return // test-sized or one-sided figures are not results
	}
	path, err := res.Write()
	require.NoError(b, err)
	b.Logf("wrote %s", path)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// recordFloor adds the floor's figures of layout slug s to res, with the
// floe/floor ratios and both engines' CPU by phase; nothing when lr has no
// floor.
func recordFloor(res *bench.Result, s string, lr rewrite.LayoutResult) {
	if lr.Floor.Rows == 0 {
		return
	}
	m := lr.Floor
	k := s + "." + rewrite.EngineKeyFloor + "."
	res.Figures[k+"wall_s"] = m.Wall.Seconds()
	res.Figures[k+"cpu_s"] = m.CPU.Seconds()
	res.Figures[k+"cpu_s_per_mrows"] = m.CPUPerMillionRows()
	res.Figures[k+"peak_rss_mib"] = mib(m.MaxRSSBytes)
	res.Figures[k+"rusage_maxrss_mib"] = mib(m.RusageMaxRSSBytes)
	res.Figures[k+"minor_faults"] = float64(m.MinorFaults)
	res.Figures[k+"rows_per_s"] = m.RowsPerSecond()
	res.Figures[k+"files"] = float64(m.Files)
	res.Figures[k+"groups"] = float64(m.Groups)
	res.Figures[k+"output_bytes"] = float64(m.OutputBytes)
	res.Figures[k+"peak_arrow_mib"] = mib(m.PeakArrowBytes)
	res.Figures[k+"peak_pool_mib"] = mib(m.PeakPoolBytes)
	var walls []float64
	for _, r := range lr.FloorRuns {
		walls = append(walls, r.Wall.Seconds())
	}
	res.SetSpread(k+"wall_s", walls)
	res.Figures[s+"."+rewrite.FloorCPURatioKey] = lr.FloorCPURatio()
	res.Figures[s+"."+rewrite.FloorWallRatioKey] = lr.FloorWallRatio()
	for engine, ph := range map[string]struct {
		m     rewrite.Measure
		split rewrite.PhaseSplit
		cpu   time.Duration
	}{"floe": {lr.Floe, lr.FloePhases, lr.FloeProfiledCPU}, rewrite.EngineKeyFloor: {lr.Floor, lr.FloorPhases, lr.FloorProfiledCPU}} {
		if ph.split.Total <= 0 {
			continue
		}
		for _, p := range rewrite.Phases {
			res.Figures[rewrite.PhaseFigureKey(s, engine, p)] = rewrite.PhaseCPUPerMillionRows(ph.m, ph.split, p)
		}
		if ph.cpu > 0 {
			// How much of the profiled run's CPU the profile sampled:
			// the rest is start-up before the profile and sampling error.
			res.Figures[s+"."+engine+".profiled_cpu_share"] = ph.split.Total / ph.cpu.Seconds()
		}
	}
}

// benchDirs returns the dataset cache ($FLOE_BENCH_DIR or a directory under
// the system temp dir) and a scratch directory in it.
func benchDirs(b *testing.B) (dir, work string) {
	dir = os.Getenv("FLOE_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "floe-bench")
	}
	work = filepath.Join(dir, "work")
	require.NoError(b, os.MkdirAll(work, 0o755))
	return dir, work
}

// BenchmarkRewriteFlat runs floe alone, sorting by the first default layout
// at the same budget (FLOE_BENCH_MEMORY, default 512 MiB), on
// FLOE_BENCH_FLAT_ROWS rows (default 10,000,000; 50,000 with -short) and on
// four times as many, in files of the same size, and reports the peak RSS
// ratio: a bounded engine's peak should not grow with the input. Results go
// to bench/results/rewrite-flat.json.
func BenchmarkRewriteFlat(b *testing.B) {
	ctx := b.Context()
	small := int64(bench.EnvInt(b, "FLOE_BENCH_FLAT_ROWS", 10_000_000))
	files := int64(bench.EnvInt(b, "FLOE_BENCH_FILES", 400))
	rowsPerFile := int64(bench.EnvInt(b, "FLOE_BENCH_ROWS", 10_000_000)) / files
	if testing.Short() {
		small, rowsPerFile = 50_000, 5_000
	}
	memory := int64(bench.EnvInt(b, "FLOE_BENCH_MEMORY", rewrite.DefaultMemoryBytes))
	dir, work := benchDirs(b)
	layout := defaultLayouts[0]

	res := bench.NewResult("rewrite-flat")
	res.Params["layout"] = layout
	res.Params["memory_bytes"] = memory
	res.Params["rows_per_file"] = rowsPerFile
	res.Notes = append(res.Notes, "floe alone, in a pure-Go child process (bench/rewrite/floechild); peak RSS is the child's VmHWM")
	var ms []rewrite.Measure
	for _, rows := range []int64{small, 4 * small} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			start := time.Now()
			ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: dir, Rows: rows, Files: int(max(rows/rowsPerFile, 1)), Seed: 1})
			require.NoError(b, err)
			b.Logf("dataset: %d rows in %d files, %.0f MiB, ready in %s", ds.Rows, len(ds.Paths),
				float64(ds.InputBytes)/(1<<20), time.Since(start).Round(time.Second))
			var r []rewrite.LayoutResult
			for b.Loop() {
				r, err = rewrite.Compare(ctx, rewrite.Config{
					Exe: exe(b), FloeExe: floeExe(b), Dataset: ds, Layouts: []string{layout}, MemoryBytes: memory, WorkDir: work, FloeOnly: true,
				})
				require.NoError(b, err)
			}
			m := r[0].Floe
			ms = append(ms, m)
			b.ReportMetric(mib(m.MaxRSSBytes), "floe-rss-MiB")
			b.ReportMetric(m.RowsPerSecond(), "floe-rows/s")
			k := fmt.Sprintf("rows_%d.", rows)
			res.Figures[k+"peak_rss_mib"] = mib(m.MaxRSSBytes)
			res.Figures[k+"peak_arrow_mib"] = mib(m.PeakArrowBytes)
			res.Figures[k+"peak_pool_mib"] = mib(m.PeakPoolBytes)
			res.Figures[k+"wall_s"] = m.Wall.Seconds()
			res.Figures[k+"cpu_s"] = m.CPU.Seconds()
			res.Figures[k+"rows_per_s"] = m.RowsPerSecond()
			res.Figures[k+"spilled_runs"] = float64(m.SpilledRuns)
		})
	}
	require.Len(b, ms, 2)
	ratio := float64(ms[1].MaxRSSBytes) / float64(ms[0].MaxRSSBytes)
	res.Figures["rss_ratio"] = ratio
	b.Logf("floe %s at %d MiB: %d rows peak RSS %.0f MiB, %d rows peak RSS %.0f MiB: ratio %.2f",
		layout, memory>>20, ms[0].Rows, mib(ms[0].MaxRSSBytes), ms[1].Rows, mib(ms[1].MaxRSSBytes), ratio)
	if testing.Short() {
		return
	}
	path, err := res.Write()
	require.NoError(b, err)
	b.Logf("wrote %s", path)
}
