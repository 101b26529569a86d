package simulator

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/floe-project/floe/layout"
)

// TreeOptions tunes the tree learner ([LearnTree]). The zero value uses the defaults.
type TreeOptions struct {
	// MinLeafRows is the fewest sampled rows a leaf may hold: a node is not cut when a
	// side would hold fewer. [ProjectSample] sets it to the sampled rows per projected
	// file, so that a leaf is at least a file. Required (> 0).
	MinLeafRows int
	// MaxCutsPerColumn bounds the candidate cuts tried on one column at one node: when the
	// workload's literals give more, the node's rows are split into this many equal ranges
	// and the candidate used by the most (weighted) queries is kept in each. Default: 32.
	MaxCutsPerColumn int
}

// DefaultMaxCutsPerColumn is [TreeOptions.MaxCutsPerColumn]'s default.
const DefaultMaxCutsPerColumn = 32

// treeCand is one candidate cut on a tree column: rows whose key compares below thr
// go left (nulls always, NaN never); lit is the workload's literal it comes from.
type treeCand struct {
	thr       uint64
	inclusive bool
	lit       iceberg.Literal
	weight    float64 // of the queries that name the literal
	pos       int     // rows going left at the current node
}

// treeLearner is the state of one learning run over a sample.
type treeLearner struct {
	s       *Sample
	b       *binding
	qs      []boundQuery
	vals    []colVals
	cols    []int // tree columns, as indexes into b.cols, in the layout's order
	cands   [][]treeCand
	minRows int
	maxCuts int
	// class[c][r] and key[c][r] order row r on tree column cols[c]: class 0 (null), 1
	// (a value, ordered by key: its replay key, or a string's rank) or 2 (NaN).
	class [][]uint8
	key   [][]uint64
}

// learnedNode is a node of the tree being learned.
type learnedNode struct {
	rows        []int32
	col         int // tree column index; -1 for a leaf
	cand        treeCand
	left, right *learnedNode
	sort        int
}

// LearnTree learns a tree for layout l (a tree layout: its columns are the ones the tree
// may cut on) from the sample's rows and the workload's predicates, greedily, top down.
//
// Candidate cuts come from the workload's own literals on the tree columns: for x < v and
// x >= v the cut x < v, for x <= v and x > v the cut x <= v, for x = v and each value of
// a short IN list both, BETWEEN as its two bounds. At each node every candidate that
// leaves at least MinLeafRows rows on both sides is scored by replaying every query on
// the min/max bounds of the node's rows and of each side's rows (the rules replay uses on
// real files): its gain is, summed over queries with their weights, the rows of the sides
// the query skips less the rows it already skipped at the node. The best cut (first in
// column then value order on a tie) is taken, and its sides are learned in turn; a node
// with no cut of positive gain, or with fewer than twice MinLeafRows rows, is a leaf. A
// leaf's sort column is the tree column that, when the leaf's rows are sorted on it and
// cut into MinLeafRows-row files, lets the queries skip the most rows (the first column
// on a tie).
//
// The work is bounded by tree columns × (rows × (log rows + predicate columns) +
// MaxCutsPerColumn × queries) per level of the tree, the levels about log2(rows ÷
// MinLeafRows). Deterministic: the same sample and workload give the same tree.
func LearnTree(s *Sample, l layout.Layout, queries []Query, opts TreeOptions) (*layout.Tree, error) {
	if l.Strategy != layout.StrategyTree {
		return nil, fmt.Errorf("learn tree: layout %s is not a tree", l)
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("learn tree: %w", err)
	}
	if opts.MinLeafRows <= 0 {
		return nil, fmt.Errorf("learn tree: MinLeafRows must be > 0, got %d", opts.MinLeafRows)
	}
	if opts.MaxCutsPerColumn <= 0 {
		opts.MaxCutsPerColumn = DefaultMaxCutsPerColumn
	}
	if s == nil || s.Rows == 0 || len(s.Records) == 0 {
		return nil, fmt.Errorf("learn tree %s: %w", l, errNoSample)
	}
	tl := &treeLearner{s: s, b: newBinding(s.Schema), minRows: opts.MinLeafRows, maxCuts: opts.MaxCutsPerColumn}
	tl.qs = bindQueries(tl.b, queries)
	var errs []error
	for _, c := range l.Columns {
		ci, ok := tl.b.column(c.Name)
		if !ok {
			errs = append(errs, fmt.Errorf("tree column %q: not a column of a type replay bounds (numbers, dates, timestamps, booleans, strings)", c.Name))
			continue
		}
		tl.cols = append(tl.cols, ci)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("learn tree %s: %w", l, errors.Join(errs...))
	}
	vals, err := extractColumns(s, tl.b)
	if err != nil {
		return nil, fmt.Errorf("learn tree %s: %w", l, err)
	}
	tl.vals = vals
	tl.keys()
	tl.candidates()
	all := make([]int32, s.Rows)
	for i := range all {
		all[i] = int32(i)
	}
	root := tl.grow(all, 0)
	tn, err := tl.export(root)
	if err != nil {
		return nil, fmt.Errorf("learn tree %s: %w", l, err)
	}
	t, err := layout.NewTree(s.Records[0].Schema(), tn)
	if err != nil {
		return nil, fmt.Errorf("learn tree %s: %w", l, err)
	}
	return t, nil
}

