package rewriter

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"
)

// Keyer computes the layout key of one row. bytes.Compare of two keys orders
// the rows by the layout (linear sort, z-order, Hilbert): a [layout.Encoder]
// satisfies it. AppendKey appends the key of row in rec to dst and
// returns the extended slice.
type Keyer interface {
	AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error)
}

// Defaults of [SortOptions].
const (
	// DefaultBatchRows is the default number of rows per sorted output batch.
	DefaultBatchRows = 8192
	// DefaultFanIn is the default number of runs merged at once.
	DefaultFanIn = 64
	// minSpillRows bounds the rows per spilled batch from below, so that a tiny
	// budget does not degrade into one IPC message per row.
	minSpillRows = 256
)

// SortOptions tunes [Sorter]. The zero value sorts entirely in memory with
// default batch sizes.
type SortOptions struct {
	// MemoryBytes is the Arrow memory the sort may hold. A quarter is the
	// budget of one in-memory run (two runs are alive at a time: one filling
	// while the previous one is sorted and spilled), a quarter bounds the
	// merge's read buffers (FanIn spilled batches), and the rest is left to
	// the producer of the input and the consumer of the output (scan and
	// Parquet writer). The first run may fill half: no run is being spilled
	// while it fills, and when it is spilled the second run fills a quarter
	// beside it, so an input of up to half the budget is sorted without
	// spilling at all. Zero means unbounded: nothing is spilled.
	MemoryBytes int64
	// TempDir holds the spill files. Default: os.TempDir().
	TempDir string
	// BatchRows caps the rows of each yielded batch. Default: DefaultBatchRows.
	BatchRows int
	// FanIn caps how many runs one merge reads at once; more runs are first
	// merged in intermediate passes. Default: DefaultFanIn; minimum 2. It is
	// further lowered when MemoryBytes cannot hold FanIn read buffers.
	FanIn int
	// Parallelism is how many columns of a sorted run are copied at once.
	// Default: runtime.GOMAXPROCS(0).
	Parallelism int
	// Allocator receives every Arrow allocation of the sort. Default:
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// ExpectedRows, when positive, is about how many rows the input holds
	// (RewriteGroup passes its files' record counts). With the budget it
	// sizes the first run's keys and entries once its first batch shows
	// the bytes per row, instead of growing them by doubling. A wrong
	// figure costs only speed.
	ExpectedRows int64
	// Buffers, when set, hands the run buffers of this sort to the next sort
	// given the same Buffers (see [RunBuffers]). Nil: each sort starts with
	// fresh ones.
	Buffers *RunBuffers

	// leaves says the keys begin with a tree's leaf number, 4 bytes
	// big-endian ([layout.LeafOfKey]; a tree layout's encoder): the sort
	// counts each leaf's rows as they are keyed (Sorter.leafRows) and never
	// yields a batch that holds rows of two leaves, each batch tagged with
	// its leaf (pickBatch.leaf), so that the writer can close its file where
	// a leaf ends and split each leaf into files of equal rows (see
	// [Writer]). RewriteGroup sets it for a tree layout's group.
	leaves bool
}

// RunBuffers keeps the key and entry buffers of a sort's runs for the next
// sort that is given them, as the groups one [RewriteGroups] worker rewrites
// one after another are. A fresh buffer is zeroed, and faulted in page by
// page, before the first key goes in, on a table of 30 daily partitions 30
// times over for buffers of the same size (docs/rewriter-performance.md,
// "The partitioned sort"). It holds at most two runs' buffers (a sort has at most two runs in
// memory at once, see runPool), is safe for concurrent use and its zero value
// is ready to use. Buffers of 1 MiB or more are mapped outside the Go heap
// (see runPool), so the owner calls Release once the last sort given it has
// ended. Where the kernel gives huge pages a kept set gives its pages back
// while it waits, so what it saves there is growing the buffers by doubling
// (and a fault per 2 MiB instead of zeroing); elsewhere the faults too.
type RunBuffers struct {
	pool runPool
}

// Release unmaps the buffers kept for the next sort. The RunBuffers stays
// usable; a sort given it after Release starts with fresh buffers.
func (b *RunBuffers) Release() { b.pool.release() }

// Validate reports every invalid field at once.
func (o SortOptions) Validate() error {
	var errs []error
	if o.ExpectedRows < 0 {
		errs = append(errs, fmt.Errorf("expected rows must be >= 0, got %d", o.ExpectedRows))
	}
	if o.MemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("memory bytes must be >= 0, got %d", o.MemoryBytes))
	}
	if o.BatchRows < 0 {
		errs = append(errs, fmt.Errorf("batch rows must be >= 0, got %d", o.BatchRows))
	}
	if o.Parallelism < 0 {
		errs = append(errs, fmt.Errorf("parallelism must be >= 0, got %d", o.Parallelism))
	}
	if o.FanIn < 0 || o.FanIn == 1 {
		errs = append(errs, fmt.Errorf("fan-in must be 0 (default) or >= 2, got %d", o.FanIn))
	}
	if o.TempDir != "" {
		if st, err := os.Stat(o.TempDir); err != nil {
			errs = append(errs, fmt.Errorf("temp dir: %w", err))
		} else if !st.IsDir() {
			errs = append(errs, fmt.Errorf("temp dir %s is not a directory", o.TempDir))
		}
	}
	return errors.Join(errs...)
}

