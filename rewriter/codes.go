package rewriter

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// errCodebookFull is returned while a sorted group is read when a coded
// column's distinct values outgrow a Parquet dictionary page: the writer
// would write that column plain, so [RewriteGroup] reads the group again
// without codes.
var errCodebookFull = errors.New("more distinct values than a dictionary page holds")

// codebook gives the distinct values of one string or binary column of a
// group int32 codes, in order of first appearance. It is filled while the
// group's input is read, on one goroutine, and only read after: a sort
// hands out no row before it has read its whole input, so the writer's
// columns, which read it, start after the last code was given.
type codebook struct {
	ids   map[string]int32
	vals  []byte
	offs  []int64 // value c is vals[offs[c]:offs[c+1]]
	plain int64   // PLAIN size of the values, 4 + len each, as a dictionary page counts them
	limit int64   // the most plain bytes the book may hold

	// last is a one-entry cache: columns whose rows arrive in runs of
	// one value (a partition's constant, a sorted input) skip the map.
	last   []byte
	lastID int32
}

func newCodebook(limit int64) *codebook {
	return &codebook{ids: map[string]int32{}, offs: []int64{0}, limit: limit, lastID: -1}
}

// len is the number of values coded so far.
func (b *codebook) len() int { return len(b.offs) - 1 }

// value returns the bytes coded c. They alias the book.
func (b *codebook) value(c int32) []byte { return b.vals[b.offs[c]:b.offs[c+1]] }

// code returns v's code, giving it the next one if it has none.
func (b *codebook) code(v []byte) (int32, error) {
	if b.lastID >= 0 && string(v) == string(b.last) {
		return b.lastID, nil
	}
	id, ok := b.ids[string(v)]
	if !ok {
		if b.plain+int64(len(v))+4 > b.limit {
			return 0, errCodebookFull
		}
		id = int32(b.len())
		b.vals = append(b.vals, v...)
		b.offs = append(b.offs, int64(len(b.vals)))
		b.ids[string(v)] = id
		b.plain += int64(len(v)) + 4
	}
	b.last, b.lastID = b.value(id), id
	return id, nil
}

// columnCodes says which columns of a group's batches carry codes in place
// of their values, and holds their books.
//
// A sort copies every row twice or more (into key order, through spill
// files, into the writer's pages), and a string is the costliest value to
// copy: an offset and its bytes, each read at a random place. The columns
// the writer dictionary-encodes hold a handful of distinct values (flags,
// modes, countries, event types); as codes they are copied as int32s, a
// batch holds four bytes a row for them, and the writer's dictionary takes
// each row's code where it used to hash its bytes (see dictColumn.addCodes).
// The codes of a group are its own: they never reach a file.
type columnCodes struct {
	plain *arrow.Schema // the batches as read
	coded *arrow.Schema // the same, the coded columns int32
	books []*codebook   // by column; nil for a column kept as read
}

// codable reports whether a column of type dt can carry codes.
func codable(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return true
	}
	return false
}

// newColumnCodes codes the columns of schema whose indices are in cols
// (each must be [codable]), with books of limit plain bytes; nil when cols
// is empty.
func newColumnCodes(schema *arrow.Schema, cols []int, limit int64) *columnCodes {
	if len(cols) == 0 {
		return nil
	}
	cc := &columnCodes{plain: schema, books: make([]*codebook, schema.NumFields())}
	fields := slices.Clone(schema.Fields())
	for _, i := range cols {
		cc.books[i] = newCodebook(limit)
		fields[i].Type = arrow.PrimitiveTypes.Int32
	}
	md := schema.Metadata()
	cc.coded = arrow.NewSchema(fields, &md)
	return cc
}

// names lists the coded columns.
func (cc *columnCodes) names() []string {
	var out []string
	for i, b := range cc.books {
		if b != nil {
			out = append(out, cc.plain.Field(i).Name)
		}
	}
	return out
}

// encode returns rec, of the plain schema, with its coded columns turned
// into codes: a new batch of the coded schema. rec is not released.
func (cc *columnCodes) encode(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if !sameColumns(rec.Schema(), cc.plain) {
		return nil, fmt.Errorf("dictionary codes: batch schema %s is not the group's %s", rec.Schema(), cc.plain)
	}
	return cc.convert(rec, cc.coded, func(i int, col arrow.Array) (arrow.Array, error) {
		return encodeColumn(mem, cc.books[i], col)
	})
}

// decode returns rec, of the coded schema, with its codes turned back into
// values: a new batch of the plain schema. rec is not released.
func (cc *columnCodes) decode(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	return cc.convert(rec, cc.plain, func(i int, col arrow.Array) (arrow.Array, error) {
		return decodeColumn(mem, cc.books[i], cc.plain.Field(i).Type, col)
	})
}

// convert returns a batch of schema out whose coded columns are fn's
// arrays for rec's, and whose other columns are rec's.
func (cc *columnCodes) convert(rec arrow.RecordBatch, out *arrow.Schema, fn func(i int, col arrow.Array) (arrow.Array, error)) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, col := range rec.Columns() {
		if cc.books[i] == nil {
			col.Retain()
			cols[i] = col
			continue
		}
		conv, err := fn(i, col)
		if err != nil {
			return nil, fmt.Errorf("dictionary codes of column %s: %w", cc.plain.Field(i).Name, err)
		}
		cols[i] = conv
	}
	return array.NewRecordBatch(out, cols, rec.NumRows()), nil
}

