package simulator

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// BoxBound is what the best layout of a given number of files could read under a
// model of min/max pruning, beside the per-query bound ([Projection.MeanBoundFiles]),
// which lets every query have the table cut for it alone and is out of reach as soon
// as a workload filters on several columns that do not narrow one another.
//
// Min/max pruning sees each file as a box: a range per column. The model takes the
// columns as independent, so a file whose box spans the shares s_c of each column's
// rows holds ∏ s_c of the table's rows, and every file holds 1/K of them. A query's
// predicate on a column matches runs of the rows in that column's order, and its
// values fall where the rows are: a range of share w meets a box spanning s of the
// column with probability s + w, one value with probability s (or its own share w,
// when its rows fill several files), an IN list the sum over its values (at most 1).
// A query reads a file when every one of its predicates meets the file's box. Every
// file then costs the same function of its spans, so the fewest files read is K times
// that function's least value over spans with ∏ s_c = 1/K, found numerically.
//
// Some queries do not fall where the rows are: a threshold (amount > x, the latest
// days), a rare value at one end of a column (error_code IN (…) where almost every
// row holds 0), the hottest keys of a skewed column. A layout gives them a slab, files
// of their own for the rows at that end of the column, as a tree's first cuts do; the
// model takes a slab when what it saves its queries outweighs what it costs the
// others that do not filter its column (its files, read as the grid's are, one at
// the least), and fits the grid to the queries left. A query the model cannot take apart
// into a predicate per column (an OR across columns) counts its per-query bound, and
// no query counts less than its per-query bound.
//
// It is a model, not a proof. Correlated columns, or queries that fall where few rows
// are, let a real layout read less; a tree that learned on the very queries it is
// judged by can put every cut in a gap between them. For a fresh draw of a workload
// over independent columns it is the least a grid of equal boxes reads, and no sort,
// curve or tree reads less (TestBoxBoundHoldsAgainstLayouts). Every projection
// carries it ([Projection.BoxRatio]), and the issue 46 bench reports each layout's
// files read over it beside the per-query bound.
type BoxBound struct {
	// MeanFiles is the weighted mean over queries of the files each reads.
	MeanFiles float64 `json:"mean_files"`
	// Spans is the share of each column's rows every file's box spans at the model's
	// best, in the partition with the most files (1 for the columns it does not cut).
	Spans map[string]float64 `json:"spans"`
	// PerQuery is the files each query reads, in query order.
	PerQuery []float64 `json:"per_query"`
	// Modeled counts the queries the model priced (the others, with an OR across
	// columns, count their per-query bound).
	Modeled int `json:"modeled"`
	// Slabs are the slabs the model took in the partition with the most files, in
	// the order it took them.
	Slabs []BoxSlab `json:"slabs"`
}

// BoxSlab is a slab of the box model: Files files holding the rows at one end of
// Column, the rows of its least values when Low, of its greatest when not.
type BoxSlab struct {
	Column string `json:"column"`
	Low    bool   `json:"low"`
	Files  int    `json:"files"`
}

// boxTerm is one query's predicate on one column within a partition, by the runs of
// the partition's sampled rows it matches in the column's order: ranges, the runs of
// several distinct values, with their share w of the rows; and points, the runs of
// one value, with each one's share, largest first.
type boxTerm struct {
	col    int
	ranges float64
	w      float64
	points []float64
	// tailLow and tailHigh are the shares of the rows from the start of the
	// column's order to the last row the term matches, and from the first to the end.
	tailLow, tailHigh float64
}

// hit is the probability that the term meets a box spanning s of its column. A range
// of share w, falling where the rows are, meets it with probability s + w. A value
// meets it with probability s when its rows fit in one file's span, and w when they
// fill several files (they then are every file's value in turn).
func (t *boxTerm) hit(s float64) float64 {
	p := t.ranges*s + t.w + float64(len(t.points))*s
	for _, w := range t.points {
		if w <= s {
			break
		}
		p += w - s
	}
	return min(1, p)
}

// BoxBound computes the [BoxBound] of the workload for a layout of total files, from
// the sampled rows; the files are shared among the partitions by their rows. The zero
// BoxBound is returned when the sample or the workload is empty.
func (s *Sample) BoxBound(queries []Query, total int) (BoxBound, error) {
	m, err := s.boxModel(queries)
	if err != nil || m == nil {
		return BoxBound{}, err
	}
	return m.price(total), nil
}

