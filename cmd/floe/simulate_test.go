package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// TestSimulateRenderThinAndBound: a projection whose sample is too thin says so
// instead of printing ± 0.0, and every projection prints files read ÷ the bound
// and ÷ the box model.
func TestSimulateRenderThinAndBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    simulator.Projection
		want []string
		not  []string
	}{
		{"thin", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a"}}}, FilesAfter: 8, SkippedPct: 40, SampleThin: true, SampleNote: "sample too thin: 3.0 sampled rows per projected file"},
			[]string{"thin*", "* sort(a): sample too thin: 3.0 sampled rows per projected file"}, []string{" 0.0 "}},
		{"bound", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategyCurrent}, FilesAfter: 8, SkippedPct: 21.9, ErrorPP: 0, BoundRatio: 1.25},
			[]string{"1.25x", "READ/BOUND"}, []string{"thin*"}},
		{"box", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategyCurrent}, FilesAfter: 8, SkippedPct: 21.9, BoundRatio: 5.5, BoxRatio: 1.07},
			[]string{"5.50x", "1.07x", "READ/BOX", "the best grid of as many files"}, []string{"thin*"}},
		{"no bound", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategyBinpack}, FilesAfter: 8, ErrorPP: 0.4},
			[]string{" - ", "0.4"}, []string{"thin*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			io := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
			pr := control.Projections{Table: lake.Ident{Namespace: []string{"web"}, Name: "events"}, State: &lake.State{}, Projections: []simulator.Projection{tc.p}}
			require.NoError(t, renderSimulate(io, outputTable, pr, false))
			for _, w := range tc.want {
				require.Contains(t, out.String(), w)
			}
			for _, n := range tc.not {
				require.NotContains(t, out.String(), n)
			}
		})
	}
}

// TestSimulatePrintsTarget: simulate says which target file size its
// candidates were cut at and where it comes from — floe's default for a
// table that sets none, the policy's target_file_size, --target-file-size
// — in text and JSON.
func TestSimulatePrintsTarget(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 4, 50)
	sql := filepath.Join(t.TempDir(), "w.sql")
	require.NoError(t, os.WriteFile(sql, []byte("SELECT * FROM db.flat WHERE id = 7;\n"), 0o644))
	for _, tc := range []struct {
		name   string
		policy string
		args   []string
		bytes  int64
		source string
	}{
		{"default", "", nil, simulator.DefaultTargetFileSizeBytes, "floe's default"},
		{"policy", "default: {target_file_size: 64MiB}", nil, 64 << 20, "the policy's target_file_size"},
		{"flag", "default: {target_file_size: 64MiB}", []string{"--target-file-size", "32MiB"}, 32 << 20, "--target-file-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := dir
			if tc.policy != "" {
				cfg, err := os.ReadFile(filepath.Join(dir, "floe.yaml"))
				require.NoError(t, err)
				dir = t.TempDir()
				require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), append(cfg, "policies:\n  "+tc.policy+"\n"...), 0o644))
			}
			base := append([]string{"simulate", "db.flat", "--workload", sql, "--layout", "binpack"}, tc.args...)
			io, out, errOut := testIO()
			require.Equal(t, 0, runWith(t, io, dir, append(base, "--output", "json")...), errOut.String())
			var res simulator.SimulateResult
			require.NoError(t, json.Unmarshal(out.Bytes(), &res))
			require.Equal(t, tc.bytes, res.TargetFileSizeBytes)
			require.Contains(t, res.TargetSource, tc.source)
			require.Equal(t, tc.bytes, res.Candidates[len(res.Candidates)-1].TargetFileSizeBytes)

			io, out, errOut = testIO()
			require.Equal(t, 0, runWith(t, io, dir, base...), errOut.String())
			require.Contains(t, out.String(), "target file size: "+config.FormatSize(tc.bytes)+", from "+tc.source)
		})
	}
}

