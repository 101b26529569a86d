package simulator

import (
	"cmp"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// QueryResult is what one query reads under one layout.
type QueryResult struct {
	// ID is the query's [Query.ID].
	ID string `json:"id"`
	// FilesRead is the number of files whose statistics do not rule the query out.
	FilesRead int `json:"files_read"`
	// FilesTotal is the number of files of the layout.
	FilesTotal int `json:"files_total"`
	// BytesRead is the total size of the files read, in bytes.
	BytesRead int64 `json:"bytes_read"`
	// BoundFiles is the least number of files the query could read at the layout's file
	// count (see [Projection.MeanBoundFiles]); 0 when unknown.
	BoundFiles int `json:"bound_files"`
}

// SkippedFraction is the share of the layout's files the query skips (0
// when the layout has no files).
func (r QueryResult) SkippedFraction() float64 {
	return 1 - float64(r.FilesRead)/float64(max(r.FilesTotal, 1))
}

// inPredicateLimit mirrors iceberg-go's: an IN list longer than this is not checked
// against bounds (only against all-null files).
const inPredicateLimit = 200

// fileSet holds the per-column statistics of a set of files (real or projected) in a
// form replay can evaluate quickly: every bound column keyed by an order-preserving
// uint64 or by its bytes, and a per-64-file block summary (min lower, max upper) so that
// a range predicate skips whole blocks without looking at their files. Files are kept in
// layout order, so a layout sorted on a column has tight blocks on it.
type fileSet struct {
	n          int
	size       []int64
	records    []int64
	nonEmpty   []uint64 // files with at least one record; an empty file never matches
	cols       []colIndex
	totalBytes int64
	// part is the partition-only view of the same files, or nil (see fileSetFromLake).
	part *fileSet
}

// colIndex is one bound column of a fileSet.
type colIndex interface {
	// evalLeaf writes into out the bits of the files l may match; tmp and one are
	// scratch bitsets of the same length.
	evalLeaf(l *leaf, out, tmp, one []uint64)
	finish()
}

type colData[T uint64 | string] struct {
	n             int
	low, up       []T
	hasLow, hasUp []bool
	nulls, values []int64 // -1: unknown
	// exact marks files whose every row holds the one value low = up (an identity
	// partition value); nil when there are none.
	exact  []bool
	blocks []block[T]

	// Filled by finish: the sorted-bounds index.
	words       int
	mayNull     []uint64 // files whose null count is not known to be zero
	notNullOnly []uint64 // files not known to hold only nulls
	lowIdx      sortedBounds[T]
	upIdx       sortedBounds[T]
}

// sortedBounds indexes one side of a column's bounds. order lists the files with no bound
// first, then the others by bound: ascending lower bounds, or descending upper bounds, so
// that the files a range predicate keeps on that side ("lower ≤ hi", "upper ≥ lo") are a
// prefix of order. prefix[k] is the bitset of the first k·stride files of order, so a
// prefix costs one copy of a checkpoint plus fewer than stride bit sets.
type sortedBounds[T uint64 | string] struct {
	order   []int32
	vals    []T // bounds of order[unbounded:], in order
	unbound int
	stride  int
	prefix  []uint64 // (len(order)/stride + 1) checkpoints of words each
}

// block summarizes 64 consecutive files of one column, over the files that are not
// all-null: the least lower and greatest upper bound, and whether every such file has
// a lower (upper) bound at all.
type block[T uint64 | string] struct {
	minLow, maxUp T
	allLow, allUp bool
	allNullsOnly  bool
}

func newFileSet(n int, b *binding) *fileSet {
	fs := &fileSet{n: n, size: make([]int64, n), records: make([]int64, n), cols: make([]colIndex, len(b.cols))}
	for i, c := range b.cols {
		if c.kind == kindStr {
			fs.cols[i] = newColData[string](n)
		} else {
			fs.cols[i] = newColData[uint64](n)
		}
	}
	return fs
}

func newColData[T uint64 | string](n int) *colData[T] {
	c := &colData[T]{
		n: n, low: make([]T, n), up: make([]T, n), hasLow: make([]bool, n), hasUp: make([]bool, n),
		nulls: make([]int64, n), values: make([]int64, n),
	}
	for i := range n {
		c.nulls[i], c.values[i] = -1, -1
	}
	return c
}

// fileSetFromLake builds the fileSet of a table's real data files, in the order given.
//
// iceberg-go plans in two independent stages: a partition filter (the row filter
// projected onto the partition spec, evaluated on each file's partition tuple) and the
// inclusive metrics evaluator (on the file's bounds). A file is kept when both keep it.
// For transforms such as day(ts) the metrics already imply what the partition stage
// decides, but an identity partition's value decides !=, NOT IN and NOT LIKE 'p%'
// exactly, which bounds cannot. So when the workload filters on an identity partition
// source column, the fileSet carries a second, partition-only view (part) whose files
// know only their identity partition values, and replay keeps a file when both views do.
func fileSetFromLake(files []lake.File, b *binding, md table.Metadata) *fileSet {
	fs := newFileSet(len(files), b)
	for i, f := range files {
		fs.size[i], fs.records[i] = f.SizeBytes, f.Records
		for ci, c := range b.cols {
			switch cd := fs.cols[ci].(type) {
			case *colData[uint64]:
				cd.setStats(i, c, f)
			case *colData[string]:
				cd.setStats(i, c, f)
			}
		}
	}
	fs.finish()
	fs.part = partitionView(files, b, md)
	return fs
}

// partitionView builds the partition-only view of files (see fileSetFromLake): each
// file knows only what its partition tuple says of the bound columns (identity values,
// and the ranges of year/month/day/hour values). It reads each file's SpecID, Partition
// and Records only, so projected files that carry their partition's tuple get the same
// view. Nil when no bound column is a partition source or md is nil.
func partitionView(files []lake.File, b *binding, md table.Metadata) *fileSet {
	if md == nil {
		return nil
	}
	identity := map[int32]map[int]int{} // spec id → partition field id → bound column
	tf := map[int]iceberg.Transform{}   // partition field id → transform
	var part *fileSet
	for i, f := range files {
		if len(f.Partition) == 0 {
			continue
		}
		idf, ok := identity[f.SpecID]
		if !ok {
			idf = map[int]int{}
			if spec := md.PartitionSpecByID(int(f.SpecID)); spec != nil {
				for _, pf := range spec.Fields() {
					switch pf.Transform.(type) {
					case iceberg.IdentityTransform, iceberg.DayTransform, iceberg.MonthTransform,
						iceberg.YearTransform, iceberg.HourTransform:
					default:
						continue // bucket, truncate, void: replay stays conservative
					}
					if ci, bound := b.byID[pf.SourceID()]; bound {
						idf[pf.FieldID] = ci
						tf[pf.FieldID] = pf.Transform
					}
				}
			}
			identity[f.SpecID] = idf
		}
		for pfID, ci := range idf {
			v, ok := f.Partition[pfID]
			if !ok {
				continue
			}
			if part == nil {
				part = newFileSet(len(files), b)
				for j, g := range files {
					part.size[j], part.records[j] = g.SizeBytes, g.Records
				}
			}
			if _, isID := tf[pfID].(iceberg.IdentityTransform); !isID {
				if cd, ok := part.cols[ci].(*colData[uint64]); ok {
					cd.setTimeRange(i, b.cols[ci], tf[pfID], v, f.Records)
				}
				continue
			}
			switch cd := part.cols[ci].(type) {
			case *colData[uint64]:
				cd.setExact(i, b.cols[ci], v, f.Records)
			case *colData[string]:
				cd.setExact(i, b.cols[ci], v, f.Records)
			}
		}
	}
	if part != nil {
		part.finish()
	}
	return part
}

// setExact records that every row of file i holds v in this column, from an identity
// partition value.
func (c *colData[T]) setExact(i int, bc boundCol, v any, records int64) {
	if v == nil {
		c.setNullPartition(i)
		return
	}
	lit, ok := partitionLiteral(v)
	if !ok {
		return
	}
	u, s, ok := literalKey(bc, lit)
	if !ok {
		return
	}
	k := pick[T](u, s)
	c.low[i], c.up[i], c.hasLow[i], c.hasUp[i] = k, k, true, true
	c.nulls[i] = 0
	if c.exact == nil {
		c.exact = make([]bool, c.n)
	}
	c.exact[i] = true
}

// setTimeRange records the range of a date or timestamp column that a day, month, year
// or hour partition value stands for: every row of file i lies in [start, end).
func (c *colData[T]) setTimeRange(i int, bc boundCol, t iceberg.Transform, v any, records int64) {
	if v == nil {
		c.setNullPartition(i)
		return
	}
	var n int64
	switch x := v.(type) {
	case int32:
		n = int64(x)
	case int64:
		n = x
	case iceberg.Date:
		n = int64(x)
	default:
		return
	}
	epoch := time.Unix(0, 0).UTC()
	var start, end time.Time
	switch t.(type) {
	case iceberg.YearTransform:
		start = epoch.AddDate(int(n), 0, 0)
		end = start.AddDate(1, 0, 0)
	case iceberg.MonthTransform:
		start = epoch.AddDate(0, int(n), 0)
		end = start.AddDate(0, 1, 0)
	case iceberg.DayTransform:
		start = epoch.AddDate(0, 0, int(n))
		end = start.AddDate(0, 0, 1)
	case iceberg.HourTransform:
		start = epoch.Add(time.Duration(n) * time.Hour)
		end = start.Add(time.Hour)
	default:
		return
	}
	var lo, hi int64
	switch bc.typ.(type) {
	case iceberg.DateType:
		lo, hi = start.Unix()/86400, end.Unix()/86400-1
	case iceberg.TimestampType, iceberg.TimestampTzType:
		lo, hi = start.UnixMicro(), end.UnixMicro()-1
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		lo, hi = start.UnixNano(), end.UnixNano()-1
	default:
		return
	}
	c.low[i], c.up[i] = pick[T](intKey(lo), ""), pick[T](intKey(hi), "")
	c.hasLow[i], c.hasUp[i] = true, true
	c.nulls[i], c.values[i] = 0, records
}

// setNullPartition models a null partition value the way iceberg-go's partition stage
// compares it: below every value (x < v holds, x > v and x = v do not), with IS NULL and
// != left open. The metrics stage skips the all-null file wherever planning does.
func (c *colData[T]) setNullPartition(i int) {
	var z T
	c.low[i], c.up[i], c.hasLow[i], c.hasUp[i] = z, z, true, true
}

// partitionLiteral wraps a partition value as iceberg-go hands it out.
func partitionLiteral(v any) (iceberg.Literal, bool) {
	switch x := v.(type) {
	case int32:
		return iceberg.Int32Literal(x), true
	case int64:
		return iceberg.Int64Literal(x), true
	case float32:
		return iceberg.Float32Literal(x), true
	case float64:
		return iceberg.Float64Literal(x), true
	case bool:
		return iceberg.BoolLiteral(x), true
	case string:
		return iceberg.StringLiteral(x), true
	case iceberg.Date:
		return iceberg.DateLiteral(x), true
	case iceberg.Timestamp:
		return iceberg.TimestampLiteral(x), true
	case iceberg.TimestampNano:
		return iceberg.TimestampNsLiteral(x), true
	case iceberg.Literal:
		return x, true
	}
	return nil, false
}

func (c *colData[T]) setStats(i int, bc boundCol, f lake.File) {
	if n, ok := f.NullCounts[bc.fieldID]; ok {
		c.nulls[i] = n
	}
	if n, ok := f.ValueCounts[bc.fieldID]; ok {
		c.values[i] = n
	}
	if lit, ok := f.Lower[bc.fieldID]; ok {
		if u, s, ok := literalKey(bc, lit); ok {
			c.low[i], c.hasLow[i] = pick[T](u, s), true
		}
	}
	if lit, ok := f.Upper[bc.fieldID]; ok {
		if u, s, ok := literalKey(bc, lit); ok {
			c.up[i], c.hasUp[i] = pick[T](u, s), true
		}
	}
}

func pick[T uint64 | string](u uint64, s string) T {
	var z T
	if _, ok := any(z).(uint64); ok {
		return any(u).(T)
	}
	return any(s).(T)
}

func leafVals[T uint64 | string](l *leaf) []T {
	var z T
	if _, ok := any(z).(uint64); ok {
		return any(l.u).([]T)
	}
	return any(l.s).([]T)
}

func (fs *fileSet) finish() {
	words := (fs.n + 63) / 64
	fs.nonEmpty = make([]uint64, words)
	fs.totalBytes = 0
	for i := range fs.n {
		if fs.records[i] > 0 {
			fs.nonEmpty[i/64] |= 1 << (i % 64)
		}
		fs.totalBytes += fs.size[i]
	}
	for _, c := range fs.cols {
		c.finish()
	}
}

func (c *colData[T]) nullsOnly(i int) bool {
	return c.values[i] >= 0 && c.nulls[i] >= 0 && c.values[i] == c.nulls[i]
}

func (c *colData[T]) finish() {
	nb := (c.n + 63) / 64
	c.words = nb
	c.blocks = make([]block[T], nb)
	c.mayNull = make([]uint64, nb)
	c.notNullOnly = make([]uint64, nb)
	for i := range c.n {
		if c.nulls[i] != 0 {
			c.mayNull[i/64] |= 1 << (i % 64)
		}
		if !c.nullsOnly(i) {
			c.notNullOnly[i/64] |= 1 << (i % 64)
		}
	}
	for b := range nb {
		blk := block[T]{allLow: true, allUp: true, allNullsOnly: true}
		seenLow, seenUp := false, false
		for i := b * 64; i < min(c.n, b*64+64); i++ {
			if c.nullsOnly(i) {
				continue
			}
			blk.allNullsOnly = false
			if !c.hasLow[i] {
				blk.allLow = false
			} else if !seenLow || c.low[i] < blk.minLow {
				blk.minLow, seenLow = c.low[i], true
			}
			if !c.hasUp[i] {
				blk.allUp = false
			} else if !seenUp || c.up[i] > blk.maxUp {
				blk.maxUp, seenUp = c.up[i], true
			}
		}
		c.blocks[b] = blk
	}
	c.lowIdx = buildSorted(c.n, c.low, c.hasLow, false)
	c.upIdx = buildSorted(c.n, c.up, c.hasUp, true)
}

// checkpointWords bounds the memory of one sortedBounds to about this many words.
const checkpointWords = 4 << 20

func buildSorted[T uint64 | string](n int, bound []T, has []bool, desc bool) sortedBounds[T] {
	sb := sortedBounds[T]{order: make([]int32, 0, n)}
	for i := range n {
		if !has[i] {
			sb.order = append(sb.order, int32(i))
		}
	}
	sb.unbound = len(sb.order)
	for i := range n {
		if has[i] {
			sb.order = append(sb.order, int32(i))
		}
	}
	rest := sb.order[sb.unbound:]
	slices.SortFunc(rest, func(a, b int32) int {
		if desc {
			return cmp.Compare(bound[b], bound[a])
		}
		return cmp.Compare(bound[a], bound[b])
	})
	sb.vals = make([]T, len(rest))
	for k, i := range rest {
		sb.vals[k] = bound[i]
	}
	words := (n + 63) / 64
	sb.stride = 64
	for (n/sb.stride+1)*words > checkpointWords {
		sb.stride *= 2
	}
	cps := n/sb.stride + 1
	sb.prefix = make([]uint64, cps*words)
	for k := 1; k < cps; k++ {
		cur := sb.prefix[k*words : (k+1)*words]
		copy(cur, sb.prefix[(k-1)*words:k*words])
		for _, i := range sb.order[(k-1)*sb.stride : k*sb.stride] {
			cur[i/64] |= 1 << (i % 64)
		}
	}
	return sb
}

// prefixInto writes the bitset of the first p files of order into out.
func (sb *sortedBounds[T]) prefixInto(p int, out []uint64) {
	k := p / sb.stride
	w := len(out)
	copy(out, sb.prefix[k*w:(k+1)*w])
	for _, i := range sb.order[k*sb.stride : p] {
		out[i/64] |= 1 << (i % 64)
	}
}

// keepLow is the number of files whose lower bound does not exceed hi (is below hi when
// strict), files without a lower bound included: a prefix of lowIdx.order.
func (c *colData[T]) keepLow(hi T, strict bool) int {
	v := c.lowIdx.vals
	k := sort.Search(len(v), func(j int) bool {
		if strict {
			return v[j] >= hi
		}
		return v[j] > hi
	})
	return c.lowIdx.unbound + k
}

// keepUp is the number of files whose upper bound is not below lo (is above lo when
// strict), files without an upper bound included: a prefix of upIdx.order.
func (c *colData[T]) keepUp(lo T, strict bool) int {
	v := c.upIdx.vals
	k := sort.Search(len(v), func(j int) bool {
		if strict {
			return v[j] <= lo
		}
		return v[j] < lo
	})
	return c.upIdx.unbound + k
}

// rangeTest is a comparison leaf as bounds on the values a file must reach: a file
// cannot match when its lower bound is above hi (or equal, if hiStrict) or its upper
// bound below lo (or equal, if loStrict). These are exactly iceberg-go's inclusive
// metrics tests for <, <=, >, >=, = and the outer values of IN.
type rangeTest[T uint64 | string] struct {
	lo, hi             T
	hasLo, hasHi       bool
	loStrict, hiStrict bool
}

func (r *rangeTest[T]) lowFails(x T) bool {
	return r.hasHi && (x > r.hi || r.hiStrict && x == r.hi)
}

func (r *rangeTest[T]) upFails(x T) bool {
	return r.hasLo && (x < r.lo || r.loStrict && x == r.lo)
}

func (c *colData[T]) evalLeaf(l *leaf, out, tmp, one []uint64) {
	switch l.op {
	case opNE, opNotIn, opNotStartsWith:
		// iceberg-go's inclusive metrics evaluator never prunes these: bounds need not be
		// values of the column, so min = max = v does not prove every row equals v. Only
		// a file whose rows all hold one known value (an identity partition) is decided,
		// for != and NOT IN, as planning's partition filter decides it.
		setFirst(out, c.n)
		if c.exact != nil {
			c.evalExactNegative(l, out)
		}
		return
	case opIsNull:
		copy(out, c.mayNull)
		return
	case opNotNull:
		copy(out, c.notNullOnly)
		return
	case opStartsWith:
		clear(out)
		c.evalStartsWith(l, out)
		return
	}
	vals := leafVals[T](l)
	switch l.op {
	case opLT, opLE:
		c.lowIdx.prefixInto(c.keepLow(vals[0], l.op == opLT), out)
	case opGT, opGE:
		c.upIdx.prefixInto(c.keepUp(vals[0], l.op == opGT), out)
	case opEQ:
		c.lowIdx.prefixInto(c.keepLow(vals[0], false), out)
		c.upIdx.prefixInto(c.keepUp(vals[0], false), tmp)
		andInto(out, tmp)
	case opIn:
		if len(vals) > inPredicateLimit {
			copy(out, c.notNullOnly)
			return
		}
		// A file may match when some value lies within its bounds: the union over values
		// of "lower ≤ v and upper ≥ v".
		clear(out)
		for _, v := range vals {
			c.lowIdx.prefixInto(c.keepLow(v, false), one)
			c.upIdx.prefixInto(c.keepUp(v, false), tmp)
			for i := range out {
				out[i] |= one[i] & tmp[i]
			}
		}
	}
	andInto(out, c.notNullOnly)
}

// evalExactNegative clears the files whose single value fails a != or NOT IN leaf.
// iceberg-go's partition projection keeps NOT LIKE 'p%' files, so replay does too.
func (c *colData[T]) evalExactNegative(l *leaf, out []uint64) {
	vals := leafVals[T](l)
	for i, ex := range c.exact {
		if !ex {
			continue
		}
		v := c.low[i]
		drop := false
		switch l.op {
		case opNE:
			drop = v == vals[0]
		case opNotIn:
			_, drop = slices.BinarySearch(vals, v)
		case opNotStartsWith:
			if sv, ok := any(v).(string); ok {
				drop = strings.HasPrefix(sv, l.s[0])
			}
		}
		if drop {
			out[i/64] &^= 1 << (i % 64)
		}
	}
}

func andInto(dst, src []uint64) {
	for i := range dst {
		dst[i] &= src[i]
	}
}

// evalStartsWith follows iceberg-go: a bound truncated to the prefix's length that sorts
// after (lower) or before (upper) the prefix rules the file out.
func (c *colData[T]) evalStartsWith(l *leaf, out []uint64) {
	cs, ok := any(c).(*colData[string])
	if !ok {
		setFirst(out, c.n)
		return
	}
	p := l.s[0]
	lowFails := func(x string) bool { t := x[:min(len(x), len(p))]; return len(t) > 0 && t > p }
	upFails := func(x string) bool { t := x[:min(len(x), len(p))]; return len(t) > 0 && t < p }
	for b, blk := range cs.blocks {
		if blk.allNullsOnly || blk.allLow && lowFails(blk.minLow) || blk.allUp && upFails(blk.maxUp) {
			continue
		}
		var w uint64
		for i := b * 64; i < min(cs.n, b*64+64); i++ {
			if cs.nullsOnly(i) || cs.hasLow[i] && lowFails(cs.low[i]) || cs.hasUp[i] && upFails(cs.up[i]) {
				continue
			}
			w |= 1 << (i % 64)
		}
		out[b] = w
	}
}

func setFirst(out []uint64, n int) {
	for i := range out {
		out[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		out[len(out)-1] = 1<<r - 1
	}
}

// evaluator evaluates bound trees over one fileSet with reusable bitsets.
type evaluator struct {
	fs       *fileSet
	pool     [][]uint64
	tmp, one []uint64
}

func (ev *evaluator) buf(d int) []uint64 {
	for len(ev.pool) <= d {
		ev.pool = append(ev.pool, make([]uint64, len(ev.fs.nonEmpty)))
	}
	return ev.pool[d]
}

// eval writes into dst the files e may match; children use buffers from depth d on.
func (ev *evaluator) eval(e *expr, dst []uint64, d int) {
	fs := ev.fs
	switch e.kind {
	case exTrue:
		copy(dst, fs.nonEmpty)
	case exLeaf:
		if ev.tmp == nil {
			ev.tmp, ev.one = make([]uint64, len(dst)), make([]uint64, len(dst))
		}
		fs.cols[e.leaf.col].evalLeaf(&e.leaf, dst, ev.tmp, ev.one)
		for i := range dst {
			dst[i] &= fs.nonEmpty[i]
		}
	case exAnd:
		ev.eval(e.kids[0], dst, d)
		for _, k := range e.kids[1:] {
			if allZero(dst) {
				return
			}
			tmp := ev.buf(d)
			ev.eval(k, tmp, d+1)
			for i := range dst {
				dst[i] &= tmp[i]
			}
		}
	case exOr:
		ev.eval(e.kids[0], dst, d)
		for _, k := range e.kids[1:] {
			tmp := ev.buf(d)
			ev.eval(k, tmp, d+1)
			for i := range dst {
				dst[i] |= tmp[i]
			}
		}
	}
}

func allZero(b []uint64) bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// boundQuery is a [Query] bound to a table's schema.
type boundQuery struct {
	id     string
	weight float64
	e      *expr
}

// replay evaluates every query against fs.
func (fs *fileSet) replay(qs []boundQuery) []QueryResult {
	ev := &evaluator{fs: fs}
	var pev *evaluator
	if fs.part != nil {
		pev = &evaluator{fs: fs.part}
	}
	out := make([]QueryResult, len(qs))
	for qi, q := range qs {
		res := ev.buf(0)
		ev.eval(q.e, res, 1)
		if pev != nil {
			pres := pev.buf(0)
			pev.eval(q.e, pres, 1)
			andInto(res, pres)
		}
		r := QueryResult{ID: q.id, FilesTotal: fs.n}
		for wi, w := range res {
			r.FilesRead += bits.OnesCount64(w)
			for w != 0 {
				i := wi*64 + bits.TrailingZeros64(w)
				r.BytesRead += fs.size[i]
				w &= w - 1
			}
		}
		out[qi] = r
	}
	return out
}

// replayBits returns the bitset of files e may match, both views applied.
func (fs *fileSet) replayBits(e *expr) []uint64 {
	ev := &evaluator{fs: fs}
	res := ev.buf(0)
	ev.eval(e, res, 1)
	if fs.part != nil {
		pev := &evaluator{fs: fs.part}
		pres := pev.buf(0)
		pev.eval(e, pres, 1)
		andInto(res, pres)
	}
	return res
}

// summarize computes the weighted workload figures of a replay: the mean over queries
// (weighted) of 1 − read/total and of bytes read / total bytes, in percent.
func summarize(qs []boundQuery, rs []QueryResult, totalBytes int64) (skippedPct, bytesReadPct float64) {
	var wsum float64
	for i, r := range rs {
		w := qs[i].weight
		if w <= 0 {
			w = 1
		}
		wsum += w
		if r.FilesTotal > 0 {
			skippedPct += w * (1 - float64(r.FilesRead)/float64(r.FilesTotal))
		}
		if totalBytes > 0 {
			bytesReadPct += w * float64(r.BytesRead) / float64(totalBytes)
		} else {
			bytesReadPct += w
		}
	}
	if wsum == 0 {
		return 0, 0
	}
	return 100 * skippedPct / wsum, 100 * bytesReadPct / wsum
}

// bindQueries binds every query's filter.
func bindQueries(b *binding, qs []Query) []boundQuery {
	out := make([]boundQuery, len(qs))
	for i, q := range qs {
		out[i] = boundQuery{id: q.ID, weight: q.Weight, e: b.bind(q.Filter)}
	}
	return out
}

// truncateLower truncates a string lower bound to n code points, as Iceberg's
// truncate(n) metrics mode does.
func truncateLower(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// truncateUpper truncates a string upper bound to n code points and increments the last
// one so the result stays an upper bound; ok is false when no such bound exists (every
// code point is the maximum), in which case Iceberg writes no upper bound.
func truncateUpper(s string, n int) (string, bool) {
	t := truncateLower(s, n)
	if len(t) == len(s) {
		return s, true
	}
	rs := []rune(t)
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i] + 1
		if r >= 0xD800 && r <= 0xDFFF {
			r = 0xE000
		}
		if r <= 0x10FFFF {
			rs[i] = r
			var b strings.Builder
			for _, x := range rs[:i+1] {
				b.WriteRune(x)
			}
			return b.String(), true
		}
	}
	return "", false
}

// FilesRead lists the paths of st's live data files that q may read, judged on their
// real bounds exactly as [ProjectCurrent] judges them.
func FilesRead(st *lake.State, q Query) []string {
	b := newBinding(st.Metadata.CurrentSchema())
	bq := bindQueries(b, []Query{q})
	fs := fileSetFromLake(st.DataFiles, b, st.Metadata)
	res := fs.replayBits(bq[0].e)
	var out []string
	for i, f := range st.DataFiles {
		if res[i/64]&(1<<(i%64)) != 0 {
			out = append(out, f.Path)
		}
	}
	return out
}
