package simulator_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// wholeSample writes rows as files appends of equal size and reads every row back as a
// sample.
func wholeSample(t *testing.T, rows []eventRow, files int) (*lake.State, *simulator.Sample) {
	t.Helper()
	w := testlake.New(t)
	t.Cleanup(func() {
		if c, ok := w.Catalog.(io.Closer); ok {
			require.NoError(t, c.Close())
		}
	})
	props := iceberg.Properties{"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}
	tbl := w.CreateTable(t, "db", "events", eventsSchema(), nil, props, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for f := range files {
		rec := eventRecord(t, sc, rows[f*len(rows)/files:(f+1)*len(rows)/files])
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	st, err := lake.LoadState(context.Background(), lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "events"}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	s, err := simulator.TakeSample(context.Background(), st, []string{"id", "n", "amount", "region", "ts"},
		simulator.SampleOptions{ProjectedFiles: files, RowsPerProjectedFile: len(rows), Seed: 1})
	require.NoError(t, err)
	t.Cleanup(s.Release)
	require.Equal(t, len(rows), s.Rows, "the sample holds every row")
	return st, s
}

// numKeyOf is the sort-key encoding of number v as a value of type dt (int32, int64 or
// float64), as a tree cut holds it.
func numKeyOf[N int64 | float64](t *testing.T, dt arrow.DataType, v N) []byte {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	switch bb := b.(type) {
	case *array.Int32Builder:
		bb.Append(int32(v))
	case *array.Int64Builder:
		bb.Append(int64(v))
	case *array.Float64Builder:
		bb.Append(float64(v))
	default:
		t.Fatalf("numKeyOf: %s", dt)
	}
	arr := b.NewArray()
	defer arr.Release()
	k, err := layout.ValueKey(arr, 0)
	require.NoError(t, err)
	return k
}

// TestLearnTreeFindsTheKnownCuts builds a workload whose best cut is known: ranges of n
// weigh the most, so every node is sorted on n and a cut on n would only move file
// boundaries; the best cut is id < 2000, which lets the id < 2000 and id >= 2000
// queries each skip half the table. Decoys: id > 3990 (a literal that leaves too few
// rows on its side), amount > 10 (a column the tree may not cut on) and region =
// 'eu-west'.
func TestLearnTreeFindsTheKnownCuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := randomRows(rng, 4000, 0, 0, 29, false, regions)
	_, s := wholeSample(t, rows, 4)
	var qs []simulator.Query
	add := func(w float64, f *expr.Node) {
		qs = append(qs, simulator.Query{ID: fmt.Sprintf("q%d", len(qs)), Weight: w, Filter: f})
	}
	for i := range 10 {
		add(1, pred("n", "between", num(int64(i*9)), num(int64(i*9+5))))
	}
	add(1, pred("id", ">", num(3990)))
	add(1, pred("amount", ">", fnum(10)))
	add(1, pred("region", "=", str("eu-west")))
	add(4, pred("id", "<", num(2000)))
	add(4, pred("id", ">=", num(2000)))
	l, err := layout.Parse("tree(region, id, n)")
	require.NoError(t, err)

	start := time.Now()
	tr, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
	require.NoError(t, err)
	t.Logf("learned %d leaves, depth %d, in %s", tr.Leaves(), tr.Depth(), time.Since(start))
	root := tr.Root()
	require.NotNil(t, root.Cut)
	require.Equal(t, "id", root.Cut.Column, "n is what the nodes are sorted on: a cut on it gains nothing the sort does not")
	require.Equal(t, numKeyOf(t, arrow.PrimitiveTypes.Int64, int64(2000)), root.Cut.Value)
	require.False(t, root.Cut.Inclusive, "id < 2000")
	require.Equal(t, int64(4000), root.Rows)
	require.Equal(t, int64(2000), root.Left.Rows)
	var walk func(n *layout.TreeNode)
	walk = func(n *layout.TreeNode) {
		if n.Cut == nil {
			require.Equal(t, "n", n.SortColumn)
			return
		}
		require.NotEqual(t, "n", n.Cut.Column)
		walk(n.Left)
		walk(n.Right)
	}
	walk(root)

	// Deterministic: the same sample and workload give the same tree.
	again, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
	require.NoError(t, err)
	require.Equal(t, tr.Root(), again.Root())

	// Leaves no smaller than MinLeafRows: at 2500, no cut leaves both sides that big.
	one, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 2500})
	require.NoError(t, err)
	require.Equal(t, 1, one.Leaves())
	// No query filters on a tree column: nothing to gain from a cut.
	none, err := simulator.LearnTree(s, layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "ts"}}}, qs, simulator.TreeOptions{MinLeafRows: 10})
	require.NoError(t, err)
	require.Equal(t, 1, none.Leaves())
	require.Nil(t, none.Root().Cut)
}

