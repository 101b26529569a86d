package rewriter

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Spill file format: an Arrow IPC stream whose schema is the input schema plus
// a trailing binary column holding each row's layout key. IPC keeps every Arrow
// type exactly (nested types, decimals, timestamps with their units), is read
// back one record batch at a time without decoding work, and carrying the key
// means the merge never calls the Keyer again (a Hilbert key costs more than
// reading its bytes back).

// spillBufferBytes is the size of the buffered reader and writer of each
// spill file.
const spillBufferBytes = 64 << 10

// spillSet owns every spill file of one sort and removes them all at the end.
type spillSet struct {
	dir   string
	mem   memory.Allocator
	mu    sync.Mutex
	paths map[string]struct{}
}

func (s *spillSet) track(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths == nil {
		s.paths = make(map[string]struct{})
	}
	s.paths[path] = struct{}{}
}

func (s *spillSet) remove(f *spillFile) {
	s.mu.Lock()
	delete(s.paths, f.path)
	s.mu.Unlock()
	// Removing an already closed temp file; a failure leaves a file in the
	// temp dir, which removeAll retries below.
	if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.track(f.path)
	}
}

// removeAll deletes every file still tracked. It runs deferred, on success,
// error and cancellation alike.
func (s *spillSet) removeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.paths {
		_ = os.Remove(p) // best effort: the file is ours and in a temp dir
		delete(s.paths, p)
	}
}

func (s *spillSet) create(sch *arrow.Schema) (*spillWriter, error) {
	f, err := os.CreateTemp(s.dir, "floe-sort-*.arrows")
	if err != nil {
		return nil, fmt.Errorf("create spill file in %s: %w", s.dir, err)
	}
	s.track(f.Name())
	bw := bufio.NewWriterSize(f, spillBufferBytes)
	w := ipc.NewWriter(bw, ipc.WithSchema(sch), ipc.WithAllocator(s.mem))
	return &spillWriter{f: f, bw: bw, w: w}, nil
}

type spillWriter struct {
	f  *os.File
	bw *bufio.Writer
	w  *ipc.Writer
}

func (w *spillWriter) write(rec arrow.RecordBatch) error {
	if err := w.w.Write(rec); err != nil {
		return fmt.Errorf("write spill file %s: %w", w.f.Name(), err)
	}
	return nil
}

func (w *spillWriter) finish() (*spillFile, error) {
	err := errors.Join(w.w.Close(), w.bw.Flush())
	st, serr := w.f.Stat()
	err = errors.Join(err, serr, w.f.Close())
	if err != nil {
		return nil, fmt.Errorf("finish spill file %s: %w", w.f.Name(), err)
	}
	return &spillFile{path: w.f.Name(), size: st.Size()}, nil
}

// abort closes the file; the spill set removes it.
func (w *spillWriter) abort() error {
	return errors.Join(w.w.Close(), w.f.Close())
}

type spillFile struct {
	path string
	size int64
}

func (f *spillFile) open(mem memory.Allocator) (*fileSource, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("open spill file: %w", err)
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(fh, spillBufferBytes), ipc.WithAllocator(mem))
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("read spill file %s: %w", f.path, err)
	}
	return &fileSource{f: fh, r: r}, nil
}

// batchSource yields keyed batches of one sorted run, in order. next returns
// (nil, nil) at the end; the caller owns each returned batch.
type batchSource interface {
	next() (arrow.RecordBatch, error)
	close()
}

type fileSource struct {
	f *os.File
	r *ipc.Reader
}

func (s *fileSource) next() (arrow.RecordBatch, error) {
	if s.r.Next() {
		rec := s.r.RecordBatch()
		rec.Retain()
		return rec, nil
	}
	if err := s.r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read spill file %s: %w", s.f.Name(), err)
	}
	return nil, nil
}

func (s *fileSource) close() {
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
	if s.f != nil {
		s.f.Close() // read-only file: nothing to lose on close
		s.f = nil
	}
}

// rowRef names one row of one of several source batches.
type rowRef struct {
	src int32
	row int32
}

// gather builds one batch holding the rows refs names, in that order. Each
// source contributes either a zero-copy slice (when its rows are consecutive,
// the common case in a merge) or a Take; the parts are then concatenated and,
// unless they already are in output order, permuted with one more Take.
func gather(ctx context.Context, mem memory.Allocator, srcs []arrow.RecordBatch, refs []rowRef) (arrow.RecordBatch, error) {
	type part struct {
		src  int32
		rows []int32
	}
	var (
		parts []part
		where = make(map[int32]int)
	)
	for _, r := range refs {
		i, ok := where[r.src]
		if !ok {
			i = len(parts)
			where[r.src] = i
			parts = append(parts, part{src: r.src})
		}
		parts[i].rows = append(parts[i].rows, r.row)
	}
	pieces := make([]arrow.RecordBatch, 0, len(parts))
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	for _, p := range parts {
		rec, err := pick(ctx, mem, srcs[p.src], p.rows)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, rec)
	}
	// Identity check: refs already grouped by part, in part order.
	identity := true
	offset := make([]int32, len(parts))
	var total int32
	for i, p := range parts {
		offset[i] = total
		total += int32(len(p.rows))
	}
	seen := make([]int32, len(parts))
	perm := make([]int32, len(refs))
	for j, r := range refs {
		i := where[r.src]
		perm[j] = offset[i] + seen[i]
		seen[i]++
		if perm[j] != int32(j) {
			identity = false
		}
	}
	if len(pieces) == 1 && identity {
		pieces[0].Retain()
		return pieces[0], nil
	}
	joined, err := concatRecords(mem, pieces)
	if err != nil {
		return nil, err
	}
	if identity {
		return joined, nil
	}
	defer joined.Release()
	return takeRecord(ctx, mem, joined, perm)
}

