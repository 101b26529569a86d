package simulator_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// statuses are the values of the region column in the set-cut tests: 'ok' three
// quarters of the rows, between 'error' and 'timeout', an eighth each (and a tenth of
// the rows null).
var statuses = []string{"error", "ok", "ok", "ok", "ok", "ok", "ok", "timeout"}

// strKey is the sort-key encoding of string v, as a tree cut holds it.
func strKey(t *testing.T, v string) []byte {
	t.Helper()
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(v)
	arr := b.NewArray()
	defer arr.Release()
	k, err := layout.ValueKey(arr, 0)
	require.NoError(t, err)
	return k
}

// nRanges is ten ranges of n, each of weight 1: a node is sorted on n.
func nRanges() []simulator.Query {
	var qs []simulator.Query
	for i := range 10 {
		qs = append(qs, simulator.Query{ID: fmt.Sprintf("n%d", i), Weight: 1, Filter: pred("n", "between", num(int64(i*9)), num(int64(i*9+5)))})
	}
	return qs
}

func withQueries(qs []simulator.Query, w float64, filters ...*expr.Node) []simulator.Query {
	for i, f := range filters {
		qs = append(qs, simulator.Query{ID: fmt.Sprintf("q%d", i), Weight: w, Filter: f})
	}
	return qs
}

// TestLearnTreeMakesASetCut learns a tree where a set cut wins: ranges of n (the nodes'
// sort) and queries on the rare statuses 'error' and 'timeout', which lie on both sides
// of 'ok'. No range cut separates both from 'ok' (region < 'error' holds the nulls and
// 'error', and the right side then spans 'ok' to 'timeout'); the set cut region IN
// ('error', 'timeout') leaves the right side 'ok' and nulls alone, so that every file of
// it is skipped by those queries. Named together in one IN list or apart (the ends of
// the values the workload names), the learner makes that cut, the rows it sends left
// are the rows of those statuses, and its predicate reads as SQL.
func TestLearnTreeMakesASetCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := randomRows(rng, 4000, 0, 0, 29, false, statuses)
	_, s := wholeSample(t, rows, 4)
	var rare int64
	for _, r := range rows {
		if r.region != nil && *r.region != "ok" {
			rare++
		}
	}
	l, err := layout.Parse("tree(region, n)")
	require.NoError(t, err)
	for name, qs := range map[string][]simulator.Query{
		"one IN list": withQueries(nRanges(), 4, pred("region", "in", str("timeout"), str("error"))),
		"named apart": withQueries(nRanges(), 2, pred("region", "=", str("error")), pred("region", "=", str("timeout")),
			pred("region", "=", str("error")), pred("region", "=", str("timeout"))),
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
			require.NoError(t, err)
			root := tr.Root()
			require.NotNil(t, root.Cut)
			require.Equal(t, "region", root.Cut.Column)
			require.Equal(t, [][]byte{strKey(t, "error"), strKey(t, "timeout")}, root.Cut.Set)
			require.Empty(t, root.Cut.Value)
			require.Equal(t, rare, root.Left.Rows, "the rows of 'error' and 'timeout' go left, the nulls right")
			require.Equal(t, int64(len(rows))-rare, root.Right.Rows)
			require.Nil(t, root.Right.Cut, "the ranges of n gain nothing from more cuts")
			require.Equal(t, "n", root.Right.SortColumn)
			ex, err := simulator.ExplainTree(s, tr, qs)
			require.NoError(t, err)
			require.Equal(t, "region IN ('error', 'timeout')", ex.Cuts[0].Predicate)
			require.Equal(t, rare, ex.Cuts[0].RowsLeft)
			require.Positive(t, ex.Cuts[0].QueryShareRight, "the status queries skip the right side")

			again, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
			require.NoError(t, err)
			require.Equal(t, tr.Fingerprint(), again.Fingerprint(), "deterministic")
		})
	}
}

// TestLearnTreeTakesNoSetCutThatDoesNotHelp: the learner proposes set cuts from the
// workload's IN lists, but the judge takes one only where min/max pruning gains from
// it. Statuses queried as rarely as once for every ten ranges of n: the set cut would
// let them skip the 'ok' side, but the ranges would read a file more on each side, so
// no cut is made. And regions queried by an IN list of two values from the middle of the
// order ('ap-east', 'sa-east'), however often: the other side's files hold values below
// and above both, so no query skips them, and no cut is made.
func TestLearnTreeTakesNoSetCutThatDoesNotHelp(t *testing.T) {
	l, err := layout.Parse("tree(region, n)")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	_, s := wholeSample(t, randomRows(rng, 4000, 0, 0, 29, false, statuses), 4)
	rare := withQueries(nRanges(), 1, pred("region", "in", str("error"), str("timeout")))
	tr, err := simulator.LearnTree(s, l, rare, simulator.TreeOptions{MinLeafRows: 500})
	require.NoError(t, err)
	require.Equal(t, 1, tr.Leaves(), "a status query for every ten ranges does not pay for the cut")
	often := withQueries(nRanges(), 4, pred("region", "in", str("error"), str("timeout")))
	tr, err = simulator.LearnTree(s, l, often, simulator.TreeOptions{MinLeafRows: 500})
	require.NoError(t, err)
	require.NotNil(t, tr.Root().Cut, "four times as often, it does")
	require.NotEmpty(t, tr.Root().Cut.Set)

	rng = rand.New(rand.NewPCG(3, 4))
	_, s = wholeSample(t, randomRows(rng, 4000, 0, 0, 29, false, regions), 4)
	for _, w := range []float64{1, 4, 40} {
		qs := withQueries(nRanges(), w, pred("region", "in", str("ap-east"), str("sa-east")))
		tr, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
		require.NoError(t, err)
		var walk func(n *layout.TreeNode)
		walk = func(n *layout.TreeNode) {
			if n.Cut == nil {
				return
			}
			require.Empty(t, n.Cut.Set, "weight %v: a set of middle values helps no min/max", w)
			walk(n.Left)
			walk(n.Right)
		}
		walk(tr.Root())
	}
}
