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
	// stretched is set for a cut moved off its literal to leave MinLeafRows rows on
	// the literal's small side; row is then the sampled row whose value it cuts at.
	stretched bool
	row       int32
	// small is set for a stretched cut whose small side holds fewer than MinLeafRows
	// rows because the values next to it tie ([treeLearner.tieCut]).
	small bool
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
	// mark is scratch for splitting a node's rows, one flag per sampled row.
	mark []bool
	// Set cuts (tree_set.go): dv[c][r] is row r's distinct value on tree column c (an
	// index into dvKeys[c], -1 for a null or NaN), nil for a column set cuts are not
	// tried on; sets[c] are the column's candidate sets.
	dv     [][]int32
	dvKeys [][]uint64
	sets   [][]setCand
}

// learnedNode is a node of the tree being learned.
type learnedNode struct {
	rows        []int32
	col         int // tree column index; -1 for a leaf
	cand        treeCand
	set         *setCand // a set cut's; nil for a range cut (cand)
	left, right *learnedNode
	sort        int
}

// LearnTree learns a tree for layout l (a tree layout: its columns are the ones the tree
// may cut on) from the sample's rows and the workload's predicates, greedily, top down.
//
// Every node is judged as the rewrite will write it: its rows sorted on its sort column,
// the tree column that lets the queries skip the most rows when the node's rows are
// sorted on it and cut into MinLeafRows-row files (the first column on a tie), and cut
// into such files. A cut is worth what its two sides, each sorted on the node's sort
// column and cut into files, let the queries (weighted by how often they run) skip
// beyond what the node's own files let them skip, replaying every query on each file's
// min/max with the rules replay applies to real files. So a cut on a column the sort
// already serves gains little, and a cut that gathers rows no sort would (amount > 900)
// gains much.
//
// Candidate cuts come from the workload's own literals on the tree columns: for x < v and
// x >= v the cut x < v, for x <= v and x > v the cut x <= v, for x = v and each value of
// a short IN list both, BETWEEN as its two bounds. On a column of strings, booleans or
// integers of at most maxSetDistinct sampled values, set cuts x IN (…) of values the
// workload names with = and IN are candidates too, judged alike (see setCandidates for
// which sets: on min/max, a set cut pays where the other values lie between the set's).
// A node is never cut on its own sort column: that would only move file boundaries onto
// the learning workload's literals. A literal that leaves fewer than MinLeafRows rows on one side is stretched to the cut
// that leaves that side exactly MinLeafRows rows (more where values tie), a value of the
// sample: a rare predicate then reads one leaf of one file. When the values it would
// stretch into tie (error_code <> 0 on 0.5% of the rows, every other row 0), the side
// cannot be filled; the cut then moves to the edge of the tied run instead, its small
// side a leaf of fewer rows than a file (a small file: the rare rows alone), and such a
// cut is taken before any other of positive gain, on the node's sort column too (see
// [treeLearner.tieCut] for why). The best cut (first in column
// then value order on a tie) is taken and its sides are learned in turn; a node with no
// cut of positive gain, or with fewer than twice MinLeafRows rows, is a leaf, sorted on
// its sort column, ascending: the rewrite writes every leaf into files of its own, split
// into equal rows, so a leaf run the other way ([layout.TreeNode.Descending], which trees
// learned before leaves had files of their own alternated) holds the same rows in each
// file but for a row at a file's edge.
//
// The work is bounded: the sample is sorted once per tree column (rows × log rows ×
// tree columns); each level of the tree then partitions those orders (rows × tree
// columns) and scores at most MaxCutsPerColumn range cuts and maxSetCutsPerColumn (8) set
// cuts per tree column, each by filling its sides' files (rows × predicate columns) and
// replaying every query on them (files × queries), so a level costs about tree columns ×
// (MaxCutsPerColumn + maxSetCutsPerColumn) × (rows × predicate columns + files ×
// queries); the levels are about log2(rows ÷ MinLeafRows) at most. Deterministic: the
// same sample and workload give the same tree.
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
	tl.setValues()
	tl.setCandidates()
	all := make([]int32, s.Rows)
	for i := range all {
		all[i] = int32(i)
	}
	sorted := make([][]int32, len(tl.cols))
	for c := range tl.cols {
		sorted[c] = tl.sortedOn(all, c)
	}
	tl.mark = make([]bool, s.Rows)
	root := tl.grow(sorted, 0)
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

