package rewriter

import (
	"bufio"
	"bytes"
	"cmp"
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

// cursor is the read position of one run in a merge. It keeps the current
// row's key and its 16-byte prefix (as in rowEnt), so that most comparisons
// are two integer compares.
type cursor struct {
	idx    int
	slot   int32 // of rec in the merger's slots
	src    batchSource
	rec    arrow.RecordBatch
	keys   varView[int32]
	n      int // rows of rec
	row    int
	done   bool
	key    []byte
	p0, p1 uint64
}

// load reads the key of the current row.
func (c *cursor) load() {
	c.key = c.keys.data[c.keys.offs[c.row]:c.keys.offs[c.row+1]]
	c.p0, c.p1 = keyPrefix(c.key)
}

// advance replaces the current batch with the next one; at the end of the
// run it marks the cursor done.
func (c *cursor) advance() error {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
	for {
		rec, err := c.src.next()
		if err != nil || rec == nil {
			c.done = true
			return err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		keys, ok := rec.Column(int(rec.NumCols()) - 1).(*array.Binary)
		if !ok {
			rec.Release()
			c.done = true
			return fmt.Errorf("spilled batch has no binary key column")
		}
		c.rec, c.keys, c.n, c.row = rec, newVarView[int32](keys), int(rec.NumRows()), 0
		c.load()
		return nil
	}
}

// before reports whether a's current row comes before b's: by key, then by
// run (earlier run first, which keeps the sort stable). Finished cursors
// come after all others.
func before(a, b *cursor) bool {
	if a.done || b.done {
		return !a.done || (b.done && a.idx < b.idx)
	}
	if a.p0 != b.p0 {
		return a.p0 < b.p0
	}
	if a.p1 != b.p1 {
		return a.p1 < b.p1
	}
	var c int
	if min(len(a.key), len(b.key)) <= 16 {
		c = cmp.Compare(len(a.key), len(b.key)) // see compareEnts
	} else {
		c = bytes.Compare(a.key[16:], b.key[16:])
	}
	if c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}

// merger is a k-way merge of sorted runs through a tournament (loser) tree:
// taking a row costs log2(k) comparisons on the path from its run's leaf to
// the root. It holds one batch per run, and those used up while the merged
// batch fills.
type merger struct {
	workers int // columns of a merged batch gathered at once
	ctx     context.Context
	mem     memory.Allocator
	rows    int
	cursors []*cursor
	// tree[0] is the winning cursor; tree[1:] hold the loser of the match
	// at each inner node. Leaf j is node len(cursors)+j; node p's parent is
	// p/2.
	tree    []int
	pending []rowRef
	spans   []span
	// slots are the batches the pending rows point into (rowRef.src): the
	// cursors' current ones and those used up since the merged batch began,
	// whose references are in spent.
	slots []arrow.RecordBatch
	spent []arrow.RecordBatch
	// out, when set, is the schema of the merged batches: a prefix of the
	// runs' columns (the runs' schema without the key column). Nil: the
	// runs' schema.
	out *arrow.Schema
	// leaves ends a merged batch where the leaf its keys begin with changes
	// and tags it with its leaf (SortOptions.leaves).
	leaves bool
}

func newMerger(ctx context.Context, srcs []batchSource, rows, workers int, mem memory.Allocator) (*merger, error) {
	m := &merger{ctx: ctx, mem: mem, rows: rows, workers: workers}
	for i, s := range srcs {
		c := &cursor{idx: i, src: s}
		m.cursors = append(m.cursors, c)
		if err := c.advance(); err != nil {
			m.release()
			return nil, err
		}
	}
	k := len(m.cursors)
	m.tree = make([]int, max(k, 1))
	if k == 0 {
		return m, nil
	}
	win := make([]int, k)
	node := func(q int) int {
		if q >= k {
			return q - k
		}
		return win[q]
	}
	for p := k - 1; p >= 1; p-- {
		a, b := node(2*p), node(2*p+1)
		if before(m.cursors[b], m.cursors[a]) {
			a, b = b, a
		}
		win[p], m.tree[p] = a, b
	}
	m.tree[0] = node(1)
	return m, nil
}

// replay moves cursor w, whose row changed, up from its leaf to the root.
func (m *merger) replay(w int) {
	k := len(m.cursors)
	for p := (w + k) / 2; p >= 1; p /= 2 {
		if l := m.tree[p]; before(m.cursors[l], m.cursors[w]) {
			m.tree[p], w = w, l
		}
	}
	m.tree[0] = w
}

// next returns the next merged batch, copied, or nil at the end.
func (m *merger) next() (arrow.RecordBatch, error) {
	p, err := m.nextPick()
	if err != nil || p == nil {
		return nil, err
	}
	defer p.release()
	return p.record(m.ctx, m.mem, m.workers)
}

// nextPick returns the rows of the next merged batch uncopied, or nil at the
// end. A run's batch that is used up while the merged batch fills is kept
// for it (in slots, with a reference in spent until the batch is built), so
// merged batches are full however many runs there are; they used to end at
// every used-up batch, so the more runs were merged, the smaller they were.
func (m *merger) nextPick() (*pickBatch, error) {
	m.pending = m.pending[:0]
	m.slots = m.slots[:0]
	for _, c := range m.cursors {
		c.slot = int32(len(m.slots))
		m.slots = append(m.slots, c.rec)
	}
	defer func() {
		for _, b := range m.spent {
			b.Release()
		}
		clear(m.spent)
		m.spent = m.spent[:0]
		clear(m.slots)
	}()
	leaf := uint64(0)
	for len(m.pending) < m.rows && len(m.cursors) > 0 {
		w := m.tree[0]
		c := m.cursors[w]
		if c.done {
			break // the winner is done: all are
		}
		if m.leaves {
			// A tree key's leaf number is its first 4 bytes, the top
			// half of the prefix.
			if len(m.pending) == 0 {
				leaf = c.p0 >> 32
			} else if c.p0>>32 != leaf {
				break
			}
		}
		m.pending = append(m.pending, rowRef{src: c.slot, row: int32(c.row)})
		c.row++
		if c.row < c.n {
			c.load()
			m.replay(w)
			continue
		}
		c.rec.Retain()
		m.spent = append(m.spent, c.rec)
		if err := c.advance(); err != nil {
			return nil, err
		}
		if !c.done {
			c.slot = int32(len(m.slots))
			m.slots = append(m.slots, c.rec)
		}
		m.replay(w)
	}
	if len(m.pending) == 0 {
		return nil, nil
	}
	var sch *arrow.Schema
	for _, b := range m.slots {
		if b != nil {
			sch = b.Schema()
			break
		}
	}
	if sch == nil {
		return nil, errors.New("merge: rows pending but no run has a batch")
	}
	if m.out != nil {
		sch = m.out
	}
	m.spans = appendSpans(m.spans[:0], m.pending)
	p := newPickBatch(sch, m.slots, m.spans, len(m.pending))
	if m.leaves {
		p.leaf = int32(leaf)
	}
	return p, nil
}

func (m *merger) release() {
	for _, c := range m.cursors {
		if c.rec != nil {
			c.rec.Release()
			c.rec = nil
		}
	}
}
