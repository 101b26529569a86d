package rewriter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A group of files of an older partition spec is rewritten into the table's
// current spec, as Spark's rewrite_data_files does by default (output spec
// id: the current one): every new file carries a partition of the current
// spec. The rows of one old partition may belong to several partitions of
// the current spec (identity(region) evolved to identity(region), day(ts)
// holds every day of a region), so the group's rows are ordered by their
// current-spec partition first (a prefix of the sort key, see
// [specKeyer]; a bin-pack then sorts by that prefix alone) and written
// partition after partition, one open file at a time ([specWriter]).
// The memory bounds stay those of a layout rewrite.

// specSplitter computes the partition of a row in the table's current
// spec, from the row's source columns.
type specSplitter struct {
	spec   iceberg.PartitionSpec
	fields []splitField
}

type splitField struct {
	id        int // partition field id
	name      string
	transform iceberg.Transform
	source    string // the source column's full name
	typ       iceberg.Type
}

// newSpecSplitter prepares the current spec of tbl for rows of tbl's
// current schema.
func newSpecSplitter(tbl *table.Table) (*specSplitter, error) {
	spec := tbl.Spec()
	schema := tbl.Schema()
	s := &specSplitter{spec: spec}
	for _, pf := range spec.Fields() {
		f := splitField{id: pf.FieldID, name: pf.Name, transform: pf.Transform}
		switch pf.Transform.(type) {
		case iceberg.VoidTransform:
			s.fields = append(s.fields, f)
			continue
		case iceberg.UnknownTransform:
			return nil, fmt.Errorf("partition field %s of spec %d has an unknown transform %s", pf.Name, spec.ID(), pf.Transform)
		}
		if len(pf.SourceIDs) != 1 {
			return nil, fmt.Errorf("partition field %s of spec %d has %d source columns: only one is supported", pf.Name, spec.ID(), len(pf.SourceIDs))
		}
		name, ok := schema.FindColumnName(pf.SourceIDs[0])
		if !ok {
			return nil, fmt.Errorf("partition field %s of spec %d: source column %d is not in the schema", pf.Name, spec.ID(), pf.SourceIDs[0])
		}
		typ, _ := schema.FindTypeByID(pf.SourceIDs[0])
		f.source, f.typ = name, typ
		s.fields = append(s.fields, f)
	}
	return s, nil
}

// partition returns the current-spec partition of row of rec: partition
// field id to value (nil for null), as iceberg-go's DataFile.Partition gives
// them.
func (s *specSplitter) partition(rec arrow.RecordBatch, row int) (map[int]any, error) {
	out := make(map[int]any, len(s.fields))
	for _, f := range s.fields {
		if f.source == "" {
			out[f.id] = nil
			continue
		}
		col, err := sourceColumn(rec, f.source)
		if err != nil {
			return nil, fmt.Errorf("partition field %s: %w", f.name, err)
		}
		if col.IsNull(row) {
			out[f.id] = nil
			continue
		}
		lit, err := literalAt(col, row, f.typ)
		if err != nil {
			return nil, fmt.Errorf("partition field %s: column %s: %w", f.name, f.source, err)
		}
		v := f.transform.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lit})
		if !v.Valid {
			out[f.id] = nil
			continue
		}
		out[f.id] = v.Val.Any()
	}
	return out, nil
}

// appendKey appends an encoding of a partition that tells partitions apart
// as a key prefix: each value is length-prefixed, so no partition's key is
// a prefix of another's and the rows of one partition are contiguous once
// sorted.
func (s *specSplitter) appendKey(dst []byte, part map[int]any) []byte {
	for _, f := range s.fields {
		v := part[f.id]
		if v == nil {
			dst = append(dst, 0)
			continue
		}
		txt := fmt.Sprintf("%#v", v)
		dst = append(dst, 1)
		dst = binary.AppendUvarint(dst, uint64(len(txt)))
		dst = append(dst, txt...)
	}
	return dst
}