// boxModel is the part of the box model that does not depend on the file count: each
// partition's terms of each query.
type boxModel struct {
	s  *Sample
	b  *binding
	bq []boundQuery
	// parts are each query's conjuncts, one per column, nil when it cannot be taken
	// apart; terms[pi][qi] its terms in partition pi (nil for a partition with no
	// sampled rows).
	parts []map[int]*expr
	terms [][][]boxTerm
	// counts[qi][pi] are the sampled rows of partition pi query qi matches, for its
	// per-query bound.
	counts [][]int64
}

// boxModel prepares the box model of the workload on the sample: nil when the sample or
// the workload is empty.
func (s *Sample) boxModel(queries []Query) (*boxModel, error) {
	if s == nil || s.Rows == 0 || len(s.Partitions) == 0 || len(queries) == 0 {
		return nil, nil
	}
	b := newBinding(s.Schema)
	bq := bindQueries(b, queries)
	vals, err := extractColumns(s, b)
	if err != nil {
		return nil, err
	}
	rows := rowSet(s.Rows, b, vals)
	// Each partition's sampled rows, in each column's order.
	partRows := make([][]int32, len(s.Partitions))
	for r := range s.Rows {
		partRows[s.rowPart[r]] = append(partRows[s.rowPart[r]], int32(r))
	}
	m := &boxModel{s: s, b: b, bq: bq, parts: make([]map[int]*expr, len(bq)), terms: make([][][]boxTerm, len(s.Partitions))}
	m.counts = make([][]int64, len(bq))
	for qi, q := range bq {
		m.parts[qi] = splitByColumn(q.e)
		m.counts[qi] = make([]int64, len(s.Partitions))
		for wi, w := range rows.replayBits(q.e) {
			for w != 0 {
				m.counts[qi][s.rowPart[wi*64+bits.TrailingZeros64(w)]]++
				w &= w - 1
			}
		}
	}
	matched := make([]map[int][]uint64, len(bq)) // the sampled rows each conjunct matches
	for qi, cs := range m.parts {
		matched[qi] = map[int][]uint64{}
		for ci, e := range cs {
			matched[qi][ci] = rows.replayBits(e)
		}
	}
	for pi := range s.Partitions {
		if len(partRows[pi]) == 0 {
			continue
		}
		order, keys := make([][]int32, len(b.cols)), make([][]colKey, len(b.cols))
		for ci := range b.cols {
			order[ci], keys[ci] = columnOrder(partRows[pi], &vals[ci])
		}
		lead := correlated(order, keys, s.Rows, bq, m.parts)
		m.terms[pi] = make([][]boxTerm, len(bq))
		for qi := range m.parts {
			// A range on a column that moves with another (l_receiptdate with
			// l_shipdate) is priced on the other's order, as the rows that range
			// spans there: a box narrow on one is narrow on both.
			var ts []boxTerm
			moved := map[int][]uint64{}
			for ci, bitsOf := range matched[qi] {
				t := termOf(ci, order[ci], keys[ci], bitsOf)
				if l := lead[ci]; l != ci && t.ranges == 1 && len(t.points) == 0 {
					if moved[l] == nil {
						moved[l] = slices.Clone(bitsOf)
					} else {
						andInto(moved[l], bitsOf)
					}
					continue
				}
				ts = append(ts, t)
			}
			for l, bitsOf := range moved {
				if own, ok := matched[qi][l]; ok {
					andInto(bitsOf, own)
					ts = slices.DeleteFunc(ts, func(t boxTerm) bool { return t.col == l })
				}
				ts = append(ts, hullTerm(l, order[l], bitsOf))
			}
			slices.SortFunc(ts, func(a, b boxTerm) int { return cmp.Compare(a.col, b.col) })
			m.terms[pi][qi] = ts
		}
	}
	return m, nil
}