// TestLearnTreeStretchesARareLiteral learns a tree for ranges of n and amount > 890,
// true of about 1% of the rows, fewer than a file: the cut at 890 would leave a side
// smaller than MinLeafRows, so the learner cuts where the top MinLeafRows amounts
// begin, and the query reads that one leaf. Both leaves are sorted on n, ascending: the
// rewrite writes each into files of its own.
func TestLearnTreeStretchesARareLiteral(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rows := randomRows(rng, 4000, 0, 0, 29, false, regions)
	_, s := wholeSample(t, rows, 4)
	var qs []simulator.Query
	for i := range 10 {
		qs = append(qs, simulator.Query{ID: fmt.Sprint(i), Weight: 1, Filter: pred("n", "between", num(int64(i*9)), num(int64(i*9+5)))})
	}
	qs = append(qs, simulator.Query{ID: "rare", Weight: 3, Filter: pred("amount", ">", fnum(890))})
	l, err := layout.Parse("tree(n, amount)")
	require.NoError(t, err)
	tr, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
	require.NoError(t, err)
	root := tr.Root()
	require.NotNil(t, root.Cut)
	require.Equal(t, "amount", root.Cut.Column)
	require.False(t, root.Cut.Inclusive)
	// The 500th largest amount: the right side holds it and every larger one.
	amounts := make([]float64, len(rows))
	for i, r := range rows {
		amounts[i] = *r.amount
	}
	slices.Sort(amounts)
	at := amounts[len(amounts)-500]
	require.Less(t, at, 890.0, "the cut moved below the literal")
	require.Equal(t, numKeyOf(t, arrow.PrimitiveTypes.Float64, at), root.Cut.Value)
	var above int64
	for _, a := range amounts {
		if a >= at {
			above++
		}
	}
	require.Equal(t, above, root.Right.Rows)
	require.Nil(t, root.Left.Cut, "ranges of n gain nothing from more cuts")
	require.Nil(t, root.Right.Cut)
	require.Equal(t, "n", root.Left.SortColumn)
	require.Equal(t, "n", root.Right.SortColumn)
	require.False(t, root.Left.Descending)
	require.False(t, root.Right.Descending, "every leaf's files are its own: no leaf need run the other way")

	// Without the rare query, nothing pays for a cut.
	plain, err := simulator.LearnTree(s, l, qs[:10], simulator.TreeOptions{MinLeafRows: 500})
	require.NoError(t, err)
	require.Equal(t, 1, plain.Leaves())
}

// TestLearnTreeSortsLeavesByTheirBestColumn learns a tree on a workload of amount ranges:
// sorting on amount serves it, so the tree is one leaf sorted on amount, not on n, the
// first tree column, and not cut at the workload's literals (which would only move the
// files' boundaries).
func TestLearnTreeSortsLeavesByTheirBestColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rows := randomRows(rng, 2000, 0, 0, 29, false, regions)
	_, s := wholeSample(t, rows, 2)
	var qs []simulator.Query
	for i := range 10 {
		a := float64(i*80) - 100
		qs = append(qs, simulator.Query{ID: fmt.Sprint(i), Filter: pred("amount", "between", fnum(a), fnum(a+40))})
	}
	l, err := layout.Parse("tree(n, amount)")
	require.NoError(t, err)
	tr, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 250})
	require.NoError(t, err)
	require.Equal(t, 1, tr.Leaves())
	require.Equal(t, "amount", tr.Root().SortColumn)
}

func TestLearnTreeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	_, s := wholeSample(t, randomRows(rng, 200, 0, 0, 29, false, regions), 1)
	_, err := simulator.LearnTree(s, layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "n"}}}, nil, simulator.TreeOptions{MinLeafRows: 1})
	require.ErrorContains(t, err, "is not a tree")
	tree := layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "n"}}}
	_, err = simulator.LearnTree(s, tree, nil, simulator.TreeOptions{})
	require.ErrorContains(t, err, "MinLeafRows must be > 0")
	_, err = simulator.LearnTree(s, layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "nope"}}}, nil, simulator.TreeOptions{MinLeafRows: 1})
	require.ErrorContains(t, err, `tree column "nope"`)
}

// TestTreeProjectionMatchesRewrite projects a tree learned on one draw of a workload for
// another draw, rewrites the table into the tree the projection learned with the
// rewriter (each leaf's rows in files of their own) and requires the projected skip rate
// within 2 pp of what iceberg-go's planning measures on the rewritten table, and the
// projected file count within one a leaf of the files written.
func TestTreeProjectionMatchesRewrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes several real tables")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(42, 1))
	_, _, _, st, total := arrivalTable(t, rng)
	sc := testlake.ArrowSchema(t, st.Table)
	target := total/16 + 1
	train, eval := accuracyWorkload(rng), accuracyWorkload(rng)
	tree := layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "ts"}, {Name: "amount"}, {Name: "d"}}, TargetFileSizeBytes: target}
	curve := layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "ts"}, {Name: "amount"}}, TargetFileSizeBytes: target}
	opts := simulator.ProjectOptions{Sample: simulator.SampleOptions{RowsPerProjectedFile: 1000, Seed: 7}, TreeWorkload: train}
	start := time.Now()
	projs, err := simulator.Project(ctx, st, []layout.Layout{tree, curve}, eval, opts)
	require.NoError(t, err)
	p := projs[0]
	t.Logf("projected in %s", time.Since(start))
	require.NotEmpty(t, p.Tree)
	require.Empty(t, projs[1].Tree)
	learned, err := layout.UnmarshalTree(p.Tree, sc)
	require.NoError(t, err)
	t.Logf("tree: %d leaves, depth %d; z-order projected %.1f%%", learned.Leaves(), learned.Depth(), projs[1].SkippedPct)
	require.Greater(t, learned.Leaves(), 4)
	copts := rewriter.CompactOptions{Layout: tree, Tree: learned, TargetFileSizeBytes: target}
	plan, err := rewriter.PlanCompaction(st, copts)
	require.NoError(t, err)
	res, err := rewriter.Compact(ctx, st, plan, copts)
	require.NoError(t, err)
	actual := res.Table
	require.InDelta(t, p.FilesAfter, res.FilesOut, float64(learned.Leaves()), "files projected and written")
	m, err := simulator.Measure(ctx, actual, eval)
	require.NoError(t, err)
	t.Logf("%s projected %5.1f%% ± %.1f (bias %.1f, sample %d rows, bound ratio %.2f) measured %5.1f%% over %d files",
		p.Layout, p.SkippedPct, p.ErrorPP, p.BiasPP, p.SampleRows, p.BoundRatio, m.SkippedPct, m.FilesTotal)
	require.InDelta(t, m.SkippedPct, p.SkippedPct, 2.0)
	require.LessOrEqual(t, math.Abs(m.SkippedPct-p.SkippedPct), p.ErrorPP+math.Abs(p.BiasPP)+1)
	require.Positive(t, p.BoundRatio)
	require.Greater(t, p.SkippedPct, projs[1].SkippedPct, "the tree beats z-order on the workload it was learned for")
}

