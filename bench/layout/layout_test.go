package layout_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/layout"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	floelayout "github.com/floe-project/floe/layout"
)

func evaluate(t testing.TB, cfg layout.Config) layout.Report {
	t.Helper()
	w := testlake.New(t)
	t.Cleanup(func() {
		if c, ok := w.Catalog.(io.Closer); ok {
			require.NoError(t, c.Close())
		}
	})
	rep, err := layout.Evaluate(context.Background(), w.Catalog, w.Name, cfg)
	require.NoError(t, err)
	require.NotEmpty(t, rep.Results)
	return rep
}

func resultTable(rep layout.Report) string {
	s := fmt.Sprintf("%-32s %10s %10s %8s %8s %6s %6s %6s %6s %6s %8s %7s %7s\n", "layout", "projected", "actual", "|err|", "err_pp", "in_bar", "files", "fproj", "size", "sproj", "rewrite", "/bound", "/box")
	for _, r := range rep.Results {
		s += fmt.Sprintf("%-32s %9.2f%% %9.2f%% %8.2f %8.2f %6v %6d %6d %6.2f %6.2f %7.1fs %7.2f %7.2f\n", r.Layout, r.ProjectedPct, r.ActualPct, r.AbsErrorPP(), r.ErrorPP, r.WithinError, r.FilesActual, r.FilesProjected, r.SizeRatioActual, r.SizeRatioProjected, r.RewriteSeconds, r.BoundRatio, r.BoxRatio)
	}
	mean, signed, p95 := rep.ErrorStats()
	s += fmt.Sprintf("projecting all %d candidates took %.1fs (the sample alone %.1fs)\n", len(rep.Results), rep.ProjectSeconds, rep.SampleSeconds)
	s += fmt.Sprintf("per-query |error|: mean %.2f pp, signed mean %+.2f pp, p95 %.2f pp over %d queries x %d layouts\n", mean, signed, p95, rep.EvalQueries, len(rep.Results))
	return s
}

func TestLayoutHarnessSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and rewrites six 200k-row tables")
	}
	cfg := layout.Config{Rows: 200_000, Files: 40, FilesAfter: 24, DataSeed: 7, TrainSeed: 1, EvalSeed: 2, PerTemplate: 5}
	rep := evaluate(t, cfg)
	t.Log("\n" + resultTable(rep))

	cur, ok := rep.Find("current")
	require.True(t, ok)
	require.Equal(t, cur.ProjectedPct, cur.ActualPct, "current is projected from the real bounds")
	require.LessOrEqual(t, cur.ActualPct, 5.0, "arrival order skips almost nothing")
	sorted, ok := rep.Find("sort(l_shipdate)")
	require.True(t, ok)
	// The research targets that hold at this size (layout-research §7.3): T2 at about
	// 20–30 files, arrival order, and the mean per-query error of T7.
	require.GreaterOrEqual(t, sorted.ActualPct, 58.0, "T2: sort on the top column")
	require.LessOrEqual(t, cur.ActualPct, 1.0, "T2: arrival order")
	mean, _, _ := rep.ErrorStats()
	require.LessOrEqual(t, mean, 2.0, "T7: mean per-query |projected - actual|")
	for _, r := range rep.Results {
		t.Run(r.Layout, func(t *testing.T) {
			require.GreaterOrEqual(t, r.FilesActual, 16, "rewrite gives enough files to skip")
			require.LessOrEqual(t, r.AbsErrorPP(), 5.0, "projected %.2f vs actual %.2f", r.ProjectedPct, r.ActualPct)
		})
	}
}

