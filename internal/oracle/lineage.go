package oracle

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
)

// Field ids the Iceberg spec reserves for the row-lineage columns (format
// version 3), as data files store them.
const (
	RowIDFieldID                     = 2147483540
	LastUpdatedSequenceNumberFieldID = 2147483539
)

// LineageFile is one data file whose rows' lineage [RowLineageParquet] and
// RowLineage (build tag duckdb) read, with what its manifest entry gives a
// row that holds no value of its own, as the spec has readers inherit it:
// _row_id is FirstRowID plus the row's position in the file,
// _last_updated_sequence_number is DataSequenceNumber. Leave both nil to
// require every row of the file to hold its own.
type LineageFile struct {
	Path               string
	FirstRowID         *int64
	DataSequenceNumber *int64
}

// Lineage is one row's _row_id and _last_updated_sequence_number.
type Lineage struct {
	RowID                     int64
	LastUpdatedSequenceNumber int64
}

// lineageTable collects rows' lineage by key, refusing a key seen twice.
type lineageTable map[int64]Lineage

func (t lineageTable) add(path string, key int64, l Lineage) error {
	if _, ok := t[key]; ok {
		return fmt.Errorf("%s: key %d seen twice", path, key)
	}
	t[key] = l
	return nil
}

// RowLineageParquet reads, with arrow-go's Parquet reader and not
// iceberg-go's, the row lineage of every row of files (deletes not
// applied), keyed by the int64 column key: the values the files hold in
// their row-lineage columns (found by field id), else the inherited ones
// (see [LineageFile]). A row with neither, or a key seen twice, is an error.
// The files must have flat schemas. They are read through fio, the table's
// own IO.
func RowLineageParquet(ctx context.Context, fio iceio.IO, files []LineageFile, key string) (map[int64]Lineage, error) {
	if fio == nil {
		return nil, errors.New("row lineage: no IO to read the files through")
	}
	out := lineageTable{}
	for _, f := range files {
		if err := readFileLineage(ctx, fio, f, key, out); err != nil {
			return nil, fmt.Errorf("row lineage of %s: %w", f.Path, err)
		}
	}
	return out, nil
}

func readFileLineage(ctx context.Context, fio iceio.IO, f LineageFile, key string, out lineageTable) (err error) {
	src, err := fio.Open(f.Path)
	if err != nil {
		return err
	}
	rdr, err := file.NewParquetReader(src)
	if err != nil {
		return errors.Join(err, src.Close())
	}
	defer func() { err = errors.Join(err, rdr.Close()) }()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		return err
	}
	defer tbl.Release()
	sch := rdr.MetaData().Schema
	if int64(sch.NumColumns()) != tbl.NumCols() {
		return fmt.Errorf("%d leaf columns in %d top-level ones: only flat files are read", sch.NumColumns(), tbl.NumCols())
	}
	col := func(id int, name string) (*arrow.Chunked, error) {
		for i := range sch.NumColumns() {
			c := sch.Column(i)
			if (id != 0 && int(c.SchemaNode().FieldID()) == id) || (id == 0 && c.Name() == name) {
				return tbl.Column(i).Data(), nil
			}
		}
		if id == 0 {
			return nil, fmt.Errorf("no column %s", name)
		}
		return nil, nil
	}
	keys, err := col(0, key)
	if err != nil {
		return err
	}
	ids, err := col(RowIDFieldID, "")
	if err != nil {
		return err
	}
	seqs, err := col(LastUpdatedSequenceNumberFieldID, "")
	if err != nil {
		return err
	}
	var k, rid, seq []*int64
	for _, c := range []struct {
		dst  *[]*int64
		data *arrow.Chunked
	}{{&k, keys}, {&rid, ids}, {&seq, seqs}} {
		if *c.dst, err = flatten(c.data); err != nil {
			return err
		}
	}
	for pos := range int64(tbl.NumRows()) {
		if k[pos] == nil {
			return fmt.Errorf("row %d: null %s", pos, key)
		}
		var l Lineage
		switch {
		case rid != nil && rid[pos] != nil:
			l.RowID = *rid[pos]
		case f.FirstRowID != nil:
			l.RowID = *f.FirstRowID + pos
		default:
			return fmt.Errorf("row %d (%s %d) has no _row_id", pos, key, *k[pos])
		}
		switch {
		case seq != nil && seq[pos] != nil:
			l.LastUpdatedSequenceNumber = *seq[pos]
		case f.DataSequenceNumber != nil:
			l.LastUpdatedSequenceNumber = *f.DataSequenceNumber
		default:
			return fmt.Errorf("row %d (%s %d) has no _last_updated_sequence_number", pos, key, *k[pos])
		}
		if err := out.add(f.Path, *k[pos], l); err != nil {
			return err
		}
	}
	return nil
}

// flatten returns the values of an int64 column, nil where null; nil for
// no column.
func flatten(c *arrow.Chunked) ([]*int64, error) {
	if c == nil {
		return nil, nil
	}
	var out []*int64
	for _, ch := range c.Chunks() {
		a, ok := ch.(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("column of %s, not int64", ch.DataType())
		}
		for i := range a.Len() {
			if a.IsNull(i) {
				out = append(out, nil)
				continue
			}
			v := a.Value(i)
			out = append(out, &v)
		}
	}
	return out, nil
}
