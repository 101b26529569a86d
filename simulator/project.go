package simulator

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// DefaultTargetFileSizeBytes is Iceberg's write.target-file-size-bytes default, used when
// neither the layout nor the table sets one.
const DefaultTargetFileSizeBytes = 512 << 20

// Projection is how one layout would serve one workload: the JSON contract of a
// `floe simulate` candidate.
type Projection struct {
	// Layout is the layout in [layout.Parse] syntax.
	Layout string `json:"layout"`
	// FilesBefore is the table's live data files today.
	FilesBefore int `json:"files_before"`
	// FilesAfter is the number of data files after the rewrite (today's for current).
	FilesAfter int `json:"files_after"`
	// SkippedPct is the weighted mean over queries of 1 − files read/files, in percent.
	SkippedPct float64 `json:"skipped_pct"`
	// BytesReadPct is the weighted mean over queries of bytes read/table bytes, in percent.
	BytesReadPct float64 `json:"bytes_read_pct"`
	// ErrorPP bounds the sampling error of SkippedPct, in percentage points: the largest
	// deviation of a half-sample replicate's SkippedPct from the full sample's. Zero for
	// current (real bounds) and when every row was read.
	ErrorPP float64 `json:"error_pp"`
	// BiasPP is how much the naive projection (each projected file's range = its sampled
	// rows' min/max) overstated SkippedPct compared with the reported, widened one, in
	// percentage points; it shows how optimistic sample-based min/max is for this layout.
	BiasPP float64 `json:"bias_pp"`
	// RewriteBytes is the bytes the rewrite reads and rewrites (0 for current).
	RewriteBytes int64 `json:"rewrite_bytes"`
	// SizeRatio is the estimated bytes the rewrite writes divided by the table's bytes
	// today (1 for current and binpack): a layout that clusters values compresses better,
	// so it writes fewer files of the target size. FilesAfter is cut from it.
	SizeRatio float64 `json:"size_ratio"`
	// Quantiles are the bucket boundaries a rank z-order or Hilbert projection ordered
	// the sample by ([Quantiles.MarshalJSON]; load with [UnmarshalQuantiles]). A rewrite
	// given them (rewriter.CompactOptions.Quantiles, as 'floe optimize --plan' does)
	// cuts exactly the cells that were projected.
	Quantiles json.RawMessage `json:"quantiles,omitempty"`
	// SampleRows and SampleFraction describe the sample (0 for current).
	SampleRows     int     `json:"sample_rows"`
	SampleFraction float64 `json:"sample_fraction"`
	// PerQuery holds each query's files and bytes read, in input order.
	PerQuery []QueryResult `json:"per_query,omitempty"`
}

// SimulateResult is the JSON contract of `floe simulate`.
type SimulateResult struct {
	// Table names the table.
	Table string `json:"table"`
	// Queries is the number of workload queries replayed.
	Queries int `json:"queries"`
	// Candidates are the projections, one per layout, in input order.
	Candidates []Projection `json:"candidates"`
}

// ProjectOptions tunes [Project] and [ProjectSample]. The zero value uses the defaults.
type ProjectOptions struct {
	// Sample sizes and seeds the sample.
	Sample SampleOptions
	// ZOrderMode picks Iceberg-exact (default) or rank-normalized z-order keys.
	ZOrderMode layout.ZOrderMode
	// QuantileBuckets is the number of quantile buckets for rank z-order and Hilbert.
	// Default: [layout.DefaultQuantileBuckets].
	QuantileBuckets int
	// Replicates is the number of random half/half splits of the sample used for
	// ErrorPP (each gives two replicates). Default: 2.
	Replicates int
}

// ProjectCurrent replays the workload against the table's real current file bounds: the
// baseline, and what [Measure] must agree with file for file. It needs no sample.
func ProjectCurrent(st *lake.State, queries []Query) Projection {
	b := newBinding(st.Metadata.CurrentSchema())
	bq := bindQueries(b, queries)
	fs := fileSetFromLake(st.DataFiles, b, st.Metadata)
	rs := fs.replay(bq)
	p := Projection{Layout: layout.Layout{Strategy: layout.StrategyCurrent}.String(), FilesBefore: fs.n, FilesAfter: fs.n, SizeRatio: 1, PerQuery: rs}
	p.SkippedPct, p.BytesReadPct = summarize(bq, rs, fs.totalBytes)
	return p
}