// TestLayoutHarnessSmallMixed holds T4 at test size: on the workload with part-key
// lookups, Hilbert on (ship date, part key) skips at least 1.5 pp more than rank z-order
// on the same columns.
func TestLayoutHarnessSmallMixed(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and rewrites 200k-row tables")
	}
	cfg := layout.Config{Rows: 200_000, Files: 40, FilesAfter: 24, DataSeed: 7, TrainSeed: 1, EvalSeed: 2, PerTemplate: 5,
		Workload: layout.Mixed.Name, ZOrderMode: floelayout.ZOrderRank,
		Candidates: []string{"current", "zorder(l_shipdate, l_partkey)", "hilbert(l_shipdate, l_partkey)"}}
	rep := evaluate(t, cfg)
	t.Log("\n" + resultTable(rep))
	z, ok := rep.Find("zorder(l_shipdate, l_partkey)")
	require.True(t, ok)
	h, ok := rep.Find("hilbert(l_shipdate, l_partkey)")
	require.True(t, ok)
	require.GreaterOrEqual(t, h.ActualPct, z.ActualPct+1.5, "T4: Hilbert over rank z-order")
	require.GreaterOrEqual(t, h.ProjectedPct, z.ProjectedPct+1.5, "the projection sees it too")
}

func TestWorkloads(t *testing.T) {
	id := lake.Ident{Catalog: "c", Namespace: []string{layout.Namespace}, Name: "lineitem"}
	for _, w := range []layout.Workload{layout.TPCH, layout.Mixed, layout.Skewed, layout.Fleet} {
		t.Run(w.Name, func(t *testing.T) {
			a := w.SQL("lineitem", 200_000, 1, 3)
			b := w.SQL("lineitem", 200_000, 2, 3)
			require.NotEqual(t, a, b, "train and eval seeds draw different parameters")
			require.Equal(t, a, w.SQL("lineitem", 200_000, 1, 3), "same seed, same workload")
			qs, err := w.Queries(id, 200_000, 1, 3)
			require.NoError(t, err)
			require.Len(t, qs, 3*len(w.Templates))
			for i, q := range qs {
				require.NotNil(t, q.Filter, "template %s has a prunable predicate", w.Templates[i%len(w.Templates)])
			}
		})
	}
}

// TestTPCHPredicates pins what the extractor makes of each TPC-H template: qgen's date
// arithmetic must fold into literals, or the template would be unprunable by construction.
func TestTPCHPredicates(t *testing.T) {
	id := lake.Ident{Catalog: "c", Namespace: []string{layout.Namespace}, Name: "lineitem"}
	qs, err := layout.TPCH.Queries(id, 1000, 1, 1)
	require.NoError(t, err)
	want := map[string][]string{
		"q1":  {"l_shipdate <= "},
		"q3":  {"l_shipdate > "},
		"q6":  {"l_shipdate >= ", "l_shipdate < ", "l_discount", "l_quantity < "},
		"q7":  {"l_shipdate"},
		"q10": {"l_returnflag = "},
		"q12": {"l_shipmode in ", "l_receiptdate >= ", "l_receiptdate < "},
		"q14": {"l_shipdate >= ", "l_shipdate < "},
		"q15": {"l_shipdate >= ", "l_shipdate < "},
		"q19": {" OR ", "l_quantity >= ", "l_shipinstruct = "},
		"q20": {"l_shipdate >= ", "l_shipdate < "},
	}
	for i, q := range qs {
		name := layout.TPCH.Templates[i]
		f := q.Filter.String()
		require.NotContains(t, f, "INTERVAL", "%s: %s", name, f)
		for _, w := range want[name] {
			require.Contains(t, f, w, "%s: %s", name, f)
		}
	}
}

// treeVsBest returns the report's tree candidate and its best sort or curve candidate
// by measured skip; ok is false when it has no tree or no sort or curve.
func treeVsBest(rep layout.Report) (tree, best layout.Row, ok bool) {
	hasTree, hasBest := false, false
	for _, r := range rep.Results {
		switch {
		case strings.HasPrefix(r.Layout, "tree("):
			tree, hasTree = r, true
		case strings.HasPrefix(r.Layout, "sort("), strings.HasPrefix(r.Layout, "zorder("), strings.HasPrefix(r.Layout, "hilbert("):
			if !hasBest || r.ActualPct > best.ActualPct {
				best, hasBest = r, true
			}
		}
	}
	return tree, best, hasTree && hasBest
}