// price is the [BoxBound] at total files, shared among the partitions by their rows.
func (m *boxModel) price(total int) BoxBound {
	if total <= 0 {
		return BoxBound{}
	}
	s, b, bq := m.s, m.b, m.bq
	files := shareFiles(s.PartitionRows, total)
	out := BoxBound{Spans: map[string]float64{}}
	price := make([]float64, len(bq))
	widest := -1
	for pi, k := range files {
		if k <= 0 || m.terms[pi] == nil {
			continue
		}
		pp := priceGrid(m.terms[pi], m.parts, bq, len(b.cols), k)
		for qi := range bq {
			price[qi] += pp.files[qi]
		}
		if widest < 0 || k > files[widest] {
			widest = pi
			for ci, c := range b.cols {
				out.Spans[c.name] = pp.spans[ci]
			}
			out.Slabs = out.Slabs[:0]
			for _, sl := range pp.slabs {
				out.Slabs = append(out.Slabs, BoxSlab{Column: b.cols[sl.col].name, Low: sl.low, Files: sl.files})
			}
		}
	}
	var sum, wsum float64
	for qi, q := range bq {
		// The per-query bound: the least any query reads, and what a query the
		// model cannot take apart counts.
		f := float64(s.boundFiles(m.counts[qi], files))
		if m.parts[qi] != nil {
			f = max(f, price[qi])
			out.Modeled++
		}
		w := q.weight
		if w <= 0 {
			w = 1
		}
		sum += w * f
		wsum += w
		out.PerQuery = append(out.PerQuery, f)
	}
	out.MeanFiles = sum / wsum
	return out
}

// slab is a run of files of their own for the rows at one end of a column: the rows
// of the least values when low, of the greatest when not.
type slab struct {
	col   int
	low   bool
	files int
}

// partPrice is the model's price of a partition's queries: the files each reads, the
// grid's spans, the slabs taken and the queries a slab serves.
type partPrice struct {
	files   []float64
	spans   []float64
	slabs   []slab
	slabbed []bool
}

// priceGrid prices one partition of k files. The grid is fitted to the queries it
// serves. A slab of f files, holding the rows at one end of a column, serves every
// query whose rows on that column lie within its share, f/k, from that end (its
// tail); each reads ceil(tail·k) of its files. A slab is taken when what those queries
// save on the grid outweighs what it costs the others that do not filter its column:
// its files read as the grid's are, one at the least. The grid is then fitted again without
// the queries the slabs serve, until the slabs settle.
func priceGrid(terms [][]boxTerm, parts []map[int]*expr, bq []boundQuery, ncols, k int) partPrice {
	weight := func(qi int) float64 {
		if w := bq[qi].weight; w > 0 {
			return w
		}
		return 1
	}
	filters := func(qi, ci int) bool {
		return slices.ContainsFunc(terms[qi], func(t boxTerm) bool { return t.col == ci })
	}
	// inSlab is the files of slab sl the query reads, or -1 when sl does not serve it.
	inSlab := func(qi int, sl slab) float64 {
		least := -1.0
		for _, t := range terms[qi] {
			tail := t.tailHigh
			if sl.low {
				tail = t.tailLow
			}
			if f := math.Ceil(tail*float64(k) - 1e-9); t.col == sl.col && f <= float64(sl.files) && (least < 0 || f < least) {
				least = f
			}
		}
		return least
	}
	out := partPrice{files: make([]float64, len(bq)), slabbed: make([]bool, len(bq))}
	grid := make([]float64, len(bq))
	// slabCost is what slab sl adds to a query that does not filter its column: its
	// files, cut as the grid's are, read as the grid's are, one at the least.
	slabCost := func(qi int, sl slab) float64 {
		return max(1, float64(sl.files)*grid[qi]/float64(k))
	}
	served := make([]float64, len(bq)) // files read in the slab that serves a query
	for range 8 {
		onGrid := make([]bool, len(bq))
		for qi := range bq {
			onGrid[qi] = parts[qi] != nil && !out.slabbed[qi]
		}
		out.spans = bestSpans(terms, onGrid, bq, ncols, float64(k))
		for qi := range bq {
			grid[qi] = float64(k) * boxCost(terms[qi], out.spans)
		}
		// Take slabs greedily, the best net gain first; the sizes worth trying are
		// those that just hold some query's tail.
		slabbed := make([]bool, len(bq))
		var slabs []slab
		for {
			var cands []slab
			for qi := range bq {
				if parts[qi] == nil || slabbed[qi] {
					continue
				}
				for _, t := range terms[qi] {
					for _, low := range []bool{true, false} {
						tail := t.tailHigh
						if low {
							tail = t.tailLow
						}
						if sl := (slab{t.col, low, int(math.Ceil(tail*float64(k) - 1e-9))}); sl.files < k && !slices.Contains(cands, sl) && !slices.Contains(slabs, sl) {
							cands = append(cands, sl)
						}
					}
				}
			}
			best, bestGain := slab{}, 0.0
			for _, sl := range cands {
				var gain float64
				for qi := range bq {
					if parts[qi] == nil {
						continue
					}
					if f := inSlab(qi, sl); f >= 0 && f < grid[qi] && !slabbed[qi] {
						gain += weight(qi) * (grid[qi] - f)
					} else if !filters(qi, sl.col) {
						gain -= weight(qi) * slabCost(qi, sl)
					}
				}
				if gain > bestGain+1e-9 || gain > 1e-9 && gain > bestGain-1e-9 && sl.files < best.files {
					best, bestGain = sl, gain // the fewer files on a tie
				}
			}
			if bestGain <= 0 {
				break
			}
			slabs = append(slabs, best)
			for qi := range bq {
				if f := inSlab(qi, best); parts[qi] != nil && f >= 0 && f < grid[qi] && !slabbed[qi] {
					slabbed[qi], served[qi] = true, f
				}
			}
		}
		settled := slices.Equal(slabbed, out.slabbed)
		out.slabs, out.slabbed = slabs, slabbed
		if settled {
			break
		}
	}
	for qi := range bq {
		if parts[qi] == nil {
			continue
		}
		out.files[qi] = grid[qi]
		if out.slabbed[qi] {
			out.files[qi] = min(served[qi], grid[qi])
		}
		for _, sl := range out.slabs {
			if !filters(qi, sl.col) {
				out.files[qi] += slabCost(qi, sl)
			}
		}
	}
	return out
}

