package simulator

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/floe-project/floe/internal/pqdict"
	"github.com/floe-project/floe/lake"
)

// Bounds of the size model: a sampled column is estimated at no less than 1/100 and no
// more than 1.5 times its bytes today, and the table as a whole stays within
// [minSizeRatio, maxSizeRatio] of its bytes today.
const (
	minColumnRatio = 0.01
	maxColumnRatio = 1.5
	minSizeRatio   = 0.05
	maxSizeRatio   = 1.5
	// dictProbeRows is how many sampled rows (a uniform sample in arrival order)
	// decide whether a column is dictionary-encoded.
	dictProbeRows = 1 << 16
	// sizeModelRows caps the rows encoded per column: a larger sample is thinned
	// in the layout's order (every k-th row), which only lowers the density the
	// extrapolation starts from.
	sizeModelRows = 1 << 19
)

// sizeRatio estimates the table's compressed bytes after a rewrite in the order perm
// divided by its bytes today (see "File count after a rewrite" in the package
// documentation). It returns 1 when the table's files carry no column sizes or nothing
// was sampled.
func (s *Sample) sizeRatio(perm []int32, targetFileSizeBytes int64) (float64, error) {
	if s.Rows == 0 || s.sizedBytes == 0 || len(s.Records) == 0 || s.Fraction <= 0 {
		return 1, nil
	}
	liveRows := float64(s.Rows) / s.Fraction
	order := perm
	perm, fraction := thinned(perm, s.Fraction)
	// Rows of a row group as the rewriter cuts them (an eighth of a file), at
	// today's bytes per row: the scale its dictionary decision is made at.
	rgRows := int64(max(1, liveRows*min(1, float64(targetFileSizeBytes)/8/float64(max(s.TableBytes, 1)))))
	var saved float64
	sch := s.Records[0].Schema()
	for ci, fld := range sch.Fields() {
		f, ok := s.Schema.FindFieldByNameCaseInsensitive(fld.Name)
		if !ok {
			continue
		}
		now := s.columnBytes[f.ID]
		if now == 0 {
			continue
		}
		cols, err := s.concatColumns()
		if err != nil {
			return 1, err
		}
		c, err := s.codedColumn(ci, cols[ci], rgRows)
		if err != nil {
			return 1, fmt.Errorf("size model: column %s: %w", fld.Name, err)
		}
		// Every column is judged against itself in today's order, encoded from the
		// sample at the same density and brought to the table's alike, so that what
		// the model gets wrong about both cancels: a column the layout leaves as
		// random as today comes out at today's bytes.
		cand, ok, err := s.bytesPerRow(c, fld, ci, order, perm, fraction)
		if err != nil {
			return 1, fmt.Errorf("size model: column %s: %w", fld.Name, err)
		}
		cur, err := s.currentBytesPerRow(ci, c, fld, rgRows)
		if err != nil {
			return 1, fmt.Errorf("size model: column %s: %w", fld.Name, err)
		}
		if !ok || cur <= 0 {
			continue
		}
		r := cand / cur
		r = min(max(r, minColumnRatio), maxColumnRatio)
		saved += float64(now) * (1 - r)
	}
	data := float64(s.sizedBytes) - float64(s.sizedFiles)*s.overheadAt(targetFileSizeBytes)
	return min(max(1-saved/max(data, 1), minSizeRatio), maxSizeRatio), nil
}

// fileOverhead estimates the bytes each of the table's files takes beyond its rows:
// its footer (row groups' and columns' metadata, statistics, schema), and its
// row groups' page headers and dictionary pages, which a file pays however few rows
// it holds. It is the intercept of file bytes against file rows fitted over the
// files by least squares, at least the mean footer the manifests show (file bytes
// minus its column sizes) and at most the smallest file. With fewer than three
// files, or rows that vary by less than a tenth across them (the intercept is then
// not determined), it is the mean footer.
func fileOverhead(files []lake.File) float64 {
	over, _, _ := fileOverheads(files)
	return over
}