func (o SortOptions) withDefaults() SortOptions {
	if o.BatchRows == 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.FanIn == 0 {
		o.FanIn = DefaultFanIn
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Parallelism == 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
	return o
}

// SortStats describes one completed sort.
type SortStats struct {
	// Rows is the number of rows sorted.
	Rows int64
	// SpilledRuns is the number of sorted runs written to temporary files by
	// the first pass (0 when the input fit in memory).
	SpilledRuns int
	// SpilledBytes is the size of all spill files written, intermediate
	// merge passes included.
	SpilledBytes int64
	// MergePasses is the number of intermediate merge passes (needed when
	// there are more runs than the fan-in).
	MergePasses int
	// FanIn is the fan-in the merge used.
	FanIn int
}

// Sorter is an external merge sort of Arrow record batches by a [Keyer].
// Rows with equal keys keep their input order (the sort is stable).
//
// A Sorter runs one sort at a time; create one per sort.
type Sorter struct {
	keyer     Keyer
	opts      SortOptions
	stats     SortStats
	spillRows int // rows per spilled batch of the current sort
	// leafRows counts the rows of each leaf (SortOptions.leaves), complete
	// once the sort yields its first batch: every row is keyed before any
	// is yielded.
	leafRows []int64
}

// NewSorter returns a sorter ordering rows by keyer.
func NewSorter(keyer Keyer, opts SortOptions) (*Sorter, error) {
	if keyer == nil {
		return nil, errors.New("new sorter: keyer is nil")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("new sorter: %w", err)
	}
	return &Sorter{keyer: keyer, opts: opts.withDefaults()}, nil
}

// Stats reports the figures of the last sort once its iterator is exhausted.
func (s *Sorter) Stats() SortStats { return s.stats }

// Sort returns the rows of input, whose batches all have schema, ordered by
// key. Nothing happens until the result is ranged over. The sorter takes
// ownership of (and releases) every input batch; the caller owns and must
// Release every yielded batch. Spill files live under TempDir only while the
// iterator runs: they are removed when it returns, whether it finished, failed,
// was cancelled through ctx or was stopped early by the caller.
func (s *Sorter) Sort(ctx context.Context, schema *arrow.Schema, input iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for p, err := range s.sortRows(ctx, schema, input) {
			if err != nil {
				yield(nil, err)
				return
			}
			rec, err := p.record(ctx, s.opts.Allocator, s.opts.Parallelism)
			p.release()
			if err != nil {
				yield(nil, fmt.Errorf("copy sorted rows: %w", err))
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// sortRows is Sort yielding the sorted rows uncopied (see pickBatch): the
// caller owns and must release every yielded batch.
func (s *Sorter) sortRows(ctx context.Context, schema *arrow.Schema, input iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[*pickBatch, error] {
	return func(yield func(*pickBatch, error) bool) {
		s.stats = SortStats{}
		s.spillRows = 0
		s.leafRows = nil
		sp := &spillSet{dir: s.opts.TempDir, mem: s.opts.Allocator}
		defer sp.removeAll()
		ctx = compute.WithAllocator(ctx, s.opts.Allocator)
		sch := keyedSchema(schema)

		pool := &runPool{}
		if s.opts.Buffers != nil {
			pool = &s.opts.Buffers.pool
		} else {
			defer pool.release() // after last.release, which gives it last's buffers
		}
		runs, last, err := s.formRuns(ctx, sch, input, sp, pool)
		if err != nil {
			yield(nil, err)
			return
		}
		defer last.release()

		if len(runs) == 0 {
			// Copied into key order one column of the whole run at a time
			// (materialize), not picked: picking the run saved no CPU in
			// exploratory runs of bench/rewrite's partitioned shape (a
			// run's rows are read at random either way) and held the whole
			// run until its last column was encoded, which raised the peak
			// resident set by a tenth to a quarter.
			s.stats.FanIn = 1
			src := last.source(ctx, s.opts.BatchRows, s.opts.Parallelism, s.opts.Allocator)
			src.keys = false // nothing merges them
			src.leaves = s.opts.leaves
			for {
				rec, err := src.next()
				if err != nil {
					yield(nil, err)
					return
				}
				if rec == nil {
					return
				}
				p := wholeBatch(schema, rec)
				if s.opts.leaves {
					p.leaf = src.leaf()
				}
				if !yield(p, nil) {
					return
				}
			}
		}

		fanIn := s.effectiveFanIn(last)
		s.stats.FanIn = fanIn
		// Intermediate passes merge consecutive runs, so the order of runs
		// (and therefore stability) is preserved.
		for len(runs)+1 > fanIn {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			s.stats.MergePasses++
			var next []*spillFile
			for i := 0; i < len(runs); i += fanIn {
				group := runs[i:min(i+fanIn, len(runs))]
				if len(group) == 1 {
					next = append(next, group[0])
					continue
				}
				out, err := s.mergeToSpill(ctx, sch, group, sp)
				if err != nil {
					yield(nil, err)
					return
				}
				next = append(next, out)
			}
			runs = next
		}

		srcs := make([]batchSource, 0, len(runs)+1)
		for _, r := range runs {
			src, err := r.open(s.opts.Allocator)
			if err != nil {
				yield(nil, err)
				return
			}
			defer src.close()
			srcs = append(srcs, src)
		}
		if last.rows() > 0 {
			srcs = append(srcs, last.source(ctx, last.spillRows, s.opts.Parallelism, s.opts.Allocator))
		}
		m, err := newMerger(ctx, srcs, s.mergeRows(), s.opts.Parallelism, s.opts.Allocator)
		if err != nil {
			yield(nil, err)
			return
		}
		defer m.release()
		m.out = schema // the last merge need not copy the keys
		m.leaves = s.opts.leaves
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			p, err := m.nextPick()
			if err != nil {
				yield(nil, err)
				return
			}
			if p == nil {
				return
			}
			if !yield(p, nil) {
				return
			}
		}
	}
}

// countLeaves adds the rows of ents to their leaves' counts. A tree key's
// leaf number is its first 4 bytes, the top half of an entry's prefix.
func (s *Sorter) countLeaves(ents []rowEnt) {
	for i := range ents {
		leaf := int(ents[i].p0 >> 32)
		if leaf >= len(s.leafRows) {
			s.leafRows = append(s.leafRows, make([]int64, leaf+1-len(s.leafRows))...)
		}
		s.leafRows[leaf]++
	}
}

// runBudget is the Arrow bytes one in-memory run may hold.
func (s *Sorter) runBudget() int64 {
	if s.opts.MemoryBytes == 0 {
		return 0
	}
	return max(s.opts.MemoryBytes/4, 1)
}

// mergeRows is the size of merged batches: no larger than the spilled ones
// when memory is bounded, since a merged batch is assembled from copies.
func (s *Sorter) mergeRows() int {
	if s.opts.MemoryBytes > 0 && s.spillRows > 0 {
		return min(s.opts.BatchRows, s.spillRows)
	}
	return s.opts.BatchRows
}

// effectiveFanIn lowers FanIn so that FanIn spilled batches fit in a quarter
// of the budget.
func (s *Sorter) effectiveFanIn(last *memRun) int {
	fanIn := s.opts.FanIn
	if s.opts.MemoryBytes > 0 && last.rowBytes > 0 {
		perRun := int64(last.spillRows) * last.rowBytes
		if perRun > 0 {
			fanIn = min(fanIn, int(max(2, (s.opts.MemoryBytes/4)/perRun)))
		}
	}
	return max(fanIn, 2)
}

// formRuns consumes input into sorted runs. Every run but the last is sorted
// and spilled in a background goroutine while the next run fills; the last
// run stays in memory and takes part in the final merge directly.
func (s *Sorter) formRuns(ctx context.Context, sch *arrow.Schema, input iter.Seq2[arrow.RecordBatch, error], sp *spillSet, pool *runPool) ([]*spillFile, *memRun, error) {
	// The first run may take the quarter a spilling run would hold too.
	budget := 2 * s.runBudget()
	var (
		runs    []*spillFile
		pending = make(chan *memRun)
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		for r := range pending {
			f, err := s.spillRun(gctx, sch, r, sp)
			r.release()
			if err != nil {
				// Drain so the producer never blocks on a dead consumer.
				for r := range pending {
					r.release()
				}
				return err
			}
			runs = append(runs, f)
		}
		return nil
	})

	cur := pool.newRun(0, 0)
	reserved := false // the first run's buffers are sized after its first batch
	produce := func() error {
		defer close(pending)
		for rec, err := range input {
			if err != nil {
				return fmt.Errorf("read input batch: %w", err)
			}
			if err := gctx.Err(); err != nil {
				rec.Release()
				return err
			}
			if rec.NumRows() == 0 {
				rec.Release()
				continue
			}
			rec, err = conformSchema(schemaOf(sch), rec)
			if err != nil {
				return err
			}
			if err := cur.add(s.keyer, rec); err != nil {
				return err
			}
			if s.opts.leaves {
				s.countLeaves(cur.ents[len(cur.ents)-int(rec.NumRows()):])
			}
			if !reserved {
				cur.reserve(budget, s.opts.ExpectedRows)
				reserved = true
			}
			s.stats.Rows += rec.NumRows()
			if budget > 0 && cur.bytes >= budget {
				if err := cur.sort(); err != nil {
					return err
				}
				cur.planSpill(s.opts.MemoryBytes, s.opts.FanIn, s.opts.BatchRows)
				if s.spillRows == 0 {
					s.spillRows = cur.spillRows
				}
				// The runs after the first are sized for a quarter.
				next := s.runBudget()
				rows := int(int64(cur.n) * next / max(budget, 1))
				keyBytes := int(int64(len(cur.keys)) * next / max(budget, 1))
				budget = next
				select {
				case pending <- cur:
				case <-gctx.Done():
					return gctx.Err()
				}
				cur = pool.newRun(rows, keyBytes)
			}
		}
		return cur.sort()
	}
	perr := produce()
	gerr := g.Wait()
	if err := errors.Join(perr, gerr); err != nil {
		cur.release()
		return nil, nil, err
	}
	s.stats.SpilledRuns = len(runs)
	// The last run is merged with the spilled ones in batches of the same
	// size they were written with.
	if len(runs) > 0 {
		cur.planSpill(s.opts.MemoryBytes, s.opts.FanIn, s.opts.BatchRows)
	} else {
		cur.spillRows = s.opts.BatchRows
	}
	return runs, cur, nil
}

// spillRun writes the sorted run r to a new spill file.
func (s *Sorter) spillRun(ctx context.Context, sch *arrow.Schema, r *memRun, sp *spillSet) (*spillFile, error) {
	w, err := sp.create(sch)
	if err != nil {
		return nil, err
	}
	src := r.source(ctx, r.spillRows, s.opts.Parallelism, s.opts.Allocator)
	for {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(err, w.abort())
		}
		rec, err := src.next()
		if err != nil {
			return nil, errors.Join(err, w.abort())
		}
		if rec == nil {
			break
		}
		err = w.write(rec)
		rec.Release()
		if err != nil {
			return nil, errors.Join(err, w.abort())
		}
	}
	f, err := w.finish()
	if err != nil {
		return nil, err
	}
	s.stats.SpilledBytes += f.size
	return f, nil
}

// mergeToSpill merges runs into one new spill file and removes the inputs.
func (s *Sorter) mergeToSpill(ctx context.Context, sch *arrow.Schema, runs []*spillFile, sp *spillSet) (*spillFile, error) {
	srcs := make([]batchSource, 0, len(runs))
	closeAll := func() {
		for _, src := range srcs {
			src.close()
		}
	}
	for _, r := range runs {
		src, err := r.open(s.opts.Allocator)
		if err != nil {
			closeAll()
			return nil, err
		}
		srcs = append(srcs, src)
	}
	defer closeAll()
	m, err := newMerger(ctx, srcs, s.mergeRows(), s.opts.Parallelism, s.opts.Allocator)
	if err != nil {
		return nil, err
	}
	defer m.release()
	w, err := sp.create(sch)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(err, w.abort())
		}
		rec, err := m.next()
		if err != nil {
			return nil, errors.Join(err, w.abort())
		}
		if rec == nil {
			break
		}
		err = w.write(rec)
		rec.Release()
		if err != nil {
			return nil, errors.Join(err, w.abort())
		}
	}
	out, err := w.finish()
	if err != nil {
		return nil, err
	}
	s.stats.SpilledBytes += out.size
	closeAll()
	srcs = nil
	for _, r := range runs {
		sp.remove(r)
	}
	return out, nil
}

