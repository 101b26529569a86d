package rewriter

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// dictColumn holds one dictionary-encoded column of a buffered row group as
// dictionary indices, and hands it to pqarrow as an Arrow dictionary array
// when the row group is flushed.
//
// Why: arrow-go's dictionary encoder looks every value up in its memo table,
// and for byte arrays that lookup allocates (the comparison closure captures
// the value, so it escapes) and hashes with xxh3; with the per-value
// statistics that follow, dictionary strings were about 12% of a rewrite's
// CPU. Here each value is looked up in a Go map (no allocation, and a
// one-entry cache for the runs a sorted column has), and pqarrow writes an
// Arrow dictionary array by handing the dictionary to the encoder once
// (PutDictionary) and the indices after it (WriteDictIndices): no hashing of
// values, statistics from the dictionary. pqarrow only takes that path for
// one unchanging dictionary per column chunk, which is why the indices of
// the whole row group are kept (4 bytes a row, from the writer's
// allocator) and written when it is flushed.
//
// The file is the one the dense path writes: same dictionary (values in
// order of first appearance), same encodings, same statistics, and pages cut
// at about the same size (the indices are written a page at a time, whole
// write batches, and the page flushed when its raw input bytes reach the
// data page size, the measure the encoder uses for dense input). When a value would bring the dictionary
// to the dictionary page size limit, what is held is written and the rest of
// the row group goes the dense way, where the encoder falls back to plain
// encoding as it would have.
//
// Columns written uncompressed are left to the dense path: their encoder
// decides between dictionary and plain at the first page by the raw bytes
// put, and dictionary indices carry none.
type dictColumn struct {
	mem      memory.Allocator
	dt       arrow.DataType // the value type
	width    int            // bytes of a fixed-width value; 0 for byte arrays
	limit    int64          // dictionary page size limit
	pageSize int64          // data page size
	batch    int            // rows per write batch (WriteBatchSize)

	strIDs map[string]int32 // byte arrays
	fixIDs bitsTable        // fixed-width values, by their bits
	vals   []byte           // dictionary values, concatenated
	offs   []int64          // start of value i in vals; len(offs) = entries+1
	dictSz int64            // PLAIN size of the dictionary (4+len per byte array)

	idx  *memory.Buffer // int32 dictionary index of each held row
	rows int
	// expect is the rows a row group is expected to hold (0: unknown):
	// the index buffer is sized for them at once, where doubling as rows
	// arrive copied it over and over, in every file.
	expect int

	// Scratch of referenced: seen[id] == epoch marks a value the page
	// refers to, listed in refs.
	seen  []uint32
	epoch uint32
	refs  []int32

	// dense is set when a value did not fit the dictionary, or a batch had
	// nulls: the rest of the row group goes the dense way.
	dense bool

	// local maps a group's code (see columnCodes) to 1 + the row group's
	// index of its value, 0 for a code not seen in the row group yet.
	local []int32
}

// newDictColumn returns a dictColumn for a column of type dt, or nil when the
// type is not one it handles (the column is then written densely).
func newDictColumn(dt arrow.DataType, props *parquet.WriterProperties) *dictColumn {
	d := &dictColumn{
		mem:      props.Allocator(),
		dt:       dt,
		limit:    props.DictionaryPageSizeLimit(),
		pageSize: props.DataPageSize(),
		batch:    int(props.WriteBatchSize()),
		offs:     []int64{0},
	}
	// Only types whose Arrow values are their Parquet values, bit for bit:
	// pqarrow converts some others on the way (date64 to days, seconds to
	// milliseconds, unsigned orders), which a dictionary handed over as is
	// would skip. Iceberg's types all map to the ones here.
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		d.strIDs = make(map[string]int32)
	case arrow.INT32, arrow.DATE32, arrow.FLOAT32:
		d.width = 4
	case arrow.INT64, arrow.FLOAT64, arrow.TIME64:
		d.width = 8
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).Unit == arrow.Second {
			return nil
		}
		d.width = 8
	default:
		return nil
	}
	d.idx = memory.NewResizableBuffer(d.mem)
	return d
}

// entries is the number of dictionary values.
func (d *dictColumn) entries() int { return len(d.offs) - 1 }

// fits reports whether a new value of size bytes (PLAIN-encoded) keeps the
// dictionary under the page size limit: the encoder falls back to plain
// encoding once it reaches the limit, so the dictionary handed to it stays
// below, and the value that would reach it goes the dense way, where the
// encoder falls back as it would have.
func (d *dictColumn) fits(size int) bool { return d.dictSz+int64(size) < d.limit }