// fileOverheads is [fileOverhead], with the footer bytes each row group of
// today's files adds (its columns' chunk metadata and statistics: the footer
// over the file's row groups, which the manifests give as split offsets)
// and how many row groups today's files hold on average.
func fileOverheads(files []lake.File) (over, rowGroupFooter, rowGroups float64) {
	var (
		n, sx, sy, sxx, sxy float64
		footer, footers     float64
		perRG, rgs          float64
		smallest            = math.Inf(1)
	)
	for i := range files {
		f := &files[i]
		if f.Records <= 0 || f.SizeBytes <= 0 {
			continue
		}
		x, y := float64(f.Records), float64(f.SizeBytes)
		n++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		smallest = min(smallest, y)
		if f.DataFile != nil {
			if cs := f.DataFile.ColumnSizes(); len(cs) > 0 {
				var c int64
				for _, b := range cs {
					c += b
				}
				g := float64(max(len(f.DataFile.SplitOffsets()), 1))
				footer += max(y-float64(c), 0)
				perRG += max(y-float64(c), 0) / g
				rgs += g
				footers++
			}
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	if footers > 0 {
		footer /= footers
		perRG /= footers
		rgs /= footers
	}
	mean := sx / n
	vx := sxx/n - mean*mean
	if n < 3 || vx <= 0 || math.Sqrt(vx) < 0.1*mean {
		return min(footer, smallest), perRG, rgs
	}
	slope := (sxy/n - mean*sy/n) / vx
	return min(max(sy/n-slope*mean, footer), smallest), perRG, rgs
}

// RowGroupsPerFile is how many row groups the rewriter's writer cuts a file
// into (rewriter.DefaultRowGroupsPerFile; a test keeps the two equal).
const RowGroupsPerFile = 8

// rowGroupShare is how much more, as a share of the bytes projected, a
// rewrite at target may write than the size model counts: the writer cuts
// each file into RowGroupsPerFile row groups, and each row group beyond those
// today's files hold adds its columns' chunk metadata and statistics to the
// footer (about one footer of today's one-row-group files each). The size
// model leaves it out, because on bench/layout's shapes counting it made
// projections worse (z-order on the appended stream: 59 files projected, 30
// written); at small targets it is most of a file. Measured on the demo's
// events (one footer 2.8 KiB, written ÷ projected bytes at each target):
// 16 KiB 4.2, 32 KiB 1.9, 64 KiB 1.37, 128 KiB 1.17, 256 KiB 1.03, 512 KiB
// 0.98. The error bar counts it (sizeSensitivity) rather than the estimate.
func (s *Sample) rowGroupShare(target int64) float64 {
	if target <= 0 {
		return 0
	}
	return min(max(RowGroupsPerFile-s.inRowGroups, 0)*s.rowGroupFooter/float64(target), 4)
}

// overheadAt is the per-file overhead (see fileOverhead) the size model counts in
// files of target bytes: at most half of one.
func (s *Sample) overheadAt(target int64) float64 {
	return min(s.fileOverhead, float64(target)/2)
}

// currentPerm returns the sample's rows in today's order: grouped by partition (a
// rewrite writes each partition's rows to its own files) and, within a partition, in
// arrival order, as today's files hold them. Built once.
func (s *Sample) currentPerm() []int32 {
	s.curPermOnce.Do(func() {
		s.curPerm = identity(s.Rows)
		slices.SortStableFunc(s.curPerm, func(a, b int32) int { return int(s.rowPart[a]) - int(s.rowPart[b]) })
	})
	return s.curPerm
}

// bytesPerRow is the Parquet bytes per row of column ci at the table's density in
// the order perm (thin: the same order thinned to sizeModelRows, at density
// fraction): [denseBytesPerRow] for a column the rewriter dictionary-encodes,
// [plainBytesPerRow] for one it writes plain (ok false when it cannot be filled in).
func (s *Sample) bytesPerRow(c coded, fld arrow.Field, ci int, perm, thin []int32, fraction float64) (float64, bool, error) {
	if c.dict {
		v, err := denseBytesPerRow(c, fld, thin, fraction)
		return v, err == nil, err
	}
	return plainBytesPerRow(c, fld, perm, s.rowPart, s.Fraction, uint64(ci))
}

// currentBytesPerRow is [Sample.bytesPerRow] of column ci in today's order
// ([Sample.currentPerm]), computed once per row-group scale and kept: it is the
// same for every layout (0 when the column cannot be modelled).
func (s *Sample) currentBytesPerRow(ci int, c coded, fld arrow.Field, rgRows int64) (float64, error) {
	co := &s.coded[ci]
	co.mu.Lock()
	done, v := co.curDone && co.curRGRows == rgRows, co.curPerRow
	co.mu.Unlock()
	if done {
		return v, nil
	}
	perm := s.currentPerm()
	thin, fraction := thinned(perm, s.Fraction)
	v, ok, err := s.bytesPerRow(c, fld, ci, perm, thin, fraction)
	if err != nil {
		return 0, err
	}
	if !ok {
		v = 0
	}
	co.mu.Lock()
	co.curPerRow, co.curRGRows, co.curDone = v, rgRows, true
	co.mu.Unlock()
	return v, nil
}

// thinned returns perm thinned to at most sizeModelRows rows (every k-th) and the
// density fraction of the table's rows it then holds.
func thinned(perm []int32, fraction float64) ([]int32, float64) {
	step := (len(perm) + sizeModelRows - 1) / sizeModelRows
	if step <= 1 {
		return perm, fraction
	}
	thin := make([]int32, 0, len(perm)/step+1)
	for i := 0; i < len(perm); i += step {
		thin = append(thin, perm[i])
	}
	return thin, fraction * float64(len(thin)) / float64(len(perm))
}

// concatColumns returns every sampled column concatenated over the sample's records,
// built on first use and kept until [Sample.Release]: each layout's size model reads
// the same columns in its own order.
func (s *Sample) concatColumns() ([]arrow.Array, error) {
	s.concatOnce.Do(func() {
		n := int(s.Records[0].NumCols())
		for ci := range n {
			parts := make([]arrow.Array, len(s.Records))
			for i, r := range s.Records {
				parts[i] = r.Column(ci)
			}
			col, err := array.Concatenate(parts, memory.DefaultAllocator)
			if err != nil {
				s.concatErr = fmt.Errorf("size model: concatenate column %d: %w", ci, err)
				return
			}
			s.concat = append(s.concat, col)
		}
		s.coded = make([]codedState, n)
	})
	return s.concat, s.concatErr
}

// codedState holds one column's [coded] form, built on first use, and the
// dictionary decision for the row-group size it was last asked about; mu
// guards both (layouts are projected concurrently).
type codedState struct {
	mu     sync.Mutex
	built  bool
	c      coded
	rgRows int64
	dict   bool
	// curPerRow is the column's plain bytes per row in today's order at the
	// row-group scale curRGRows, once curDone.
	curPerRow float64
	curRGRows int64
	curDone   bool
}

// codedColumn returns column ci of the concatenated sample (col) as the size model
// encodes it: whether the rewriter would dictionary-encode it at row groups of
// rgRows rows (package pqdict's rule, judged on the head of the sample, which is
// in arrival order and so the same for every layout) and, for a string or binary
// column it would, codes into its distinct values (see [coded]). Both are kept for
// the next layout.
func (s *Sample) codedColumn(ci int, col arrow.Array, rgRows int64) (coded, error) {
	co := &s.coded[ci]
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.rgRows != rgRows {
		head := array.NewSlice(col, 0, int64(min(col.Len(), dictProbeRows)))
		ratio, ok := pqdict.ScaledDistinctRatio(head, rgRows)
		head.Release()
		co.rgRows, co.dict = rgRows, ok && ratio <= pqdict.DefaultMaxRatio
	}
	if !co.dict {
		return coded{col: col}, nil
	}
	if !co.built {
		c, err := newCoded(col)
		if err != nil {
			return coded{}, err
		}
		co.c, co.built = c, true
	}
	c := co.c
	c.dict = true
	return c, nil
}

// coded is a sampled column in the form the size model encodes it in. For a
// string or binary column whose distinct values take well under a dictionary
// page, values holds those values in first-appearance order and codes each
// row's index into them (-1 for null): every layout's encodes then take int32
// codes and hand the Parquet writer a dictionary array, instead of taking and
// hashing every string twice per layout (which was a third of planning's CPU).
// The bytes are the dense path's up to page headers: the writer's dictionary
// gets the values a layout's rows use, in the order they first occur, as it
// would have built them by hashing, and the indices are the same; only its data
// pages are cut by index bytes where a dense column's are cut by raw value bytes
// (1 MiB), so the dense column takes a few more page headers, well under 1% of
// its bytes (TestCodedEncodesAsDense). Otherwise values is nil and col is
// encoded densely.
type coded struct {
	col arrow.Array
	// dict is whether the rewriter would dictionary-encode the column: only
	// such columns are modelled.
	dict   bool
	values arrow.Array
	codes  []int32
}

// codedDictBytes bounds the distinct values' bytes for the coded form: well under
// the writer's dictionary page limit, so that neither path falls back to plain
// encoding part-way, where the two would cut their pages differently.
const codedDictBytes = int(parquet.DefaultDictionaryPageSizeLimit / 4)

// newCoded returns col in the coded form, or as it is when it is not a string
// or binary column or its distinct values exceed codedDictBytes.
func newCoded(col arrow.Array) (coded, error) {
	c := coded{col: col}
	var value func(i int) string
	switch a := col.(type) {
	case *array.String:
		value = a.Value
	case *array.LargeString:
		value = a.Value
	case *array.Binary:
		value = func(i int) string { return string(a.Value(i)) }
	case *array.LargeBinary:
		value = func(i int) string { return string(a.Value(i)) }
	default:
		return c, nil
	}
	var (
		index = map[string]int32{}
		first []int32 // row of each distinct value's first occurrence
		bytes int
		codes = make([]int32, col.Len())
	)
	for i := range codes {
		if col.IsNull(i) {
			codes[i] = -1
			continue
		}
		v := value(i)
		k, ok := index[v]
		if !ok {
			bytes += len(v)
			if bytes > codedDictBytes {
				return c, nil
			}
			k = int32(len(first))
			index[v] = k
			first = append(first, int32(i))
		}
		codes[i] = k
	}
	values, err := takeRows(col, first)
	if err != nil {
		return coded{}, fmt.Errorf("distinct values: %w", err)
	}
	c.values, c.codes = values, codes
	return c, nil
}

// release frees the distinct values; col belongs to the sample.
func (c coded) release() {
	if c.values != nil {
		c.values.Release()
	}
}

// takeRows returns col's rows, in the order given.
func takeRows(col arrow.Array, rows []int32) (arrow.Array, error) {
	idx := array.NewInt32Builder(memory.DefaultAllocator)
	idx.AppendValues(rows, nil)
	ia := idx.NewArray()
	idx.Release()
	defer ia.Release()
	return compute.TakeArray(context.Background(), col, ia)
}

// take returns the rows of the column in the order given: for the coded form, a
// dictionary array of the values those rows use, numbered in the order they first
// occur.
func (c coded) take(rows []int32) (arrow.Array, error) {
	if c.values == nil {
		return takeRows(c.col, rows)
	}
	renum := make([]int32, c.values.Len())
	for i := range renum {
		renum[i] = -1
	}
	var (
		used  []int32
		idx   = make([]int32, len(rows))
		valid []bool
	)
	for j, r := range rows {
		k := c.codes[r]
		if k < 0 {
			if valid == nil {
				valid = make([]bool, len(rows))
				for i := range j {
					valid[i] = true
				}
			}
			continue
		}
		if valid != nil {
			valid[j] = true
		}
		m := renum[k]
		if m < 0 {
			m = int32(len(used))
			renum[k] = m
			used = append(used, k)
		}
		idx[j] = m
	}
	dict, err := takeRows(c.values, used)
	if err != nil {
		return nil, err
	}
	defer dict.Release()
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(idx, valid)
	ia := b.NewArray()
	defer ia.Release()
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: c.col.DataType()}, ia, dict), nil
}