// correlated returns, for each column, the column whose order stands for it in the
// model: itself, or the lead of the group of columns whose orders agree (Spearman's
// rank correlation of at least minRankCorrelation in absolute value, over the rows
// with a value in both), the column the workload filters most often. order and keys
// are one partition's; n is the sample's rows.
func correlated(order [][]int32, keys [][]colKey, n int, bq []boundQuery, parts []map[int]*expr) []int {
	ncols := len(order)
	lead := make([]int, ncols)
	uses := make([]float64, ncols)
	for qi, cs := range parts {
		for ci := range cs {
			uses[ci] += max(bq[qi].weight, 1e-9)
		}
	}
	ranks := make([][]int32, ncols)
	var cols []int
	for ci := range ncols {
		lead[ci] = ci
		if uses[ci] == 0 {
			continue
		}
		cols = append(cols, ci)
		ranks[ci] = make([]int32, n)
		for i := range ranks[ci] {
			ranks[ci][i] = -1
		}
		first := 0
		for i, r := range order[ci] {
			if keys[ci][i].group != 0 {
				break
			}
			if keys[ci][i] != keys[ci][first] {
				first = i
			}
			ranks[ci][r] = int32(first)
		}
	}
	root := func(c int) int {
		for lead[c] != c {
			c = lead[c]
		}
		return c
	}
	for i, a := range cols {
		for _, b := range cols[i+1:] {
			if math.Abs(spearman(ranks[a], ranks[b], order[a])) < minRankCorrelation {
				continue
			}
			ra, rb := root(a), root(b)
			if ra == rb {
				continue
			}
			if uses[rb] > uses[ra] || uses[rb] == uses[ra] && rb < ra {
				ra, rb = rb, ra
			}
			lead[rb] = ra
		}
	}
	for ci := range lead {
		lead[ci] = root(ci)
	}
	return lead
}

// minRankCorrelation is the rank correlation from which two columns count as one in the
// box model: TPC-H's l_receiptdate and l_shipdate (a receipt 1 to 30 days after the
// ship date, over seven years) correlate at about 0.999.
const minRankCorrelation = 0.95

