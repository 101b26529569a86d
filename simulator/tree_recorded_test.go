package simulator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// TestRecordedTreeProjectedBesideTheRelearned records the tree learned for one workload
// and projects the table's tree layout again: for the same workload the re-learned tree is
// the recorded one, projected alike; for a workload that moved to another column the
// re-learned tree differs and skips more than the recorded one would, re-clustered.
func TestRecordedTreeProjectedBesideTheRelearned(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a real table")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(42, 1))
	_, _, _, st, total := arrivalTable(t, rng)
	sc := testlake.ArrowSchema(t, st.Table)
	train := accuracyWorkload(rng)
	tree := layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "ts"}, {Name: "amount"}, {Name: "d"}}, TargetFileSizeBytes: total/16 + 1}
	opts := simulator.ProjectOptions{Sample: simulator.SampleOptions{RowsPerProjectedFile: 1000, Seed: 7}}
	first, err := simulator.Project(ctx, st, []layout.Layout{tree}, train, opts)
	require.NoError(t, err)
	require.Nil(t, first[0].RecordedTree, "the table records no tree yet")
	recorded, err := layout.UnmarshalTree(first[0].Tree, sc)
	require.NoError(t, err)
	opts.Recorded = &simulator.RecordedTree{Layout: tree, Tree: recorded}

	same, err := simulator.Project(ctx, st, []layout.Layout{tree}, train, opts)
	require.NoError(t, err)
	r := same[0].RecordedTree
	require.NotNil(t, r)
	require.True(t, r.SameAsLearned, "the same workload learns the recorded tree")
	require.Equal(t, recorded.Fingerprint(), r.TreeID)
	require.Equal(t, same[0].SkippedPct, r.SkippedPct)
	require.Equal(t, same[0].FilesAfter, r.FilesAfter)
	require.NotNil(t, r.TreeExplanation)
	require.Equal(t, recorded.Leaves(), r.TreeExplanation.Leaves)

	// The workload moved: amounts now, which the recorded tree cuts little on.
	var moved []simulator.Query
	for i := range 30 {
		a := float64(rng.IntN(800)) - 100
		moved = append(moved, simulator.Query{ID: fmt.Sprintf("m%d", i), Weight: 1, Filter: pred("amount", "between", fnum(a), fnum(a+20))})
	}
	next, err := simulator.Project(ctx, st, []layout.Layout{tree}, moved, opts)
	require.NoError(t, err)
	r = next[0].RecordedTree
	require.NotNil(t, r)
	require.False(t, r.SameAsLearned, "another workload learns another tree")
	t.Logf("moved workload: re-learned %.1f%% skipped (%d leaves), recorded %.1f%% (%d leaves)",
		next[0].SkippedPct, next[0].TreeExplanation.Leaves, r.SkippedPct, r.TreeExplanation.Leaves)
	require.Greater(t, next[0].SkippedPct, r.SkippedPct+5, "the re-learned tree serves the moved workload better")

	// A tree layout over other columns still shows the recorded tree beside it.
	other := layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "amount"}, {Name: "region"}}, TargetFileSizeBytes: total/16 + 1}
	ps, err := simulator.Project(ctx, st, []layout.Layout{other}, moved, opts)
	require.NoError(t, err)
	require.NotNil(t, ps[0].RecordedTree)
	require.Equal(t, r.SkippedPct, ps[0].RecordedTree.SkippedPct, "the recorded tree projects alike beside any tree layout")

	// Curves do not carry it.
	z := layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "ts"}, {Name: "amount"}}, TargetFileSizeBytes: total/16 + 1}
	ps, err = simulator.Project(ctx, st, []layout.Layout{z}, moved, opts)
	require.NoError(t, err)
	require.Nil(t, ps[0].RecordedTree)
}
