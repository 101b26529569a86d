package rewriter

import (
	"context"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writePicked writes one column of picked rows. The rows are gathered into
// a scratch the column holds while it encodes, viewed as an Arrow array and
// written as any array is; the encoder copies what it keeps (values into
// pages, the dictionary column its values, statistics their min and max), so
// the scratch is free for the next column once this returns. Columns the
// scratch does not take (nulls, booleans, nested and other types) are
// gathered into a new array instead. Either way the file is the one a
// gathered batch makes (TestWritePickedMatchesGathered).
func (c *columnFile) writePicked(i int, pc pickColumn) error {
	sc := <-c.scratch // never waits: it holds one per column encoding at once
	defer func() { c.scratch <- sc }()
	arr, ok := sc.array(pc)
	if !ok {
		var err error
		if arr, err = pc.array(context.Background(), c.mem); err != nil {
			return err
		}
	}
	defer arr.Release()
	return c.writeColumn(i, arr)
}

// columnScratch is what a column's picked rows are gathered into, reused
// from batch to batch: a fresh buffer for every batch is zeroed by the
// allocator and may cost a page fault per page on first touch, only to be
// dropped as soon as the batch is encoded. Only workers columns
// encode at once, so a file needs as many, taken from a [scratchPool] (the
// [Writer]'s, so that they outlive the file).
type columnScratch struct {
	words []uint64 // fixed-width values, or binary offsets
	data  []byte   // binary values
}

// scratchPool holds the scratches of the columns encoding at once.
type scratchPool chan *columnScratch

func newScratchPool(n int) scratchPool {
	p := make(scratchPool, n)
	for range n {
		p <- &columnScratch{}
	}
	return p
}

// bytes returns n bytes of the scratch's words, 8-byte aligned.
func (sc *columnScratch) bytes(n int) []byte {
	if words := (n + 7) / 8; cap(sc.words) < words {
		sc.words = make([]uint64, words+words/4)
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(sc.words))), cap(sc.words)*8)[:n]
}

// array gathers pc into the scratch and returns an array viewing it, valid
// until the scratch is used again; false when the scratch does not take pc.
func (sc *columnScratch) array(pc pickColumn) (arrow.Array, bool) {
	if pc.hasNulls() {
		return nil, false
	}
	var bufs []*memory.Buffer
	switch pc.dt.ID() {
	case arrow.STRING, arrow.BINARY:
		offs, data, ok := gatherScratchBinary[int32](sc, pc, math.MaxInt32)
		if !ok {
			return nil, false
		}
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs, data, _ := gatherScratchBinary[int64](sc, pc, math.MaxInt64)
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}
	default:
		w := fixedWidth(pc.dt)
		if w == 0 {
			return nil, false
		}
		out := sc.bytes(pc.n * w)
		gatherFixedInto(out, w, pc.arrs, pc.spans)
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(out)}
	}
	d := array.NewData(pc.dt, pc.n, bufs, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), true
}

// gatherScratchBinary gathers a binary column into the scratch: offsets in
// its words, values in its data. False when the values exceed limit bytes.
func gatherScratchBinary[O int32 | int64](sc *columnScratch, pc pickColumn, limit int64) (offs, data []byte, ok bool) {
	views := varViews[O](pc.arrs)
	total := varBytes(views, pc.spans)
	if total > limit {
		return nil, nil, false
	}
	ow := int(unsafe.Sizeof(O(0)))
	offs = sc.bytes((pc.n + 1) * ow)
	if cap(sc.data) < int(total) {
		sc.data = make([]byte, total+total/4)
	}
	data = sc.data[:total]
	gatherVarBinaryInto(unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(offs))), pc.n+1), data, views, pc.spans)
	return offs, data, true
}