// spearman is the Pearson correlation of two columns' ranks over rows (those of one
// partition) where both have a value (rank ≥ 0).
func spearman(a, b []int32, rows []int32) float64 {
	var n, sa, sb, saa, sbb, sab float64
	for _, r := range rows {
		x, y := a[r], b[r]
		if x < 0 || y < 0 {
			continue
		}
		fx, fy := float64(x), float64(y)
		n++
		sa += fx
		sb += fy
		saa += fx * fx
		sbb += fy * fy
		sab += fx * fy
	}
	if n < 2 {
		return 0
	}
	cov := sab/n - sa/n*sb/n
	va, vb := saa/n-sa/n*sa/n, sbb/n-sb/n*sb/n
	if va <= 0 || vb <= 0 {
		return 0
	}
	return cov / math.Sqrt(va*vb)
}

// hullTerm is a range on column ci spanning, in ci's order, the rows from the first bits
// marks to the last: how a range on a correlated column falls on ci.
func hullTerm(ci int, order []int32, bits []uint64) boxTerm {
	t := boxTerm{col: ci}
	n := float64(max(len(order), 1))
	first, last := -1, -1
	for i, r := range order {
		if bits[r/64]&(1<<(uint(r)%64)) != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first >= 0 {
		t.ranges, t.w = 1, float64(last-first+1)/n
		t.tailLow, t.tailHigh = float64(last+1)/n, float64(len(order)-first)/n
	}
	return t
}

// colKey orders a column's values: values (by key), then nulls, then NaNs. A null
// is inside no min/max range, so the nulls are one run, a point, of their own.
type colKey struct {
	group uint8
	key   uint64
}

func keyOf(v *colVals, r int32) colKey {
	switch {
	case v.nan[r]:
		return colKey{group: 2}
	case v.null[r]:
		return colKey{group: 1}
	case v.u != nil:
		return colKey{key: v.u[r]}
	default:
		return colKey{key: uint64(v.rank[r])}
	}
}

// columnOrder returns rows sorted by the column's value and their keys in that order.
func columnOrder(rows []int32, v *colVals) ([]int32, []colKey) {
	o := slices.Clone(rows)
	slices.SortStableFunc(o, func(a, b int32) int {
		ka, kb := keyOf(v, a), keyOf(v, b)
		return cmp.Or(cmp.Compare(ka.group, kb.group), cmp.Compare(ka.key, kb.key))
	})
	keys := make([]colKey, len(o))
	for i, r := range o {
		keys[i] = keyOf(v, r)
	}
	return o, keys
}

// termOf is the term a conjunct on column ci makes in one partition: the runs of the
// partition's rows (in the column's order, with their keys) that it matches (bits
// marks them among all sampled rows), and its tails: the share of the rows from the
// start of the order to the last it matches, and from the first to the end.
func termOf(ci int, order []int32, keys []colKey, bits []uint64) boxTerm {
	t := boxTerm{col: ci}
	n := float64(max(len(order), 1))
	first, last, start := -1, -1, -1
	end := func(i int) { // the run started at start ends before i
		w := float64(i-start) / n
		if keys[start] == keys[i-1] {
			t.points = append(t.points, w)
		} else {
			t.ranges++
			t.w += w
		}
	}
	for i, r := range order {
		m := bits[r/64]&(1<<(uint(r)%64)) != 0
		switch {
		case m && start < 0:
			start = i
			if first < 0 {
				first = i
			}
		case !m && start >= 0:
			end(i)
			start = -1
		}
		if m {
			last = i
		}
	}
	if start >= 0 {
		end(len(order))
	}
	slices.SortFunc(t.points, func(a, b float64) int { return cmp.Compare(b, a) })
	if first >= 0 {
		t.tailLow, t.tailHigh = float64(last+1)/n, float64(len(order)-first)/n
	}
	return t
}

// splitByColumn takes a bound predicate apart into one conjunct per column: the
// conjunction of the AND's terms on that column. Terms that may match anything
// (exTrue) constrain nothing and are dropped. It returns nil when a term names
// several columns (an OR across columns), which the box model cannot price.
func splitByColumn(e *expr) map[int]*expr {
	var terms []*expr
	if e.kind == exAnd {
		terms = e.kids
	} else {
		terms = []*expr{e}
	}
	out := map[int]*expr{}
	for _, t := range terms {
		c, ok := singleColumn(t)
		switch {
		case !ok:
			return nil
		case c < 0:
			continue // exTrue: no constraint
		case out[c] == nil:
			out[c] = t
		default:
			out[c] = &expr{kind: exAnd, kids: []*expr{out[c], t}}
		}
	}
	return out
}

// singleColumn returns the one column e names, -1 when it names none (exTrue), and
// false when it names more than one.
func singleColumn(e *expr) (int, bool) {
	switch e.kind {
	case exTrue:
		return -1, true
	case exLeaf:
		return e.leaf.col, true
	}
	col := -1
	for _, k := range e.kids {
		c, ok := singleColumn(k)
		if !ok {
			return 0, false
		}
		if c < 0 {
			if e.kind == exOr {
				return -1, true // may match anything
			}
			continue
		}
		if col >= 0 && c != col {
			return 0, false
		}
		col = c
	}
	return col, true
}

// boxCost is the probability that a query with these terms reads a file whose box
// spans the given share of each column.
func boxCost(terms []boxTerm, spans []float64) float64 {
	p := 1.0
	for i := range terms {
		t := &terms[i]
		p *= t.hit(spans[t.col])
	}
	return p
}

// bestSpans minimizes the workload's mean cost per file over spans whose product is
// 1/k, each at most 1: pairwise exchanges of log-span between columns, with a step
// that halves when no exchange helps, from an even start and from each column
// alone. Deterministic.
func bestSpans(terms [][]boxTerm, modeled []bool, bq []boundQuery, ncols int, k float64) []float64 {
	var used []int
	for ci := range ncols {
		for qi := range terms {
			if modeled[qi] && slices.ContainsFunc(terms[qi], func(t boxTerm) bool { return t.col == ci }) {
				used = append(used, ci)
				break
			}
		}
	}
	spans := make([]float64, ncols)
	for i := range spans {
		spans[i] = 1
	}
	if len(used) == 0 || k <= 1 {
		return spans
	}
	L := math.Log(k)
	cost := func(x []float64) float64 {
		for j, ci := range used {
			spans[ci] = math.Exp(x[j])
		}
		var sum float64
		for qi, q := range bq {
			if !modeled[qi] {
				continue
			}
			w := q.weight
			if w <= 0 {
				w = 1
			}
			sum += w * boxCost(terms[qi], spans)
		}
		return sum
	}
	starts := [][]float64{make([]float64, len(used))}
	for j := range used {
		starts[0][j] = -L / float64(len(used))
		if len(used) > 1 {
			x := make([]float64, len(used))
			x[j] = -L
			starts = append(starts, x)
		}
	}
	var best []float64
	bestCost := math.Inf(1)
	for _, x := range starts {
		c := cost(x)
		for step := L / 2; step > 1e-4; step /= 2 {
			for improved, rounds := true, 0; improved && rounds < 200; rounds++ {
				improved = false
				for i := range x {
					for j := range x {
						if i == j || x[i]+step > 0 {
							continue
						}
						x[i] += step
						x[j] -= step
						if nc := cost(x); nc < c-1e-12 {
							c, improved = nc, true
						} else {
							x[i] -= step
							x[j] += step
						}
					}
				}
			}
		}
		if c < bestCost {
			bestCost, best = c, slices.Clone(x)
		}
	}
	for i := range spans {
		spans[i] = 1
	}
	for j, ci := range used {
		spans[ci] = math.Exp(best[j])
	}
	return spans
}

// shareFiles shares total files among partitions in proportion to their rows, each
// partition with rows getting at least one (largest remainders first).
func shareFiles(rows []int64, total int) []int {
	var sum int64
	for _, r := range rows {
		sum += r
	}
	out := make([]int, len(rows))
	if sum == 0 {
		return out
	}
	type rem struct {
		i int
		f float64
	}
	var rems []rem
	given := 0
	for i, r := range rows {
		if r == 0 {
			continue
		}
		exact := float64(total) * float64(r) / float64(sum)
		out[i] = max(1, int(exact))
		given += out[i]
		rems = append(rems, rem{i, exact - math.Floor(exact)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.f, a.f) })
	for j := 0; given < total && len(rems) > 0; j = (j + 1) % len(rems) {
		out[rems[j].i]++
		given++
	}
	return out
}
