package simulator_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// TestExplainTreeByHand explains a hand-built tree on 100 rows (id 0…99, n = id mod 10,
// amount = id) where every share can be counted by hand:
//
//	id < 40 ── left: a leaf of ids 0…39 (40 rows)
//	        └─ right: n <= 4 ── left: ids 40…94 with n ≤ 4 (30 rows)
//	                        └─ right: ids 45…99 with n ≥ 5 (30 rows)
//
// The workload, 6 in weight: id < 20 (weight 2) skips the root's right side and the
// whole of the second cut; id >= 50 skips the root's left side; n = 7 reads both sides
// of the root, and skips the second cut's left side; id between 30 and 45 reads both
// sides of both cuts; amount > 1000 reads nothing at all, so it serves no cut.
func TestExplainTreeByHand(t *testing.T) {
	rows := make([]eventRow, 100)
	for i := range rows {
		n, a := int32(i%10), float64(i)
		rows[i] = eventRow{id: int64(i), n: &n, amount: &a}
	}
	_, s := wholeSample(t, rows, 1)
	sc := s.Records[0].Schema()
	root := &layout.TreeNode{
		Cut:  &layout.TreeCut{Column: "id", Value: numKeyOf(t, arrow.PrimitiveTypes.Int64, int64(40))},
		Left: &layout.TreeNode{SortColumn: "n"},
		Right: &layout.TreeNode{
			Cut:   &layout.TreeCut{Column: "n", Value: numKeyOf(t, arrow.PrimitiveTypes.Int32, int64(4)), Inclusive: true},
			Left:  &layout.TreeNode{SortColumn: "id"},
			Right: &layout.TreeNode{SortColumn: "id", Descending: true},
		},
	}
	tr, err := layout.NewTree(sc, root)
	require.NoError(t, err)
	qs := []simulator.Query{
		{ID: "low", Weight: 2, Filter: pred("id", "<", num(20))},
		{ID: "high", Weight: 1, Filter: pred("id", ">=", num(50))},
		{ID: "seven", Weight: 1, Filter: pred("n", "=", num(7))},
		{ID: "middle", Weight: 1, Filter: pred("id", "between", num(30), num(45))},
		{ID: "none", Weight: 1, Filter: pred("amount", ">", fnum(1000))},
	}
	e, err := simulator.ExplainTree(s, tr, qs)
	require.NoError(t, err)
	require.Equal(t, 3, e.Leaves)
	require.Equal(t, 2, e.Depth)
	require.Equal(t, layout.RowsPerLeaf{Min: 30, Median: 30, Max: 40}, e.RowsPerLeaf)
	require.Len(t, e.Cuts, 2)

	c := e.Cuts[0]
	require.Equal(t, "id < 40", c.Predicate)
	require.Equal(t, []any{"id", 0, -1, ""}, []any{c.Column, c.Depth, c.Parent, c.Side})
	require.Equal(t, []int64{40, 60}, []int64{c.RowsLeft, c.RowsRight})
	require.Equal(t, []int{1, 2}, []int{c.LeavesLeft, c.LeavesRight})
	require.InDelta(t, 3.0/6, c.QueryShare, 1e-12, "id < 20 (2) and id >= 50 (1)")
	require.InDelta(t, 1.0/6, c.QueryShareLeft, 1e-12, "id >= 50 skips ids 0…39")
	require.InDelta(t, 2.0/6, c.QueryShareRight, 1e-12, "id < 20 skips ids 40…99")

	c = e.Cuts[1]
	require.Equal(t, "n <= 4", c.Predicate)
	require.Equal(t, []any{"n", 1, 0, "right"}, []any{c.Column, c.Depth, c.Parent, c.Side})
	require.Equal(t, []int64{30, 30}, []int64{c.RowsLeft, c.RowsRight})
	require.Equal(t, []int{1, 1}, []int{c.LeavesLeft, c.LeavesRight})
	require.InDelta(t, 1.0/6, c.QueryShare, 1e-12, "n = 7 alone: id < 20 skips the whole node")
	require.InDelta(t, 1.0/6, c.QueryShareLeft, 1e-12)
	require.Zero(t, c.QueryShareRight)

	require.Equal(t, []string{
		"3 leaves, 2 levels deep; 30 to 40 rows a leaf (median 30)",
		"id < 40: 40 rows left, 60 right; 50% of queries skip a side (17% the left, 33% the right)",
		"  right: n <= 4: 30 rows left, 30 right; 17% of queries skip a side (17% the left, 0% the right)",
	}, e.Lines(0))
	require.Len(t, e.Lines(1), 2, "the summary and the root's cut")

	// A tree that is one leaf has nothing to cut.
	one, err := layout.NewTree(sc, &layout.TreeNode{SortColumn: "id"})
	require.NoError(t, err)
	e, err = simulator.ExplainTree(s, one, qs)
	require.NoError(t, err)
	require.Equal(t, layout.TreeExplanation{Leaves: 1, RowsPerLeaf: layout.RowsPerLeaf{Min: 100, Median: 100, Max: 100}, Cuts: []layout.TreeCutExplanation{}}, e)
}