// schemaOf strips the key column from a keyed schema.
func schemaOf(keyed *arrow.Schema) *arrow.Schema {
	md := keyed.Metadata()
	return arrow.NewSchema(keyed.Fields()[:keyed.NumFields()-1], &md)
}

// conformSchema returns rec labelled with schema when their columns have the
// same types (field metadata may differ), taking over rec's reference; a batch
// of other types is an error and is released.
func conformSchema(schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if rec.Schema().Equal(schema) {
		return rec, nil
	}
	defer rec.Release()
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("input batch has %d columns, the sort schema %d", rec.NumCols(), schema.NumFields())
	}
	for i, f := range schema.Fields() {
		if !arrow.TypeEqual(f.Type, rec.Column(i).DataType()) {
			return nil, fmt.Errorf("input column %d (%s) is %s, the sort schema says %s", i, f.Name, rec.Column(i).DataType(), f.Type)
		}
	}
	return array.NewRecordBatch(schema, rec.Columns(), rec.NumRows()), nil
}

// rowEnt is one row of an in-memory run: the first 16 bytes of its key
// (zero-padded, big-endian, so that comparing them as integers orders them
// like bytes.Compare), where its whole key is in the run's key arena, and
// which batch and row it comes from. Most comparisons are settled by the
// inline prefix without touching the arena. Entries are created in input
// order, so (key, batch, row) ordering is a stable sort by key.
type rowEnt struct {
	p0, p1 uint64
	koff   int
	klen   int32
	b      int32
	r      int32
}