// TestLayoutHarnessSkewedTree runs issue 46's skewed multi-dimensional shape at test
// size: the tree, learned on the train draw of the workload and rewritten by the real
// rewriter, is projected within 2 pp of what iceberg-go's planner measures on the eval
// draw, and within its error bar, and skips at least 5 pp more files than the best sort
// or curve (issue 46's target; the first learner trailed Hilbert here). Issue 46's other
// target, at most three times the bound's files, is not met; BenchmarkLayout reports it.
func TestLayoutHarnessSkewedTree(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and rewrites 200k-row tables")
	}
	cfg := layout.Config{Rows: 200_000, Files: 40, FilesAfter: 24, DataSeed: 11, TrainSeed: 3, EvalSeed: 4, PerTemplate: 5,
		Workload: layout.Skewed.Name, ZOrderMode: floelayout.ZOrderRank,
		Candidates: []string{"sort(event_ts)", "hilbert(event_ts, account_id)", "tree(event_ts, account_id, kind, lat, lon, amount)"}}
	rep := evaluate(t, cfg)
	t.Log("\n" + resultTable(rep))
	tree, best, ok := treeVsBest(rep)
	require.True(t, ok)
	t.Logf("tree: %d leaves, bound %.2f%%, bound ratio %.2f; best %s %.2f%%", tree.TreeLeaves, tree.BoundPct, tree.BoundRatio, best.Layout, best.ActualPct)
	require.LessOrEqual(t, tree.AbsErrorPP(), 2.0, "projected %.2f vs actual %.2f", tree.ProjectedPct, tree.ActualPct)
	require.True(t, tree.WithinError, "projected %.2f ± %.2f vs actual %.2f", tree.ProjectedPct, tree.ErrorPP, tree.ActualPct)
	require.Greater(t, tree.TreeLeaves, 1, "the workload's predicates cut the table")
	require.Greater(t, tree.ActualPct, 20.0, "the tree skips files")
	require.GreaterOrEqual(t, tree.ActualPct, best.ActualPct+5, "the tree beats %s by 5 pp, measured", best.Layout)
}