// TestTreeProjectionIsExplained projects a learned tree from a partial sample: the
// projection carries the explanation of the tree it carries, its rows scaled to the
// table's.
func TestTreeProjectionIsExplained(t *testing.T) {
	rows := make([]eventRow, 4000)
	for i := range rows {
		n, a := int32(i%100), float64(i%1000)
		rows[i] = eventRow{id: int64(i), n: &n, amount: &a}
	}
	_, s := wholeSample(t, rows, 4)
	var qs []simulator.Query
	for i := range 4 {
		qs = append(qs, simulator.Query{ID: "n", Weight: 1, Filter: pred("n", "between", num(int64(i*25)), num(int64(i*25+3)))})
	}
	qs = append(qs, simulator.Query{ID: "lo", Weight: 4, Filter: pred("id", "<", num(2000))},
		simulator.Query{ID: "hi", Weight: 4, Filter: pred("id", ">=", num(2000))})
	l, err := layout.Parse("tree(id, n)")
	require.NoError(t, err)
	p, err := simulator.ProjectSample(s, l, qs, s.TableBytes/8, simulator.ProjectOptions{})
	require.NoError(t, err)
	require.NotNil(t, p.TreeExplanation)
	tr, err := layout.UnmarshalTree(p.Tree, s.Records[0].Schema())
	require.NoError(t, err)
	e := *p.TreeExplanation
	require.Equal(t, tr.Leaves(), e.Leaves)
	require.Equal(t, tr.Depth(), e.Depth)
	require.NotEmpty(t, e.Cuts)
	root := tr.Root()
	pred, err := tr.CutPredicate(*root.Cut)
	require.NoError(t, err)
	c := e.Cuts[0]
	require.Equal(t, pred, c.Predicate)
	require.Equal(t, s.TableRows, c.RowsLeft+c.RowsRight)
	require.Equal(t, root.Left.Rows, c.RowsLeft, "the sample is the table: the rows the learner saw")
	require.Equal(t, e.Leaves, c.LeavesLeft+c.LeavesRight)
	require.LessOrEqual(t, e.RowsPerLeaf.Min, e.RowsPerLeaf.Median)
	require.LessOrEqual(t, e.RowsPerLeaf.Median, e.RowsPerLeaf.Max)
	for _, c := range e.Cuts {
		require.GreaterOrEqual(t, c.QueryShare, max(c.QueryShareLeft, c.QueryShareRight))
		require.LessOrEqual(t, c.QueryShare, 1.0)
	}
	t.Log(e.Lines(0))

	// Other layouts carry none.
	sl, err := layout.Parse("sort(n)")
	require.NoError(t, err)
	p, err = simulator.ProjectSample(s, sl, qs, s.TableBytes/8, simulator.ProjectOptions{})
	require.NoError(t, err)
	require.Nil(t, p.TreeExplanation)
}
