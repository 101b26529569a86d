package rewriter

import (
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"
)

// Gathering rows is what the sort spends most of its time on: every row is
// copied once when a run is written out in key order and once more in every
// merge pass. Arrow's compute.Take does this generically (a kernel dispatch
// and a goroutine per column, builders growing as they go) and cannot copy
// from several sources at once, so a merge had to concatenate its pieces and
// permute them with one more Take. The gather below copies each column
// directly: one pass over the rows measures the output, the buffers are
// allocated once, and the second pass copies values, offsets and bytes,
// moving a run of consecutive rows of one source as one slice. Types it does
// not handle by hand (nested, dictionary, extension, union and null
// columns) fall back to compute.Take, column by column.

// span is a run of consecutive rows of one source batch.
type span struct {
	src int32
	row int32
	n   int32
}

// appendSpans appends the spans of refs to dst: consecutive refs into the
// same source with consecutive rows form one span.
func appendSpans(dst []span, refs []rowRef) []span {
	for i := 0; i < len(refs); {
		r := refs[i]
		j := i + 1
		for j < len(refs) && refs[j].src == r.src && refs[j].row == r.row+int32(j-i) {
			j++
		}
		dst = append(dst, span{src: r.src, row: r.row, n: int32(j - i)})
		i = j
	}
	return dst
}

// gatherBatch builds one batch of schema sch holding the rows that spans
// name (n rows in all), in that order, gathering up to workers columns at
// once. Every srcs[i] a span names must have the columns of sch; others may
// be nil.
func gatherBatch(ctx context.Context, mem memory.Allocator, sch *arrow.Schema, srcs []arrow.RecordBatch, spans []span, n, workers int) (arrow.RecordBatch, error) {
	in := make([][]arrow.Array, sch.NumFields())
	for c := range in {
		in[c] = make([]arrow.Array, len(srcs))
		for i, s := range srcs {
			if s != nil {
				in[c][i] = s.Column(c)
			}
		}
	}
	return gatherColumns(ctx, mem, sch, in, spans, n, workers)
}