// encodeColumn codes the values of arr, a string or binary array, in book:
// an int32 array of the same length and validity (a null row's code is 0).
func encodeColumn(mem memory.Allocator, book *codebook, arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	var value func(i int) []byte
	switch a := arr.(type) {
	case *array.String:
		value = func(i int) []byte { return unsafe.Slice(unsafe.StringData(a.Value(i)), len(a.Value(i))) }
	case *array.Binary:
		value = a.Value
	case *array.LargeString:
		value = func(i int) []byte { return unsafe.Slice(unsafe.StringData(a.Value(i)), len(a.Value(i))) }
	case *array.LargeBinary:
		value = a.Value
	default:
		return nil, fmt.Errorf("%s cannot be coded", arr.DataType())
	}
	vals := newBuffer(mem, n*4)
	codes := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(vals.Bytes()))), n)
	var valid *memory.Buffer
	if arr.NullN() > 0 {
		valid = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(arr.NullBitmapBytes(), arr.Data().Offset(), n, valid.Bytes(), 0)
	}
	for i := range n {
		if arr.IsNull(i) {
			codes[i] = 0
			continue
		}
		c, err := book.code(value(i))
		if err != nil {
			vals.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
		codes[i] = c
	}
	return finish(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{valid, vals}, arr.NullN()), nil
}

// decodeColumn turns codes, an int32 array of book's codes, back into the
// values: a new array of type dt (a string or binary type) with the same
// validity.
func decodeColumn(mem memory.Allocator, book *codebook, dt arrow.DataType, codes arrow.Array) (arrow.Array, error) {
	ca, ok := codes.(*array.Int32)
	if !ok {
		return nil, fmt.Errorf("dictionary codes: column holds %s, not codes", codes.DataType())
	}
	n := ca.Len()
	cs := ca.Int32Values()
	var total int64
	for i, c := range cs {
		if ca.IsValid(i) {
			total += book.offs[c+1] - book.offs[c]
		}
	}
	large := dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY
	if !large && total > math.MaxInt32 {
		return nil, fmt.Errorf("dictionary codes: %d rows hold %d bytes, over the %s limit", n, total, dt)
	}
	var valid *memory.Buffer
	if ca.NullN() > 0 {
		valid = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(ca.NullBitmapBytes(), ca.Data().Offset(), n, valid.Bytes(), 0)
	}
	ow := 4
	if large {
		ow = 8
	}
	offBuf := newBuffer(mem, (n+1)*ow)
	data := newBuffer(mem, int(total))
	out := data.Bytes()
	var at int64
	put := func(i int, at int64) {
		if large {
			unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(offBuf.Bytes()))), n+1)[i] = at
		} else {
			unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(offBuf.Bytes()))), n+1)[i] = int32(at)
		}
	}
	for i, c := range cs {
		put(i, at)
		if ca.IsValid(i) {
			at += int64(copy(out[at:], book.value(c)))
		}
	}
	put(n, at)
	return finish(dt, n, []*memory.Buffer{valid, offBuf, data}, ca.NullN()), nil
}

// keyColumns returns the columns keyer reads, by name, and whether it says:
// a keyer that does not ([layout.Encoder] does) gets no coded columns, since
// its keys might be computed from one.
func keyColumns(keyer Keyer) ([]string, bool) {
	k, ok := keyer.(interface{ KeyColumns() []string })
	if !ok {
		return nil, false
	}
	return k.KeyColumns(), true
}

// isKeyColumn reports whether name is one of keys, as the layout encoder
// resolves them (case-insensitively).
func isKeyColumn(keys []string, name string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return strings.EqualFold(k, name) })
}

// inputCoder turns a sorted group's batches into coded ones: it settles
// the coded columns on the first batch (Writer.chooseCodes), has the
// writer take them, and codes every batch before the sort reads it.
type inputCoder struct {
	w     *Writer
	keys  []string
	mem   memory.Allocator
	codes *columnCodes // set by code; nil when no column is coded
}

// code returns the schema and batches the sort reads in place of schema
// and records: coded, or the same when no column is chosen. stop must be
// called once the batches are no longer read: it releases a batch taken
// from records and not handed on, and ends the read.
func (c *inputCoder) code(schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error]) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], func()) {
	next, stopRead := iter.Pull2(records)
	first, ferr, ok := next()
	if ok && ferr == nil {
		c.codes = newColumnCodes(schema, c.w.chooseCodes(first, c.keys), c.w.dictLimit())
	}
	held := first // taken from records and not yet handed on
	stop := func() {
		if held != nil {
			held.Release()
			held = nil
		}
		stopRead()
	}
	out := schema
	if c.codes != nil {
		c.w.useCodes(c.codes)
		out = c.codes.coded
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		rec, err := first, ferr
		for ok {
			if err != nil {
				yield(nil, err)
				return
			}
			if c.codes != nil {
				coded, cerr := c.codes.encode(c.mem, rec)
				rec.Release()
				held = nil
				if cerr != nil {
					yield(nil, cerr)
					return
				}
				rec = coded
			}
			held = nil
			if !yield(rec, nil) {
				return
			}
			rec, err, ok = next()
			held = rec
		}
	}
	return out, seq, stop
}