// sourceColumn finds a partition source column in rec by its full name:
// a top-level column, or a path through struct columns.
func sourceColumn(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	if idx := rec.Schema().FieldIndices(name); len(idx) == 1 {
		return rec.Column(idx[0]), nil
	}
	parts := strings.Split(name, ".")
	idx := rec.Schema().FieldIndices(parts[0])
	if len(idx) != 1 {
		return nil, fmt.Errorf("no column %s in the rows read", name)
	}
	col := rec.Column(idx[0])
	for _, p := range parts[1:] {
		st, ok := col.(*array.Struct)
		if !ok {
			return nil, fmt.Errorf("no column %s in the rows read", name)
		}
		i, ok := st.DataType().(*arrow.StructType).FieldIdx(p)
		if !ok {
			return nil, fmt.Errorf("no column %s in the rows read", name)
		}
		col = st.Field(i)
	}
	return col, nil
}

// literalAt is the Iceberg literal of a non-null value of a column of
// Iceberg type typ.
func literalAt(col arrow.Array, row int, typ iceberg.Type) (iceberg.Literal, error) {
	switch a := col.(type) {
	case *array.Boolean:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.Int32:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.Int64:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.Float32:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.Float64:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.Date32:
		return iceberg.NewLiteral(iceberg.Date(a.Value(row))), nil
	case *array.Time64:
		return iceberg.NewLiteral(iceberg.Time(a.Value(row))), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		v := int64(a.Value(row))
		switch typ.(type) {
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			if unit != arrow.Nanosecond {
				return nil, fmt.Errorf("timestamp in %s, want ns", unit)
			}
			return iceberg.NewLiteral(iceberg.TimestampNano(v)), nil
		}
		if unit != arrow.Microsecond {
			return nil, fmt.Errorf("timestamp in %s, want us", unit)
		}
		return iceberg.NewLiteral(iceberg.Timestamp(v)), nil
	case *array.String:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.LargeString:
		return iceberg.NewLiteral(a.Value(row)), nil
	case *array.Binary:
		return iceberg.NewLiteral(slices.Clone(a.Value(row))), nil
	case *array.LargeBinary:
		return iceberg.NewLiteral(slices.Clone(a.Value(row))), nil
	case *array.FixedSizeBinary:
		if _, ok := typ.(iceberg.UUIDType); ok {
			u, err := uuid.FromBytes(a.Value(row))
			if err != nil {
				return nil, err
			}
			return iceberg.NewLiteral(u), nil
		}
		return iceberg.NewLiteral(slices.Clone(a.Value(row))), nil
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		return iceberg.NewLiteral(iceberg.Decimal{Val: decimal128.Num(a.Value(row)), Scale: int(dt.Scale)}), nil
	case *array.Dictionary:
		return literalAt(a.Dictionary(), a.GetValueIndex(row), typ)
	}
	return nil, fmt.Errorf("values of Arrow type %s cannot be partitioned", col.DataType())
}

// specKeyer prefixes a layout's key (none for bin-pack) with the row's
// partition in the current spec.
type specKeyer struct {
	split *specSplitter
	inner Keyer
}

// AppendKey implements [Keyer].
func (k specKeyer) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	part, err := k.split.partition(rec, row)
	if err != nil {
		return nil, err
	}
	dst = k.split.appendKey(dst, part)
	if k.inner == nil {
		return dst, nil
	}
	return k.inner.AppendKey(dst, rec, row)
}

// groupWriter is what a group's rows are written through: a [Writer], or a
// [specWriter] for a group rewritten into the current spec.
type groupWriter interface {
	writeRows(ctx context.Context, p *pickBatch) error
	Close() ([]iceberg.DataFile, error)
	Abort() error
	Stats() WriterStats
}