// add appends arr's rows, all of them or until the dictionary is full, and
// returns how many it took. It takes none of an array with nulls: pqarrow's
// statistics for dictionary arrays read a null index as a value (arrow-go
// v18.8 computes page min/max from the dictionary values the indices
// reference, nulls included, and UpdateFromArrow ignores validity), so rows
// with nulls go the dense way.
func (d *dictColumn) add(arr arrow.Array) int {
	if arr.NullN() > 0 {
		return 0
	}
	ids := d.indexSpace(arr.Len())
	var took int
	if d.width > 0 {
		took = d.addFixed(arr, ids)
	} else {
		took = d.addBinary(arr, ids)
	}
	d.rows += took
	d.idx.ResizeNoShrink(d.rows * 4)
	return took
}

// indexSpace makes room for n more indices and returns the space after the
// rows held.
func (d *dictColumn) indexSpace(n int) []int32 {
	if need := (d.rows + n) * 4; need > d.idx.Cap() {
		d.idx.Reserve(max(need, 2*d.idx.Cap(), d.expect*4))
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(d.idx.Buf()))), d.idx.Cap()/4)[d.rows:]
}

func (d *dictColumn) addBinary(arr arrow.Array, ids []int32) int {
	var (
		data  = arr.Data().Buffers()[2]
		vals  []byte
		off32 []int32
		off64 []int64
	)
	if data != nil {
		vals = data.Bytes()
	}
	switch a := arr.(type) {
	case *array.String:
		off32 = a.ValueOffsets()
	case *array.Binary:
		off32 = a.ValueOffsets()
	case *array.LargeString:
		off64 = a.ValueOffsets()
	case *array.LargeBinary:
		off64 = a.ValueOffsets()
	}
	value := func(i int) []byte {
		if off32 != nil {
			return vals[off32[i]:off32[i+1]]
		}
		return vals[off64[i]:off64[i+1]]
	}
	lastID := int32(-1)
	var last []byte
	for i := range arr.Len() {
		v := value(i)
		if lastID >= 0 && bytes.Equal(v, last) {
			ids[i] = lastID
			continue
		}
		id, ok := d.strIDs[string(v)]
		if !ok {
			if !d.fits(len(v) + 4) {
				return i
			}
			id = int32(d.entries())
			d.vals = append(d.vals, v...)
			d.offs = append(d.offs, int64(len(d.vals)))
			d.strIDs[string(v)] = id
			d.dictSz += int64(len(v)) + 4
		}
		ids[i] = id
		lastID, last = id, v
	}
	return arr.Len()
}

// addCodes is add for a coded column: arr holds codes of book, and each
// row's value is looked up by its code, not hashed. The dictionary and the
// indices are those add gives the values: values in order of first
// appearance in the row group. It takes none of an array with nulls, as
// add.
func (d *dictColumn) addCodes(arr arrow.Array, book *codebook) int {
	if arr.NullN() > 0 {
		return 0
	}
	n := arr.Len()
	ids := d.indexSpace(n)
	if m := book.len(); len(d.local) < m {
		d.local = append(d.local, make([]int32, m-len(d.local))...)
	}
	took := n
	for i, c := range arr.(*array.Int32).Int32Values() {
		id := d.local[c] - 1
		if id < 0 {
			v := book.value(c)
			if !d.fits(len(v) + 4) {
				took = i
				break
			}
			id = int32(d.entries())
			d.vals = append(d.vals, v...)
			d.offs = append(d.offs, int64(len(d.vals)))
			d.dictSz += int64(len(v)) + 4
			d.local[c] = id + 1
		}
		ids[i] = id
	}
	d.rows += took
	d.idx.ResizeNoShrink(d.rows * 4)
	return took
}

func (d *dictColumn) addFixed(arr arrow.Array, ids []int32) int {
	w := d.width
	raw := arr.Data().Buffers()[1].Bytes()[arr.Data().Offset()*w:]
	lastID := int32(-1)
	var last uint64
	for i := range arr.Len() {
		var bits uint64
		if w == 4 {
			bits = uint64(binary.LittleEndian.Uint32(raw[i*4:]))
		} else {
			bits = binary.LittleEndian.Uint64(raw[i*8:])
		}
		if lastID >= 0 && bits == last {
			ids[i] = lastID
			continue
		}
		id, ok := d.fixIDs.get(bits)
		if !ok {
			if !d.fits(w) {
				return i
			}
			id = int32(d.entries())
			d.vals = append(d.vals, raw[i*w:(i+1)*w]...)
			d.offs = append(d.offs, int64(len(d.vals)))
			d.fixIDs.put(bits, id)
			d.dictSz += int64(w)
		}
		ids[i] = id
		lastID, last = id, bits
	}
	return arr.Len()
}

