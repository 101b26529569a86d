package simulator

import (
	"fmt"
	"slices"

	"github.com/floe-project/floe/layout"
)

// ExplainTree explains tree t, learned on sample s, for the workload queries: its leaf
// count and depth, the rows of its leaves and its top [layout.MaxExplainedCuts] cuts,
// breadth first, each with its predicate, the rows on its two sides and the share of the
// queries (weighted as replay weighs them) that skip a side thanks to it.
//
// Every sampled row is routed to its leaf by the tree's own key ([layout.NewEncoder]),
// so the rows counted are the rows the projection and the rewrite place there; counts
// are scaled from the sample to the table's rows (s.TableRows ÷ s.Rows). A cut's share
// is measured the way replay measures files: the node's sampled rows, and each side's,
// are taken as one file each (their min/max, null and value counts on every predicate
// column), and a query counts when it reads the node's file but not one side's. A side
// with no sampled rows is never counted as skipped. Pure: no I/O.
func ExplainTree(s *Sample, t *layout.Tree, queries []Query) (layout.TreeExplanation, error) {
	if t == nil {
		return layout.TreeExplanation{}, fmt.Errorf("explain tree: no tree")
	}
	if s == nil || s.Rows == 0 || len(s.Records) == 0 {
		return layout.TreeExplanation{}, fmt.Errorf("explain tree: %w", errNoSample)
	}
	leafOf, err := routeSample(s, t)
	if err != nil {
		return layout.TreeExplanation{}, fmt.Errorf("explain tree: %w", err)
	}
	scale := 1.0
	if s.TableRows > 0 {
		scale = float64(s.TableRows) / float64(s.Rows)
	}
	scaled := func(n int) int64 { return int64(float64(n)*scale + 0.5) }

	perLeaf := make([]int, t.Leaves())
	for _, l := range leafOf {
		perLeaf[l]++
	}
	sorted := slices.Clone(perLeaf)
	slices.Sort(sorted)
	e := layout.TreeExplanation{
		Leaves: t.Leaves(), Depth: t.Depth(),
		RowsPerLeaf: layout.RowsPerLeaf{Min: scaled(sorted[0]), Median: scaled(sorted[(len(sorted)-1)/2]), Max: scaled(sorted[len(sorted)-1])},
		Cuts:        []layout.TreeCutExplanation{},
	}

	// The top cuts, breadth first, each with the leaves its sides span (leaves are
	// numbered left to right, so a subtree's leaves are a range).
	type item struct {
		n             *layout.TreeNode
		first, leaves int // the node's leaf range
		depth, parent int
		side          string
	}
	type shown struct {
		item
		leftLeaves int
	}
	var cuts []shown
	queue := []item{{n: t.Root(), leaves: t.Leaves(), parent: -1}}
	for len(queue) > 0 && len(cuts) < layout.MaxExplainedCuts {
		it := queue[0]
		queue = queue[1:]
		if it.n.Cut == nil {
			continue
		}
		ll := leafCount(it.n.Left)
		idx := len(cuts)
		cuts = append(cuts, shown{item: it, leftLeaves: ll})
		queue = append(queue,
			item{n: it.n.Left, first: it.first, leaves: ll, depth: it.depth + 1, parent: idx, side: "left"},
			item{n: it.n.Right, first: it.first + ll, leaves: it.leaves - ll, depth: it.depth + 1, parent: idx, side: "right"})
	}
	if len(cuts) == 0 {
		return e, nil
	}

	// Rows of each shown node and side, as boxes replay reads: node, left, right.
	b := newBinding(s.Schema)
	bq := bindQueries(b, queries)
	vals, err := extractColumns(s, b)
	if err != nil {
		return layout.TreeExplanation{}, fmt.Errorf("explain tree: %w", err)
	}
	boxes := make([][]int32, 0, 3*len(cuts))
	for _, c := range cuts {
		var node, left, right []int32
		for r, l := range leafOf {
			if l < c.first || l >= c.first+c.leaves {
				continue
			}
			node = append(node, int32(r))
			if l < c.first+c.leftLeaves {
				left = append(left, int32(r))
			} else {
				right = append(right, int32(r))
			}
		}
		boxes = append(boxes, node, left, right)
	}
	fs := newFileSet(len(boxes), b)
	for fi, rows := range boxes {
		fs.size[fi], fs.records[fi] = int64(len(rows)), int64(len(rows))
		for ci := range b.cols {
			switch cd := fs.cols[ci].(type) {
			case *colData[uint64]:
				fillU64(cd, fi, &vals[ci], rows, int64(len(rows)), 0)
			case *colData[string]:
				fillStr(cd, fi, &vals[ci], rows, int64(len(rows)), 0)
			}
		}
	}
	fs.finish()
	share := make([]float64, len(cuts))
	shareLeft := make([]float64, len(cuts))
	shareRight := make([]float64, len(cuts))
	var total float64
	for _, q := range bq {
		w := q.weight
		if w <= 0 {
			w = 1
		}
		total += w
		read := fs.replayBits(q.e)
		reads := func(fi int) bool { return read[fi/64]&(1<<(fi%64)) != 0 }
		for i := range cuts {
			node, left, right := 3*i, 3*i+1, 3*i+2
			if !reads(node) {
				continue
			}
			skipL := len(boxes[left]) > 0 && !reads(left)
			skipR := len(boxes[right]) > 0 && !reads(right)
			if skipL {
				shareLeft[i] += w
			}
			if skipR {
				shareRight[i] += w
			}
			if skipL || skipR {
				share[i] += w
			}
		}
	}
	for i, c := range cuts {
		pred, err := t.CutPredicate(*c.n.Cut)
		if err != nil {
			return layout.TreeExplanation{}, fmt.Errorf("explain tree: %w", err)
		}
		ce := layout.TreeCutExplanation{
			Predicate: pred, Column: c.n.Cut.Column, Depth: c.depth, Parent: c.parent, Side: c.side,
			RowsLeft: scaled(len(boxes[3*i+1])), RowsRight: scaled(len(boxes[3*i+2])),
			LeavesLeft: c.leftLeaves, LeavesRight: c.leaves - c.leftLeaves,
		}
		if total > 0 {
			ce.QueryShareLeft, ce.QueryShareRight = shareLeft[i]/total, shareRight[i]/total
			ce.QueryShare = share[i] / total
		}
		e.Cuts = append(e.Cuts, ce)
	}
	return e, nil
}

// leafCount is the number of leaves under n.
func leafCount(n *layout.TreeNode) int {
	if n.Cut == nil {
		return 1
	}
	return leafCount(n.Left) + leafCount(n.Right)
}

// routeSample returns the leaf of every sampled row, in sample order, by the tree's key.
func routeSample(s *Sample, t *layout.Tree) ([]int, error) {
	cols := make([]layout.Column, 0, len(t.Columns()))
	for _, c := range t.Columns() {
		cols = append(cols, layout.Column{Name: c})
	}
	enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyTree, Columns: cols}, s.Records[0].Schema(), layout.EncoderOptions{Tree: t})
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, s.Rows)
	var buf []byte
	for _, rec := range s.Records {
		for row := range int(rec.NumRows()) {
			buf, err = enc.AppendKey(buf[:0], rec, row)
			if err != nil {
				return nil, err
			}
			leaf, ok := layout.LeafOfKey(buf)
			if !ok || leaf >= t.Leaves() {
				return nil, fmt.Errorf("sampled row %d: a key without its leaf", len(out))
			}
			out = append(out, leaf)
		}
	}
	return out, nil
}