// pick returns rows of rec: a slice when they are consecutive, else a Take.
func pick(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, rows []int32) (arrow.RecordBatch, error) {
	consecutive := true
	for i := 1; i < len(rows); i++ {
		if rows[i] != rows[i-1]+1 {
			consecutive = false
			break
		}
	}
	if consecutive {
		return rec.NewSlice(int64(rows[0]), int64(rows[0])+int64(len(rows))), nil
	}
	return takeRecord(ctx, mem, rec, rows)
}

func takeRecord(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, rows []int32) (arrow.RecordBatch, error) {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	b.AppendValues(rows, nil)
	idx := b.NewArray()
	defer idx.Release()
	ctx = compute.WithAllocator(ctx, mem)
	out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(rec), compute.NewDatumWithoutOwning(idx))
	if err != nil {
		return nil, fmt.Errorf("take %d rows: %w", len(rows), err)
	}
	rd, ok := out.(*compute.RecordDatum)
	if !ok {
		out.Release()
		return nil, fmt.Errorf("take returned %s, want a record batch", out.Kind())
	}
	return rd.Value, nil
}

func concatRecords(mem memory.Allocator, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	sch := recs[0].Schema()
	cols := make([]arrow.Array, sch.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for c := range cols {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		arr, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("concatenate column %s: %w", sch.Field(c).Name, err)
		}
		cols[c] = arr
	}
	return array.NewRecordBatch(sch, cols, rows), nil
}

// cursor is the read position of one run in a merge.
type cursor struct {
	idx  int
	src  batchSource
	rec  arrow.RecordBatch
	keys *array.Binary
	row  int
}

func (c *cursor) key() []byte { return c.keys.Value(c.row) }

// advance replaces the current batch with the next one; it reports false at
// the end of the run.
func (c *cursor) advance() (bool, error) {
	if c.rec != nil {
		c.rec.Release()
		c.rec, c.keys = nil, nil
	}
	for {
		rec, err := c.src.next()
		if err != nil || rec == nil {
			return false, err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		keys, ok := rec.Column(int(rec.NumCols()) - 1).(*array.Binary)
		if !ok {
			rec.Release()
			return false, fmt.Errorf("spilled batch has no binary key column")
		}
		c.rec, c.keys, c.row = rec, keys, 0
		return true, nil
	}
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key(), h[j].key()); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx // earlier run first: keeps the sort stable
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// merger is a k-way merge of sorted runs through a heap. It holds one batch
// per run plus the batch being assembled.
type merger struct {
	ctx     context.Context
	mem     memory.Allocator
	rows    int
	cursors []*cursor
	h       cursorHeap
	pending []rowRef
	spans   []span
}

func newMerger(ctx context.Context, srcs []batchSource, rows int, mem memory.Allocator) (*merger, error) {
	m := &merger{ctx: ctx, mem: mem, rows: rows}
	for i, s := range srcs {
		c := &cursor{idx: i, src: s}
		m.cursors = append(m.cursors, c)
		ok, err := c.advance()
		if err != nil {
			m.release()
			return nil, err
		}
		if ok {
			m.h = append(m.h, c)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

// next returns the next merged keyed batch, or nil at the end. A batch ends
// early whenever a run's current batch is used up, because the pending rows
// may point into it.
func (m *merger) next() (arrow.RecordBatch, error) {
	m.pending = m.pending[:0]
	for len(m.pending) < m.rows && len(m.h) > 0 {
		c := m.h[0]
		m.pending = append(m.pending, rowRef{src: int32(c.idx), row: int32(c.row)})
		c.row++
		if c.row < int(c.rec.NumRows()) {
			heap.Fix(&m.h, 0)
			continue
		}
		out, err := m.flush()
		if err != nil {
			return nil, err
		}
		ok, err := c.advance()
		if err != nil {
			out.Release()
			return nil, err
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		return out, nil
	}
	if len(m.pending) == 0 {
		return nil, nil
	}
	return m.flush()
}

func (m *merger) flush() (arrow.RecordBatch, error) {
	srcs := make([]arrow.RecordBatch, len(m.cursors))
	var sch *arrow.Schema
	for i, c := range m.cursors {
		srcs[i] = c.rec
		if c.rec != nil {
			sch = c.rec.Schema()
		}
	}
	m.spans = appendSpans(m.spans[:0], m.pending)
	return gatherBatch(m.ctx, m.mem, sch, srcs, m.spans, len(m.pending))
}

func (m *merger) release() {
	for _, c := range m.cursors {
		if c.rec != nil {
			c.rec.Release()
			c.rec = nil
		}
	}
}
