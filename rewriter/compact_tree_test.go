package rewriter_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// TestCompactTree rewrites a table into a tree layout whose learned tree is handed in, as
// a plan hands the projection's: every row is kept, the layout is declared, and each of
// the tree's leaves (id < 10000, sorted by v, and the rest, sorted by id) fills files of
// its own but for the one file the writer cuts across the boundary. Without the tree, the
// compaction is refused before anything is read.
func TestCompactTree(t *testing.T) {
	ctx := context.Background()
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	l, err := layout.Parse("tree(id, v)")
	require.NoError(t, err)

	opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 16 << 10, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	_, err = rewriter.Compact(ctx, st, rewriter.CompactPlan{}, opts)
	require.ErrorContains(t, err, "layout tree(id, v) needs its learned tree")

	sc, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
	require.NoError(t, err)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Append(10000)
	arr := b.NewArray()
	b.Release()
	cut, err := layout.ValueKey(arr, 0)
	arr.Release()
	require.NoError(t, err)
	opts.Tree, err = layout.NewTree(sc, &layout.TreeNode{
		Cut:   &layout.TreeCut{Column: "id", Value: cut},
		Left:  &layout.TreeNode{SortColumn: "v"},
		Right: &layout.TreeNode{SortColumn: "id"},
	})
	require.NoError(t, err)
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.NoError(t, err)
	require.Empty(t, res.Skipped)
	tt.tbl = res.Table
	tt.requireSameRows(t)

	after := tt.state(t, tt.tbl)
	require.Equal(t, l.String(), after.Metadata.Properties()[rewriter.PropLayout])
	straddling := 0
	for _, f := range after.DataFiles {
		if f.PartitionKey != "region=eu" {
			continue
		}
		lo, hi := f.Lower[1].(iceberg.Int64Literal), f.Upper[1].(iceberg.Int64Literal)
		if lo < 10000 && hi >= 10000 {
			straddling++
		}
	}
	require.LessOrEqual(t, straddling, 1, "rows are grouped by leaf: only the file at the boundary holds both")
	again, err := rewriter.PlanCompaction(after, opts)
	require.NoError(t, err)
	require.Empty(t, again.Groups, "%s", groupSummary(again))
}