// rowEntBytes is what one entry costs, counted in the run's size: the entry
// and its copy in the radix sort's scratch.
const rowEntBytes = 2 * int64(unsafe.Sizeof(rowEnt{}))

// keyPrefix returns the first 16 bytes of key as two big-endian words,
// zero-padded.
func keyPrefix(key []byte) (uint64, uint64) {
	if len(key) >= 16 {
		return binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])
	}
	var buf [16]byte
	copy(buf[:], key)
	return binary.BigEndian.Uint64(buf[:]), binary.BigEndian.Uint64(buf[8:])
}

// compareEnts orders two entries of one run by key, then input position.
func compareEnts(keys []byte, a, b *rowEnt) int {
	if a.p0 != b.p0 {
		return cmp.Compare(a.p0, b.p0)
	}
	if a.p1 != b.p1 {
		return cmp.Compare(a.p1, b.p1)
	}
	var c int
	if min(a.klen, b.klen) <= 16 {
		// Equal padded prefixes and one key within them: the shorter key
		// is a prefix of the other (the rest of the longer one is zeros
		// or beyond 16 bytes), so the shorter sorts first.
		c = cmp.Compare(a.klen, b.klen)
	} else {
		c = bytes.Compare(keys[a.koff+16:a.koff+int(a.klen)], keys[b.koff+16:b.koff+int(b.klen)])
	}
	if c != 0 {
		return c
	}
	if a.b != b.b {
		return cmp.Compare(a.b, b.b)
	}
	return cmp.Compare(a.r, b.r)
}