// TestTreeCacheReusesTheLearnedTree projects a tree layout twice on the same table with
// the same sample options and learning workload: the second projection learns nothing
// and projects the same tree, as a projection without the cache does. Another learning
// workload learns anew; a cache of one tree forgets the first when it learns the second.
func TestTreeCacheReusesTheLearnedTree(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a real table")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(42, 1))
	_, _, _, st, total := arrivalTable(t, rng)
	train, other, eval := accuracyWorkload(rng), accuracyWorkload(rng), accuracyWorkload(rng)
	tree := layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "ts"}, {Name: "amount"}, {Name: "d"}}, TargetFileSizeBytes: total/16 + 1}
	cache := simulator.NewTreeCache(0)
	opts := simulator.ProjectOptions{Sample: simulator.SampleOptions{RowsPerProjectedFile: 1000, Seed: 7}, TreeWorkload: train, TreeCache: cache}
	project := func(o simulator.ProjectOptions) simulator.Projection {
		t.Helper()
		ps, err := simulator.Project(ctx, st, []layout.Layout{tree}, eval, o)
		require.NoError(t, err)
		require.NotEmpty(t, ps[0].Tree)
		return ps[0]
	}
	first := project(opts)
	learned := cache.Stats().Misses
	require.Positive(t, learned, "one tree per sample the projection took")
	require.Zero(t, cache.Stats().Hits)

	again := project(opts)
	require.Equal(t, simulator.TreeCacheStats{Hits: learned, Misses: learned}, cache.Stats(), "the same samples and workload: every tree reused")
	require.JSONEq(t, string(first.Tree), string(again.Tree))
	require.Equal(t, first.SkippedPct, again.SkippedPct)

	uncached := opts
	uncached.TreeCache = nil
	require.JSONEq(t, string(first.Tree), string(project(uncached).Tree), "a hit is the tree a miss learns")

	opts.TreeWorkload = other
	project(opts)
	require.Equal(t, 2*learned, cache.Stats().Misses, "another learning workload learns anew")

	small := simulator.NewTreeCache(1)
	opts.TreeCache, opts.Sample.RowsPerProjectedFile = small, 20_000 // one sample: every row
	for _, w := range [][]simulator.Query{train, other, train} {
		opts.TreeWorkload = w
		project(opts)
	}
	require.Equal(t, simulator.TreeCacheStats{Misses: 3}, small.Stats(), "a cache of one tree forgot the first")
}