// keys fills class and key for every tree column: strings by their rank.
func (tl *treeLearner) keys() {
	tl.class = make([][]uint8, len(tl.cols))
	tl.key = make([][]uint64, len(tl.cols))
	for c, ci := range tl.cols {
		v := &tl.vals[ci]
		cl := make([]uint8, tl.s.Rows)
		k := make([]uint64, tl.s.Rows)
		for r := range cl {
			switch {
			case v.nan[r]:
				cl[r] = 2
			case v.null[r]:
				cl[r] = 0
			default:
				cl[r] = 1
				if v.u != nil {
					k[r] = v.u[r]
				} else {
					k[r] = uint64(v.rank[r])
				}
			}
		}
		tl.class[c], tl.key[c] = cl, k
	}
}

// candidates collects each tree column's candidate cuts from the workload's literals,
// sorted by threshold, one per threshold (the first literal in that order).
func (tl *treeLearner) candidates() {
	tl.cands = make([][]treeCand, len(tl.cols))
	colOf := map[int]int{}
	for c, ci := range tl.cols {
		colOf[ci] = c
	}
	var walk func(e *expr, w float64)
	walk = func(e *expr, w float64) {
		switch e.kind {
		case exAnd, exOr:
			for _, k := range e.kids {
				walk(k, w)
			}
			return
		case exLeaf:
		default:
			return
		}
		lf := &e.leaf
		c, ok := colOf[lf.col]
		if !ok {
			return
		}
		add := func(i int, inclusive bool) {
			if thr, ok := tl.threshold(c, lf, i, inclusive); ok {
				tl.cands[c] = append(tl.cands[c], treeCand{thr: thr, inclusive: inclusive, lit: lf.lits[i], weight: w})
			}
		}
		switch lf.op {
		case opLT, opGE:
			add(0, false)
		case opLE, opGT:
			add(0, true)
		case opEQ:
			add(0, false)
			add(0, true)
		case opIn:
			if len(lf.lits) <= inPredicateLimit {
				for i := range lf.lits {
					add(i, false)
					add(i, true)
				}
			}
		}
	}
	for _, q := range tl.qs {
		w := q.weight
		if w <= 0 {
			w = 1
		}
		walk(q.e, w)
	}
	for c := range tl.cands {
		cs := tl.cands[c]
		slices.SortStableFunc(cs, func(a, b treeCand) int { return cmp.Compare(a.thr, b.thr) })
		out := cs[:0]
		for _, x := range cs {
			if n := len(out); n > 0 && out[n-1].thr == x.thr {
				out[n-1].weight += x.weight
				continue
			}
			out = append(out, x)
		}
		tl.cands[c] = out
	}
}

// threshold maps literal i of leaf lf to the key below which rows go left: for numbers the
// literal's key (plus one when inclusive), for strings the rank of the first sampled
// value at or above (above, when inclusive) the literal.
func (tl *treeLearner) threshold(c int, lf *leaf, i int, inclusive bool) (uint64, bool) {
	v := &tl.vals[tl.cols[c]]
	if v.u == nil {
		s := lf.s[i]
		n := sort.SearchStrings(v.dict, s)
		if inclusive && n < len(v.dict) && v.dict[n] == s {
			n++
		}
		return uint64(n), true
	}
	u := lf.u[i]
	if inclusive {
		if u == math.MaxUint64 {
			return 0, false
		}
		u++
	}
	return u, true
}

// sortedOn returns rows ordered on tree column c: nulls, then values, then NaN.
func (tl *treeLearner) sortedOn(rows []int32, c int) []int32 {
	out := slices.Clone(rows)
	cl, k := tl.class[c], tl.key[c]
	slices.SortStableFunc(out, func(a, b int32) int {
		if x := cmp.Compare(cl[a], cl[b]); x != 0 {
			return x
		}
		return cmp.Compare(k[a], k[b])
	})
	return out
}

// leftCount is how many of rows (sorted on c) go left of threshold thr.
func (tl *treeLearner) leftCount(sorted []int32, c int, thr uint64) int {
	cl, k := tl.class[c], tl.key[c]
	return sort.Search(len(sorted), func(i int) bool {
		r := sorted[i]
		return cl[r] == 2 || cl[r] == 1 && k[r] >= thr
	})
}