// denseBytesPerRow is the Parquet bytes per row of col written in the order perm (nil:
// sample order), extrapolated from the sample's density (fraction of the table's rows)
// to the full table's. It encodes the rows at the sample's density and at half of it
// (every other row of the order) and fits bytes/row = C · density^−α, α in [0, 1]: a
// sorted column of few values is run-length encoded and its bytes per row halve when
// its runs double (α = 1); a column whose order carries no locality does not change
// (α = 0).
func denseBytesPerRow(col coded, fld arrow.Field, perm []int32, fraction float64) (float64, error) {
	if perm == nil {
		perm = identity(col.col.Len())
	}
	full, err := encodedBytes(col, fld, perm)
	if err != nil {
		return 0, err
	}
	dFull := float64(full) / float64(len(perm))
	if fraction >= 1 || len(perm) < 4 {
		return dFull, nil
	}
	half := make([]int32, 0, len(perm)/2+1)
	for i := 0; i < len(perm); i += 2 {
		half = append(half, perm[i])
	}
	hb, err := encodedBytes(col, fld, half)
	if err != nil {
		return 0, err
	}
	dHalf := float64(hb) / float64(len(half))
	if dFull <= 0 || dHalf <= 0 {
		return dFull, nil
	}
	alpha := min(max(math.Log2(dHalf/dFull), 0), 1)
	return dFull * math.Pow(fraction, alpha), nil
}