// boolFigure records a yes/no outcome among a result's figures: 1 or 0.
func boolFigure(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

func BenchmarkLayout(b *testing.B) {
	rows := bench.EnvInt(b, "FLOE_BENCH_ROWS", 6_000_000)
	files := bench.EnvInt(b, "FLOE_BENCH_FILES", 240)
	// The research targets are set at about 120 files per 6M rows (≥ 60%) and about 30 (≥ 58%).
	filesAfter := bench.EnvInt(b, "FLOE_BENCH_FILES_AFTER", 120)
	workload := layout.TPCH
	if s := os.Getenv("FLOE_BENCH_WORKLOAD"); s != "" {
		w, ok := layout.Workloads[s]
		require.True(b, ok, "FLOE_BENCH_WORKLOAD=%q: want tpch, mixed, stream, skewed or fleet", s)
		workload = w
	}
	// T4 compares rank-normalized curves; FLOE_BENCH_ZORDER=iceberg measures Spark's key.
	zmode := floelayout.ZOrderRank
	if s := os.Getenv("FLOE_BENCH_ZORDER"); s != "" {
		m, err := floelayout.ParseZOrderMode(s)
		require.NoError(b, err, "FLOE_BENCH_ZORDER")
		zmode = m
	}
	// FLOE_BENCH_PARTITIONED=day (stream) or month (lineitem) partitions the table by
	// the shape's partition transform; FLOE_BENCH_COMPACTED=one or few bin-packs it
	// first, to one file per partition or a few.
	partitioned := false
	switch s := os.Getenv("FLOE_BENCH_PARTITIONED"); s {
	case "", "none":
	case workload.PartitionTransform():
		partitioned = true
	default:
		b.Fatalf("FLOE_BENCH_PARTITIONED=%q: the %s shape is partitioned by %q (or \"none\")", s, workload.Name, workload.PartitionTransform())
	}
	compacted := os.Getenv("FLOE_BENCH_COMPACTED")
	switch compacted {
	case "", layout.CompactedOne, layout.CompactedFew:
	default:
		b.Fatalf("FLOE_BENCH_COMPACTED=%q: want %q or %q", compacted, layout.CompactedOne, layout.CompactedFew)
	}
	// FLOE_BENCH_SEEDS=data,train,eval draws a fresh table and workload (default
	// 7,1,2, the draws the learner was tuned on).
	seeds := [3]uint64{7, 1, 2}
	if v := os.Getenv("FLOE_BENCH_SEEDS"); v != "" {
		parts := strings.Split(v, ",")
		require.Len(b, parts, 3, "FLOE_BENCH_SEEDS=%q: want data,train,eval", v)
		for i, p := range parts {
			n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
			require.NoError(b, err, "FLOE_BENCH_SEEDS=%q", v)
			seeds[i] = n
		}
		require.NotEqual(b, seeds[1], seeds[2], "FLOE_BENCH_SEEDS: the train and eval draws must differ")
	}
	cfg := layout.Config{Rows: rows, Files: files, FilesAfter: filesAfter, DataSeed: seeds[0], TrainSeed: seeds[1], EvalSeed: seeds[2], PerTemplate: 10,
		Workload: workload.Name, ZOrderMode: zmode, Partitioned: partitioned, Compacted: compacted}
	b.ReportAllocs()
	var rep layout.Report
	for b.Loop() {
		rep = evaluate(b, cfg)
	}
	out := resultTable(rep)
	mean, signed, p95 := rep.ErrorStats()
	get := func(l string) float64 { r, _ := rep.Find(l); return r.ActualPct }
	// T2 is ≥ 60% at about 120 files per 6M rows, ≥ 58% at about 30 (layout-research §7.3).
	sortTarget := 60.0
	if filesAfter*6_000_000/rows < 90 {
		sortTarget = 58
	}
	var zorder, hilbert string
	for _, c := range workload.Candidates {
		switch {
		case strings.HasPrefix(c, "zorder("):
			zorder = c
		case strings.HasPrefix(c, "hilbert("):
			hilbert = c
		}
	}
	name := "layout"
	if workload.Name != layout.TPCH.Name {
		name += "-" + workload.Name
	}
	if filesAfter != 120 {
		name += fmt.Sprintf("-%dfiles", filesAfter)
	}
	if zmode != floelayout.ZOrderRank {
		name += "-" + zmode.String()
	}
	if seeds != [3]uint64{7, 1, 2} {
		name += fmt.Sprintf("-seeds-%d-%d-%d", seeds[0], seeds[1], seeds[2])
	}
	if partitioned {
		name += "-by-" + workload.PartitionTransform()
	}
	if compacted != "" {
		name += "-compacted-" + compacted
	}
	res := bench.NewResult(name)
	type target struct {
		name string
		met  bool
	}
	var targets []target
	// T2 and T4 are set on the lineitem shape as appended, unpartitioned.
	if (workload.Name == layout.TPCH.Name || workload.Name == layout.Mixed.Name) && !partitioned && compacted == "" {
		targets = append(targets,
			target{fmt.Sprintf("T2 sort(l_shipdate) >= %.0f%% skipped", sortTarget), get("sort(l_shipdate)") >= sortTarget},
			target{"T2 arrival (current) <= 1% skipped", get("current") <= 1},
			target{"T4 hilbert >= zorder + 1.5 pp", get(hilbert) >= get(zorder)+1.5})
	}
	// Issue 46: a tree candidate reads at most a few times the bound's files and beats
	// the best sort or curve by 5 pp of files skipped, measured.
	if tree, best, ok := treeVsBest(rep); ok {
		out += fmt.Sprintf("tree %s: %d leaves, measured %.2f%% (bound %.2f%%, files read / bound %.2f; box model %.2f%%, files read / box %.2f); best sort or curve %s measured %.2f%% (bound ratio %.2f, box ratio %.2f)\n",
			tree.Layout, tree.TreeLeaves, tree.ActualPct, tree.BoundPct, tree.BoundRatio, tree.BoxBoundPct, tree.BoxRatio, best.Layout, best.ActualPct, best.BoundRatio, best.BoxRatio)
		for c, span := range tree.BoxSpans {
			res.Figures["box_model.span."+c] = span
		}
		targets = append(targets,
			target{"tree reads <= 3x the bound's files", tree.BoundRatio <= 3},
			target{"tree reads <= 1.25x the box model's files", tree.BoxRatio <= 1.25},
			target{"tree >= best sort or curve + 5 pp", tree.ActualPct >= best.ActualPct+5})
		// Per template: where the tree gains and where it trails.
		treeRead, bound, box := rep.TemplateFiles(tree)
		bestRead, _, _ := rep.TemplateFiles(best)
		out += fmt.Sprintf("%-22s %12s %12s %12s %12s   (mean files read per query, measured; of %d and %d files)\n", "template", "tree", "best", "tree bound", "tree box", tree.FilesActual, best.FilesActual)
		for _, name := range slices.Compact(slices.Clone(workload.Templates)) {
			out += fmt.Sprintf("%-22s %12.2f %12.2f %12.2f %12.2f\n", name, treeRead[name], bestRead[name], bound[name], box[name])
			res.Figures["tree.template."+name+".files_read"] = treeRead[name]
			res.Figures["best.template."+name+".files_read"] = bestRead[name]
			res.Figures["tree.template."+name+".bound_files"] = bound[name]
			res.Figures["tree.template."+name+".box_files"] = box[name]
		}
		res.Notes = append(res.Notes, "best sort or curve: "+best.Layout)
	}
	// Issue 41: every candidate's projection within 2 pp of the measurement and within
	// its own error bar.
	held := true
	for _, r := range rep.Results {
		held = held && r.AbsErrorPP() <= 2 && r.WithinError
	}
	targets = append(targets,
		target{"T7 mean |error| <= 2 pp", mean <= 2},
		target{"T7 p95 |error| <= 5 pp", p95 <= 5},
		target{"every candidate within 2 pp and its error bar", held})
	res.Params["rows"] = rows
	res.Params["files"] = rep.Files
	res.Params["target_file_size_bytes"] = rep.TargetFileSizeBytes
	res.Params["eval_queries"] = rep.EvalQueries
	res.Params["zorder_mode"] = zmode.String()
	res.Params["workload"] = workload.Name
	res.Params["files_after_target"] = filesAfter
	res.Params["train_seed"], res.Params["eval_seed"] = cfg.TrainSeed, cfg.EvalSeed
	res.Params["data_seed"] = cfg.DataSeed
	res.Params["partitioned"] = partitioned
	res.Params["partitions"] = rep.Partitions
	res.Params["compacted"] = compacted
	for _, r := range rep.Results {
		res.Figures[r.Layout+".projected_pct"] = r.ProjectedPct
		res.Figures[r.Layout+".train_projected_pct"] = r.TrainProjectedPct
		res.Figures[r.Layout+".actual_pct"] = r.ActualPct
		res.Figures[r.Layout+".abs_error_pp"] = r.AbsErrorPP()
		res.Figures[r.Layout+".files_after"] = float64(r.FilesActual)
		res.Figures[r.Layout+".files_projected"] = float64(r.FilesProjected)
		res.Figures[r.Layout+".size_ratio_actual"] = r.SizeRatioActual
		res.Figures[r.Layout+".size_ratio_projected"] = r.SizeRatioProjected
		res.Figures[r.Layout+".rewrite_s"] = r.RewriteSeconds
		res.Figures[r.Layout+".error_pp"] = r.ErrorPP
		res.Figures[r.Layout+".sampling_error_pp"] = r.SamplingErrorPP
		res.Figures[r.Layout+".size_error_pp"] = r.SizeErrorPP
		res.Figures[r.Layout+".within_error"] = boolFigure(r.WithinError)
		res.Figures[r.Layout+".within_2pp"] = boolFigure(r.AbsErrorPP() <= 2)
		res.Figures[r.Layout+".bound_pct"] = r.BoundPct
		res.Figures[r.Layout+".bound_ratio"] = r.BoundRatio
		res.Figures[r.Layout+".box_bound_pct"] = r.BoxBoundPct
		res.Figures[r.Layout+".box_ratio"] = r.BoxRatio
		if r.TreeLeaves > 0 {
			res.Figures[r.Layout+".tree_leaves"] = float64(r.TreeLeaves)
		}
	}
	res.Figures["mean_abs_error_pp"], res.Figures["signed_mean_error_pp"], res.Figures["p95_abs_error_pp"] = mean, signed, p95
	res.Figures["project_all_s"] = rep.ProjectSeconds
	res.Figures["sample_s"] = rep.SampleSeconds
	te := rep.TemplateErrors()
	for _, name := range slices.Compact(slices.Clone(workload.Templates)) {
		out += fmt.Sprintf("template %-30s mean |error| %.2f pp\n", name, te[name])
		res.Figures["template."+name+".mean_abs_error_pp"] = te[name]
	}
	for _, tg := range targets {
		out += fmt.Sprintf("%-40s met=%v\n", tg.name, tg.met)
		res.Notes = append(res.Notes, fmt.Sprintf("%s: met=%v", tg.name, tg.met))
	}
	path, err := res.Write()
	require.NoError(b, err)
	// A parent benchmark's log is not shown, so the table goes to stdout.
	fmt.Fprint(os.Stdout, out+"wrote "+path+"\n")
	b.ReportMetric(get("sort(l_shipdate)"), "sort_skip_pct")
	b.ReportMetric(mean, "mean_abs_err_pp")
	b.ReportMetric(math.Max(p95, 0), "p95_abs_err_pp")
}

// TestLayoutHarnessShapes projects every candidate on freshly generated tables —
// the skewed streaming shape partitioned by day as appended, compacted to one file per
// day and to a few, and unpartitioned; the TPC-H shape unpartitioned after compaction —
// rewrites each into the candidate with the real rewriter and measures it with
// iceberg-go's planner: every projection must be within 2 pp of the measurement and
// within its own stated error, and binpack of a table
// already compacted must project what current does. -short runs the shape the size
// model was fixed on alone (one file per day, where a day's bytes sit at the target and
// the file count turns on the bytes written).
func TestLayoutHarnessShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		short bool
		cfg   layout.Config
	}{
		{"stream by day one file per day", true, layout.Config{Workload: layout.Stream.Name, Rows: 300_000, Files: 60, FilesAfter: 30, Partitioned: true, Compacted: layout.CompactedOne}},
		{"stream by day as appended", false, layout.Config{Workload: layout.Stream.Name, Rows: 150_000, Files: 30, FilesAfter: 30, Partitioned: true}},
		{"stream by day few files per day", false, layout.Config{Workload: layout.Stream.Name, Rows: 150_000, Files: 30, FilesAfter: 30, Partitioned: true, Compacted: layout.CompactedFew}},
		{"stream unpartitioned", false, layout.Config{Workload: layout.Stream.Name, Rows: 150_000, Files: 30, FilesAfter: 20}},
		{"tpch unpartitioned compacted", false, layout.Config{Rows: 150_000, Files: 30, FilesAfter: 20, Compacted: layout.CompactedFew}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short runs one shape")
			}
			cfg := tc.cfg
			cfg.DataSeed, cfg.TrainSeed, cfg.EvalSeed, cfg.PerTemplate = 11, 1, 2, 4
			rep := evaluate(t, cfg)
			t.Log("\n" + resultTable(rep))
			cur, ok := rep.Find("current")
			require.True(t, ok)
			require.Equal(t, cur.ProjectedPct, cur.ActualPct, "current is projected from the real bounds")
			if cfg.Compacted == layout.CompactedOne {
				bp, ok := rep.Find("binpack")
				require.True(t, ok)
				require.InDelta(t, cur.ProjectedPct, bp.ProjectedPct, 1e-9, "binpack of a binpacked table is current")
			}
			for _, r := range rep.Results {
				t.Logf("%s: %d files projected, %d written; size %.3f projected, %.3f written; error bar %.2f pp (size model %.2f)",
					r.Layout, r.FilesProjected, r.FilesActual, r.SizeRatioProjected, r.SizeRatioActual, r.ErrorPP, r.SizeErrorPP)
				require.LessOrEqual(t, r.AbsErrorPP(), 2.0, "%s: projected %.2f vs actual %.2f", r.Layout, r.ProjectedPct, r.ActualPct)
				require.True(t, r.WithinError, "%s: projected %.2f ± %.2f vs actual %.2f", r.Layout, r.ProjectedPct, r.ErrorPP, r.ActualPct)
			}
		})
	}
}
