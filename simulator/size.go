package simulator

import (
	"context"
	"fmt"
	"io"
	"math"

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
		head := array.NewSlice(col, 0, int64(min(col.Len(), dictProbeRows)))
		ratio, ok := pqdict.ScaledDistinctRatio(head, rgRows)
		head.Release()
		if !ok || ratio > pqdict.DefaultMaxRatio {
			continue
		}
		perRow, err := denseBytesPerRow(col, fld, perm, fraction)
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
	})
	return s.concat, s.concatErr
}

// denseBytesPerRow is the Parquet bytes per row of col written in the order perm (nil:
// sample order), extrapolated from the sample's density (fraction of the table's rows)
// to the full table's. It encodes the rows at the sample's density and at half of it
// (every other row of the order) and fits bytes/row = C · density^−α, α in [0, 1]: a
// sorted column of few values is run-length encoded and its bytes per row halve when
// its runs double (α = 1); a column whose order carries no locality does not change
// (α = 0).
func denseBytesPerRow(col arrow.Array, fld arrow.Field, perm []int32, fraction float64) (float64, error) {
	n := col.Len()
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
func encodedBytes(col arrow.Array, fld arrow.Field, rows []int32) (int64, error) {
	idx := array.NewInt32Builder(memory.DefaultAllocator)
	idx.AppendValues(rows, nil)
	ia := idx.NewArray()
	idx.Release()
	defer ia.Release()
	taken, err := compute.TakeArray(context.Background(), col, ia)
	if err != nil {
		return 0, err
	}
	defer taken.Release()
	sch := arrow.NewSchema([]arrow.Field{{Name: fld.Name, Type: fld.Type, Nullable: fld.Nullable}}, nil)
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
