package rewriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/internal/rowsum"
)

// checkReader reads the data files a rewrite wrote, for its content check,
// with arrow-go's Parquet reader directly, keeping the dictionary-coded
// strings coded: a top-level string or binary column whose data pages are
// all dictionary-encoded comes as a dictionary array, which
// internal/rowsum hashes a dictionary value at a time and then by index,
// where iceberg-go's scan (v0.7.0 asks pqarrow for dictionaries only on
// position delete files) materializes every value as a plain string, which
// the digest then hashes again.
//
// It is the check's own small reader, apart from the rewriter's input
// reader (parquetFiles) and from its writer, and reads as a reader of the
// table does: the columns of the table's current schema by field id, in
// that schema's order and under its names (the names iceberg-go's scan
// gives them, which the rows read are digested under: rowsum keys columns
// by name when batches carry no field ids, and neither side's do); a column
// the file does not hold reads as nulls. On a table with row lineage the
// two lineage columns come after the table's, as the values the file
// stores, nulls where it stores none or lacks the column: what iceberg-go's
// scan gives for a task without FirstRowID and DataSequenceNumber, which is
// how [readBack] reads files no snapshot holds yet (inheriting needs the
// manifest entry the commit has not written).
//
// A file it cannot read so is left to iceberg-go's scan ([DigestTasks]):
// a file that is not Parquet, has no field ids, holds a column under a type
// that does not digest as the table's type does (rowsum hashes integer
// widths of one signedness alike, float as double, the string and binary
// types alike, a timestamp as its instant, a decimal with its scale), a
// struct whose fields are not the table's in the table's order (an evolved
// nested type: iceberg-go projects it), or lacks a column that has an
// initial default (v3 default values: iceberg-go's to fill). The rewriter's
// own outputs are written in the table's current schema and never are.
type checkReader struct {
	fs        iceio.IO
	mem       memory.Allocator
	fields    []iceberg.NestedField // the table's schema, lineage columns after
	types     []arrow.DataType      // their Arrow types, with field ids
	batchRows int
	// parallel decodes a file's columns on goroutines of their own, when
	// fewer files are read at once than the group has cores.
	parallel bool
}

// newCheckReader prepares reads of tbl's files; nil when the table's
// schema has a type iceberg-go gives no Arrow type for.
func newCheckReader(ctx context.Context, tbl *table.Table, batchRows int, parallel bool) (*checkReader, error) {
	sc := lineageSchema(tbl.Schema(), rowLineage(tbl))
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		// A type without an Arrow type: iceberg-go's scan reads the
		// files, and reports it.
		return nil, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file io of %s: %w", tbl.Location(), err)
	}
	r := &checkReader{fs: fs, mem: memory.NewGoAllocator(), fields: sc.Fields(), batchRows: cmp.Or(batchRows, DefaultScanBatchRows), parallel: parallel}
	for i := range r.fields {
		r.types = append(r.types, asc.Field(i).Type)
	}
	return r, nil
}

// digest digests the rows of files, at most workers of them read at once,
// into one Sum, and returns the files it left for iceberg-go's scan.
func (r *checkReader) digest(ctx context.Context, files []iceberg.DataFile, workers int) (rowsum.Sum, []iceberg.DataFile, error) {
	workers = max(1, min(workers, len(files)))
	var (
		mu   sync.Mutex
		sum  rowsum.Sum
		left = make([]bool, len(files))
		next = make(chan int)
		errs = make([]error, workers)
		wg   sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d rowsum.Digest
			for i := range next {
				handled, err := r.read(ctx, files[i], &d)
				if err != nil {
					errs[w] = fmt.Errorf("read back %s: %w", files[i].FilePath(), err)
					cancel()
					continue
				}
				left[i] = !handled
			}
			mu.Lock()
			sum = sum.Plus(d.Sum())
			mu.Unlock()
		}()
	}
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return rowsum.Sum{}, nil, err
	}
	if err := ctx.Err(); err != nil {
		return rowsum.Sum{}, nil, err
	}
	var rest []iceberg.DataFile
	for i, f := range files {
		if left[i] {
			rest = append(rest, f)
		}
	}
	return sum, rest, nil
}