// synthRows caps the rows of the full-density column [synthPlain] builds.
const synthRows = 1 << 18

// plainBytesPerRow is the Parquet bytes per row of a column written plain (zstd) in the
// order perm (grouped by partition, rowPart giving each row's), at the table's density:
// it encodes the column [synthPlain] fills in between the sampled rows. ok is false for
// a column it cannot fill in (not a number, date or timestamp, or with nulls).
func plainBytesPerRow(col coded, fld arrow.Field, perm, rowPart []int32, fraction float64, seed uint64) (perRow float64, ok bool, err error) {
	syn, ok := synthPlain(col.col, perm, rowPart, fraction, seed)
	if !ok {
		return 0, false, nil
	}
	defer syn.Release()
	n, err := encodedBytes(coded{col: syn}, fld, identity(syn.Len()))
	if err != nil {
		return 0, false, err
	}
	return float64(n) / float64(max(syn.Len(), 1)), true, nil
}

// synthPlain fills col, read in the order perm at density fraction, back in to the
// table's density: between two neighbouring sampled rows of a partition it puts the
// 1/fraction − 1 rows the table holds there. A plain value is not run-length encoded;
// what an order gives it is locality (neighbours share their high bytes, which the codec
// finds), and a sparse sample's neighbours are 1/fraction rows apart, so encoding the
// sample as it is makes an ordered column look far larger than it is, and no power or
// log law of the density fits what zstd does with it. Where the column runs one way
// through four sampled rows (the order keeps it ordered there: time in arrival order, the
// second key of a sort within a run of the first), the rows between two of them are
// drawn uniformly between their values and sorted that way; elsewhere (the order leaves
// it random) each is drawn uniformly between two of the partition's sampled values
// taken at random. Draws are integers, or floats at the decimal resolution the sampled
// values show. Gaps are taken evenly over the
// order, at most synthRows rows in all. Seeded: the same for every layout.
func synthPlain(col arrow.Array, perm, rowPart []int32, fraction float64, seed uint64) (arrow.Array, bool) {
	if col.NullN() > 0 || len(perm) < 4 || fraction <= 0 {
		return nil, false
	}
	var (
		ints  func(i int) int64
		flts  func(i int) float64
		build func(ints []int64, flts []float64) arrow.Array
	)
	mem := memory.DefaultAllocator
	switch a := col.(type) {
	case *array.Int64:
		ints = a.Value
		build = func(v []int64, _ []float64) arrow.Array {
			return buildArray(array.NewInt64Builder(mem), v, func(x int64) int64 { return x })
		}
	case *array.Int32:
		ints = func(i int) int64 { return int64(a.Value(i)) }
		build = func(v []int64, _ []float64) arrow.Array {
			return buildArray(array.NewInt32Builder(mem), v, func(x int64) int32 { return int32(x) })
		}
	case *array.Timestamp:
		ints = func(i int) int64 { return int64(a.Value(i)) }
		build = func(v []int64, _ []float64) arrow.Array {
			return buildArray(array.NewTimestampBuilder(mem, a.DataType().(*arrow.TimestampType)), v, func(x int64) arrow.Timestamp { return arrow.Timestamp(x) })
		}
	case *array.Date32:
		ints = func(i int) int64 { return int64(a.Value(i)) }
		build = func(v []int64, _ []float64) arrow.Array {
			return buildArray(array.NewDate32Builder(mem), v, func(x int64) arrow.Date32 { return arrow.Date32(x) })
		}
	case *array.Float64:
		flts = a.Value
		build = func(_ []int64, v []float64) arrow.Array {
			return buildArray(array.NewFloat64Builder(mem), v, func(x float64) float64 { return x })
		}
	case *array.Float32:
		flts = func(i int) float64 { return float64(a.Value(i)) }
		build = func(_ []int64, v []float64) arrow.Array {
			return buildArray(array.NewFloat32Builder(mem), v, func(x float64) float32 { return float32(x) })
		}
	default:
		return nil, false
	}
	val := func(i int) float64 {
		if ints != nil {
			return float64(ints(int(perm[i])))
		}
		return flts(int(perm[i]))
	}
	// The decimal resolution of a float column: the coarsest power of ten, down to
	// 1e-9, that every sampled value is a multiple of.
	scale := 1.0
	if flts != nil {
		scale = 0
		for e := 0; e <= 9 && scale == 0; e++ {
			sc := math.Pow(10, float64(e))
			all := true
			for i := 0; i < len(perm) && all; i += max(1, len(perm)/4096) {
				x := val(i) * sc
				all = math.Abs(x-math.Round(x)) <= 1e-6*max(1, math.Abs(x))
			}
			if all {
				scale = sc
			}
		}
	}
	k := max(1, int(math.Round(1/fraction)))
	stride := max(1, (len(perm)*k+synthRows-1)/synthRows)
	rng := rand.New(rand.NewPCG(seed, 0x5a7e))
	// Each partition's run [from, to) in perm.
	from := make([]int, len(perm))
	for i := range perm {
		if i > 0 && rowPart[perm[i]] == rowPart[perm[i-1]] {
			from[i] = from[i-1]
		} else {
			from[i] = i
		}
	}
	to := make([]int, len(perm))
	for i := len(perm) - 1; i >= 0; i-- {
		if i < len(perm)-1 && rowPart[perm[i]] == rowPart[perm[i+1]] {
			to[i] = to[i+1]
		} else {
			to[i] = i + 1
		}
	}
	var out []float64
	tmp := make([]float64, 0, k)
	for i := 0; i+1 < len(perm); i += stride {
		out = append(out, val(i))
		if to[i] != to[i+1] {
			continue // the last sampled row of its partition
		}
		lo, hi := val(i), val(i+1)
		mono := i-1 >= from[i] && i+2 < to[i]
		if mono {
			a, b, c, d := val(i-1), lo, hi, val(i+2)
			mono = a <= b && b <= c && c <= d || a >= b && b >= c && c >= d
		}
		tmp = tmp[:0]
		for range k - 1 {
			a, b := lo, hi
			if !mono {
				// Between two of the partition's sampled values drawn at random:
				// the partition's distribution, but not a repeat of a sampled value
				// (a sample's values repeated are matches the codec would find and
				// the table does not hold).
				a, b = val(from[i]+rng.IntN(to[i]-from[i])), val(from[i]+rng.IntN(to[i]-from[i]))
			}
			x := a + rng.Float64()*(b-a)
			if scale > 0 {
				x = math.Round(x*scale) / scale
			}
			tmp = append(tmp, x)
		}
		if mono {
			slices.Sort(tmp)
			if lo > hi {
				slices.Reverse(tmp)
			}
		}
		out = append(out, tmp...)
	}
	if ints != nil {
		iv := make([]int64, len(out))
		for i, x := range out {
			iv[i] = int64(math.Round(x))
		}
		return build(iv, nil), true
	}
	return build(nil, out), true
}

