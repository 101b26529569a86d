package rewriter

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// pickBatch is a batch of rows named, in order, in source batches and not
// yet copied: what the sorter hands the writer. Each column of the writer
// gathers its rows into a scratch it reuses when its turn to encode comes
// (columnFile.writePicked), where the sorter used to copy every batch into
// fresh Arrow arrays that the encoder read once and dropped: the allocator
// zeroes fresh buffers and each of their pages costs a fault on first touch.
//
// A pickBatch holds a reference to every column of every source a span
// names. The writer's goroutine of column c drops column c's (doneColumn)
// as soon as it has encoded them, so the sources go column by column, as
// they did when a sorted run was copied column by column; the last holder's
// release drops what is left.
type pickBatch struct {
	sch   *arrow.Schema   // the rows' columns: a prefix of every source's
	cols  [][]arrow.Array // cols[c][src]; nil where no span names src
	nsrc  int             // sources: len(cols[c])
	spans []span
	n     int
	refs  atomic.Int32
	// leaf is the tree leaf all the rows belong to, when the sorter cut its
	// output at leaves (SortOptions.leaves); -1 otherwise.
	leaf int32
}

// newPickBatch returns the n rows spans names in srcs, with the columns of
// sch (a prefix of the sources' columns). It takes references of its own to
// the columns of each source a span names and copies spans.
func newPickBatch(sch *arrow.Schema, srcs []arrow.RecordBatch, spans []span, n int) *pickBatch {
	return pickOf(sch, len(srcs), spans, n, func(c, src int) arrow.Array { return srcs[src].Column(c) })
}

// pickOf returns the n rows spans names in nsrc sources, taking a reference
// to column(c, src) for every column c of sch and every source a span names.
func pickOf(sch *arrow.Schema, nsrc int, spans []span, n int, column func(c, src int) arrow.Array) *pickBatch {
	cols := make([][]arrow.Array, sch.NumFields())
	for c := range cols {
		cols[c] = make([]arrow.Array, nsrc)
	}
	seen := make([]bool, nsrc)
	for _, sp := range spans {
		if seen[sp.src] {
			continue
		}
		seen[sp.src] = true
		for c := range cols {
			a := column(c, int(sp.src))
			a.Retain()
			cols[c][sp.src] = a
		}
	}
	p := &pickBatch{sch: sch, cols: cols, nsrc: nsrc, spans: append([]span(nil), spans...), n: n, leaf: -1}
	p.refs.Store(1)
	return p
}

// wholeBatch returns all rows of rec, with the columns of sch, and releases
// rec.
func wholeBatch(sch *arrow.Schema, rec arrow.RecordBatch) *pickBatch {
	defer rec.Release()
	var spans []span
	if rec.NumRows() > 0 {
		spans = []span{{n: int32(rec.NumRows())}}
	}
	return newPickBatch(sch, []arrow.RecordBatch{rec}, spans, int(rec.NumRows()))
}

func (p *pickBatch) numRows() int64 { return int64(p.n) }

func (p *pickBatch) retain() { p.refs.Add(1) }

// release drops a reference; the last one releases the columns left.
func (p *pickBatch) release() {
	if p.refs.Add(-1) != 0 {
		return
	}
	for c := range p.cols {
		p.doneColumn(c)
	}
}

// doneColumn releases column c. Only the one goroutine that encodes column c
// may call it, before it releases its reference.
func (p *pickBatch) doneColumn(c int) {
	for i, a := range p.cols[c] {
		if a != nil {
			a.Release()
			p.cols[c][i] = nil
		}
	}
}

// slice returns rows [off, off+n) as a new pickBatch with references of its
// own.
func (p *pickBatch) slice(off, n int) *pickBatch {
	var spans []span
	pos := 0
	for _, sp := range p.spans {
		lo, hi := max(off, pos), min(off+n, pos+int(sp.n))
		if lo < hi {
			spans = append(spans, span{src: sp.src, row: sp.row + int32(lo-pos), n: int32(hi - lo)})
		}
		pos += int(sp.n)
		if pos >= off+n {
			break
		}
	}
	out := pickOf(p.sch, p.nsrc, spans, n, func(c, src int) arrow.Array { return p.cols[c][src] })
	out.leaf = p.leaf
	return out
}

// contiguous returns the rows as a zero-copy slice of one source when they
// are consecutive rows of it (a batch that was never sorted, say).
func (p *pickBatch) contiguous() (arrow.RecordBatch, bool) {
	if len(p.spans) != 1 {
		return nil, false
	}
	sp := p.spans[0]
	cols := make([]arrow.Array, len(p.cols))
	for c := range cols {
		cols[c] = array.NewSlice(p.cols[c][sp.src], int64(sp.row), int64(sp.row+sp.n))
	}
	rec := array.NewRecordBatch(p.sch, cols, int64(sp.n))
	for _, c := range cols {
		c.Release()
	}
	return rec, true
}

// record copies the rows into one new batch, gathering up to workers columns
// at once; it does not release p.
func (p *pickBatch) record(ctx context.Context, mem memory.Allocator, workers int) (arrow.RecordBatch, error) {
	if rec, ok := p.contiguous(); ok {
		return rec, nil
	}
	return gatherColumns(ctx, mem, p.sch, p.cols, p.spans, p.n, workers)
}

// column returns column c of the rows.
func (p *pickBatch) column(c int) pickColumn {
	return pickColumn{dt: p.sch.Field(c).Type, arrs: p.cols[c], spans: p.spans, n: p.n}
}

// pickColumn is one column of a pickBatch: the rows spans names in arrs.
type pickColumn struct {
	dt    arrow.DataType
	arrs  []arrow.Array
	spans []span
	n     int
}

// hasNulls reports whether a source the column's spans read has nulls.
func (pc pickColumn) hasNulls() bool {
	for _, a := range pc.arrs {
		if a != nil && a.NullN() > 0 {
			return true
		}
	}
	return false
}

// array copies the column's rows into a new array.
func (pc pickColumn) array(ctx context.Context, mem memory.Allocator) (arrow.Array, error) {
	if len(pc.spans) == 1 {
		sp := pc.spans[0]
		return array.NewSlice(pc.arrs[sp.src], int64(sp.row), int64(sp.row+sp.n)), nil
	}
	arr, err := gatherArray(ctx, mem, pc.dt, pc.arrs, pc.spans, pc.n)
	if err != nil {
		return nil, fmt.Errorf("gather %s column: %w", pc.dt, err)
	}
	return arr, nil
}