// gatherColumns is gatherBatch from the sources' columns: in[c][i] is column
// c of source i.
func gatherColumns(ctx context.Context, mem memory.Allocator, sch *arrow.Schema, in [][]arrow.Array, spans []span, n, workers int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, sch.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	one := func(c int) error {
		arr, err := gatherArray(ctx, mem, sch.Field(c).Type, in[c], spans, n)
		if err != nil {
			return fmt.Errorf("gather column %s: %w", sch.Field(c).Name, err)
		}
		cols[c] = arr
		return nil
	}
	var g errgroup.Group
	g.SetLimit(max(workers, 1))
	for c := range cols {
		g.Go(func() error { return one(c) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return array.NewRecordBatch(sch, cols, int64(n)), nil
}

// gatherArray gathers one column.
func gatherArray(ctx context.Context, mem memory.Allocator, dt arrow.DataType, arrs []arrow.Array, spans []span, n int) (arrow.Array, error) {
	switch dt.ID() {
	case arrow.BOOL:
		return gatherBool(mem, dt, arrs, spans, n), nil
	case arrow.STRING, arrow.BINARY:
		return gatherVarBinary[int32](mem, dt, arrs, spans, n, math.MaxInt32)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return gatherVarBinary[int64](mem, dt, arrs, spans, n, math.MaxInt64)
	}
	if w := fixedWidth(dt); w > 0 {
		return gatherFixed(mem, dt, w, arrs, spans, n), nil
	}
	return gatherTake(ctx, mem, dt, arrs, spans, n)
}

// fixedWidth is the byte width of a flat fixed-width type gathered by
// copying bytes, 0 for any other type.
func fixedWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16, arrow.INT32, arrow.UINT32,
		arrow.INT64, arrow.UINT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO,
		arrow.FIXED_SIZE_BINARY:
		fw, ok := dt.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || fw.BitWidth() == 0 {
			return 0
		}
		return fw.BitWidth() / 8
	}
	return 0
}

// newBuffer allocates a buffer of n bytes from mem.
func newBuffer(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(n)
	return b
}

// bitmapView is the validity bitmap of one source array; bits is nil when
// the array has no nulls.
type bitmapView struct {
	bits []byte
	off  int
}

// gatherValidity returns the validity bitmap of the gathered rows and their
// null count, or (nil, 0) when no source row is null.
func gatherValidity(mem memory.Allocator, arrs []arrow.Array, spans []span, n int) (*memory.Buffer, int) {
	views := make([]bitmapView, len(arrs))
	nulls := false
	for i, a := range arrs {
		if a != nil && a.NullN() > 0 {
			d := a.Data()
			views[i] = bitmapView{bits: d.Buffers()[0].Bytes(), off: d.Offset()}
			nulls = true
		}
	}
	if !nulls {
		return nil, 0
	}
	buf := gatherBits(mem, views, spans, n, true)
	return buf, n - bitutil.CountSetBits(buf.Bytes(), 0, n)
}

// gatherBits copies the bits the spans name from views into a new bitmap of
// n bits. A view without bits stands for all-absent bits, set when absent
// is true (a validity bitmap of an array with no nulls).
func gatherBits(mem memory.Allocator, views []bitmapView, spans []span, n int, absent bool) *memory.Buffer {
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	pos := 0
	for _, sp := range spans {
		v := views[sp.src]
		switch {
		case v.bits == nil:
			if absent {
				bitutil.SetBitsTo(bits, int64(pos), int64(sp.n), true)
			}
		case sp.n == 1:
			if bitutil.BitIsSet(v.bits, v.off+int(sp.row)) {
				bitutil.SetBit(bits, pos)
			}
		default:
			bitutil.CopyBitmap(v.bits, v.off+int(sp.row), int(sp.n), bits, pos)
		}
		pos += int(sp.n)
	}
	return buf
}

func finish(dt arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
	d := array.NewData(dt, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer d.Release()
	return array.MakeFromData(d)
}

func gatherBool(mem memory.Allocator, dt arrow.DataType, arrs []arrow.Array, spans []span, n int) arrow.Array {
	valid, nulls := gatherValidity(mem, arrs, spans, n)
	views := make([]bitmapView, len(arrs))
	for i, a := range arrs {
		if a != nil {
			d := a.Data()
			if b := d.Buffers()[1]; b != nil {
				views[i] = bitmapView{bits: b.Bytes(), off: d.Offset()}
			}
		}
	}
	return finish(dt, n, []*memory.Buffer{valid, gatherBits(mem, views, spans, n, false)}, nulls)
}

// fixedValues returns the value bytes of a fixed-width array from its first
// element on.
func fixedValues(a arrow.Array, w int) []byte {
	if a == nil {
		return nil
	}
	d := a.Data()
	buf := d.Buffers()[1]
	if buf == nil {
		return nil
	}
	return buf.Bytes()[d.Offset()*w:]
}

func gatherFixed(mem memory.Allocator, dt arrow.DataType, w int, arrs []arrow.Array, spans []span, n int) arrow.Array {
	valid, nulls := gatherValidity(mem, arrs, spans, n)
	buf := newBuffer(mem, n*w)
	gatherFixedInto(buf.Bytes(), w, arrs, spans)
	return finish(dt, n, []*memory.Buffer{valid, buf}, nulls)
}

// gatherFixedInto copies the values of width w the spans name into out.
func gatherFixedInto(out []byte, w int, arrs []arrow.Array, spans []span) {
	switch w {
	case 8:
		gatherWords[uint64](out, arrs, spans)
	case 4:
		gatherWords[uint32](out, arrs, spans)
	default:
		views := make([][]byte, len(arrs))
		for i, a := range arrs {
			views[i] = fixedValues(a, w)
		}
		pos := 0
		for _, sp := range spans {
			k := int(sp.n) * w
			copy(out[pos:pos+k], views[sp.src][int(sp.row)*w:])
			pos += k
		}
	}
}

// words views b as values of T.
func words[T uint32 | uint64](b []byte) []T {
	w := int(unsafe.Sizeof(T(0)))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/w)
}

// gatherWords copies fixed-width values of one machine word type, a single
// row as one load and store rather than a memmove.
func gatherWords[T uint32 | uint64](out []byte, arrs []arrow.Array, spans []span) {
	w := int(unsafe.Sizeof(T(0)))
	views := make([][]T, len(arrs))
	for i, a := range arrs {
		views[i] = words[T](fixedValues(a, w))
	}
	dst := words[T](out)
	pos := 0
	for _, sp := range spans {
		src := views[sp.src]
		if sp.n == 1 {
			dst[pos] = src[sp.row]
			pos++
			continue
		}
		pos += copy(dst[pos:pos+int(sp.n)], src[sp.row:])
	}
}

// varView is one source of a binary gather: its value offsets from its
// first element on, and its data bytes.
type varView[O int32 | int64] struct {
	offs []O
	data []byte
}

func newVarView[O int32 | int64](a arrow.Array) varView[O] {
	var v varView[O]
	if a == nil {
		return v
	}
	d := a.Data()
	bufs := d.Buffers()
	if bufs[1] != nil && bufs[1].Len() > 0 {
		b := bufs[1].Bytes()
		all := unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(O(0))))
		v.offs = all[d.Offset():]
	}
	if bufs[2] != nil {
		v.data = bufs[2].Bytes()
	}
	return v
}