// buildArray builds an array of vals, converted by conv, with builder b.
func buildArray[T, V any](b interface {
	Append(V)
	NewArray() arrow.Array
	Release()
}, vals []T, conv func(T) V) arrow.Array {
	defer b.Release()
	for _, v := range vals {
		b.Append(conv(v))
	}
	return b.NewArray()
}

// encodedBytes is the size of the column chunk col[rows] would take in a Parquet file
// written as the rewriter writes it (zstd; dictionary-encoded when col.dict, by the same
// pqdict rule, else plain), without the file's footer.
func encodedBytes(col coded, fld arrow.Field, rows []int32) (int64, error) {
	taken, err := col.take(rows)
	if err != nil {
		return 0, err
	}
	defer taken.Release()
	sch := arrow.NewSchema([]arrow.Field{{Name: fld.Name, Type: taken.DataType(), Nullable: fld.Nullable}}, nil)
	rec := array.NewRecordBatch(sch, []arrow.Array{taken}, int64(taken.Len()))
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(col.dict || col.values != nil),
		parquet.WithMaxRowGroupLength(int64(max(taken.Len(), 1))))
	w, err := pqarrow.NewFileWriter(sch, io.Discard, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return 0, err
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	md, err := w.FileMetadata()
	if err != nil {
		return 0, err
	}
	var chunk int64
	for i := range md.NumRowGroups() {
		rg := md.RowGroup(i)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return 0, err
			}
			chunk += cc.TotalCompressedSize()
		}
	}
	return chunk, nil
}

// identity returns 0, 1, …, n−1.
func identity(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}
