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
	for _, i := range cols {
		cc.books[i] = newCodebook(limit)
	}
	cc.coded = codedSchema(schema, cc.books)
	return cc
}

// codedSchema is schema with the columns books codes as int32, their names
// and metadata kept.
func codedSchema(schema *arrow.Schema, books []*codebook) *arrow.Schema {
	fields := slices.Clone(schema.Fields())
	for i, b := range books {
		if b != nil {
			fields[i].Type = arrow.PrimitiveTypes.Int32
		}
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
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

// encode returns rec with its coded columns turned into codes: a new batch
// of the coded schema. rec has the plain schema's columns, any string or
// binary one possibly as a dictionary array of its type (the group's own
// Parquet read gives those, see parquetFiles); an uncoded column that is
// one gets its values. rec is not released.
func (cc *columnCodes) encode(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if err := checkPlainOrDict(rec, cc.plain); err != nil {
		return nil, err
	}
	return convertColumns(rec, cc.coded, func(i int, col arrow.Array) (arrow.Array, error) {
		if cc.books[i] == nil {
			return plainColumn(mem, cc.plain.Field(i).Type, col)
		}
		return encodeColumn(mem, cc.books[i], col)
	})
}

// checkPlainOrDict fails unless rec's columns are plain's, each of its type
// or a dictionary array of its type.
func checkPlainOrDict(rec arrow.RecordBatch, plain *arrow.Schema) error {
	ok := rec.NumCols() == int64(plain.NumFields())
	for i := 0; ok && i < plain.NumFields(); i++ {
		dt := rec.Column(i).DataType()
		if d, isDict := dt.(*arrow.DictionaryType); isDict {
			dt = d.ValueType
		}
		ok = rec.Schema().Field(i).Name == plain.Field(i).Name && arrow.TypeEqual(dt, plain.Field(i).Type)
	}
	if !ok {
		return fmt.Errorf("dictionary codes: batch schema %s is not the group's %s", rec.Schema(), plain)
	}
	return nil
}

// plainBatch returns rec, of plain's columns with dictionary arrays in
// places (see encode), with every column as values: a new reference to rec
// itself when none is a dictionary.
func plainBatch(mem memory.Allocator, rec arrow.RecordBatch, plain *arrow.Schema) (arrow.RecordBatch, error) {
	if err := checkPlainOrDict(rec, plain); err != nil {
		return nil, err
	}
	dict := false
	for _, c := range rec.Columns() {
		dict = dict || c.DataType().ID() == arrow.DICTIONARY
	}
	if !dict {
		rec.Retain()
		return rec, nil
	}
	return convertColumns(rec, plain, func(i int, col arrow.Array) (arrow.Array, error) {
		return plainColumn(mem, plain.Field(i).Type, col)
	})
}

// decode returns rec, of the coded schema, with its codes turned back into
// values: a new batch of the plain schema. rec is not released.
func (cc *columnCodes) decode(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	return convertColumns(rec, cc.plain, func(i int, col arrow.Array) (arrow.Array, error) {
		if cc.books[i] == nil {
			col.Retain()
			return col, nil
		}
		return decodeColumn(mem, cc.books[i], cc.plain.Field(i).Type, col)
	})
}

// convertColumns returns a batch of schema out whose columns are fn's
// arrays (new references) for rec's.
func convertColumns(rec arrow.RecordBatch, out *arrow.Schema, fn func(i int, col arrow.Array) (arrow.Array, error)) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, col := range rec.Columns() {
		conv, err := fn(i, col)
		if err != nil {
			return nil, fmt.Errorf("dictionary codes of column %s: %w", out.Field(i).Name, err)
		}
		cols[i] = conv
	}
	return array.NewRecordBatch(out, cols, rec.NumRows()), nil
}

// encodeColumn codes the values of arr, a string or binary array or a
// dictionary array of one, in book: an int32 array of the same length and
// validity (a null row's code is 0). A dictionary array's values are looked
// up once each, and its rows take their value's code by index.
func encodeColumn(mem memory.Allocator, book *codebook, arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	vals := newBuffer(mem, n*4)
	codes := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(vals.Bytes()))), n)
	var valid *memory.Buffer
	fail := func(err error) (arrow.Array, error) {
		vals.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	if d, ok := arr.(*array.Dictionary); ok {
		dict := d.Dictionary()
		value, err := binaryValues(dict)
		if err != nil {
			return fail(err)
		}
		remap := make([]int32, dict.Len())
		for j := range remap {
			if dict.IsValid(j) {
				if remap[j], err = book.code(value(j)); err != nil {
					return fail(err)
				}
			}
		}
		if d.NullN() > 0 || dict.NullN() > 0 {
			valid = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
			clear(valid.Bytes())
		}
		if idx, ok := d.Indices().(*array.Int32); ok && valid == nil {
			// pqarrow's indices, no nulls: the common case, without
			// GetValueIndex's type switch per row.
			for i, x := range idx.Int32Values() {
				codes[i] = remap[x]
			}
			return finish(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, vals}, 0), nil
		}
		nulls := 0
		for i := range n {
			if d.IsNull(i) || dict.IsNull(d.GetValueIndex(i)) {
				codes[i] = 0
				nulls++
				continue
			}
			codes[i] = remap[d.GetValueIndex(i)]
			if valid != nil {
				bitutil.SetBit(valid.Bytes(), i)
			}
		}
		return finish(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{valid, vals}, nulls), nil
	}
	value, err := binaryValues(arr)
	if err != nil {
		return fail(err)
	}
	if arr.NullN() > 0 {
		valid = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(arr.NullBitmapBytes(), arr.Data().Offset(), n, valid.Bytes(), 0)
	}
	for i := range n {
		if arr.IsNull(i) {
			codes[i] = 0
			continue
		}
		if codes[i], err = book.code(value(i)); err != nil {
			return fail(err)
		}
	}
	return finish(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{valid, vals}, arr.NullN()), nil
}