// runPool hands the key and entry buffers of a run that has been
// materialized to the next run. Runs are about the same size, and a fresh
// buffer would be zeroed first and then, whenever a run is a little larger
// than the one before, grown by doubling, which copies all of it: over a
// sort of many runs that was 4% of the CPU. At most two sets are in use at
// once (the run filling and the run being spilled), so the pool keeps two.
//
// Buffers of runMapMin bytes or more are mappings of the pool's own (on
// Linux; elsewhere the Go heap), unmapped when the pool drops them: a run
// outgrowing one, a third set given back, or release. Entries, keys and
// spans hold no pointers, so the garbage collector need not see them, and on the Go
// heap they were live data that its pacing doubled: with GOGC=100 a heap
// grows to about twice what is live before it collects, and in bench/rewrite's
// partitioned shape these buffers were 68 of the 127 MB live at the heap's
// peak (two workers' entries, radix scratch and keys).
//
// Mapped buffers that wait, a set kept for the next run and the scratch of
// a sorted run, give their pages back where the kernel gives huge pages
// (idleRunBuf): a spilling sort holds a second set while the first is
// filled, and a worker of [RewriteGroups] holds its set while the writer
// encodes the group, so they were resident for most of a rewrite without
// being touched.
type runPool struct {
	mu   sync.Mutex
	free []runBufs
	// maps holds every mapping behind a buffer of the pool's runs, in use
	// or free, by its first byte.
	maps map[*byte][]byte
	// thp is 1 when the kernel gives the mappings huge pages, -1 when it
	// does not, 0 until asked.
	thp int8
}

// idleRunBuf gives back the pages of a mapped buffer that no run needs
// until the next one fills it (a set kept for the next run, the radix
// sort's scratch once the run is sorted), keeping the mapping: with huge
// pages the next run faults it in 2 MiB at a time; without them that would
// be a fault per 4 KiB, so there the pages stay. The memory reads as zero
// afterwards, which no run buffer relies on either way.
func idleRunBuf[T runBuf](p *runPool, s []T) {
	if cap(s) == 0 {
		return
	}
	first := (*byte)(unsafe.Pointer(unsafe.SliceData(s[:1])))
	p.mu.Lock()
	m, ok := p.maps[first]
	if ok && p.thp == 0 {
		p.thp = -1
		if hugePagesOn() {
			p.thp = 1
		}
	}
	on := p.thp == 1
	p.mu.Unlock()
	if ok && on {
		dropPages(m)
	}
}

// runMapMin is the smallest run buffer the pool maps; smaller ones come
// from the Go heap, where they cost no system call.
const runMapMin = 1 << 20

// mapBytes maps at least n bytes for a run buffer, or returns nil when
// this system or the kernel gives none (the caller then uses the Go heap).
func (p *runPool) mapBytes(n int) []byte {
	if !hugeSupported || n < runMapMin {
		return nil
	}
	m, err := mapHuge((n + 4095) &^ 4095)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.maps == nil {
		p.maps = map[*byte][]byte{}
	}
	p.maps[unsafe.SliceData(m)] = m
	return m
}

// unmap returns the mapping that starts at first to the kernel; a Go heap
// buffer (no mapping of the pool's) is left to the collector.
func (p *runPool) unmap(first *byte) {
	if first == nil {
		return
	}
	p.mu.Lock()
	m, ok := p.maps[first]
	delete(p.maps, first)
	p.mu.Unlock()
	if ok {
		_ = unmapHuge(m) // fails only for an address never mapped
	}
}

// mapped reports how many mappings the pool holds; for tests.
func (p *runPool) mapped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.maps)
}

// runBuf is what a run buffer holds: row entries, key bytes or spans, none
// of which holds a pointer, so any may live in a mapping.
type runBuf interface{ rowEnt | byte | span }

// makeRunBuf returns an empty buffer with room for n elements.
func makeRunBuf[T runBuf](p *runPool, n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	if m := p.mapBytes(n * size); m != nil {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(m))), len(m)/size)[:0]
	}
	return make([]T, 0, n)
}

// dropRunBuf gives up a buffer no run uses any more.
func dropRunBuf[T runBuf](p *runPool, s []T) {
	if cap(s) > 0 {
		p.unmap((*byte)(unsafe.Pointer(unsafe.SliceData(s[:1]))))
	}
}

// growRunBuf returns s with room for n more elements: s itself when it has
// it, else a new buffer of exactly that much holding s's elements.
func growRunBuf[T runBuf](p *runPool, s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := append(makeRunBuf[T](p, len(s)+n), s...)
	dropRunBuf(p, s)
	return ns
}