func gatherVarBinary[O int32 | int64](mem memory.Allocator, dt arrow.DataType, arrs []arrow.Array, spans []span, n int, limit int64) (arrow.Array, error) {
	views := varViews[O](arrs)
	total := varBytes(views, spans)
	if total > limit {
		return nil, fmt.Errorf("gathered %d rows hold %d bytes, over the %s limit", n, total, dt)
	}
	valid, nulls := gatherValidity(mem, arrs, spans, n)
	ow := int(unsafe.Sizeof(O(0)))
	offBuf := newBuffer(mem, (n+1)*ow)
	ob := offBuf.Bytes()
	dataBuf := newBuffer(mem, int(total))
	gatherVarBinaryInto(unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(ob))), n+1), dataBuf.Bytes(), views, spans)
	return finish(dt, n, []*memory.Buffer{valid, offBuf, dataBuf}, nulls), nil
}

// varViews returns the views of the sources of a binary gather.
func varViews[O int32 | int64](arrs []arrow.Array) []varView[O] {
	views := make([]varView[O], len(arrs))
	for i, a := range arrs {
		views[i] = newVarView[O](a)
	}
	return views
}

// varBytes is the data bytes of the rows the spans name.
func varBytes[O int32 | int64](views []varView[O], spans []span) int64 {
	var total int64
	for _, sp := range spans {
		if offs := views[sp.src].offs; offs != nil {
			total += int64(offs[sp.row+sp.n] - offs[sp.row])
		}
	}
	return total
}

// gatherVarBinaryInto copies the rows the spans name into outOffs (one more
// than the rows) and out (their bytes, varBytes of them).
func gatherVarBinaryInto[O int32 | int64](outOffs []O, out []byte, views []varView[O], spans []span) {
	var at O
	pos := 0
	for _, sp := range spans {
		v := views[sp.src]
		if v.offs == nil { // an empty array has no offsets
			for range sp.n {
				outOffs[pos] = at
				pos++
			}
			continue
		}
		if sp.n == 1 {
			s, e := v.offs[sp.row], v.offs[sp.row+1]
			outOffs[pos] = at
			pos++
			at += O(copy(out[at:], v.data[s:e]))
			continue
		}
		base := v.offs[sp.row]
		shift := at - base
		for _, o := range v.offs[sp.row : sp.row+sp.n] {
			outOffs[pos] = o + shift
			pos++
		}
		at += O(copy(out[at:], v.data[base:v.offs[sp.row+sp.n]]))
	}
	outOffs[pos] = at
}

// gatherTake is the fallback for types not gathered by hand: the rows of
// each source are taken (or sliced, when consecutive) with compute.Take,
// concatenated, and permuted into output order.
func gatherTake(ctx context.Context, mem memory.Allocator, dt arrow.DataType, arrs []arrow.Array, spans []span, n int) (arrow.Array, error) {
	sch := arrow.NewSchema([]arrow.Field{{Name: "c", Type: dt, Nullable: true}}, nil)
	recs := make([]arrow.RecordBatch, len(arrs))
	for i, a := range arrs {
		if a != nil {
			recs[i] = array.NewRecordBatch(sch, []arrow.Array{a}, int64(a.Len()))
		}
	}
	defer func() {
		for _, r := range recs {
			if r != nil {
				r.Release()
			}
		}
	}()
	refs := make([]rowRef, 0, n)
	for _, sp := range spans {
		for r := sp.row; r < sp.row+sp.n; r++ {
			refs = append(refs, rowRef{src: sp.src, row: r})
		}
	}
	rec, err := gather(ctx, mem, recs, refs)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	col := rec.Column(0)
	col.Retain()
	return col, nil
}
