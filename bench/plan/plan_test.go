package plan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/plan"
)

// TestPlanSmall runs the protocol on two small tables and checks what the
// benchmark's figures rest on: every candidate projected from a sample of
// the size the options say, the rewrite reading every row and leaving no
// file behind, and the ratio computed from those timings.
func TestPlanSmall(t *testing.T) {
	dir := t.TempDir()
	res, err := plan.Run(t.Context(), plan.Config{Dir: dir, Rows: []int64{50_000, 200_000}, FilesPerMillion: 100, FilesAfter: 10, Reps: 2})
	require.NoError(t, err)
	require.Len(t, res, 2)
	for _, r := range res {
		require.Len(t, r.Projections, len(plan.Candidates()))
		for i, p := range r.Projections {
			require.True(t, strings.HasPrefix(p.Layout.String(), plan.Candidates()[i]), "%s is %s", p.Layout, plan.Candidates()[i])
			if p.Basis == "file_bounds" {
				// Binpack is projected from the real files' bounds, not
				// from a sample.
				require.True(t, strings.HasPrefix(p.Layout.String(), "binpack"), p.Layout.String())
				continue
			}
			// The projection starts from the sample timed apart and may
			// grow it (x4, at most twice) until its sampling error is
			// within the precision asked for.
			require.GreaterOrEqual(t, p.SampleRows, r.SampleRows, "%s projects from at least the sample timed apart", p.Layout)
			require.LessOrEqual(t, int64(p.SampleRows), max(16*int64(r.SampleRows), r.Rows), p.Layout.String())
		}
		require.Len(t, r.ProjectSeconds, 2)
		require.Len(t, r.SampleSeconds, 2)
		require.Equal(t, r.Rows, r.RewriteRows)
		require.Positive(t, r.RewriteFiles)
		// The rewrite is scored on its own files: sorted by l_shipdate, the
		// workload's date ranges skip most of them, and the projection of
		// the same layout lands near that.
		require.Greater(t, r.RewriteActualPct, 20.0)
		require.Less(t, r.RewriteQueryErrorPP, 10.0)
		// The median of two reps is the slower one.
		require.Equal(t, max(r.ProjectSeconds[0], r.ProjectSeconds[1])/r.RewriteSeconds, r.ProjectOverRewrite())
	}
	// One target size for every table: the larger one projects to more files.
	require.Equal(t, res[0].TargetFileSizeBytes, res[1].TargetFileSizeBytes)
	require.Greater(t, res[1].Projections[0].FilesAfter, res[0].Projections[0].FilesAfter)
	// Files written by the rewrite are removed again: the warehouse holds
	// only the dataset's own data files.
	var parquet int
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			parquet++
		}
		return err
	}))
	require.Equal(t, res[0].Files+res[1].Files, parquet)
}

func TestPlanRejectsAnEmptyConfig(t *testing.T) {
	_, err := plan.Run(t.Context(), plan.Config{})
	require.ErrorContains(t, err, "required")
}

// BenchmarkPlan times projecting every candidate against one rewrite at
// FLOE_BENCH_PLAN_ROWS (comma-separated; default 6,000,000 and 60,000,000;
// 200,000 and 800,000 with -short) and writes bench/results/plan.json. Run
// it with
//
//	go test -run '^$' -bench BenchmarkPlan -benchtime 1x -timeout 120m ./bench/plan
func BenchmarkPlan(b *testing.B) {
	r := bench.NewResult("plan")
	rows := []int64{6_000_000, 60_000_000}
	if testing.Short() {
		rows = []int64{200_000, 800_000}
	}
	if s := os.Getenv("FLOE_BENCH_PLAN_ROWS"); s != "" {
		rows = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(f), "_", ""), 10, 64)
			require.NoError(b, err, "FLOE_BENCH_PLAN_ROWS")
			rows = append(rows, v)
		}
	}
	reps := 3
	if s := os.Getenv("FLOE_BENCH_REPS"); s != "" {
		var err error
		reps, err = strconv.Atoi(s)
		require.NoError(b, err, "FLOE_BENCH_REPS")
	}
	dir := os.Getenv("FLOE_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "floe-bench")
	}
	var res []plan.SizeResult
	for b.Loop() {
		var err error
		res, err = plan.Run(b.Context(), plan.Config{Dir: dir, Rows: rows, Reps: reps, CPUProfileDir: os.Getenv("FLOE_BENCH_CPUPROFILE")})
		require.NoError(b, err)
	}
	r.Params["rows"] = rows
	r.Params["reps"] = reps
	r.Params["candidates"] = plan.Candidates()
	r.Params["rewrite_layout"] = plan.RewriteLayout
	fmt.Printf("%12s %7s %12s %10s %10s %12s %10s %10s %10s\n", "rows", "files", "sample rows", "sample s", "project s", "rewrite s", "proj/rew", "files out", "error pp")
	for _, s := range res {
		k := fmt.Sprintf("rows_%d.", s.Rows)
		r.SetSpread(k+"sample_s", s.SampleSeconds)
		r.SetSpread(k+"project_all_s", s.ProjectSeconds)
		r.Figures[k+"rewrite_s"] = s.RewriteSeconds
		r.Figures[k+"project_over_rewrite"] = s.ProjectOverRewrite()
		r.Figures[k+"sample_rows"] = float64(s.SampleRows)
		r.Figures[k+"sample_fraction"] = s.SampleFraction
		r.Figures[k+"input_files"] = float64(s.Files)
		r.Figures[k+"input_bytes"] = float64(s.InputBytes)
		r.Figures[k+"target_file_size_bytes"] = float64(s.TargetFileSizeBytes)
		r.Figures[k+"rewrite_actual_skipped_pct"] = s.RewriteActualPct
		r.Figures[k+"rewrite_projected_skipped_pct"] = s.RewriteProjectedPct
		r.Figures[k+"rewrite_query_error_pp"] = s.RewriteQueryErrorPP
		for _, p := range s.Projections {
			r.Figures[k+p.Layout.String()+".files_projected"] = float64(p.FilesAfter)
			r.Figures[k+p.Layout.String()+".skipped_pct"] = p.SkippedPct
			r.Figures[k+p.Layout.String()+".error_pp"] = p.ErrorPP
		}
		fmt.Printf("%12d %7d %12d %10.2f %10.2f %12.2f %10.3f %10d %10.2f\n", s.Rows, s.Files, s.SampleRows,
			bench.SpreadOf(s.SampleSeconds).Median, bench.SpreadOf(s.ProjectSeconds).Median, s.RewriteSeconds, s.ProjectOverRewrite(), s.RewriteFiles, s.RewriteQueryErrorPP)
	}
	if len(res) > 1 {
		first, last := res[0], res[len(res)-1]
		r.Figures["project_growth_ratio"] = bench.SpreadOf(last.ProjectSeconds).Median / bench.SpreadOf(first.ProjectSeconds).Median
		r.Figures["rows_growth_ratio"] = float64(last.Rows) / float64(first.Rows)
		fmt.Printf("rows grew %.0fx, projecting all candidates %.2fx\n", r.Figures["rows_growth_ratio"], r.Figures["project_growth_ratio"])
	}
	path, err := r.Write()
	require.NoError(b, err)
	b.Logf("wrote %s", path)
}