// read digests the rows of f into d; handled is false, with nothing
// digested, when f is not a file checkReader reads (see there).
func (r *checkReader) read(ctx context.Context, f iceberg.DataFile, d *rowsum.Digest) (handled bool, err error) {
	if f.FileFormat() != iceberg.ParquetFile {
		return false, nil
	}
	src, err := r.fs.Open(f.FilePath())
	if err != nil {
		return false, err
	}
	rdr, err := file.NewParquetReader(src, file.WithReadProps(parquet.NewReaderProperties(r.mem)))
	if err != nil {
		return false, errors.Join(err, src.Close())
	}
	// Closing the reader closes src.
	defer func() { err = errors.Join(err, rdr.Close()) }()

	props := pqarrow.ArrowReadProperties{BatchSize: int64(r.batchRows), Parallel: r.parallel}
	pqs := rdr.MetaData().Schema
	for leaf := range pqs.NumColumns() {
		c := pqs.Column(leaf)
		if c.MaxRepetitionLevel() == 0 && len(c.ColumnPath()) == 1 && c.PhysicalType() == parquet.Types.ByteArray &&
			stringOrBinary(c.LogicalType()) && dictPagesOnly(rdr, leaf) {
			props.SetReadDict(leaf, true)
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, props, r.mem)
	if err != nil {
		return false, err
	}
	// The file's top-level fields by field id, and the leaves to read.
	byID := map[int]int{}
	for i, sf := range fr.Manifest.Fields {
		if id := fieldIDOf(*sf.Field); id > 0 {
			byID[id] = i
		}
	}
	if len(byID) == 0 {
		return false, nil // a file without field ids: iceberg-go maps it by name
	}
	var leaves []int
	for i, tf := range r.fields {
		fi, ok := byID[tf.ID]
		if !ok {
			if tf.InitialDefault != nil {
				return false, nil // a default to fill: iceberg-go's
			}
			continue
		}
		sf := fr.Manifest.Fields[fi]
		if !hashesAs(sf.Field.Type, r.types[i]) {
			return false, nil
		}
		leaves = appendLeaves(leaves, sf)
	}
	if len(leaves) == 0 {
		// Every column missing (the table's were all added after the
		// file): rows of nulls, as many as the file holds.
		return true, r.addNulls(d, int(rdr.NumRows()))
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return false, err
	}
	defer rr.Release()
	fields := make([]arrow.Field, len(r.fields))
	cols := make([]arrow.Array, len(r.fields))
	for rr.Next() {
		rec := rr.RecordBatch()
		at := map[int]int{}
		for j, fld := range rec.Schema().Fields() {
			at[fieldIDOf(fld)] = j
		}
		var nulls []arrow.Array
		for i, tf := range r.fields {
			if j, ok := at[tf.ID]; ok {
				cols[i] = rec.Column(j)
			} else {
				cols[i] = array.MakeArrayOfNull(r.mem, r.types[i], int(rec.NumRows()))
				nulls = append(nulls, cols[i])
			}
			fields[i] = arrow.Field{Name: tf.Name, Type: cols[i].DataType(), Nullable: true}
		}
		out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		err := d.Add(out)
		out.Release()
		for _, a := range nulls {
			a.Release()
		}
		if err != nil {
			return true, err
		}
	}
	return true, rr.Err()
}

// addNulls digests n rows of nulls in every column.
func (r *checkReader) addNulls(d *rowsum.Digest, n int) error {
	for lo := 0; lo < n; lo += r.batchRows {
		m := min(r.batchRows, n-lo)
		fields := make([]arrow.Field, len(r.fields))
		cols := make([]arrow.Array, len(r.fields))
		for i, tf := range r.fields {
			cols[i] = array.MakeArrayOfNull(r.mem, r.types[i], m)
			fields[i] = arrow.Field{Name: tf.Name, Type: r.types[i], Nullable: true}
		}
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(m))
		err := d.Add(rec)
		rec.Release()
		for _, c := range cols {
			c.Release()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// appendLeaves appends the Parquet leaf columns under sf.
func appendLeaves(leaves []int, sf pqarrow.SchemaField) []int {
	if sf.IsLeaf() {
		return append(leaves, sf.ColIndex)
	}
	for _, c := range sf.Children {
		leaves = appendLeaves(leaves, c)
	}
	return leaves
}

// stringOrBinary reports whether a BYTE_ARRAY leaf of logical type lt
// reads as a string or binary Arrow array (not a decimal, say).
func stringOrBinary(lt schema.LogicalType) bool {
	switch lt.(type) {
	case nil, schema.StringLogicalType, *schema.StringLogicalType, schema.NoLogicalType, *schema.NoLogicalType:
		return true
	}
	return false
}

// fieldIDOf is the Iceberg field id an Arrow field carries in its metadata
// (pqarrow sets it from the file's schema); 0 when none.
func fieldIDOf(f arrow.Field) int {
	if v, ok := f.Metadata.GetValue("PARQUET:field_id"); ok {
		if id, err := strconv.Atoi(v); err == nil && id > 0 {
			return id
		}
	}
	return 0
}

// hashesAs reports whether values read as type got digest as the same
// values read as want, iceberg-go's type for the column, do (see
// internal/rowsum's package documentation): got is the type want is or a
// type rowsum hashes alike, a dictionary of one, and a struct has want's
// fields, by field id, in want's order.
func hashesAs(got, want arrow.DataType) bool {
	if d, ok := got.(*arrow.DictionaryType); ok {
		got = d.ValueType
	}
	if e, ok := got.(arrow.ExtensionType); ok {
		got = e.StorageType()
	}
	if e, ok := want.(arrow.ExtensionType); ok {
		want = e.StorageType()
	}
	switch w := want.(type) {
	case *arrow.StructType:
		g, ok := got.(*arrow.StructType)
		if !ok || g.NumFields() != w.NumFields() {
			return false
		}
		for i := range w.NumFields() {
			gf, wf := g.Field(i), w.Field(i)
			if id := fieldIDOf(wf); id == 0 || fieldIDOf(gf) != id || !hashesAs(gf.Type, wf.Type) {
				return false
			}
		}
		return true
	case *arrow.MapType:
		g, ok := got.(*arrow.MapType)
		return ok && hashesAs(g.KeyType(), w.KeyType()) && hashesAs(g.ItemType(), w.ItemType())
	case arrow.ListLikeType:
		if _, ok := got.(*arrow.MapType); ok {
			return false
		}
		g, ok := got.(arrow.ListLikeType)
		if !ok || g.ID() == arrow.FIXED_SIZE_LIST || w.ID() == arrow.FIXED_SIZE_LIST {
			return false
		}
		return hashesAs(g.Elem(), w.Elem())
	case *arrow.Decimal128Type:
		g, ok := got.(*arrow.Decimal128Type)
		return ok && g.Scale == w.Scale
	case *arrow.FixedSizeBinaryType:
		g, ok := got.(*arrow.FixedSizeBinaryType)
		return ok && g.ByteWidth == w.ByteWidth
	}
	switch kind(want) {
	case 0:
		return arrow.TypeEqual(got, want)
	case kindFloat:
		// rowsum hashes a float as the double it converts to exactly.
		return got.ID() == arrow.FLOAT32 || got.ID() == arrow.FLOAT64
	default:
		return kind(got) == kind(want)
	}
}

const (
	kindBytes = iota + 1
	kindSigned
	kindUnsigned
	kindFloat
	kindInstant
	kindTime
	kindDate
)

// kind is the family of types rowsum hashes alike that t belongs to; 0
// for the others.
func kind(t arrow.DataType) int {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return kindBytes
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return kindSigned
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return kindUnsigned
	case arrow.FLOAT64:
		return kindFloat
	case arrow.TIMESTAMP:
		return kindInstant
	case arrow.TIME32, arrow.TIME64:
		return kindTime
	case arrow.DATE32:
		return kindDate
	}
	return 0
}