// treeExplained is a tree projection's explanation of three cuts, the third
// under the first's left side.
func treeExplained() *layout.TreeExplanation {
	return &layout.TreeExplanation{Leaves: 5, Depth: 3, RowsPerLeaf: layout.RowsPerLeaf{Min: 1200, Median: 2000, Max: 2600},
		Cuts: []layout.TreeCutExplanation{
			{Predicate: "l_shipdate < 1995-03-01", Column: "l_shipdate", Parent: -1, RowsLeft: 4000, RowsRight: 6000, LeavesLeft: 3, LeavesRight: 2, QueryShare: 0.4, QueryShareLeft: 0.25, QueryShareRight: 0.15},
			{Predicate: "l_shipmode <= 'MAIL'", Column: "l_shipmode", Depth: 1, Parent: 0, Side: "right", RowsLeft: 2600, RowsRight: 3400, LeavesLeft: 1, LeavesRight: 1, QueryShare: 0.1, QueryShareLeft: 0.1},
			{Predicate: "l_quantity < 25", Column: "l_quantity", Depth: 1, Parent: 0, Side: "left", RowsLeft: 2000, RowsRight: 2000, LeavesLeft: 2, LeavesRight: 1, QueryShare: 0.2, QueryShareRight: 0.2},
			{Predicate: "l_orderkey < 100", Column: "l_orderkey", Depth: 2, Parent: 2, Side: "left", RowsLeft: 1200, RowsRight: 800, LeavesLeft: 1, LeavesRight: 1, QueryShare: 0.05, QueryShareLeft: 0.05},
		}}
}

// TestSimulateExplainsTheTree: under the table, a tree candidate's learned
// tree in words, its root's cut and its children's (the fourth cut is for
// plan show); JSON carries the whole explanation.
func TestSimulateExplainsTheTree(t *testing.T) {
	t.Parallel()
	l, err := layout.Parse("tree(l_shipdate, l_shipmode, l_quantity, l_orderkey)")
	require.NoError(t, err)
	p := simulator.Projection{Layout: l, FilesAfter: 5, SkippedPct: 40, TreeExplanation: treeExplained()}
	sorted := simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "l_shipdate"}}}, FilesAfter: 5}
	var out bytes.Buffer
	io := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	pr := control.Projections{Table: lake.Ident{Namespace: []string{"sales"}, Name: "lineitem"}, State: &lake.State{}, Projections: []simulator.Projection{sorted, p}}
	require.NoError(t, renderSimulate(io, outputTable, pr, false))
	require.Contains(t, out.String(), `
  tree(l_shipdate, l_shipmode, l_quantity, l_orderkey): 5 leaves, 3 levels deep; 1200 to 2600 rows a leaf (median 2000)
    l_shipdate < 1995-03-01: 4000 rows left, 6000 right; 40% of queries skip a side (25% the left, 15% the right)
      left: l_quantity < 25: 2000 rows left, 2000 right; 20% of queries skip a side (0% the left, 20% the right)
      right: l_shipmode <= 'MAIL': 2600 rows left, 3400 right; 10% of queries skip a side (10% the left, 0% the right)
  READ/BOUND:`)
	require.NotContains(t, out.String(), "l_orderkey < 100")

	out.Reset()
	require.NoError(t, renderSimulate(io, outputJSON, pr, false))
	var res struct {
		Candidates []struct {
			TreeExplanation *layout.TreeExplanation `json:"tree_explanation"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	require.Nil(t, res.Candidates[0].TreeExplanation, "a sort has no tree")
	require.Equal(t, treeExplained(), res.Candidates[1].TreeExplanation)
}

// TestPlanShowExplainsTheTree: plan show prints a tree plan's every cut
// explained, under its figures.
func TestPlanShowExplainsTheTree(t *testing.T) {
	t.Parallel()
	l, err := layout.Parse("tree(l_shipdate, l_shipmode, l_quantity, l_orderkey)")
	require.NoError(t, err)
	p := control.Plan{ID: "0b52644ab1d9", Table: "local.sales.lineitem", Layout: l, State: control.PlanProposed,
		Projection: control.PlanProjection{Projection: simulator.Projection{Layout: l, SkippedPct: 40, TreeExplanation: treeExplained()}}}
	var out bytes.Buffer
	require.NoError(t, printPlan(&out, p))
	require.Contains(t, out.String(), `
  learned tree   5 leaves, 3 levels deep; 1200 to 2600 rows a leaf (median 2000)
    l_shipdate < 1995-03-01: 4000 rows left, 6000 right; 40% of queries skip a side (25% the left, 15% the right)
      left: l_quantity < 25: 2000 rows left, 2000 right; 20% of queries skip a side (0% the left, 20% the right)
        left: l_orderkey < 100: 1200 rows left, 800 right; 5% of queries skip a side (5% the left, 0% the right)
      right: l_shipmode <= 'MAIL': 2600 rows left, 3400 right; 10% of queries skip a side (10% the left, 0% the right)
next: floe plan approve 0b52644ab1d9 (or reject)
`)
	p.Layout, p.Projection.TreeExplanation = layout.Layout{Strategy: layout.StrategyBinpack}, nil
	out.Reset()
	require.NoError(t, printPlan(&out, p))
	require.NotContains(t, out.String(), "learned tree")
}