// specWriter writes rows ordered by their current-spec partition
// ([specKeyer]) to a [Writer] per partition, one at a time: a partition's
// writer is closed when the next partition's rows begin. Rows of a
// partition already closed fail the write with [ErrInvariant]: the order
// was broken.
type specWriter struct {
	tbl    *table.Table
	opts   WriterOptions
	split  *specSplitter
	cur    *Writer
	curKey string
	done   map[string]bool
	// writers are the closed writers, whose files Abort removes.
	writers []*Writer
	files   []iceberg.DataFile
	closed  WriterStats
}

func newSpecWriter(tbl *table.Table, split *specSplitter, opts WriterOptions) *specWriter {
	return &specWriter{tbl: tbl, opts: opts, split: split, done: map[string]bool{}}
}

// writeRows implements groupWriter.
func (s *specWriter) writeRows(ctx context.Context, p *pickBatch) error {
	if p.numRows() == 0 {
		return nil
	}
	rec, err := p.record(ctx, s.opts.Allocator, max(s.opts.Parallelism, 1))
	if err != nil {
		return fmt.Errorf("copy sorted rows: %w", err)
	}
	defer rec.Release()
	start := 0
	var runKey string
	var runPart map[int]any
	flush := func(end int) error {
		if end == start {
			return nil
		}
		if err := s.to(ctx, runKey, runPart); err != nil {
			return err
		}
		part := rec.NewSlice(int64(start), int64(end))
		defer part.Release()
		return s.cur.Write(ctx, part)
	}
	for row := range int(rec.NumRows()) {
		part, err := s.split.partition(rec, row)
		if err != nil {
			return err
		}
		key := string(s.split.appendKey(nil, part))
		if row == 0 {
			runKey, runPart = key, part
			continue
		}
		if key != runKey {
			if err := flush(row); err != nil {
				return err
			}
			start, runKey, runPart = row, key, part
		}
	}
	return flush(int(rec.NumRows()))
}

// to makes the writer of partition key (values part) the current one.
func (s *specWriter) to(ctx context.Context, key string, part map[int]any) error {
	if s.cur != nil && s.curKey == key {
		return nil
	}
	if s.done[key] {
		return fmt.Errorf("rows of current-spec partition %v came after that partition was written: %w", part, ErrInvariant)
	}
	if err := s.closeCurrent(); err != nil {
		return err
	}
	opts := s.opts
	opts.PartitionValues = part
	w, err := NewWriter(ctx, s.tbl, opts)
	if err != nil {
		return err
	}
	s.cur, s.curKey = w, key
	return nil
}

func (s *specWriter) closeCurrent() error {
	if s.cur == nil {
		return nil
	}
	files, err := s.cur.Close()
	s.writers = append(s.writers, s.cur)
	st := s.cur.Stats()
	s.closed.Files += st.Files
	s.closed.Rows += st.Rows
	s.closed.Bytes += st.Bytes
	s.closed.RowGroups += st.RowGroups
	for _, c := range st.DictionaryColumns {
		if !slices.Contains(s.closed.DictionaryColumns, c) {
			s.closed.DictionaryColumns = append(s.closed.DictionaryColumns, c)
		}
	}
	s.files = append(s.files, files...)
	s.done[s.curKey] = true
	s.cur = nil
	return err
}

// Close implements groupWriter.
func (s *specWriter) Close() ([]iceberg.DataFile, error) {
	if err := s.closeCurrent(); err != nil {
		return nil, err
	}
	return s.files, nil
}

// Abort implements groupWriter: it removes every file written.
func (s *specWriter) Abort() error {
	var errs []error
	if s.cur != nil {
		errs = append(errs, s.cur.Abort())
		s.cur = nil
	}
	for _, w := range s.writers {
		errs = append(errs, w.Abort())
	}
	s.writers, s.files = nil, nil
	return errors.Join(errs...)
}

// Stats implements groupWriter.
func (s *specWriter) Stats() WriterStats {
	st := s.closed
	if s.cur != nil {
		c := s.cur.Stats()
		st.Files += c.Files
		st.Rows += c.Rows
		st.Bytes += c.Bytes
		st.RowGroups += c.RowGroups
	}
	return st
}