// TestLearnTreeCutsATiedRunsRareRowsIntoALeaf learns trees where a column holds one value
// on all but 1% of its rows (the fleet's error_code: 0, or here n = 50 on every row but
// 40) and the workload names the rare values beside ranges of id. No cut on n leaves a
// file's rows on the rare side, and stretching it would take the tied run, so the
// learner moves the cut to the run's edge: the rare rows, fewer than a file, become a
// leaf of their own (a small file), which the rare queries read alone. It is cut at the
// root even where another cut gains more there (with amount > 890 of weight 20 and the
// n queries weighing less, id < 2000 would be the root's cut, and n cut on both sides),
// so that no subtree cuts it again. Without a query on n there is no cut on n, and no leaf is
// smaller than a file.
func TestLearnTreeCutsATiedRunsRareRowsIntoALeaf(t *testing.T) {
	type nq struct {
		op   string
		vals []int64
	}
	for _, tc := range []struct {
		name      string
		rareVals  []int   // the rare rows' values of n, in turn; every other row holds 50
		queries   []nq    // on n
		weight    float64 // of each query on n (each id range weighs 1)
		amount    bool    // add amount > 890 of weight 20
		wantCut   bool
		wantValue int64 // the root's cut: n < wantValue, or n <= wantValue when inclusive
		inclusive bool
		rareRight bool // the rare rows go right
		nulls     bool // every other row holds a null, not 50
	}{
		{"rare values above the run", []int{60, 70, 80}, []nq{{"in", []int64{60, 80}}, {"=", []int64{70}}}, 2, false, true, 50, true, true, false},
		{"rare values below the run", []int{10, 20, 30}, []nq{{"<", []int64{25}}, {"=", []int64{30}}}, 2, false, true, 50, false, false, false},
		{"before a cut that gains more", []int{60, 70, 80}, []nq{{"in", []int64{60, 80}}, {"=", []int64{70}}}, 0.5, true, true, 50, true, true, false},
		{"no query names the rare values", []int{60, 70, 80}, nil, 2, false, false, 0, false, false, false},
		{"rare values beside a run of nulls", []int{60, 70, 80}, []nq{{"in", []int64{60, 80}}, {"=", []int64{70}}}, 2, false, true, 60, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			rows := randomRows(rng, 4000, 0, 0, 29, false, regions)
			rare := 0
			for i := range rows {
				v := int32(50)
				if i%100 == 50 {
					v = int32(tc.rareVals[rare%len(tc.rareVals)])
					rare++
				} else if tc.nulls {
					rows[i].n = nil
					continue
				}
				rows[i].n = &v
			}
			_, s := wholeSample(t, rows, 4)
			// Ranges of id (arrival order) that a sort on id serves.
			var qs []simulator.Query
			for i := range 10 {
				qs = append(qs, simulator.Query{ID: fmt.Sprint("id", i), Weight: 1, Filter: pred("id", "between", num(int64(i*400)), num(int64(i*400+150)))})
			}
			for i, q := range tc.queries {
				var vals []expr.Value
				for _, v := range q.vals {
					vals = append(vals, num(v))
				}
				qs = append(qs, simulator.Query{ID: fmt.Sprint("n", i), Weight: tc.weight, Filter: pred("n", q.op, vals...)})
			}
			if tc.amount {
				qs = append(qs, simulator.Query{ID: "amount", Weight: 20, Filter: pred("amount", ">", fnum(890))})
			}
			l, err := layout.Parse("tree(id, n, amount)")
			require.NoError(t, err)
			tr, err := simulator.LearnTree(s, l, qs, simulator.TreeOptions{MinLeafRows: 500})
			require.NoError(t, err)
			root := tr.Root()
			cutsOnN := 0
			var walk func(n *layout.TreeNode)
			walk = func(n *layout.TreeNode) {
				if n.Cut == nil {
					if !tc.wantCut {
						require.GreaterOrEqual(t, n.Rows, int64(500), "no leaf below a file")
					}
					return
				}
				if n.Cut.Column == "n" {
					cutsOnN++
				}
				walk(n.Left)
				walk(n.Right)
			}
			walk(root)
			if !tc.wantCut {
				require.Zero(t, cutsOnN, "nothing asks for a cut on n")
				return
			}
			require.Equal(t, 1, cutsOnN, "n is cut once")
			require.NotNil(t, root.Cut)
			require.Equal(t, "n", root.Cut.Column, "the tied run's edge is cut first")
			require.Equal(t, numKeyOf(t, arrow.PrimitiveTypes.Int32, tc.wantValue), root.Cut.Value, "at the run's value, not at a literal")
			require.Equal(t, tc.inclusive, root.Cut.Inclusive)
			small, big := root.Left, root.Right
			if tc.rareRight {
				small, big = root.Right, root.Left
			}
			require.Equal(t, int64(rare), small.Rows, "the rare rows alone, fewer than a file")
			require.Less(t, small.Rows, int64(500))
			require.Nil(t, small.Cut, "a leaf")
			require.Equal(t, int64(len(rows)-rare), big.Rows)
			if tc.amount {
				require.NotNil(t, big.Cut, "the cut of larger gain is made below it")
			}
		})
	}
}