// flush writes the held rows to cw, a page at a time, and empties d for the
// next row group. defs is scratch for definition levels.
func (d *dictColumn) flush(ctx context.Context, cw file.ColumnChunkWriter, nullable bool, defs *[]int16) error {
	defer d.reset()
	if d.rows == 0 {
		return nil
	}
	dict := d.dictionary()
	defer dict.Release()
	idxData := array.NewData(arrow.PrimitiveTypes.Int32, d.rows,
		[]*memory.Buffer{nil, d.idx}, nil, 0, 0)
	indices := array.MakeFromData(idxData)
	idxData.Release()
	defer indices.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: d.dt}
	full := array.NewDictionaryArray(dt, indices, dict)
	defer full.Release()

	var levels []int16
	if nullable { // no row held is null
		if cap(*defs) < d.rows {
			*defs = make([]int16, d.rows)
		}
		levels = (*defs)[:d.rows]
		for i := range levels {
			levels[i] = 1
		}
	}
	ids := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(d.idx.Bytes()))), d.rows)
	for start := 0; start < d.rows; {
		// One page: whole write batches until their raw bytes reach the
		// data page size, as the encoder counts them for dense input.
		end, raw := start, int64(0)
		for end < d.rows && raw < d.pageSize {
			stop := min(end+d.batch, d.rows)
			raw += d.rawBytes(ids[end:stop])
			end = stop
		}
		var lv []int16
		if levels != nil {
			lv = levels[start:end]
		}
		if err := d.writePage(ctx, cw, full, dict, start, end, ids[start:end], lv, nullable); err != nil {
			return err
		}
		if cw.CurrentEncoder().Encoding() == parquet.Encodings.PlainDict && raw >= d.pageSize {
			enc, ok := cw.CurrentEncoder().(interface{ AddRawSize(int64) })
			fl, ok2 := cw.(interface{ FlushCurrentPage() error })
			if ok && ok2 {
				enc.AddRawSize(raw)
				if err := fl.FlushCurrentPage(); err != nil {
					return fmt.Errorf("flush page: %w", err)
				}
			}
		}
		start = end
	}
	return nil
}

// pageEncoder is what writePage needs of the column's dictionary encoder
// (arrow-go's encoding.DictEncoder, an internal type, asserted by methods).
type pageEncoder interface {
	Encoding() parquet.Encoding
	PutDictionary(arrow.Array) error
	PreservedDictionary() arrow.Array
	NumEntries() int
}

// writePage writes rows [start, end) of full, whose indices are ids, to cw.
// It does what pqarrow does with a dictionary array (hand the dictionary to
// the encoder once, update the page statistics, write the indices) except
// that the statistics come from the values the page references, found by
// marking its indices, where pqarrow runs a hash kernel over them
// (compute.UniqueArray) on every call. Should the encoder not be a
// dictionary encoder (it fell back to plain, or arrow-go changed), the rows
// go through pqarrow, which writes them densely.
func (d *dictColumn) writePage(ctx context.Context, cw file.ColumnChunkWriter, full *array.Dictionary, dict arrow.Array, start, end int, ids []int32, levels []int16, nullable bool) error {
	viaPqarrow := func() error {
		part := array.NewSlice(full, int64(start), int64(end))
		defer part.Release()
		return pqarrow.WriteArrowToColumn(ctx, cw, part, levels, nil, nullable)
	}
	enc, ok := cw.CurrentEncoder().(pageEncoder)
	if !ok || enc.Encoding() != parquet.Encodings.PlainDict {
		return viaPqarrow()
	}
	if enc.PreservedDictionary() == nil {
		if err := enc.PutDictionary(dict); err != nil {
			return fmt.Errorf("put dictionary: %w", err)
		}
		if enc.NumEntries() != dict.Len() {
			// The encoder saw two of the values as one (float zeros,
			// say): fall back to plain, as pqarrow does.
			cw.FallbackToPlain()
			return viaPqarrow()
		}
	}
	if ps := cw.PageStatistics(); ps != nil {
		ref := d.referenced(dict, ids)
		ps.IncNumValues(int64(len(ids)))
		err := ps.UpdateFromArrow(ref, false)
		ref.Release()
		if err != nil {
			return fmt.Errorf("page statistics: %w", err)
		}
	}
	part := array.NewSlice(full.Indices(), int64(start), int64(end))
	defer part.Release()
	return cw.WriteDictIndices(part, levels, nil)
}

