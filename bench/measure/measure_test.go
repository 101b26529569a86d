// Package measure benchmarks `floe measure` on the demo warehouse's
// web.events (320 micro-batch commits, the demo's collected workload):
// control.MeasureQueries (manifests read once into a lake.ScanIndex, queries
// evaluated in parallel) against simulator.Measure (one iceberg-go PlanFiles
// per query, what measure did before) on the same table in the same run.
package measure_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/demo"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

func BenchmarkMeasure(b *testing.B) {
	ctx := context.Background()
	// The demo's own clock, fixed so that every run builds the same warehouse.
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	w := testlake.New(b)
	start := time.Now()
	require.NoError(b, demo.Build(ctx, w.Catalog, demo.Options{Now: now}))
	logDir := filepath.Join(w.Dir, "logs")
	_, err := demo.WriteLogs(logDir, demo.LogOptions{Now: now})
	require.NoError(b, err)
	cfg, err := config.Load(config.Options{WorkDir: w.Dir, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	require.NoError(b, err)
	st, err := store.Open(ctx, filepath.Join(w.Dir, "state.db"))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, st.Close()) })
	open := func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }
	_, err = control.Collect(ctx, st, cfg, open, control.CollectOptions{Paths: []string{logDir}, Force: true})
	require.NoError(b, err)
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"web"}, Name: "events"}
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(b, err)
	wl, err := control.LoadWorkload(ctx, st, id, control.WorkloadOptions{})
	require.NoError(b, err)
	queries := wl.Queries
	setup := time.Since(start)
	b.Logf("demo warehouse and workload: %d queries on %s in %s", len(queries), id, setup.Round(time.Second))

	// PlanFiles per query costs a fifth of a second on this table: the old
	// path runs on an evenly spaced sample (FLOE_BENCH_MEASURE_SAMPLE, all
	// queries when it is at least their number) and is scaled to the whole
	// workload; the new path runs on both.
	k := min(bench.EnvInt(b, "FLOE_BENCH_MEASURE_SAMPLE", 100), len(queries))
	sample := make([]simulator.Query, 0, k)
	for i := range k {
		sample = append(sample, queries[i*len(queries)/k])
	}
	const rounds = 3
	var newFull, newSample []time.Duration
	var oldSample time.Duration
	var full simulator.MeasureResult
	b.ResetTimer()
	for b.Loop() {
		newFull, newSample = nil, nil
		for range rounds {
			t0 := time.Now()
			full, err = control.MeasureQueries(ctx, tbl, queries)
			require.NoError(b, err)
			newFull = append(newFull, time.Since(t0))
			t0 = time.Now()
			_, err = control.MeasureQueries(ctx, tbl, sample)
			require.NoError(b, err)
			newSample = append(newSample, time.Since(t0))
		}
		t0 := time.Now()
		old, err := simulator.Measure(ctx, tbl, sample)
		require.NoError(b, err)
		oldSample = time.Since(t0)
		for i, q := range old.Queries {
			require.Equal(b, q, full.Queries[i*len(queries)/k], "both paths plan the same files")
		}
	}
	b.StopTimer()
	nf, ns := bench.Median(newFull), bench.Median(newSample)
	oldPerQuery := oldSample.Seconds() / float64(k)
	oldFullEst := oldPerQuery * float64(len(queries))
	ratio := oldFullEst / nf.Seconds()
	b.ReportMetric(float64(len(queries)), "queries")
	b.ReportMetric(nf.Seconds(), "index_s")
	b.ReportMetric(ratio, "planfiles/index")

	r := bench.NewResult("measure")
	r.Params["table"] = id.String()
	r.Params["data_files"] = full.FilesTotal
	r.Params["queries"] = len(queries)
	r.Params["planfiles_sample_queries"] = k
	r.Params["rounds"] = rounds
	r.Figures["index_full_median_s"] = nf.Seconds()
	r.Figures["index_sample_median_s"] = ns.Seconds()
	r.Figures["planfiles_sample_s"] = oldSample.Seconds()
	r.Figures["planfiles_per_query_s"] = oldPerQuery
	r.Figures["planfiles_full_estimated_s"] = oldFullEst
	r.Figures["planfiles_over_index_full_ratio"] = ratio
	r.Figures["planfiles_over_index_same_sample_ratio"] = oldSample.Seconds() / ns.Seconds()
	r.Figures["setup_s"] = setup.Seconds()
	r.Notes = append(r.Notes,
		"index = control.MeasureQueries: manifests read once into lake.ScanIndex, queries evaluated on GOMAXPROCS workers; peer = simulator.Measure: one iceberg-go Scan(WithRowFilter).PlanFiles per query",
		"planfiles_full_estimated_s scales the sample's time to every query (PlanFiles costs the same per query: it reads every manifest each time); the same-sample ratio includes the index's one load, which the sample cannot amortize",
		"both paths agree file count for file count on every sampled query")
	path, err := r.Write()
	require.NoError(b, err)
	fmt.Fprintf(os.Stderr, "measure: %d queries, %d files: index %.2fs for all; PlanFiles %.3fs/query (%.0fs for all, estimated from %d); ratio %.0f×; wrote %s\n",
		len(queries), full.FilesTotal, nf.Seconds(), oldPerQuery, oldFullEst, k, ratio, filepath.Base(path))
}