// binaryValues returns the value getter of a string or binary array.
func binaryValues(arr arrow.Array) (func(i int) []byte, error) {
	switch a := arr.(type) {
	case *array.String:
		return func(i int) []byte { v := a.Value(i); return unsafe.Slice(unsafe.StringData(v), len(v)) }, nil
	case *array.Binary:
		return a.Value, nil
	case *array.LargeString:
		return func(i int) []byte { v := a.Value(i); return unsafe.Slice(unsafe.StringData(v), len(v)) }, nil
	case *array.LargeBinary:
		return a.Value, nil
	}
	return nil, fmt.Errorf("%s cannot be coded", arr.DataType())
}

// plainColumn returns arr as values of dt: arr itself (a new reference)
// unless it is a dictionary array, whose values are then gathered.
func plainColumn(mem memory.Allocator, dt arrow.DataType, arr arrow.Array) (arrow.Array, error) {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		arr.Retain()
		return arr, nil
	}
	dict := d.Dictionary()
	value, err := binaryValues(dict)
	if err != nil {
		return nil, err
	}
	return buildBinary(mem, dt, d.Len(),
		func(i int) bool { return d.IsValid(i) && dict.IsValid(d.GetValueIndex(i)) },
		func(i int) []byte { return value(d.GetValueIndex(i)) })
}

// decodeColumn turns codes, an int32 array of book's codes, back into the
// values: a new array of type dt (a string or binary type) with the same
// validity.
func decodeColumn(mem memory.Allocator, book *codebook, dt arrow.DataType, codes arrow.Array) (arrow.Array, error) {
	ca, ok := codes.(*array.Int32)
	if !ok {
		return nil, fmt.Errorf("dictionary codes: column holds %s, not codes", codes.DataType())
	}
	cs := ca.Int32Values()
	return buildBinary(mem, dt, ca.Len(), ca.IsValid, func(i int) []byte { return book.value(cs[i]) })
}

// buildBinary builds an array of dt (a string or binary type) of n rows:
// row i null unless valid(i), else value(i).
func buildBinary(mem memory.Allocator, dt arrow.DataType, n int, valid func(i int) bool, value func(i int) []byte) (arrow.Array, error) {
	var total int64
	nulls := 0
	for i := range n {
		if valid(i) {
			total += int64(len(value(i)))
		} else {
			nulls++
		}
	}
	large := dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY
	if !large && total > math.MaxInt32 {
		return nil, fmt.Errorf("%d rows hold %d bytes, over the %s limit", n, total, dt)
	}
	var vbuf *memory.Buffer
	if nulls > 0 {
		vbuf = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		clear(vbuf.Bytes())
	}
	ow := 4
	if large {
		ow = 8
	}
	offBuf := newBuffer(mem, (n+1)*ow)
	ob := offBuf.Bytes()
	data := newBuffer(mem, int(total))
	out := data.Bytes()
	var at int64
	for i := range n + 1 {
		if large {
			*(*int64)(unsafe.Pointer(&ob[i*8])) = at
		} else {
			*(*int32)(unsafe.Pointer(&ob[i*4])) = int32(at)
		}
		if i < n && valid(i) {
			if vbuf != nil {
				bitutil.SetBit(vbuf.Bytes(), i)
			}
			at += int64(copy(out[at:], value(i)))
		}
	}
	return finish(dt, n, []*memory.Buffer{vbuf, offBuf, data}, nulls), nil
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
// Batches may hold dictionary arrays where readDict asked the group's own
// Parquet read for them (parquetFiles): the coded columns' rows then take
// their code by dictionary index, and any other column gets its values.
type inputCoder struct {
	w     *Writer
	keys  []string
	mem   memory.Allocator
	codes *columnCodes // set by code; nil when no column is coded

	plain   *arrow.Schema // the batches' schema, as read
	decided bool          // codes is settled
}

// readDict reports whether column i of the batches read should come as a
// dictionary array: until the codes are settled, any string or binary
// column but the keys (the first batch decides from them all); then the
// coded ones.
func (c *inputCoder) readDict(i int) bool {
	if !c.decided {
		f := c.plain.Field(i)
		return codable(f.Type) && !isKeyColumn(c.keys, f.Name)
	}
	return c.codes != nil && c.codes.books[i] != nil
}

// code returns the schema and batches the sort reads in place of schema
// and records: coded, or as read (dictionary arrays turned into values)
// when no column is chosen. stop must be called once the batches are no
// longer read: it releases a batch taken from records and not handed on,
// and ends the read.
func (c *inputCoder) code(schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error]) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], func()) {
	c.plain = schema
	next, stopRead := iter.Pull2(records)
	first, ferr, ok := next()
	if ok && ferr == nil {
		sample, err := plainBatch(c.mem, first, schema)
		if err != nil {
			ferr = err
		} else {
			c.codes = newColumnCodes(schema, c.w.chooseCodes(sample, c.keys), c.w.dictLimit())
			sample.Release()
		}
	}
	c.decided = true
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
			var conv arrow.RecordBatch
			if c.codes != nil {
				conv, err = c.codes.encode(c.mem, rec)
			} else {
				conv, err = plainBatch(c.mem, rec, schema)
			}
			rec.Release()
			held = nil
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(conv, nil) {
				return
			}
			rec, err, ok = next()
			held = rec
		}
	}
	return out, seq, stop
}
