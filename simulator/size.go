package simulator

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/floe-project/floe/internal/pqdict"
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
	fraction := s.Fraction
	if step := (len(perm) + sizeModelRows - 1) / sizeModelRows; step > 1 {
		thin := make([]int32, 0, len(perm)/step+1)
		for i := 0; i < len(perm); i += step {
			thin = append(thin, perm[i])
		}
		perm, fraction = thin, fraction*float64(len(thin))/float64(s.Rows)
	}
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
		col := cols[ci]
		// Only dictionary-encoded columns are modelled: a bounded domain whose runs
		// and narrowed ranges the layout creates. A column written plain keeps its
		// size: extrapolating plain, high-cardinality values from a sparse sample
		// was found to be unreliable (sorted timestamps came out larger than today).
		c, err := s.codedColumn(ci, col, rgRows)
		if err != nil {
			return 1, fmt.Errorf("size model: column %s: %w", fld.Name, err)
		}
		if !c.dict {
			continue
		}
		perRow, err := denseBytesPerRow(c, fld, perm, fraction)
		if err == nil {
			r := min(max(perRow*liveRows/float64(now), minColumnRatio), maxColumnRatio)
			saved += float64(now) * (1 - r)
		}
		if err != nil {
			return 1, fmt.Errorf("size model: column %s: %w", fld.Name, err)
		}
	}
	return min(max(1-saved/float64(s.sizedBytes), minSizeRatio), maxSizeRatio), nil
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
	n := col.col.Len()
	if perm == nil {
		perm = make([]int32, n)
		for i := range perm {
			perm[i] = int32(i)
		}
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

// encodedBytes is the size of the column chunk col[rows] would take, dictionary-encoded,
// in a Parquet file written as the rewriter writes it (zstd), without the file's footer.
// Only columns the rewriter dictionary-encodes (the same pqdict rule) are modelled.
func encodedBytes(col coded, fld arrow.Field, rows []int32) (int64, error) {
	taken, err := col.take(rows)
	if err != nil {
		return 0, err
	}
	defer taken.Release()
	sch := arrow.NewSchema([]arrow.Field{{Name: fld.Name, Type: taken.DataType(), Nullable: fld.Nullable}}, nil)
	rec := array.NewRecordBatch(sch, []arrow.Array{taken}, int64(taken.Len()))
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(true),
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