// split is one candidate split of a node: column, cut and the rows on its left.
type split struct {
	col    int
	cand   treeCand
	sorted []int32
	pos    int
}

func (tl *treeLearner) grow(rows []int32, depth int) *learnedNode {
	n := &learnedNode{rows: rows, col: -1}
	if len(rows) >= 2*tl.minRows && depth < layout.MaxTreeDepth {
		if best, ok := tl.bestSplit(rows); ok {
			n.col, n.cand = best.col, best.cand
			n.left = tl.grow(best.sorted[:best.pos], depth+1)
			n.right = tl.grow(best.sorted[best.pos:], depth+1)
			return n
		}
	}
	n.sort = tl.bestSort(rows)
	return n
}

// bestSplit scores every candidate cut of the node and returns the one of greatest
// positive gain.
func (tl *treeLearner) bestSplit(rows []int32) (split, bool) {
	var splits []split
	var boxes [][]int32 // node, then each split's left and right
	boxes = append(boxes, rows)
	for c := range tl.cols {
		if len(tl.cands[c]) == 0 {
			continue
		}
		sorted := tl.sortedOn(rows, c)
		var valid []treeCand
		last := -1
		for _, cd := range tl.cands[c] {
			cd.pos = tl.leftCount(sorted, c, cd.thr)
			if cd.pos < tl.minRows || len(rows)-cd.pos < tl.minRows || cd.pos == last {
				continue
			}
			last = cd.pos
			valid = append(valid, cd)
		}
		for _, cd := range tl.thin(valid, len(rows)) {
			splits = append(splits, split{col: c, cand: cd, sorted: sorted, pos: cd.pos})
			boxes = append(boxes, sorted[:cd.pos], sorted[cd.pos:])
		}
	}
	if len(splits) == 0 {
		return split{}, false
	}
	skipped := tl.skippedRows(boxes)
	best, bestGain := -1, 0.0
	for i := range splits {
		gain := skipped[1+2*i] + skipped[2+2*i] - skipped[0]
		if gain > bestGain+1e-9 {
			best, bestGain = i, gain
		}
	}
	if best < 0 {
		return split{}, false
	}
	return splits[best], true
}

// thin keeps at most maxCuts of valid (ordered by position): the node's rows are split
// into maxCuts equal ranges and the candidate of most weight is kept in each.
func (tl *treeLearner) thin(valid []treeCand, n int) []treeCand {
	if len(valid) <= tl.maxCuts {
		return valid
	}
	var out []treeCand
	bucket := -1
	for _, cd := range valid {
		b := int(int64(cd.pos) * int64(tl.maxCuts) / int64(n))
		if b != bucket {
			out = append(out, cd)
			bucket = b
			continue
		}
		if cd.weight > out[len(out)-1].weight {
			out[len(out)-1] = cd
		}
	}
	return out
}

// skippedRows replays every query on one projected file per box (its rows' min/max,
// null and value counts) and returns, per box, the weighted rows of the queries that
// skip it.
func (tl *treeLearner) skippedRows(boxes [][]int32) []float64 {
	fs := newFileSet(len(boxes), tl.b)
	for fi, rows := range boxes {
		fs.size[fi], fs.records[fi] = int64(len(rows)), int64(len(rows))
		for ci := range tl.b.cols {
			switch cd := fs.cols[ci].(type) {
			case *colData[uint64]:
				fillU64(cd, fi, &tl.vals[ci], rows, int64(len(rows)), 0)
			case *colData[string]:
				fillStr(cd, fi, &tl.vals[ci], rows, int64(len(rows)), 0)
			}
		}
	}
	fs.finish()
	out := make([]float64, len(boxes))
	for _, q := range tl.qs {
		w := q.weight
		if w <= 0 {
			w = 1
		}
		read := fs.replayBits(q.e)
		for fi := range boxes {
			if read[fi/64]&(1<<(fi%64)) == 0 {
				out[fi] += w * float64(len(boxes[fi]))
			}
		}
	}
	return out
}

// bestSort picks the leaf's sort column: the one whose MinLeafRows-row files, the leaf
// sorted on it, let the queries skip the most rows.
func (tl *treeLearner) bestSort(rows []int32) int {
	files := max(1, len(rows)/tl.minRows)
	if files == 1 || len(tl.cols) == 1 {
		return 0
	}
	var boxes [][]int32
	for c := range tl.cols {
		sorted := tl.sortedOn(rows, c)
		for f := range files {
			boxes = append(boxes, sorted[f*len(rows)/files:(f+1)*len(rows)/files])
		}
	}
	skipped := tl.skippedRows(boxes)
	best, bestSkip := 0, -1.0
	for c := range tl.cols {
		var sum float64
		for f := range files {
			sum += skipped[c*files+f]
		}
		if sum > bestSkip+1e-9 {
			best, bestSkip = c, sum
		}
	}
	return best
}