// movedKeys takes over a key arena that a Keyer's append moved from old to
// the Go heap (moved): old is dropped, and a large arena is copied back
// into a mapping with room to double.
func (p *runPool) movedKeys(old, moved []byte) []byte {
	dropRunBuf(p, old)
	if cap(moved) < runMapMin || !hugeSupported {
		return moved
	}
	return append(makeRunBuf[byte](p, 2*len(moved)), moved...)
}

// release drops the free sets. Buffers of runs still alive stay theirs.
func (p *runPool) release() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, b := range free {
		p.drop(b)
	}
}

// drop gives up a set of buffers.
func (p *runPool) drop(b runBufs) {
	dropRunBuf(p, b.keys)
	dropRunBuf(p, b.ents)
	dropRunBuf(p, b.spare)
	dropRunBuf(p, b.spans)
}

// runBufs are the reusable buffers of a run: its keys, its entries, the
// radix sort's scratch entries, and the spans materialize copies by.
type runBufs struct {
	keys        []byte
	ents, spare []rowEnt
	spans       []span
}

// newRun starts a run with pooled buffers, or, when none is free, with new
// ones with room for a little more than rows entries and keyBytes key bytes.
func (p *runPool) newRun(rows, keyBytes int) *memRun {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return &memRun{pool: p, keys: b.keys, ents: b.ents, spare: b.spare, spans: b.spans}
	}
	p.mu.Unlock() // mapBytes takes the lock itself
	return &memRun{pool: p, ents: makeRunBuf[rowEnt](p, rows+rows/8), keys: makeRunBuf[byte](p, keyBytes+keyBytes/8)}
}