// referenced returns the dictionary values ids refer to (each once), or dict
// itself when they refer to all of them.
func (d *dictColumn) referenced(dict arrow.Array, ids []int32) arrow.Array {
	n := d.entries()
	if cap(d.seen) < n {
		d.seen = make([]uint32, n)
	}
	d.seen = d.seen[:n]
	d.epoch++
	if d.epoch == 0 { // wrapped: start the marks over
		clear(d.seen)
		d.epoch = 1
	}
	d.refs = d.refs[:0]
	for _, id := range ids {
		if d.seen[id] != d.epoch {
			d.seen[id] = d.epoch
			d.refs = append(d.refs, id)
		}
	}
	if len(d.refs) == n {
		dict.Retain()
		return dict
	}
	return d.values(d.refs)
}

func putOffset(b []byte, i, v int, large bool) {
	if large {
		binary.LittleEndian.PutUint64(b[i*8:], uint64(v))
	} else {
		binary.LittleEndian.PutUint32(b[i*4:], uint32(v))
	}
}

// rawBytes is the PLAIN size of the rows whose indices are ids: what the
// encoder counts toward a page.
func (d *dictColumn) rawBytes(ids []int32) int64 {
	if d.width > 0 {
		return int64(len(ids) * d.width)
	}
	var raw int64
	for _, id := range ids {
		raw += d.offs[id+1] - d.offs[id] + 4
	}
	return raw
}

// dictionary is the Arrow array of the dictionary values.
func (d *dictColumn) dictionary() arrow.Array {
	all := make([]int32, d.entries())
	for i := range all {
		all[i] = int32(i)
	}
	return d.values(all)
}

// values is the Arrow array of the dictionary values ids name, in that order.
func (d *dictColumn) values(ids []int32) arrow.Array {
	var size int64
	for _, id := range ids {
		size += d.offs[id+1] - d.offs[id]
	}
	data := memory.NewResizableBuffer(d.mem)
	data.Resize(int(size))
	b := data.Bytes()[:0]
	bufs := []*memory.Buffer{nil, data}
	if d.width == 0 {
		large := d.dt.ID() == arrow.LARGE_STRING || d.dt.ID() == arrow.LARGE_BINARY
		ow := 4
		if large {
			ow = 8
		}
		offs := memory.NewResizableBuffer(d.mem)
		offs.Resize((len(ids) + 1) * ow)
		ob := offs.Bytes()
		for i, id := range ids {
			putOffset(ob, i, len(b), large)
			b = append(b, d.vals[d.offs[id]:d.offs[id+1]]...)
		}
		putOffset(ob, len(ids), len(b), large)
		bufs = []*memory.Buffer{nil, offs, data}
	} else {
		for _, id := range ids {
			b = append(b, d.vals[d.offs[id]:d.offs[id+1]]...)
		}
	}
	ad := array.NewData(d.dt, len(ids), bufs, nil, 0, 0)
	for _, buf := range bufs[1:] {
		buf.Release()
	}
	defer ad.Release()
	return array.MakeFromData(ad)
}

// reset empties d for the next row group; the index buffer is kept.
func (d *dictColumn) reset() {
	clear(d.strIDs)
	clear(d.local)
	d.fixIDs.reset()
	d.vals = d.vals[:0]
	d.offs = d.offs[:1]
	d.dictSz = 0
	d.rows = 0
	d.idx.ResizeNoShrink(0)
	d.dense = false
}

// release frees the index buffer.
func (d *dictColumn) release() {
	if d.idx != nil {
		d.idx.Release()
		d.idx = nil
	}
}

// bitsTable maps fixed-width values (their bits) to dictionary ids: open
// addressing with linear probing and a multiplicative hash, kept at most
// half full. Every value of every numeric dictionary column is looked up
// here; on 2,500 distinct dates it took a quarter of a Go map's time in a
// micro-benchmark.
type bitsTable struct {
	keys  []uint64
	ids   []int32 // id+1; 0 marks an empty slot
	n     int
	shift uint
}

const bitsTableMult = 0x9E3779B97F4A7C15

func (t *bitsTable) get(k uint64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.keys) - 1
	for i := int((k * bitsTableMult) >> t.shift); ; i = (i + 1) & mask {
		switch id := t.ids[i]; {
		case id == 0:
			return 0, false
		case t.keys[i] == k:
			return id - 1, true
		}
	}
}

// put adds k, which must not be in the table.
func (t *bitsTable) put(k uint64, id int32) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	i := int((k * bitsTableMult) >> t.shift)
	for t.ids[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.ids[i] = k, id+1
	t.n++
}

func (t *bitsTable) grow() {
	keys, ids := t.keys, t.ids
	size := max(2*len(keys), 64)
	t.keys, t.ids, t.n = make([]uint64, size), make([]int32, size), 0
	t.shift = uint(64 - bits.Len(uint(size-1)))
	for i, id := range ids {
		if id != 0 {
			t.put(keys[i], id-1)
		}
	}
}

// reset empties the table, keeping its size.
func (t *bitsTable) reset() {
	clear(t.ids)
	t.n = 0
}