// eachLeaf calls fn with every predicate leaf of the learning workload's queries (under
// AND and OR alike) and its query's weight (1 when it has none).
func (tl *treeLearner) eachLeaf(fn func(lf *leaf, w float64)) {
	var walk func(e *expr, w float64)
	walk = func(e *expr, w float64) {
		switch e.kind {
		case exAnd, exOr:
			for _, k := range e.kids {
				walk(k, w)
			}
		case exLeaf:
			fn(&e.leaf, w)
		}
	}
	for _, q := range tl.qs {
		w := q.weight
		if w <= 0 {
			w = 1
		}
		walk(q.e, w)
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
	tl.eachLeaf(func(lf *leaf, w float64) {
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
	})
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

// split is one candidate split of a node: column, cut and how many of the node's rows
// go left.
type split struct {
	col  int
	cand treeCand
	set  *setCand // a set cut's; nil for a range cut (cand)
	pos  int
}

// grow learns the subtree of a node whose rows are given in the order of every tree
// column (sorted[c] on column c): a split partitions each order stably, so that no node
// sorts its rows again.
func (tl *treeLearner) grow(sorted [][]int32, depth int) *learnedNode {
	rows := sorted[0]
	n := &learnedNode{rows: rows, col: -1}
	sortCol := tl.bestSort(sorted)
	if len(rows) >= 2*tl.minRows && depth < layout.MaxTreeDepth {
		if best, ok := tl.bestSplit(sorted, sortCol); ok {
			n.col, n.cand, n.set = best.col, best.cand, best.set
			left := sorted[best.col][:best.pos]
			if best.set != nil {
				side := make([]int32, len(rows))
				tl.setSides(side, rows, best.col, best.set)
				left = side[:best.pos]
			}
			for _, r := range left {
				tl.mark[r] = true
			}
			lefts, rights := make([][]int32, len(sorted)), make([][]int32, len(sorted))
			for c, order := range sorted {
				l, r := make([]int32, 0, best.pos), make([]int32, 0, len(rows)-best.pos)
				for _, x := range order {
					if tl.mark[x] {
						l = append(l, x)
					} else {
						r = append(r, x)
					}
				}
				lefts[c], rights[c] = l, r
			}
			for _, r := range left {
				tl.mark[r] = false
			}
			n.left = tl.grow(lefts, depth+1)
			n.right = tl.grow(rights, depth+1)
			return n
		}
	}
	n.sort = sortCol
	return n
}

// bestSplit scores every candidate cut of the node and returns the one of greatest
// positive gain. A side is judged as it will be written: its rows in the order of the
// node's best sort column ([treeLearner.bestSort]) cut into files of MinLeafRows rows,
// against the node's own rows so cut. A cut on a column that sort already serves gains
// little; one that isolates rows no sort would gather (amount > 900) gains much. A tie
// cut ([treeLearner.tieCut]) of positive gain is taken before every other cut.
func (tl *treeLearner) bestSplit(sortedBy [][]int32, sortCol int) (split, bool) {
	byS := sortedBy[sortCol]
	rows := byS
	base := sum(tl.skippedRows(tl.fileBoxes(nil, byS)))
	best, bestGain := split{}, 1e-9
	found := false
	tie, tieGain := split{}, 1e-9
	foundTie := false
	for c := range tl.cols {
		if len(tl.cands[c])+len(tl.sets[c]) == 0 {
			continue
		}
		// A cut on the column the node is sorted by would only move the files'
		// boundaries onto the learning workload's literals; a tie cut is the one
		// exception (the rows beyond the tied run, fewer than a file, go into a
		// leaf of their own).
		onSort := c == sortCol
		sorted := sortedBy[c]
		var valid, ties []treeCand
		for _, cd := range tl.cands[c] {
			cd.pos = tl.leftCount(sorted, c, cd.thr)
			if cd.pos < tl.minRows || len(rows)-cd.pos < tl.minRows {
				st, ok := tl.stretch(sorted, c, cd)
				if !ok {
					if st, ok = tl.tieCut(sorted, c, cd); ok {
						ties = append(ties, st)
					}
					continue
				}
				cd = st
			}
			if !onSort {
				valid = append(valid, cd)
			}
		}
		// One candidate per position, in position order: the literal's own cut before a
		// stretched one.
		slices.SortStableFunc(valid, func(a, b treeCand) int {
			if x := cmp.Compare(a.pos, b.pos); x != 0 {
				return x
			}
			return cmp.Compare(boolInt(a.stretched), boolInt(b.stretched))
		})
		valid = slices.CompactFunc(valid, func(a, b treeCand) bool { return a.pos == b.pos })
		valid = tl.thin(valid, len(rows))
		// The tie cuts after them, unthinned: every literal beyond a tied run moves to
		// its edge, so there are at most two, one a side.
		slices.SortStableFunc(ties, func(a, b treeCand) int { return cmp.Compare(a.pos, b.pos) })
		valid = append(valid, slices.CompactFunc(ties, func(a, b treeCand) bool { return a.pos == b.pos })...)
		// Every candidate's sides, each in the sort column's order, cut into files.
		var boxes [][]int32
		ends := make([]int, len(valid))
		for i, cd := range valid {
			for _, r := range sorted[:cd.pos] {
				tl.mark[r] = true
			}
			side := make([]int32, len(rows))
			l, rt := 0, cd.pos
			for _, r := range byS {
				if tl.mark[r] {
					side[l] = r
					l++
				} else {
					side[rt] = r
					rt++
				}
			}
			for _, r := range sorted[:cd.pos] {
				tl.mark[r] = false
			}
			boxes = tl.fileBoxes(boxes, side[:cd.pos])
			boxes = tl.fileBoxes(boxes, side[cd.pos:])
			ends[i] = len(boxes)
		}
		// Then the column's set cuts that leave both sides a file, judged alike.
		var sets []*setCand
		for i := range tl.sets[c] {
			if onSort {
				break
			}
			sc := &tl.sets[c][i]
			side := make([]int32, len(rows))
			pos := tl.setSides(side, byS, c, sc)
			if pos < tl.minRows || len(rows)-pos < tl.minRows {
				continue
			}
			sets = append(sets, sc)
			valid = append(valid, treeCand{pos: pos})
			boxes = tl.fileBoxes(boxes, side[:pos])
			boxes = tl.fileBoxes(boxes, side[pos:])
			ends = append(ends, len(boxes))
		}
		if len(valid) == 0 {
			continue
		}
		skipped := tl.skippedRows(boxes)
		from := 0
		ranges := len(valid) - len(sets)
		for i, cd := range valid {
			gain := sum(skipped[from:ends[i]]) - base
			from = ends[i]
			if cd.small && gain > tieGain {
				tie, tieGain, foundTie = split{col: c, cand: cd, pos: cd.pos}, gain, true
			}
			if gain > bestGain {
				best, bestGain, found = split{col: c, cand: cd, pos: cd.pos}, gain, true
				if i >= ranges {
					best.set = sets[i-ranges]
				}
			}
		}
	}
	if foundTie {
		return tie, true
	}
	return best, found
}

// fileBoxes appends the files rows (in write order) would be cut into: max(1, rows ÷
// MinLeafRows) of equal rows.
func (tl *treeLearner) fileBoxes(dst [][]int32, rows []int32) [][]int32 {
	files := max(1, len(rows)/tl.minRows)
	for f := range files {
		dst = append(dst, rows[f*len(rows)/files:(f+1)*len(rows)/files])
	}
	return dst
}

func sum(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}

// stretch moves candidate cd, whose literal leaves fewer than MinLeafRows of the
// node's rows (sorted on c) on one side, to the nearest cut that leaves exactly that side
// MinLeafRows rows (more where values tie): a query on the literal's small side (amount >
// 900, true of 1% of the rows) then reads that side alone, which is at least a file
// anyway. It fails when the other side would fall below MinLeafRows, or the row at the
// new cut is a null or NaN.
func (tl *treeLearner) stretch(sorted []int32, c int, cd treeCand) (treeCand, bool) {
	n := len(sorted)
	if n < 2*tl.minRows {
		return cd, false
	}
	cl, k := tl.class[c], tl.key[c]
	cd.stretched = true
	if cd.pos < tl.minRows {
		// Left: every row up to the MinLeafRows-th, and its ties.
		r := sorted[tl.minRows-1]
		if cl[r] != 1 || k[r] == math.MaxUint64 {
			return cd, false
		}
		cd.row, cd.thr, cd.inclusive = r, k[r]+1, true
	} else {
		// Right: the last MinLeafRows rows, and their ties.
		r := sorted[n-tl.minRows]
		if cl[r] != 1 {
			return cd, false
		}
		cd.row, cd.thr, cd.inclusive = r, k[r], false
	}
	cd.pos = tl.leftCount(sorted, c, cd.thr)
	return cd, cd.pos >= tl.minRows && n-cd.pos >= tl.minRows
}

// tieCut moves candidate cd, whose literal leaves fewer than MinLeafRows of the node's
// rows (sorted on c) on one side and which [treeLearner.stretch] cannot fill because the
// values it would take tie, to the edge of that tied run: the small side then holds
// every row beyond the run, still fewer than MinLeafRows, a leaf of its own. On the fleet
// shape 0.5% of the rows have an error code, every other row 0: no cut on error_code
// leaves a file on the errors' side, so without it the learner sorted every node on
// error_code (the errors gathered at the end of each leaf, one file an error query
// reads per leaf) and each device cut below cost the error queries one file more.
//
// Such a cut is taken before any other cut of positive gain, at the highest node where
// it gains: its small side is a leaf wherever it is cut, so cut at a node its rows are
// one small file for the whole subtree, where cut lower each subtree would cut it again
// (a small file each) or keep its rows at the end of every leaf; and it moves fewer
// than a file of rows out of the other side. The run may be one of nulls, the rare
// values right of it (nulls sort first). It fails when the node has fewer than twice
// MinLeafRows rows, the run is of NaN, or of nulls with the rare rows left of it, the
// small side would be empty, or the other side would hold fewer than MinLeafRows rows.
func (tl *treeLearner) tieCut(sorted []int32, c int, cd treeCand) (treeCand, bool) {
	n := len(sorted)
	if n < 2*tl.minRows {
		return cd, false
	}
	cl, k := tl.class[c], tl.key[c]
	cd.stretched, cd.small = true, true
	if cd.pos < tl.minRows {
		// Left: the rows below the value the MinLeafRows-th row ties on.
		r := sorted[tl.minRows-1]
		if cl[r] != 1 {
			return cd, false
		}
		cd.row, cd.thr, cd.inclusive = r, k[r], false
	} else {
		// Right: the rows above the value the last MinLeafRows rows begin with.
		r := sorted[n-tl.minRows]
		switch {
		case cl[r] == 0:
			// A run of nulls (a sparse column: an error message, a refund id):
			// the values beyond it go right, the cut at the first of them
			// (x < v), as nulls go left of every range cut.
			j := n - tl.minRows
			for j < n && cl[sorted[j]] == 0 {
				j++
			}
			if j == n || cl[sorted[j]] != 1 {
				return cd, false
			}
			r = sorted[j]
			cd.row, cd.thr, cd.inclusive = r, k[r], false
		case cl[r] != 1 || k[r] == math.MaxUint64:
			return cd, false
		default:
			cd.row, cd.thr, cd.inclusive = r, k[r]+1, true
		}
	}
	cd.pos = tl.leftCount(sorted, c, cd.thr)
	small := min(cd.pos, n-cd.pos)
	return cd, small > 0 && small < tl.minRows
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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
func (tl *treeLearner) bestSort(sorted [][]int32) int {
	if len(sorted[0]) < 2*tl.minRows || len(tl.cols) == 1 {
		return 0
	}
	var boxes [][]int32
	ends := make([]int, len(tl.cols))
	for c := range tl.cols {
		boxes = tl.fileBoxes(boxes, sorted[c])
		ends[c] = len(boxes)
	}
	skipped := tl.skippedRows(boxes)
	best, bestSkip := 0, -1.0
	from := 0
	for c := range tl.cols {
		sk := sum(skipped[from:ends[c]])
		from = ends[c]
		if sk > bestSkip+1e-9 {
			best, bestSkip = c, sk
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
			// Ascending: the rewrite writes each leaf into files of its own, so
			// which way a leaf runs changes no file's rows (see
			// layout.TreeNode.Descending).
			col, _, err := name(n.sort)
			return &layout.TreeNode{SortColumn: col, Rows: int64(len(n.rows))}, err
		}
		col, typ, err := name(n.col)
		if err != nil {
			return nil, err
		}
		var v []byte
		var set [][]byte
		switch {
		case n.set != nil:
			for _, lit := range n.set.lits {
				k, kerr := literalValueKey(lit, typ)
				if kerr != nil {
					err = kerr
					break
				}
				set = append(set, k)
			}
		case n.cand.stretched:
			v, err = tl.rowValueKey(col, n.cand.row)
		default:
			v, err = literalValueKey(n.cand.lit, typ)
		}
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
		cut := &layout.TreeCut{Column: col, Value: v, Inclusive: n.cand.inclusive}
		if n.set != nil {
			cut = &layout.TreeCut{Column: col, Set: set}
		}
		return &layout.TreeNode{Cut: cut, Left: left, Right: right, Rows: int64(len(n.rows))}, nil
	}
	return walk(n)
}

// rowValueKey is the sort-key encoding of column col's value in sampled row r.
func (tl *treeLearner) rowValueKey(col string, r int32) ([]byte, error) {
	at := int(r)
	for _, rec := range tl.s.Records {
		if n := int(rec.NumRows()); at >= n {
			at -= n
			continue
		}
		idx := rec.Schema().FieldIndices(col)
		if len(idx) == 0 {
			return nil, fmt.Errorf("sample has no column %q: %w", col, layout.ErrColumnNotFound)
		}
		return layout.ValueKey(rec.Column(idx[0]), at)
	}
	return nil, fmt.Errorf("sampled row %d out of range", r)
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