// export turns the learned nodes into [layout.TreeNode] values, each cut's literal in
// its column's sort-key encoding.
func (tl *treeLearner) export(n *learnedNode) (*layout.TreeNode, error) {
	schema := tl.s.Records[0].Schema()
	name := func(c int) (string, arrow.DataType, error) {
		bc := tl.b.cols[tl.cols[c]]
		for _, f := range schema.Fields() {
			if strings.EqualFold(f.Name, bc.name) || strings.EqualFold(f.Name, lastPart(bc.name)) {
				return f.Name, f.Type, nil
			}
		}
		return "", nil, fmt.Errorf("sample has no column %q: %w", bc.name, layout.ErrColumnNotFound)
	}
	var walk func(n *learnedNode) (*layout.TreeNode, error)
	walk = func(n *learnedNode) (*layout.TreeNode, error) {
		if n.col < 0 {
			col, _, err := name(n.sort)
			return &layout.TreeNode{SortColumn: col, Rows: int64(len(n.rows))}, err
		}
		col, typ, err := name(n.col)
		if err != nil {
			return nil, err
		}
		v, err := literalValueKey(n.cand.lit, typ)
		if err != nil {
			return nil, fmt.Errorf("cut on %s: %w", col, err)
		}
		left, err := walk(n.left)
		if err != nil {
			return nil, err
		}
		right, err := walk(n.right)
		if err != nil {
			return nil, err
		}
		return &layout.TreeNode{Cut: &layout.TreeCut{Column: col, Value: v, Inclusive: n.cand.inclusive}, Left: left, Right: right, Rows: int64(len(n.rows))}, nil
	}
	return walk(n)
}

// literalValueKey encodes a typed literal as a value of Arrow type dt in the sort-key
// encoding ([layout.ValueKey]).
func literalValueKey(lit iceberg.Literal, dt arrow.DataType) ([]byte, error) {
	bld := array.NewBuilder(memory.DefaultAllocator, dt)
	defer bld.Release()
	bad := fmt.Errorf("literal %v (%T) cannot be a %s value", lit, lit, dt)
	switch b := bld.(type) {
	case *array.Int32Builder:
		switch x := lit.(type) {
		case iceberg.Int32Literal:
			b.Append(int32(x))
		case iceberg.Int64Literal:
			if int64(x) < math.MinInt32 || int64(x) > math.MaxInt32 {
				return nil, bad
			}
			b.Append(int32(x))
		default:
			return nil, bad
		}
	case *array.Int64Builder:
		switch x := lit.(type) {
		case iceberg.Int32Literal:
			b.Append(int64(x))
		case iceberg.Int64Literal:
			b.Append(int64(x))
		default:
			return nil, bad
		}
	case *array.Float32Builder:
		switch x := lit.(type) {
		case iceberg.Float32Literal:
			b.Append(float32(x))
		default:
			return nil, bad
		}
	case *array.Float64Builder:
		switch x := lit.(type) {
		case iceberg.Float32Literal:
			b.Append(float64(x))
		case iceberg.Float64Literal:
			b.Append(float64(x))
		default:
			return nil, bad
		}
	case *array.BooleanBuilder:
		x, ok := lit.(iceberg.BoolLiteral)
		if !ok {
			return nil, bad
		}
		b.Append(bool(x))
	case *array.Date32Builder:
		x, ok := lit.(iceberg.DateLiteral)
		if !ok {
			return nil, bad
		}
		b.Append(arrow.Date32(x))
	case *array.TimestampBuilder:
		unit := dt.(*arrow.TimestampType).Unit
		var v int64
		switch x := lit.(type) {
		case iceberg.TimestampLiteral: // microseconds
			switch unit {
			case arrow.Microsecond:
				v = int64(x)
			case arrow.Nanosecond:
				v = int64(x) * 1000
			default:
				return nil, bad
			}
		case iceberg.TimestampNsLiteral:
			if unit != arrow.Nanosecond {
				return nil, bad
			}
			v = int64(x)
		default:
			return nil, bad
		}
		b.Append(arrow.Timestamp(v))
	case *array.StringBuilder:
		x, ok := lit.(iceberg.StringLiteral)
		if !ok {
			return nil, bad
		}
		b.Append(string(x))
	case *array.LargeStringBuilder:
		x, ok := lit.(iceberg.StringLiteral)
		if !ok {
			return nil, bad
		}
		b.Append(string(x))
	default:
		return nil, bad
	}
	arr := bld.NewArray()
	defer arr.Release()
	return layout.ValueKey(arr, 0)
}
