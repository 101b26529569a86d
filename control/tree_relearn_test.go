package control_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// TestRelearnedTreeBesideTheRecorded is issue 46's "when the workload changes, the
// candidate generator proposes a re-learned tree and the report shows old vs new": a
// table rewritten into a tree learned for one workload is projected again. For the same
// workload the tree learned is the one recorded; for a workload that moved to amounts,
// the re-learned tree differs, and the projection carries the recorded one beside it,
// skipping less, with its own explanation.
func TestRelearnedTreeBesideTheRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes, plans and rewrites a real table")
	}
	ctx := t.Context()
	fx := plannedTree(t)
	tbl, err := lake.LoadTable(ctx, fx.w.Catalog, fx.id)
	require.NoError(t, err)
	state, err := lake.LoadState(ctx, fx.id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	target, err := strconv.ParseInt(tbl.Properties()[lake.PropRewriteTargetFileSize], 10, 64)
	require.NoError(t, err)
	trino, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	project := func(stmts []string, l layout.Layout) control.Projections {
		t.Helper()
		pr, err := control.Project(ctx, fx.st, state, control.ProjectOptions{
			Layouts: []layout.Layout{l}, WithCurrent: true, Seed: 1, TargetFileSizeBytes: target,
			Workload: control.WorkloadOptions{SQL: strings.NewReader(strings.Join(stmts, ";\n")), SQLName: "q.sql", Dialect: trino},
		})
		require.NoError(t, err)
		require.Len(t, pr.Projections, 2)
		return pr
	}

	recorded, err := rewriter.RecordedTree(tbl.Metadata(), fx.layout)
	require.NoError(t, err)
	pr := project(fx.stmts, fx.layout)
	cur, same := pr.Projections[0], pr.Projections[1]
	r := same.RecordedTree
	require.NotNil(t, r, "the table records a tree: it is projected beside the re-learned one")
	require.Equal(t, tbl.Properties()[rewriter.PropLayout], r.Layout.String())
	require.Equal(t, recorded.Fingerprint(), r.TreeID)
	t.Logf("same workload: today %.1f%%, recorded tree re-clustered %.1f%% ± %.1f, re-learned %.1f%%: %s",
		cur.SkippedPct, r.SkippedPct, r.ErrorPP, same.SkippedPct, r.Compare(same.SkippedPct))
	require.InDelta(t, cur.SkippedPct, r.SkippedPct, r.ErrorPP+2, "the table lies in its tree: re-clustered into it, it skips what it skips today")

	rng := rand.New(rand.NewPCG(46, 46))
	var moved []string
	for range 12 {
		lo := rng.IntN(980)
		moved = append(moved, fmt.Sprintf("SELECT * FROM db.mixed WHERE amount BETWEEN %d AND %d", lo, lo+10))
	}
	pr = project(moved, fx.layout)
	cur, next := pr.Projections[0], pr.Projections[1]
	r = next.RecordedTree
	require.NotNil(t, r)
	require.False(t, r.SameAsLearned, "a workload on amounts learns another tree")
	require.NotNil(t, r.TreeExplanation)
	require.NotNil(t, next.TreeExplanation)
	t.Logf("moved workload: today %.1f%%, recorded tree re-clustered %.1f%% (%d leaves), re-learned %.1f%% (%d leaves): %s",
		cur.SkippedPct, r.SkippedPct, r.TreeExplanation.Leaves, next.SkippedPct, next.TreeExplanation.Leaves, r.Compare(next.SkippedPct))
	require.Greater(t, next.SkippedPct, r.SkippedPct+5, "the re-learned tree serves the moved workload better")
	require.Contains(t, r.Compare(next.SkippedPct), "the table records another tree (tree id "+r.TreeID)

	z, err := layout.Parse("zorder(id, amount)")
	require.NoError(t, err)
	require.Nil(t, project(moved, z).Projections[1].RecordedTree, "only tree layouts carry it")
}