// WorkloadColumns lists the schema columns (as the schema spells them) the queries'
// filters can prune on, in order of first use: the columns a sample must hold.
func WorkloadColumns(schema *iceberg.Schema, queries []Query) []string {
	b := newBinding(schema)
	bindQueries(b, queries)
	out := make([]string, len(b.cols))
	for i, c := range b.cols {
		out[i] = c.name
	}
	return out
}

// Project projects every layout for the workload: current from the real file bounds,
// every other layout from one sample of the predicate and layout columns (taken once,
// see [TakeSample]).
func Project(ctx context.Context, st *lake.State, layouts []layout.Layout, queries []Query, opts ProjectOptions) ([]Projection, error) {
	schema := st.Metadata.CurrentSchema()
	cols := WorkloadColumns(schema, queries)
	needSample := false
	projected := 0
	for _, l := range layouts {
		if err := l.Validate(); err != nil {
			return nil, err
		}
		if l.Strategy == layout.StrategyCurrent {
			continue
		}
		needSample = true
		for _, c := range l.Columns {
			f, ok := schema.FindFieldByNameCaseInsensitive(c.Name)
			if !ok {
				return nil, fmt.Errorf("project layout %s: column %q: %w", l, c.Name, layout.ErrColumnNotFound)
			}
			n, _ := schema.FindColumnName(f.ID)
			if !slices.Contains(cols, n) {
				cols = append(cols, n)
			}
		}
		var bytes int64
		for _, f := range st.DataFiles {
			bytes += f.SizeBytes
		}
		projected = max(projected, int(math.Ceil(float64(bytes)/float64(targetSize(l, st)))))
	}
	var sample *Sample
	if needSample {
		so := opts.Sample
		if so.ProjectedFiles <= 0 {
			so.ProjectedFiles = projected
		}
		var err error
		sample, err = TakeSample(ctx, st, cols, so)
		if err != nil {
			return nil, err
		}
		defer sample.Release()
	}
	// Layouts are projected concurrently, one per core: each is pure CPU over the
	// shared sample, whose column values and quantile fits are computed once.
	out := make([]Projection, len(layouts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, l := range layouts {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return fmt.Errorf("project %s: %w", st.Ident, err)
			}
			if l.Strategy == layout.StrategyCurrent {
				out[i] = ProjectCurrent(st, queries)
				return nil
			}
			p, err := ProjectSample(sample, l, queries, targetSize(l, st), opts)
			if err != nil {
				return fmt.Errorf("project %s: %w", st.Ident, err)
			}
			out[i] = p
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func targetSize(l layout.Layout, st *lake.State) int64 {
	if l.TargetFileSizeBytes > 0 {
		return l.TargetFileSizeBytes
	}
	return st.TargetFileSizeBytes(DefaultTargetFileSizeBytes)
}

// colVals are one column's sampled values, keyed, in sample row order.
type colVals struct {
	u []uint64
	s []string
	// rank is the position of s[i] in dict, the column's distinct values in
	// order: per-file min/max compares ranks, not strings.
	rank []uint32
	dict []string
	null []bool // null (or NaN: no bound contribution, not a null either)
	nan  []bool
}

// ProjectSample projects layout l from a sample: per partition, it orders the sampled rows
// by l's key (binpack keeps arrival order), cuts them into as many files as the
// partition's bytes fill at targetFileSizeBytes, takes each projected file's min/max and
// null count for every predicate column (truncated as the table's metrics mode truncates
// string bounds), and replays the workload against those files. Pure: no I/O.
//
// Bias correction: a projected file's true range contains its sampled range, so naive
// bounds are optimistic. Each file's range is widened to the sorted neighbours just
// outside it (the last sampled row of the file before and the first of the file after,
// in the same partition): by order statistics the unsampled rows of a file lie, in key
// order, between those neighbours, so for the leading key column the widened range covers
// the true one. BiasPP reports the difference. ErrorPP is the largest deviation of
// replicates projected from random disjoint halves of the sample (same file counts).
func ProjectSample(s *Sample, l layout.Layout, queries []Query, targetFileSizeBytes int64, opts ProjectOptions) (Projection, error) {
	if err := l.Validate(); err != nil {
		return Projection{}, err
	}
	if l.Strategy == layout.StrategyCurrent {
		return Projection{}, fmt.Errorf("project sample: layout current needs the table's files, use ProjectCurrent")
	}
	if targetFileSizeBytes <= 0 {
		targetFileSizeBytes = DefaultTargetFileSizeBytes
	}
	if opts.Replicates <= 0 {
		opts.Replicates = 2
	}
	p := Projection{Layout: l.String(), FilesBefore: s.FilesBefore, RewriteBytes: s.TableBytes, SampleRows: s.Rows, SampleFraction: s.Fraction}
	b := newBinding(s.Schema)
	bq := bindQueries(b, queries)
	if s.Rows == 0 {
		if s.TableRows > 0 {
			return Projection{}, fmt.Errorf("project %s: %w", l, errNoSample)
		}
		p.PerQuery = make([]QueryResult, len(bq))
		for i, q := range bq {
			p.PerQuery[i] = QueryResult{ID: q.id}
		}
		return p, nil
	}
	vals, err := extractColumns(s, b)
	if err != nil {
		return Projection{}, fmt.Errorf("project %s: %w", l, err)
	}
	perm, q, err := sortSample(s, l, opts)
	if err != nil {
		return Projection{}, fmt.Errorf("project %s: %w", l, err)
	}
	if q != nil {
		if p.Quantiles, err = q.MarshalJSON(); err != nil {
			return Projection{}, fmt.Errorf("project %s: %w", l, err)
		}
	}
	// Files per partition, from the bytes the rewrite is expected to write.
	p.SizeRatio = 1
	if l.Strategy != layout.StrategyBinpack {
		if p.SizeRatio, err = s.sizeRatio(perm, targetFileSizeBytes); err != nil {
			return Projection{}, fmt.Errorf("project %s: %w", l, err)
		}
	}
	files := make([]int, len(s.Partitions))
	for pi, by := range s.PartitionBytes {
		files[pi] = max(1, int(math.Ceil(float64(by)*p.SizeRatio/float64(targetFileSizeBytes))))
		if s.PartitionRows[pi] == 0 {
			files[pi] = 0
		}
		p.FilesAfter += files[pi]
	}
	exact := s.Fraction >= 1
	// Lay the values out in the layout's order once: every cut below (the projection,
	// the naive one, the half-sample replicates) then reads them in sequence.
	ordered, rowPart := permuteVals(vals, s.rowPart, perm)
	pos := make([]int32, len(perm))
	for i := range pos {
		pos[i] = int32(i)
	}
	fs := cutFiles(s, b, ordered, rowPart, pos, files, !exact)
	rs := fs.replay(bq)
	p.PerQuery = rs
	p.SkippedPct, p.BytesReadPct = summarize(bq, rs, fs.totalBytes)
	if exact {
		return p, nil
	}
	naive := cutFiles(s, b, ordered, rowPart, pos, files, false)
	naiveSkip, _ := summarize(bq, naive.replay(bq), naive.totalBytes)
	p.BiasPP = naiveSkip - p.SkippedPct
	rng := rand.New(rand.NewPCG(s.metricsSeed(), 0x4a1f))
	for range opts.Replicates {
		half := make([]bool, s.Rows)
		for i := range half {
			half[i] = rng.IntN(2) == 1
		}
		for _, side := range []bool{false, true} {
			sub := make([]int32, 0, len(perm)/2+1)
			for i, r := range perm {
				if half[r] == side {
					sub = append(sub, int32(i))
				}
			}
			rep := cutFiles(s, b, ordered, rowPart, sub, files, true)
			skip, _ := summarize(bq, rep.replay(bq), rep.totalBytes)
			p.ErrorPP = max(p.ErrorPP, math.Abs(skip-p.SkippedPct))
		}
	}
	return p, nil
}

func (s *Sample) metricsSeed() uint64 { return uint64(s.Rows)*0x9e3779b97f4a7c15 + 1 }

// sortSample returns the sample's row numbers grouped by partition and, within one,
// ordered by the layout's key (stable: ties and binpack keep arrival order).
func sortSample(s *Sample, l layout.Layout, opts ProjectOptions) ([]int32, *layout.Quantiles, error) {
	perm := make([]int32, s.Rows)
	for i := range perm {
		perm[i] = int32(i)
	}
	var keys [][]byte
	var quantiles *layout.Quantiles
	if len(l.Columns) > 0 {
		schema := s.Records[0].Schema()
		eo := layout.EncoderOptions{ZOrderMode: opts.ZOrderMode}
		if l.Strategy == layout.StrategyHilbert || l.Strategy == layout.StrategyZOrder && opts.ZOrderMode == layout.ZOrderRank {
			names := make([]string, len(l.Columns))
			for i, c := range l.Columns {
				names[i] = c.Name
			}
			q, err := s.fitQuantiles(names, opts.QuantileBuckets)
			if err != nil {
				return nil, nil, err
			}
			eo.Quantiles, quantiles = q, q
		}
		enc, err := layout.NewEncoder(l, schema, eo)
		if err != nil {
			return nil, nil, err
		}
		keys = make([][]byte, s.Rows)
		var buf []byte
		r := 0
		for _, rec := range s.Records {
			for row := range int(rec.NumRows()) {
				start := len(buf)
				buf, err = enc.AppendKey(buf, rec, row)
				if err != nil {
					return nil, nil, err
				}
				keys[r] = buf[start:len(buf):len(buf)]
				r++
			}
		}
		// keys alias buf, which may have moved while growing: re-slice from the final buffer.
		off := 0
		for i, k := range keys {
			keys[i] = buf[off : off+len(k) : off+len(k)]
			off += len(k)
		}
	}
	// Sort entries that carry the partition and the key's first 16 bytes (as two
	// integers) themselves: most comparisons are settled without touching the keys,
	// and without reading other arrays at random. Only keys longer than 16 bytes fall
	// back to the whole key on a tie; then the row number decides (a stable order).
	ents := make([]sortEnt, len(perm))
	long := false
	sameLen := true
	var buf [16]byte
	for i := range ents {
		ents[i] = sortEnt{part: s.rowPart[i], row: int32(i)}
		if keys != nil {
			n := copy(buf[:], keys[i])
			clear(buf[n:])
			ents[i].p0 = binary.BigEndian.Uint64(buf[:8])
			ents[i].p1 = binary.BigEndian.Uint64(buf[8:])
			long = long || len(keys[i]) > len(buf)
			sameLen = sameLen && len(keys[i]) == len(keys[0])
		}
	}
	if !long && sameLen {
		// Every key is its 16-byte prefix: a stable radix sort on (partition,
		// prefix) gives the comparison sort's order (ties in row order) in a
		// few linear passes.
		ents = radixSortEnts(ents, make([]sortEnt, len(ents)))
	} else {
		// Keys of at most 16 bytes compare as their zero-padded prefixes, except that
		// a shorter key sorts before a longer one it pads equal to.
		slices.SortFunc(ents, func(a, b sortEnt) int {
			switch {
			case a.part != b.part:
				return compareInt64(int64(a.part), int64(b.part))
			case a.p0 != b.p0:
				if a.p0 < b.p0 {
					return -1
				}
				return 1
			case a.p1 != b.p1:
				if a.p1 < b.p1 {
					return -1
				}
				return 1
			}
			if c := bytes.Compare(keys[a.row], keys[b.row]); c != 0 {
				return c
			}
			return compareInt64(int64(a.row), int64(b.row))
		})
	}
	for i, e := range ents {
		perm[i] = e.row
	}
	return perm, quantiles, nil
}

// sortEnt is a sample row being sorted: its partition, its row number and
// its key's first 16 bytes as two integers, so that most comparisons are
// settled without touching the keys or reading other arrays at random.
type sortEnt struct {
	part   int32
	row    int32
	p0, p1 uint64
}

// radixSortEnts sorts ents by (part, p0, p1), stably, with one counting pass
// and one scatter per byte that varies, least significant first; scratch must
// be as long as ents. It returns whichever of the two holds the result.
// Partitions are never negative.
func radixSortEnts(ents, scratch []sortEnt) []sortEnt {
	if len(ents) < 2 {
		return ents
	}
	// Digits 0-7 are p1's bytes, 8-15 p0's, 16-19 the partition's, least
	// significant first.
	digit := func(e *sortEnt, d int) byte {
		switch {
		case d < 8:
			return byte(e.p1 >> (8 * d))
		case d < 16:
			return byte(e.p0 >> (8 * (d - 8)))
		}
		return byte(uint32(e.part) >> (8 * (d - 16)))
	}
	var counts [20][256]int
	for i := range ents {
		e := &ents[i]
		for d := range 8 {
			counts[d][byte(e.p1>>(8*d))]++
			counts[8+d][byte(e.p0>>(8*d))]++
		}
		for d := range 4 {
			counts[16+d][byte(uint32(e.part)>>(8*d))]++
		}
	}
	src, dst := ents, scratch[:len(ents)]
	for d := range counts {
		c := &counts[d]
		if c[digit(&src[0], d)] == len(src) {
			continue // every entry has the same byte here
		}
		var pos [256]int
		sum := 0
		for v, n := range c {
			pos[v] = sum
			sum += n
		}
		for i := range src {
			v := digit(&src[i], d)
			dst[pos[v]] = src[i]
			pos[v]++
		}
		src, dst = dst, src
	}
	return src
}

// permuteVals returns vals and rowPart in the order perm: element i of the result is
// element perm[i] of the input.
func permuteVals(vals []colVals, rowPart []int32, perm []int32) ([]colVals, []int32) {
	out := make([]colVals, len(vals))
	for ci := range vals {
		v, o := &vals[ci], &out[ci]
		o.dict = v.dict
		o.null = make([]bool, len(perm))
		o.nan = make([]bool, len(perm))
		for i, r := range perm {
			o.null[i], o.nan[i] = v.null[r], v.nan[r]
		}
		if v.u != nil {
			o.u = make([]uint64, len(perm))
			for i, r := range perm {
				o.u[i] = v.u[r]
			}
		}
		if v.rank != nil {
			o.rank = make([]uint32, len(perm))
			for i, r := range perm {
				o.rank[i] = v.rank[r]
			}
		}
	}
	rp := make([]int32, len(perm))
	for i, r := range perm {
		rp[i] = rowPart[r]
	}
	return out, rp
}

// cutFiles cuts the ordered rows (grouped by partition) into files[p] files per partition
// and builds their statistics; widen extends every file's rows by one sorted neighbour
// on each side within its partition.
func cutFiles(s *Sample, b *binding, vals []colVals, rowPart []int32, perm []int32, files []int, widen bool) *fileSet {
	total := 0
	for _, k := range files {
		total += k
	}
	fs := newFileSet(total, b)
	visited := make([]bool, len(files))
	fi := 0
	start := 0
	for start < len(perm) {
		// rows of this partition in perm[start:end]
		pi := int(rowPart[perm[start]])
		end := start
		for end < len(perm) && int(rowPart[perm[end]]) == pi {
			end++
		}
		visited[pi] = true
		k := files[pi]
		m := end - start
		for j := range k {
			a, z := start+j*m/k, start+(j+1)*m/k
			if widen {
				a, z = max(start, a-1), min(end, z+1)
			}
			fs.size[fi] = s.PartitionBytes[pi] / int64(k)
			fs.records[fi] = max(1, s.PartitionRows[pi]/int64(k))
			for ci := range b.cols {
				trunc := s.metrics(b.cols[ci].name)
				switch cd := fs.cols[ci].(type) {
				case *colData[uint64]:
					fillU64(cd, fi, &vals[ci], perm[a:z], fs.records[fi], trunc)
				case *colData[string]:
					fillStr(cd, fi, &vals[ci], perm[a:z], fs.records[fi], trunc)
				}
			}
			fi++
		}
		start = end
	}
	// Partitions without sampled rows: files with no bounds (may match anything).
	for pi, k := range files {
		if visited[pi] {
			continue
		}
		for range k {
			fs.size[fi], fs.records[fi] = s.PartitionBytes[pi]/int64(k), max(1, s.PartitionRows[pi]/int64(k))
			fi++
		}
	}
	fs.finish()
	return fs
}

func fillU64(cd *colData[uint64], fi int, v *colVals, rows []int32, records int64, trunc int) {
	var lo, hi uint64
	seen := false
	nulls := 0
	for _, r := range rows {
		if v.null[r] {
			if !v.nan[r] {
				nulls++
			}
			continue
		}
		x := v.u[r]
		if !seen || x < lo {
			lo = x
		}
		if !seen || x > hi {
			hi = x
		}
		seen = true
	}
	setCounts(&cd.nulls[fi], &cd.values[fi], nulls, len(rows), records)
	if seen && trunc >= 0 {
		cd.low[fi], cd.up[fi], cd.hasLow[fi], cd.hasUp[fi] = lo, hi, true, true
	}
}

func fillStr(cd *colData[string], fi int, v *colVals, rows []int32, records int64, trunc int) {
	var rlo, rhi uint32
	seen := false
	nulls := 0
	for _, r := range rows {
		if v.null[r] {
			nulls++
			continue
		}
		x := v.rank[r]
		if !seen || x < rlo {
			rlo = x
		}
		if !seen || x > rhi {
			rhi = x
		}
		seen = true
	}
	setCounts(&cd.nulls[fi], &cd.values[fi], nulls, len(rows), records)
	if !seen || trunc < 0 {
		return
	}
	lo, hi := v.dict[rlo], v.dict[rhi]
	if trunc > 0 {
		lo = truncateLower(lo, trunc)
		var ok bool
		if hi, ok = truncateUpper(hi, trunc); !ok {
			cd.low[fi], cd.hasLow[fi] = lo, true
			return
		}
	}
	cd.low[fi], cd.up[fi], cd.hasLow[fi], cd.hasUp[fi] = lo, hi, true, true
}

// setCounts scales a file's sampled null count to its projected records: all-null stays
// all-null, some nulls stay at least one, none stays none.
func setCounts(nulls, values *int64, sampledNulls, sampled int, records int64) {
	if sampled == 0 {
		return // unknown
	}
	*values = records
	switch {
	case sampledNulls == 0:
		*nulls = 0
	case sampledNulls == sampled:
		*nulls = records
	default:
		*nulls = min(records-1, max(1, int64(math.Round(float64(sampledNulls)/float64(sampled)*float64(records)))))
	}
}

// extractColumns keys every bound column of the sample, row by row. A column's values
// are kept on the sample, so every layout projected from it reads them from there.
func extractColumns(s *Sample, b *binding) ([]colVals, error) {
	out := make([]colVals, len(b.cols))
	for ci, c := range b.cols {
		v, err := s.columnVals(c)
		if err != nil {
			return nil, err
		}
		out[ci] = *v
	}
	return out, nil
}

// columnVals returns the keyed values of column c, extracting them on first use. The
// result is shared: callers must not change it.
func (s *Sample) columnVals(c boundCol) (*colVals, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.vals[c.fieldID]; ok {
		return v, nil
	}
	schema := s.Records[0].Schema()
	idx := -1
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, c.name) || strings.EqualFold(f.Name, lastPart(c.name)) && idx < 0 {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("sample has no column %q: %w", c.name, layout.ErrColumnNotFound)
	}
	v := &colVals{null: make([]bool, 0, s.Rows), nan: make([]bool, 0, s.Rows)}
	if c.kind == kindStr {
		v.s = make([]string, 0, s.Rows)
	} else {
		v.u = make([]uint64, 0, s.Rows)
	}
	for _, rec := range s.Records {
		if err := appendKeys(v, c, rec.Column(idx)); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
	}
	if c.kind == kindStr {
		v.rankStrings()
	}
	if s.vals == nil {
		s.vals = map[int]*colVals{}
	}
	s.vals[c.fieldID] = v
	return v, nil
}

// fitQuantiles fits the quantiles of the named columns on the sample once per column
// list and bucket count: z-order and Hilbert candidates on the same columns share them.
func (s *Sample) fitQuantiles(names []string, buckets int) (*layout.Quantiles, error) {
	key := fmt.Sprintf("%d\x00%s", buckets, strings.Join(names, "\x00"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.quantiles[key]; ok {
		return q, nil
	}
	q, err := layout.FitQuantiles(s.Records, names, buckets)
	if err != nil {
		return nil, err
	}
	if s.quantiles == nil {
		s.quantiles = map[string]*layout.Quantiles{}
	}
	s.quantiles[key] = q
	return q, nil
}

// rankStrings fills dict and rank from s.
func (v *colVals) rankStrings() {
	seen := make(map[string]struct{})
	for i, x := range v.s {
		if !v.null[i] {
			seen[x] = struct{}{}
		}
	}
	v.dict = make([]string, 0, len(seen))
	for x := range seen {
		v.dict = append(v.dict, x)
	}
	slices.Sort(v.dict)
	pos := make(map[string]uint32, len(v.dict))
	for i, x := range v.dict {
		pos[x] = uint32(i)
	}
	v.rank = make([]uint32, len(v.s))
	for i, x := range v.s {
		if !v.null[i] {
			v.rank[i] = pos[x]
		}
	}
}

func lastPart(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func appendKeys(v *colVals, c boundCol, arr arrow.Array) error {
	n := arr.Len()
	for i := range n {
		null := arr.IsNull(i)
		v.null = append(v.null, null)
		v.nan = append(v.nan, false)
		if c.kind == kindStr {
			s := ""
			if !null {
				switch a := arr.(type) {
				case *array.String:
					s = a.Value(i)
				case *array.LargeString:
					s = a.Value(i)
				case *array.StringView:
					s = a.Value(i)
				default:
					return fmt.Errorf("%w: %s for a string column", layout.ErrUnsupportedType, arr.DataType())
				}
			}
			v.s = append(v.s, s)
			continue
		}
		var u uint64
		if !null {
			switch a := arr.(type) {
			case *array.Int32:
				u = intKey(int64(a.Value(i)))
			case *array.Int64:
				u = intKey(a.Value(i))
			case *array.Date32:
				u = intKey(int64(a.Value(i)))
			case *array.Boolean:
				if a.Value(i) {
					u = 1
				}
			case *array.Float32:
				f := float64(a.Value(i))
				if math.IsNaN(f) {
					v.null[len(v.null)-1], v.nan[len(v.nan)-1] = true, true
				} else {
					u = floatKey(f)
				}
			case *array.Float64:
				f := a.Value(i)
				if math.IsNaN(f) {
					v.null[len(v.null)-1], v.nan[len(v.nan)-1] = true, true
				} else {
					u = floatKey(f)
				}
			case *array.Timestamp:
				unit := a.DataType().(*arrow.TimestampType).Unit
				x := int64(a.Value(i))
				switch c.typ.(type) {
				case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
					x = toNanos(x, unit)
				default:
					x = layout.TimestampMicros(x, unit)
				}
				u = intKey(x)
			default:
				return fmt.Errorf("%w: %s", layout.ErrUnsupportedType, arr.DataType())
			}
		}
		v.u = append(v.u, u)
	}
	return nil
}

func toNanos(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1e9
	case arrow.Millisecond:
		return v * 1e6
	case arrow.Microsecond:
		return v * 1e3
	}
	return v
}