// put gives a run's buffers back, keeping two sets and dropping the rest;
// nil-safe.
func (p *runPool) put(b runBufs) {
	if p == nil || cap(b.keys)+cap(b.ents)+cap(b.spare)+cap(b.spans) == 0 {
		return
	}
	// The pages go before the set is listed: once it is, the other run of
	// the sort may take it and fill it at once.
	idleRunBuf(p, b.keys)
	idleRunBuf(p, b.ents)
	idleRunBuf(p, b.spare)
	idleRunBuf(p, b.spans)
	p.mu.Lock()
	if len(p.free) < 2 {
		p.free = append(p.free, runBufs{keys: b.keys[:0], ents: b.ents[:0], spare: b.spare[:0], spans: b.spans[:0]})
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.drop(b)
}

// memRun is a run being accumulated in memory.
type memRun struct {
	batches []arrow.RecordBatch
	keys    []byte
	ents    []rowEnt
	// spare is scratch for the radix sort, kept for the next run.
	spare []rowEnt
	// spans is materialize's, kept for the next run.
	spans []span
	// pool hands out keys, ents, spare and spans and gets them back
	// (giveBack) once the run no longer needs them.
	pool *runPool
	// n is the number of rows added.
	n int
	// sorted holds the run's rows in key order, as keyed batches, once
	// materialize has run; batches, keys and ents are then released.
	sorted []arrow.RecordBatch
	// sortedLeaf is the leaf of each batch of sorted, when materialize cut
	// them at leaves.
	sortedLeaf []int32
	// bytes is the accounted size: Arrow buffers plus keys plus entries.
	bytes int64
	// rowBytes is the accounted bytes per row (keys included).
	rowBytes int64
	// spillRows is the number of rows per batch when the run is written out
	// or merged.
	spillRows int
}

func (r *memRun) rows() int { return r.n }

func (r *memRun) add(k Keyer, rec arrow.RecordBatch) error {
	b := int32(len(r.batches))
	r.batches = append(r.batches, rec)
	before := len(r.keys)
	n := int(rec.NumRows())
	// Room for the batch, grown by doubling: a Keyer's append would grow
	// the arena on the Go heap, and append would the entries.
	if cap(r.ents)-len(r.ents) < n {
		r.ents = growRunBuf(r.pool, r.ents, max(n, len(r.ents)))
	}
	if need := n * (len(r.keys)/max(r.n, 1) + 1); r.n > 0 && cap(r.keys)-len(r.keys) < need {
		r.keys = growRunBuf(r.pool, r.keys, max(need, len(r.keys)))
	}
	for i := range n {
		off := len(r.keys)
		keys, err := k.AppendKey(r.keys, rec, i)
		if err != nil {
			return fmt.Errorf("compute layout key of row %d: %w", i, err)
		}
		if unsafe.SliceData(keys) != unsafe.SliceData(r.keys) {
			keys = r.pool.movedKeys(r.keys, keys)
		}
		r.keys = keys
		p0, p1 := keyPrefix(r.keys[off:])
		r.ents = append(r.ents, rowEnt{p0: p0, p1: p1, koff: off, klen: int32(len(r.keys) - off), b: b, r: int32(i)})
	}
	r.n += n
	r.bytes += recordBytes(rec) + int64(len(r.keys)-before) + int64(n)*rowEntBytes
	return nil
}

// reserve grows the run's keys and entries, which hold its first batch,
// to the rows the run will hold: as many as budget fits at the first
// batch's bytes per row, or expected, whichever is fewer (either alone when
// the other is unknown). Growing them by doubling as rows arrive copies
// everything so far at each step; for a group that fits one run that was 9%
// of the CPU.
func (r *memRun) reserve(budget, expected int64) {
	if r.n == 0 {
		return
	}
	rows := int64(math.MaxInt32)
	if budget > 0 {
		rows = budget / max(r.bytes/int64(r.n), 1)
	}
	if expected > 0 {
		rows = min(rows, expected)
	}
	if rows == math.MaxInt32 || rows <= int64(r.n) {
		return
	}
	rows += rows / 16
	r.ents = growRunBuf(r.pool, r.ents, int(rows)-len(r.ents))
	r.keys = growRunBuf(r.pool, r.keys, int(rows*int64(len(r.keys))/int64(r.n))-len(r.keys))
}

// sort orders the run's entries by key, then input position: by radix when
// every key fits in the entries' prefix, else by comparison.
func (r *memRun) sort() error {
	if len(r.ents) < 2 {
		return nil
	}
	short := true
	for i := range r.ents {
		if r.ents[i].klen > 16 {
			short = false
			break
		}
	}
	if short {
		if cap(r.spare) < len(r.ents) {
			dropRunBuf(r.pool, r.spare)
			r.spare = makeRunBuf[rowEnt](r.pool, len(r.ents))
		}
		ents, scratch := r.ents, r.spare[:len(r.ents)]
		r.ents = radixSortEnts(ents, scratch)
		if &r.ents[0] == &ents[0] {
			r.spare = scratch
		} else {
			r.spare = ents
		}
		idleRunBuf(r.pool, r.spare)
		return nil
	}
	keys := r.keys
	slices.SortFunc(r.ents, func(a, b rowEnt) int { return compareEnts(keys, &a, &b) })
	return nil
}

// planSpill sizes the batches the run is written and merged in, so that
// fanIn of them fit in a quarter of the budget.
func (r *memRun) planSpill(memoryBytes int64, fanIn, batchRows int) {
	if r.n > 0 {
		r.rowBytes = max(r.bytes/int64(r.n), 1)
	}
	rows := batchRows
	if memoryBytes > 0 && r.rowBytes > 0 {
		rows = int(min(int64(batchRows), memoryBytes/4/int64(max(fanIn, 2))/r.rowBytes))
	}
	r.spillRows = max(rows, minSpillRows)
}

func (r *memRun) release() {
	if r == nil {
		return
	}
	for _, b := range r.batches {
		b.Release()
	}
	for _, b := range r.sorted {
		if b != nil {
			b.Release()
		}
	}
	r.giveBack()
	r.batches, r.sorted = nil, nil
}

// giveBack returns the run's keys, entries, scratch and spans to its pool.
func (r *memRun) giveBack() {
	r.pool.put(runBufs{keys: r.keys, ents: r.ents, spare: r.spare, spans: r.spans})
	r.keys, r.ents, r.spare, r.spans = nil, nil, nil, nil
}

// materialize copies the sorted run into batches of at most rows rows
// (r.sorted), keyed when keys is set, and releases the input batches. It
// builds one column of the whole run at a time: the rows are read in key
// order, that is at random, and a random read within one column's values
// stays in cache far more often than one across whole rows. Up to workers
// columns are copied at once, and each input column is released once it has
// been copied, so the run's memory grows by at most workers columns
// meanwhile.
func (r *memRun) materialize(ctx context.Context, mem memory.Allocator, rows, workers int, keys, leaves bool) error {
	if r.sorted != nil || len(r.ents) == 0 {
		return nil
	}
	sch := r.batches[0].Schema()
	ncols := sch.NumFields()
	// Chunk k holds entries [bounds[k], bounds[k+1]): rows of them, and with
	// leaves set a chunk also ends where a leaf does.
	bounds := make([]int, 0, (len(r.ents)+rows-1)/rows+1)
	for lo := 0; lo < len(r.ents); {
		bounds = append(bounds, lo)
		hi := min(lo+rows, len(r.ents))
		if leaves {
			leaf := r.ents[lo].p0 >> 32
			for i := lo + 1; i < hi; i++ {
				if r.ents[i].p0>>32 != leaf {
					hi = i
					break
				}
			}
		}
		lo = hi
	}
	bounds = append(bounds, len(r.ents))
	nchunks := len(bounds) - 1
	chunk := func(k int) []rowEnt { return r.ents[bounds[k]:bounds[k+1]] }
	chunkSpans := make([][]span, nchunks)
	var refs []rowRef
	// A row makes at most one span, so all of them fit one buffer, kept
	// with the run's others: grown by append per chunk, they were 8% of
	// the bytes a partitioned rewrite allocated on the Go heap.
	all := growRunBuf(r.pool, r.spans[:0], len(r.ents))
	for k := range chunkSpans {
		refs = refs[:0]
		for _, e := range chunk(k) {
			refs = append(refs, rowRef{src: e.b, row: e.r})
		}
		start := len(all)
		all = appendSpans(all, refs)
		chunkSpans[k] = all[start:len(all):len(all)]
	}
	r.spans = all
	// Take the columns out of the batches, so that each can be released
	// as soon as it is copied.
	cols := make([][]arrow.Array, ncols)
	for c := range cols {
		cols[c] = make([]arrow.Array, len(r.batches))
		for b, rec := range r.batches {
			a := rec.Column(c)
			a.Retain()
			cols[c][b] = a
		}
	}
	for _, b := range r.batches {
		b.Release()
	}
	r.batches = nil
	out := make([][]arrow.Array, nchunks)
	for k := range out {
		out[k] = make([]arrow.Array, ncols+1)
	}
	defer func() {
		for _, cs := range cols {
			for _, a := range cs {
				a.Release()
			}
		}
		for _, cs := range out {
			for _, a := range cs {
				if a != nil {
					a.Release()
				}
			}
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	for c := range ncols {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			for k, spans := range chunkSpans {
				a, err := gatherArray(gctx, mem, sch.Field(c).Type, cols[c], spans, bounds[k+1]-bounds[k])
				if err != nil {
					return fmt.Errorf("gather column %s: %w", sch.Field(c).Name, err)
				}
				out[k][c] = a
			}
			for _, a := range cols[c] {
				a.Release()
			}
			cols[c] = nil
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	keyed := keyedSchema(sch)
	r.sorted = make([]arrow.RecordBatch, nchunks)
	if leaves {
		r.sortedLeaf = make([]int32, nchunks)
		for k := range nchunks {
			r.sortedLeaf[k] = int32(chunk(k)[0].p0 >> 32)
		}
	}
	for k := range out {
		ents := chunk(k)
		if !keys {
			r.sorted[k] = array.NewRecordBatch(sch, out[k][:ncols], int64(len(ents)))
			continue
		}
		out[k][ncols] = r.keyArray(mem, ents)
		r.sorted[k] = array.NewRecordBatch(keyed, out[k], int64(len(ents)))
	}
	r.giveBack()
	return nil
}

// keyArray copies the keys of ents into one binary array, building its
// offsets and data buffers directly.
func (r *memRun) keyArray(mem memory.Allocator, ents []rowEnt) arrow.Array {
	total := 0
	for _, e := range ents {
		total += int(e.klen)
	}
	offBuf := newBuffer(mem, (len(ents)+1)*4)
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	dataBuf := newBuffer(mem, total)
	data := dataBuf.Bytes()[:0]
	for i, e := range ents {
		offs[i] = int32(len(data))
		data = append(data, r.keys[e.koff:e.koff+int(e.klen)]...)
	}
	offs[len(ents)] = int32(len(data))
	return finish(arrow.BinaryTypes.Binary, len(ents), []*memory.Buffer{nil, offBuf, dataBuf}, 0)
}

// source returns the run's rows in sorted order as keyed batches of at most
// rows rows (unkeyed once keys is cleared). The run is materialized on the
// first call of next; each batch is handed over to the caller.
func (r *memRun) source(ctx context.Context, rows, workers int, mem memory.Allocator) *memSource {
	return &memSource{ctx: ctx, run: r, rows: rows, workers: workers, mem: mem, keys: true}
}

type memSource struct {
	ctx     context.Context
	run     *memRun
	rows    int
	workers int
	pos     int
	mem     memory.Allocator
	keys    bool
	// leaves cuts the batches at leaves too (SortOptions.leaves); leaf
	// then tells the leaf of the batch next returned last.
	leaves bool
}

// leaf is the leaf of the rows next returned last, when leaves is set.
func (m *memSource) leaf() int32 { return m.run.sortedLeaf[m.pos-1] }

func (m *memSource) next() (arrow.RecordBatch, error) {
	if err := m.run.materialize(m.ctx, m.mem, m.rows, m.workers, m.keys, m.leaves); err != nil {
		return nil, err
	}
	if m.pos >= len(m.run.sorted) {
		return nil, nil
	}
	rec := m.run.sorted[m.pos]
	m.run.sorted[m.pos] = nil
	m.pos++
	return rec, nil
}

func (m *memSource) close() {}

// keyColumn is the name of the key column appended to spilled batches.
const keyColumn = "__floe_sort_key"

func keyedSchema(schema *arrow.Schema) *arrow.Schema {
	fields := append(slices.Clone(schema.Fields()), arrow.Field{Name: keyColumn, Type: arrow.BinaryTypes.Binary})
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

func appendKey(rec arrow.RecordBatch, keys arrow.Array) arrow.RecordBatch {
	cols := append(slices.Clone(rec.Columns()), keys)
	return array.NewRecordBatch(keyedSchema(rec.Schema()), cols, rec.NumRows())
}

// recordBytes sums the lengths of the buffers rec references, counting a
// buffer shared by several arrays once. Slices count their whole buffers, so
// the figure is an upper bound of what rec keeps alive.
func recordBytes(rec arrow.RecordBatch) int64 {
	seen := make(map[*memory.Buffer]struct{})
	var total int64
	var visit func(d arrow.ArrayData)
	visit = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b == nil {
				continue
			}
			if _, ok := seen[b]; ok {
				continue
			}
			seen[b] = struct{}{}
			total += int64(b.Cap())
		}
		for _, c := range d.Children() {
			visit(c)
		}
		if d.DataType().ID() == arrow.DICTIONARY {
			visit(d.Dictionary())
		}
	}
	for _, c := range rec.Columns() {
		visit(c.Data())
	}
	return total
}
