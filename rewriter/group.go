package rewriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/internal/rowsum"
	"github.com/floe-project/floe/layout"
)

// Defaults of [GroupOptions].
const (
	// DefaultScanBatchRows is the rows per decoded scan batch.
	DefaultScanBatchRows = 8192
	// DefaultScanChunkFiles is the files read per iceberg-go ReadTasks call.
	DefaultScanChunkFiles = 32
	// writerQueue is how many sorted batches wait for the Parquet encoder.
	writerQueue = 2
)

// GroupOptions tunes [RewriteGroup]. The zero value bin-packs (no sort) into
// files of the table's target size with unbounded memory.
type GroupOptions struct {
	// TargetFileSizeBytes is the size of the files written. Default: the
	// table's write.target-file-size-bytes (512 MiB unless set).
	TargetFileSizeBytes int64
	// MemoryBytes bounds the Arrow memory of the group: three quarters go to
	// the sort, an eighth to the Parquet writer's buffered row group, the rest
	// to scan and hand-over batches. Zero: unbounded (no spilling).
	MemoryBytes int64
	// TempDir holds sort spill files. Default: os.TempDir().
	TempDir string
	// Keyer orders the rows (sort, z-order, Hilbert). Nil: bin-pack, rows
	// are written in file order without sorting.
	Keyer Keyer
	// SortOrderID is recorded as sort_order_id on the new files. Set it only
	// when Keyer orders rows by that Iceberg sort order. Nil: not recorded.
	SortOrderID *int
	// NameTag ends the names of the new files (see [WriterOptions.NameTag]);
	// [Compact] sets it to the layout's [LayoutTag].
	NameTag string
	// RunID, when set, is put in the names of the new files (see
	// [WriterOptions.RunID]), so that files a run wrote and never
	// committed are known as that run's leftovers (see [RunOfFile]). Set it
	// only while holding a [Lease] of that run id, as [Compact] does:
	// [PlanOrphans] takes an uncommitted file whose run has no live lease
	// for an orphan, however young.
	RunID string
	// Progress, when set, is called as rows are read and written with the
	// input bytes that stand for the work done so far, out of the group's
	// InputBytes: reading the rows is half the work and writing them the
	// other half (a bin-pack does both together, a sort reads everything
	// before it writes), measured against the inputs' record counts. The
	// values only grow; calls never overlap.
	Progress func(bytesDone int64)
	// Parallelism bounds the scan's decode workers and, in [RewriteGroups],
	// the groups rewritten at once. Default: runtime.GOMAXPROCS(0). With a
	// memory bound the scan uses one worker unless the budget can hold
	// several decoded input files, because iceberg-go keeps a later file's
	// decoded batches while an earlier one is being consumed.
	Parallelism int
	// ScanBatchRows is the rows per decoded batch. Default:
	// DefaultScanBatchRows.
	ScanBatchRows int
	// ScanChunkFiles is how many input files one iceberg-go ReadTasks call
	// reads; the group's files are read chunk after chunk, in order.
	// iceberg-go keeps what it prepared for every file of a call (the
	// Parquet reader and its parsed footer) until the call's iterator is
	// done, so one call over a group of 1,600 small files held more memory
	// the more files it had read. The rows of each chunk are checked
	// against the chunk's manifest entries (see [RewriteGroup]); a chunk
	// that fails the check or a read is read again one file at a time to
	// name the file at fault. Default: DefaultScanChunkFiles.
	ScanChunkFiles int
	// Allocator receives every Arrow allocation of the group. Default: a
	// fresh [TrackingAllocator] per group over Pages, whose peak is
	// reported in [GroupStats].
	Allocator *TrackingAllocator
	// Pages serves the group's large Arrow buffers when Allocator is nil
	// (see [PagePool]). Nil: a pool of the group's own, closed when it
	// ends; [RewriteGroups] gives all its groups one, so a group's memory
	// passes to the next.
	Pages *PagePool
	// Buffers, when set, lends the sort's run buffers to the next group
	// given the same Buffers (see [RunBuffers]); [RewriteGroups] gives each
	// of its workers its own. Nil: fresh buffers per group.
	Buffers *RunBuffers

	// tamper, set only by the package's tests, changes each batch on its
	// way to the writer: the fault the content check must catch.
	tamper func(*pickBatch)
}

// MinMemoryBytes is the least positive [GroupOptions.MemoryBytes]: the
// sort, scan and writer shares it is split into need this much.
const MinMemoryBytes = 1 << 20

// HeapLimit is the soft limit for the Go heap (runtime/debug.SetMemoryLimit)
// of a process whose rewrites hold budget bytes of Arrow memory at most
// (GroupOptions.MemoryBytes): the budget, a quarter more for what the engine
// keeps in plain Go memory (small runs' keys and row entries, the writer's
// scratch, Parquet's page buffers), and 256 MiB for the rest of the process. It keeps
// GC slack from growing the process far past the budget: at the default
// GOGC the heap grows to about twice what is live before each collection
// (in bench/rewrite's partitioned shape at 512 MiB, 190-230 MB live after a
// collection, 430-540 MB before one, measured before the [PagePool]). The
// pool's mappings, like the sort's large key and entry buffers
// ([RunBuffers]), are outside what the Go runtime counts against the
// limit, so with most of the budget there the limit is looser than the sum
// says;
// it is kept as it was, since a tighter one would collect more often for
// little. 0 for an unbounded budget (0), which sets no limit.
func HeapLimit(budget int64) int64 {
	if budget <= 0 {
		return 0
	}
	return budget + budget/4 + 256<<20
}

// Validate reports every invalid field at once.
func (o GroupOptions) Validate() error {
	var errs []error
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("target file size must be >= 0, got %d", o.TargetFileSizeBytes))
	}
	if o.MemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("memory bytes must be >= 0, got %d", o.MemoryBytes))
	}
	if o.MemoryBytes > 0 && o.MemoryBytes < MinMemoryBytes {
		errs = append(errs, fmt.Errorf("memory bytes must be 0 (unbounded) or >= 1 MiB, got %d", o.MemoryBytes))
	}
	if o.Parallelism < 0 {
		errs = append(errs, fmt.Errorf("parallelism must be >= 0, got %d", o.Parallelism))
	}
	if o.ScanBatchRows < 0 {
		errs = append(errs, fmt.Errorf("scan batch rows must be >= 0, got %d", o.ScanBatchRows))
	}
	if o.ScanChunkFiles < 0 {
		errs = append(errs, fmt.Errorf("scan chunk files must be >= 0, got %d", o.ScanChunkFiles))
	}
	if o.SortOrderID != nil && *o.SortOrderID < 0 {
		errs = append(errs, fmt.Errorf("sort order id must be >= 0, got %d", *o.SortOrderID))
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

// GroupStats describes one rewritten group.
type GroupStats struct {
	// InputTasks is the number of scan tasks given; InputFiles the distinct
	// data files among them (iceberg-go splits large files into several
	// tasks).
	InputTasks int
	InputFiles int
	// InputBytes is the size of the distinct input data files.
	InputBytes int64
	// Rows is the number of live rows read (deletes applied) and written;
	// a rewrite fails unless the two are equal.
	Rows int64
	// OutputFiles and OutputBytes describe the files written.
	OutputFiles int
	OutputBytes int64
	// Sort describes the external sort (zero for bin-pack).
	Sort SortStats
	// Writer describes the Parquet output.
	Writer WriterStats
	// CodedColumns are the string columns the group carried as dictionary
	// codes between the scan and the writer (see columnCodes): the
	// low-cardinality ones the writer dictionary-encodes, layout keys
	// excepted. None when the group was read again without codes, a
	// column's distinct values having outgrown a dictionary page.
	CodedColumns []string
	// DirectReads is the input files read by the rewriter's own Parquet
	// reader (see parquetFiles: files no delete applies to, in a group
	// with coded columns); iceberg-go's scan read the others.
	DirectReads int
	// Reads is how many times the input was read: 2 when a coded column
	// outgrew a dictionary page and the group was read again without
	// codes (nothing had been written), else 1.
	Reads int
	// Content is the check of the rows written against the rows read
	// (see [RewriteGroup]).
	Content ContentCheck
	// PeakArrowBytes is the peak of the group's Arrow allocations.
	PeakArrowBytes int64
	// Duration is the wall time of the rewrite.
	Duration time.Duration
}

// CollapseTasks returns one task per data file, covering the whole file,
// in first-seen order. iceberg-go's planner splits a large multi-row-group
// file into several tasks sharing one DataFile; a rewrite must replace
// whole files, and listing a file twice breaks the commit. Residual filters
// are dropped for the same reason: a rewrite reads every live row of a file,
// whatever filter selected it.
func CollapseTasks(tasks []table.FileScanTask) []table.FileScanTask {
	seen := make(map[string]int, len(tasks))
	out := make([]table.FileScanTask, 0, len(tasks))
	for _, t := range tasks {
		if _, ok := seen[t.File.FilePath()]; ok {
			continue
		}
		seen[t.File.FilePath()] = len(out)
		t.Start, t.Length = 0, t.File.FileSizeBytes()
		t.Residual = nil
		out = append(out, t)
	}
	return out
}

// RewriteGroup reads the data files of tasks (one partition of one of tbl's
// partition specs), with their position deletes, equality deletes and deletion vectors
// applied by iceberg-go's scan, orders the rows by opts.Keyer with an external
// merge sort bounded by opts.MemoryBytes, and writes them to new data files of
// about opts.TargetFileSizeBytes. It returns the new files without
// committing them; the caller replaces the input files (every distinct
// task.File) and the delete files that applied only to them with these in
// one rewrite snapshot. On error the files written so far are removed.
//
// Within the group the new files are globally ordered: file i's last key is
// at most file i+1's first key, in the order returned.
//
// On a table of format version 3 or later every row keeps its lineage: its
// _row_id and _last_updated_sequence_number are read with it and written
// as columns of the new files (see "Row lineage" in the package
// documentation).
//
// Nothing is lost silently. The live rows read from each chunk of
// opts.ScanChunkFiles inputs must be at most the sum of their record_count
// and at least that sum less the record_count of the position delete files
// and deletion vectors applying to them (inputs with equality deletes have
// no lower bound), so a chunk without deletes must yield exactly its
// record_count; and the rows written must equal the rows read. Otherwise the
// group fails with [ErrInputMismatch] or [ErrInvariant] before returning any
// file. Read errors and mismatches name the input file and its partition;
// ReadTasks does not say which file a batch or an error came from, so a
// chunk that fails is read again one file at a time to find it (only then:
// the normal path reads every file once).
//
// Nothing is changed silently either: the output files are read back and
// their rows compared with the rows read, by an order-independent digest of
// every column, before the files are returned (GroupStats.Content). A
// mismatch fails the group with [ErrContentMismatch], keeping the files and
// an evidence record (see [EvidenceDir]).
func RewriteGroup(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, opts GroupOptions) ([]iceberg.DataFile, GroupStats, error) {
	start := time.Now()
	stats := GroupStats{InputTasks: len(tasks)}
	if err := opts.Validate(); err != nil {
		return nil, stats, fmt.Errorf("rewrite group: %w", err)
	}
	tasks = CollapseTasks(tasks)
	stats.InputFiles = len(tasks)
	if len(tasks) == 0 {
		return nil, stats, nil
	}
	spec, partition, maxFile, err := groupPartition(tbl, tasks)
	if err != nil {
		return nil, stats, fmt.Errorf("rewrite group: %w", err)
	}
	for _, t := range tasks {
		stats.InputBytes += t.File.FileSizeBytes()
	}
	cur := tbl.Spec()
	partPath := ""
	if !spec.IsUnpartitioned() {
		partPath = spec.PartitionToPath(partitionRecord(spec, partition), tbl.Schema())
		if spec.ID() != cur.ID() {
			partPath = fmt.Sprintf("spec %d: %s", spec.ID(), partPath)
		}
	}
	var split *specSplitter
	if spec.ID() != cur.ID() {
		// Files of an older spec: their rows are written into the current
		// spec, each to its own partition there.
		partition = nil
		for _, f := range cur.Fields() {
			if partition == nil {
				partition = map[int]any{}
			}
			partition[f.FieldID] = nil // all void when cur is unpartitioned; else set per row
		}
		if !cur.IsUnpartitioned() {
			if split, err = newSpecSplitter(tbl); err != nil {
				return nil, stats, fmt.Errorf("rewrite group of spec %d into the current spec %d: %w", spec.ID(), cur.ID(), err)
			}
			opts.Keyer = specKeyer{split: split, inner: opts.Keyer}
		}
	}

	alloc := opts.Allocator
	if alloc == nil {
		pages := opts.Pages
		if pages == nil {
			pages = NewPagePool()
			// Every Arrow buffer is released by the time the group
			// returns. Close's error would mean one was not: its
			// mapping stays and the rewrite stands, so it is not the
			// group's error. Callers that want to know pass Pages and
			// close it themselves (Compact logs it; the tests require
			// none).
			defer func() { _ = pages.Close() }()
		}
		alloc = NewTrackingAllocator(pages)
	}
	par := opts.Parallelism
	if par == 0 {
		par = runtime.GOMAXPROCS(0)
	}
	scanWorkers := readWorkers(maxFile, par, opts.MemoryBytes)
	batchRows := opts.ScanBatchRows
	if batchRows == 0 {
		batchRows = DefaultScanBatchRows
	}
	chunk := opts.ScanChunkFiles
	if chunk == 0 {
		chunk = DefaultScanChunkFiles
	}

	meter := newGroupMeter(opts.Progress, tasks, stats.InputBytes)
	var keys []string
	codes := false
	if opts.Keyer != nil {
		keys, codes = keyColumns(opts.Keyer) // a specKeyer has none: no codes
	}
	run := groupRun{
		alloc: alloc, par: par, scanWorkers: scanWorkers, batchRows: batchRows, chunk: chunk,
		partition: partition, partPath: partPath, meter: meter, keys: keys, codes: codes, split: split,
	}
	stats.Reads = 1
	files, err := rewriteGroupOnce(ctx, tbl, tasks, opts, run, &stats)
	if errors.Is(err, errCodebookFull) {
		// Nothing was written: a sort writes after reading all its input.
		meter.restart()
		stats.Reads = 2
		run.codes = false
		files, err = rewriteGroupOnce(ctx, tbl, tasks, opts, run, &stats)
	}
	stats.PeakArrowBytes = alloc.PeakBytes()
	stats.Duration = time.Since(start)
	if err != nil {
		return nil, stats, fmt.Errorf("rewrite group of %d files: %w", len(tasks), err)
	}
	stats.Rows = stats.Writer.Rows
	stats.OutputFiles = len(files)
	stats.OutputBytes = stats.Writer.Bytes
	return files, stats, nil
}

// groupRun is what one read of a group (rewriteGroupOnce) is given.
type groupRun struct {
	alloc                       *TrackingAllocator
	par, scanWorkers, batchRows int
	chunk                       int
	partition                   map[int]any
	partPath                    string
	meter                       *groupMeter
	keys                        []string // the keyer's columns, never coded
	codes                       bool     // carry low-cardinality strings as codes (columnCodes)
	// split, when set, writes the rows into the current spec's partitions
	// (a group of an older spec; see specWriter).
	split *specSplitter
}

// inputPerRow is the bytes a row of tasks' data files holds, on average:
// what a tree's writer packs small leaves by (layout.LeafPacked), as the
// simulator does from the partition's bytes.
func inputPerRow(tasks []table.FileScanTask) float64 {
	var bytes, rows int64
	for _, t := range tasks {
		bytes += t.File.FileSizeBytes()
		rows += t.File.Count()
	}
	if rows == 0 {
		return 0
	}
	return float64(bytes) / float64(rows)
}

// rewriteGroupOnce reads, sorts and writes the group once, filling stats'
// sort and writer figures. On error the files written are removed.
func rewriteGroupOnce(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, opts GroupOptions, run groupRun, stats *GroupStats) ([]iceberg.DataFile, error) {
	var (
		sorter *Sorter
		err    error
	)
	if opts.Keyer != nil {
		var records int64
		for _, t := range tasks {
			records += t.File.Count()
		}
		so := SortOptions{
			MemoryBytes:  opts.MemoryBytes * 3 / 4,
			TempDir:      opts.TempDir,
			BatchRows:    run.batchRows,
			Parallelism:  run.par,
			Allocator:    run.alloc,
			ExpectedRows: records,
			Buffers:      opts.Buffers,
		}
		// A tree's rows are written leaf by leaf, each leaf in files of its
		// own. Not in a group of an older spec: its keys begin with the
		// row's partition, and each partition's rows go to a writer of
		// their own (specWriter), cut at the target size.
		so.leaves = run.split == nil && treeKeys(opts.Keyer)
		sorter, err = NewSorter(opts.Keyer, so)
		if err != nil {
			return nil, err
		}
	}
	wopts := groupWriterOptions(tbl, tasks, opts, run.partition, run.par, run.alloc)
	var (
		w  groupWriter
		cw *Writer // the writer columns are coded for; nil when split
	)
	if run.split != nil {
		wopts.ExpectedRows = 0
		w = newSpecWriter(tbl, run.split, wopts)
	} else {
		if cw, err = NewWriter(ctx, tbl, wopts); err != nil {
			return nil, err
		}
		if sorter != nil && sorter.opts.leaves {
			// Read once the first sorted rows arrive: the sort has
			// keyed, and counted, every row by then.
			cw.leafRows = func() []int64 { return sorter.leafRows }
			cw.inputPerRow = inputPerRow(tasks)
		}
		w = cw
	}

	scan := tbl.Scan(readOptions(tbl, run.scanWorkers, run.batchRows)...)
	defer scan.Close()
	rd := &groupReader{scan: scan, tasks: tasks, chunk: run.chunk, partition: run.partPath, meter: run.meter}
	var coder *inputCoder
	if sorter != nil && run.codes && cw != nil {
		coder = &inputCoder{w: cw, keys: run.keys, mem: run.alloc}
		schema, _, err := scan.ReadTasks(ctx, nil) // the schema only
		if err != nil {
			return nil, err
		}
		proj, err := scan.Projection()
		if err != nil {
			return nil, err
		}
		if rd.files, err = newParquetFiles(ctx, tbl, schema, proj, run.alloc, run.batchRows, run.par > 1, coder.readDict); err != nil {
			return nil, err
		}
	}

	// The scan and the sort run on a producer goroutine; this goroutine
	// encodes. On a write error the producer is cancelled and the queue
	// drained, so no batch is left unreleased.
	batches := make(chan *pickBatch, writerQueue)
	pctx, cancel := context.WithCancelCause(compute.WithAllocator(ctx, run.alloc))
	defer cancel(nil)
	perrc := make(chan error, 1)
	go func() {
		defer close(batches)
		perrc <- produce(pctx, rd, sorter, coder, batches)
	}()
	var werr error
	for p := range batches {
		if werr == nil {
			if opts.tamper != nil {
				opts.tamper(p)
			}
			if werr = w.writeRows(pctx, p); werr != nil {
				cancel(werr)
			} else {
				run.meter.add(0, p.numRows())
			}
		}
		p.release()
	}
	err = werr
	if perr := <-perrc; err == nil {
		err = perr
	}
	var files []iceberg.DataFile
	if err == nil {
		files, err = w.Close()
	}
	if err == nil {
		err = rd.checkWritten(w.Stats().Rows)
	}
	keep := false
	if err == nil {
		stats.Content, err = verifyContent(ctx, tbl, tasks, files, rd.in.Sum(), opts, run)
		keep = errors.Is(err, ErrContentMismatch)
	}
	if sorter != nil {
		stats.Sort = sorter.Stats()
	}
	stats.Writer = w.Stats()
	stats.CodedColumns, stats.DirectReads = nil, 0
	if coder != nil && coder.codes != nil {
		stats.CodedColumns = coder.codes.names()
	}
	if rd.files != nil {
		stats.DirectReads = rd.files.done
	}
	if err != nil {
		if keep {
			// The evidence: its record names these files.
			return nil, err
		}
		return nil, errors.Join(err, w.Abort())
	}
	return files, nil
}

// treeKeys reports whether keyer's keys begin with a tree's leaf number
// ([layout.LeafOfKey]): a tree layout's encoder.
func treeKeys(keyer Keyer) bool {
	_, ok := keyer.(interface{ Tree() *layout.Tree })
	return ok
}

// groupWriterOptions is what a group of tasks, in partition, is written
// with: an eighth of the group's budget for the buffered row group, and
// the rest of opts that concerns files.
func groupWriterOptions(tbl *table.Table, tasks []table.FileScanTask, opts GroupOptions, partition map[int]any, par int, alloc memory.Allocator) WriterOptions {
	wopts := WriterOptions{
		TargetFileSizeBytes: opts.TargetFileSizeBytes,
		MemoryBytes:         opts.MemoryBytes / 8,
		PartitionValues:     partition,
		SortOrderID:         opts.SortOrderID,
		NameTag:             opts.NameTag,
		RunID:               opts.RunID,
		Parallelism:         par,
		Allocator:           alloc,
		RowLineage:          rowLineage(tbl),
	}
	for _, t := range tasks {
		wopts.ExpectedRows += t.File.Count()
	}
	return wopts
}

// WriterOptions are the options [RewriteGroup] gives its [Writer] for the
// group of tasks (their partition, their record count, an eighth of
// MemoryBytes for the row group, the column parallelism), with
// o.Allocator when set. They let other code write the rows of a group into
// the very files the rewrite would cut, with the same row groups, codec and
// dictionary choices: bench/rewrite's floor writes a group's rows unsorted
// through them, to measure what decoding and encoding those bytes costs
// without a sort. A group of an older partition spec is written row by row
// into the current spec's partitions, by no single writer: an error.
func (o GroupOptions) WriterOptions(tbl *table.Table, tasks []table.FileScanTask) (WriterOptions, error) {
	if err := o.Validate(); err != nil {
		return WriterOptions{}, fmt.Errorf("writer options: %w", err)
	}
	tasks = CollapseTasks(tasks)
	if len(tasks) == 0 {
		return WriterOptions{}, errors.New("writer options: no tasks")
	}
	spec, partition, _, err := groupPartition(tbl, tasks)
	if err != nil {
		return WriterOptions{}, fmt.Errorf("writer options: %w", err)
	}
	if cur := tbl.Spec(); spec.ID() != cur.ID() {
		return WriterOptions{}, fmt.Errorf("writer options: files of spec %d are written into the current spec %d row by row", spec.ID(), cur.ID())
	}
	par := cmp.Or(o.Parallelism, runtime.GOMAXPROCS(0))
	var alloc memory.Allocator
	if o.Allocator != nil {
		alloc = o.Allocator
	}
	return groupWriterOptions(tbl, tasks, o, partition, par, alloc), nil
}

// produce reads the tasks, sorts them when sorter is set, and sends the
// batches to out. With coder set, the sort reads the coder's batches.
func produce(ctx context.Context, rd *groupReader, sorter *Sorter, coder *inputCoder, out chan<- *pickBatch) error {
	schema, records, err := rd.read(ctx)
	if err != nil {
		return err
	}
	records = digesting(records, &rd.in)
	if coder != nil {
		var stop func()
		schema, records, stop = coder.code(schema, records)
		defer stop()
	}
	stream := func(yield func(*pickBatch, error) bool) {
		for rec, err := range records {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(wholeBatch(rec.Schema(), rec), nil) {
				return
			}
		}
	}
	if sorter != nil {
		stream = sorter.sortRows(ctx, schema, records)
	}
	for p, err := range stream {
		if err != nil {
			return err
		}
		select {
		case out <- p:
		case <-ctx.Done():
			p.release()
			return context.Cause(ctx)
		}
	}
	return nil
}

// groupReader reads the tasks of one group in order, chunk files at a time,
// and checks the rows of every chunk against its manifest entries.
//
// A call per chunk: iceberg-go's ReadTasks keeps what it prepared for every
// task it has read (the Parquet reader with its parsed footer) until its
// whole iterator is done: 32 MB for the first few hundred of 1,600 small
// files in a heap profile of the benchmark, growing with the file count
// while the memory budget stays put. A call per chunk lets each chunk's
// readers go when the chunk is read.
//
// Rows are checked per chunk, not per file: ReadTasks returns the batches in
// task order but says neither which task a batch came from nor where one
// task's batches end (empty batches are dropped), so the rows of one file
// cannot be told from its neighbours' without a call per file, which would
// cost the scan its parallel decoding and read a shared delete file once per
// data file. When a chunk's rows or its read fail, its files are read again
// alone (see attribute) to name the culprit.
type groupReader struct {
	scan      *table.Scan
	tasks     []table.FileScanTask
	chunk     int
	partition string // partition path of the group; "" when unpartitioned
	meter     *groupMeter

	// files, when set, reads the files it takes itself (see
	// parquetFiles); nil: iceberg-go's scan reads every file.
	files *parquetFiles

	// rows is the live rows read from the chunks that passed the check,
	// filesRead the number of their files. Atomic: the sorter may iterate
	// on a goroutine of its own.
	rows, filesRead atomic.Int64

	// in digests every live row read, as the read yields it (see
	// verifyContent). Only the producer adds to it; it is read once the
	// producer is done.
	in rowsum.Digest
}

// read returns the schema of the scan and the batches of every task.
func (g *groupReader) read(ctx context.Context) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	if g.files != nil {
		return g.readFiles(ctx)
	}
	first := g.tasks[:min(g.chunk, len(g.tasks))]
	schema, records, err := g.scan.ReadTasks(ctx, first)
	if err != nil {
		return nil, nil, g.readError(ctx, first, err)
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for lo := 0; lo < len(g.tasks); lo += g.chunk {
			part := g.tasks[lo:min(lo+g.chunk, len(g.tasks))]
			if lo > 0 {
				var err error
				if _, records, err = g.scan.ReadTasks(ctx, part); err != nil {
					yield(nil, g.readError(ctx, part, err))
					return
				}
			}
			if !g.readChunk(ctx, part, records, yield) {
				return
			}
		}
	}
	return schema, seq, nil
}

// readFiles is read when the group has parquetFiles: the files it takes
// are read by it, one at a time, and each run of the others (up to chunk
// files) by iceberg-go's scan.
func (g *groupReader) readFiles(ctx context.Context) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for i := 0; i < len(g.tasks); {
			t := g.tasks[i]
			if g.files.takes(t) {
				n, handled, stopped, err := g.files.read(ctx, t, func(rec arrow.RecordBatch) bool {
					g.meter.add(rec.NumRows(), 0)
					return yield(rec, nil)
				})
				switch {
				case stopped:
					return
				case err != nil:
					if ctx.Err() == nil {
						err = fmt.Errorf("read %s: %w", g.describe(t.File), err)
					}
					yield(nil, err)
					return
				case handled:
					if err := g.checkChunk(ctx, g.tasks[i:i+1], n); err != nil {
						yield(nil, err)
						return
					}
					g.rows.Add(n)
					g.files.done++
					g.filesRead.Add(1)
					i++
					continue
				}
			}
			// iceberg-go's: this file, and those after it that files
			// does not take, up to a chunk.
			j := i + 1
			for j < len(g.tasks) && j-i < g.chunk && !g.files.takes(g.tasks[j]) {
				j++
			}
			part := g.tasks[i:j]
			_, records, err := g.scan.ReadTasks(ctx, part)
			if err != nil {
				yield(nil, g.readError(ctx, part, err))
				return
			}
			if !g.readChunk(ctx, part, records, yield) {
				return
			}
			i = j
		}
	}
	return g.files.schema, seq, nil
}

// readChunk yields the batches of records, iceberg-go's read of part, and
// checks part's rows; false when it stopped (yield asked to, or an error
// was yielded).
func (g *groupReader) readChunk(ctx context.Context, part []table.FileScanTask, records iter.Seq2[arrow.RecordBatch, error], yield func(arrow.RecordBatch, error) bool) bool {
	var (
		n    int64
		rerr error
	)
	for rec, err := range records {
		if err != nil {
			rerr = err
			break // let the chunk's scan go before reading its files again
		}
		n += rec.NumRows()
		g.meter.add(rec.NumRows(), 0)
		if !yield(rec, nil) {
			return false
		}
	}
	if rerr != nil {
		yield(nil, g.readError(ctx, part, rerr))
		return false
	}
	if err := g.checkChunk(ctx, part, n); err != nil {
		yield(nil, err)
		return false
	}
	g.rows.Add(n)
	g.filesRead.Add(int64(len(part)))
	return true
}

// checkChunk checks that n, the live rows read from part, is within what
// part's manifest entries allow.
func (g *groupReader) checkChunk(ctx context.Context, part []table.FileScanTask, n int64) error {
	b := liveRowBounds(part)
	if b.allows(n) {
		return nil
	}
	if len(part) == 1 {
		return fmt.Errorf("%s: %s: %w", g.describe(part[0].File), b.mismatch(n), ErrInputMismatch)
	}
	if err := g.attribute(ctx, part); err != nil {
		return err
	}
	// Every file alone is within its own bounds, the chunk is not: a
	// position delete file shared by several inputs removed fewer rows than
	// its record_count allows for all of them together, or a file reads
	// differently each time.
	return fmt.Errorf("%s: %s: %w", g.describeChunk(part), b.mismatch(n), ErrInputMismatch)
}

// readError names the input at fault in err, an error of reading part. A
// cancelled read is returned as it is: its cause is elsewhere.
func (g *groupReader) readError(ctx context.Context, part []table.FileScanTask, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if len(part) == 1 {
		return fmt.Errorf("read %s: %w", g.describe(part[0].File), err)
	}
	if aerr := g.attribute(ctx, part); aerr != nil {
		return aerr
	}
	return fmt.Errorf("read %s (each read alone succeeded): %w", g.describeChunk(part), err)
}

// attribute reads each file of part on its own and reports every one that
// fails to read or whose live rows are outside its own bounds. Nil when
// each reads alone as its manifest entry says.
func (g *groupReader) attribute(ctx context.Context, part []table.FileScanTask) error {
	var errs []error
	for _, t := range part {
		n, err := g.count(ctx, t)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read %s: %w", g.describe(t.File), err))
			continue
		}
		if b := liveRowBounds([]table.FileScanTask{t}); !b.allows(n) {
			errs = append(errs, fmt.Errorf("%s: %s: %w", g.describe(t.File), b.mismatch(n), ErrInputMismatch))
		}
	}
	return errors.Join(errs...)
}

// count reads the live rows of t alone.
func (g *groupReader) count(ctx context.Context, t table.FileScanTask) (int64, error) {
	_, records, err := g.scan.ReadTasks(ctx, []table.FileScanTask{t})
	if err != nil {
		return 0, err
	}
	var n int64
	for rec, err := range records {
		if err != nil {
			return n, err
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}

// checkWritten checks, once the output is closed, that every input was read
// and checked and that the rows written equal the rows read.
func (g *groupReader) checkWritten(written int64) error {
	if files := g.filesRead.Load(); files != int64(len(g.tasks)) {
		return fmt.Errorf("read %d of %d input files: %w", files, len(g.tasks), ErrInvariant)
	}
	if read := g.rows.Load(); written != read {
		return fmt.Errorf("wrote %d rows, read %d: %w", written, read, ErrInvariant)
	}
	return nil
}

func (g *groupReader) describe(f iceberg.DataFile) string {
	if g.partition == "" {
		return "data file " + f.FilePath()
	}
	return fmt.Sprintf("data file %s (partition %s)", f.FilePath(), g.partition)
}

func (g *groupReader) describeChunk(part []table.FileScanTask) string {
	s := fmt.Sprintf("%d data files %s to %s", len(part), part[0].File.FilePath(), part[len(part)-1].File.FilePath())
	if g.partition != "" {
		s += " (partition " + g.partition + ")"
	}
	return s
}

// rowBounds are the least and most live rows a set of input files may
// yield according to their manifest entries.
type rowBounds struct {
	lo, hi int64
}

// liveRowBounds returns the bounds of the live rows of tasks:
//
//   - at most the sum of the files' record_count;
//   - at least that sum, less the record_count of every distinct position
//     delete file and deletion vector applying to them (the most rows they
//     can remove), for the files no equality delete applies to. A file an
//     equality delete applies to may lose any number of rows, so it adds
//     nothing to the lower bound.
//
// So files without deletes must yield exactly their record_count, and
// files whose deletes are all their own (deletion vectors, or position
// delete files naming only files among tasks, without duplicate positions)
// exactly their record_count less the deletes'. A position delete file that
// also names files outside tasks, or repeats a position, loosens the lower
// bound by the entries that remove no row of tasks.
func liveRowBounds(tasks []table.FileScanTask) rowBounds {
	var (
		b   rowBounds
		pos map[string]int64
	)
	for _, t := range tasks {
		n := t.File.Count()
		b.hi += n
		if len(t.EqualityDeleteFiles) > 0 {
			continue
		}
		b.lo += n
		for _, d := range t.DeleteFiles {
			if pos == nil {
				pos = make(map[string]int64)
			}
			pos[d.FilePath()] = d.Count()
		}
		for _, dv := range t.DeletionVectorFiles {
			b.lo -= dv.Count() // one data file per vector: never shared
		}
	}
	for _, n := range pos {
		b.lo -= n
	}
	b.lo = max(b.lo, 0)
	return b
}

func (b rowBounds) allows(n int64) bool { return b.lo <= n && n <= b.hi }

func (b rowBounds) mismatch(n int64) string {
	if b.lo == b.hi {
		return fmt.Sprintf("read %d rows, manifest record_count is %d", n, b.hi)
	}
	return fmt.Sprintf("read %d rows, manifest record_count %d less its deletes allows %d to %d", n, b.hi, b.lo, b.hi)
}

// GroupResult is the outcome of one group in [RewriteGroups].
type GroupResult struct {
	Files []iceberg.DataFile
	Stats GroupStats
	Err   error
}

// Share is how [RewriteGroups] runs n groups: workers of them at once (up
// to o.Parallelism, at least one), each with per: an equal share of
// MemoryBytes (at least 1 MiB), GOMAXPROCS/workers for its own
// parallelism, and no Allocator (each group tracks its own).
func (o GroupOptions) Share(n int) (per GroupOptions, workers int) {
	workers = max(min(cmp.Or(o.Parallelism, runtime.GOMAXPROCS(0)), n), 1)
	per = o
	per.Allocator = nil
	if o.MemoryBytes > 0 {
		per.MemoryBytes = max(o.MemoryBytes/int64(workers), 1<<20)
	}
	per.Parallelism = max(runtime.GOMAXPROCS(0)/workers, 1)
	return per, workers
}

// RewriteGroups rewrites several groups, up to opts.Parallelism at once, each
// with an equal share of opts.MemoryBytes. Every group succeeds or fails on
// its own, so the caller can commit the groups that succeeded (partial
// progress); results are in the order of groups.
func RewriteGroups(ctx context.Context, tbl *table.Table, groups [][]table.FileScanTask, opts GroupOptions) []GroupResult {
	out := make([]GroupResult, len(groups))
	if err := opts.Validate(); err != nil {
		for i := range out {
			out[i].Err = fmt.Errorf("rewrite groups: %w", err)
		}
		return out
	}
	per, par := opts.Share(len(groups))
	if per.Pages == nil {
		per.Pages = NewPagePool()
		defer func() { _ = per.Pages.Close() }() // as in RewriteGroup
	}
	// par workers take the groups in order; each lends its sort buffers
	// from one group to its next.
	var (
		g    errgroup.Group
		next atomic.Int64
	)
	for range par {
		g.Go(func() error {
			w := per
			w.Buffers = &RunBuffers{}
			defer w.Buffers.Release()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(groups) {
					return nil
				}
				files, st, err := RewriteGroup(ctx, tbl, groups[i], w)
				out[i] = GroupResult{Files: files, Stats: st, Err: err}
			}
		})
	}
	_ = g.Wait() // workers report through out, never through the group
	return out
}

// readWorkers is how many files a scan of files of at most maxFile bytes
// decodes at once under a budget of memory bytes (0: unbounded): par,
// unless a waiting decoded file (about 4x its Parquet size) each would not
// fit in what the budget leaves to the scan, then one.
func readWorkers(maxFile int64, par int, memory int64) int {
	if memory > 0 && 4*maxFile*int64(par) > memory/8 {
		return 1
	}
	return par
}

// groupPartition checks that every task reads a data file of one partition
// (spec and values), and returns the spec, the partition and the largest
// file size.
func groupPartition(tbl *table.Table, tasks []table.FileScanTask) (iceberg.PartitionSpec, map[int]any, int64, error) {
	first := tasks[0].File
	spec := tbl.Metadata().PartitionSpecByID(int(first.SpecID()))
	if spec == nil {
		return iceberg.PartitionSpec{}, nil, 0, fmt.Errorf("%s has partition spec %d, which the table does not have", first.FilePath(), first.SpecID())
	}
	var maxFile int64
	for _, t := range tasks {
		f := t.File
		maxFile = max(maxFile, f.FileSizeBytes())
		if f.ContentType() != iceberg.EntryContentData {
			return iceberg.PartitionSpec{}, nil, 0, fmt.Errorf("%s is not a data file", f.FilePath())
		}
		if f.SpecID() != first.SpecID() {
			return iceberg.PartitionSpec{}, nil, 0, fmt.Errorf("group spans partition specs: %s is of spec %d, %s of spec %d", first.FilePath(), first.SpecID(), f.FilePath(), f.SpecID())
		}
		if !reflect.DeepEqual(normPartition(f.Partition()), normPartition(first.Partition())) {
			return iceberg.PartitionSpec{}, nil, 0, fmt.Errorf("group spans partitions: %s is in %v, %s in %v", first.FilePath(), first.Partition(), f.FilePath(), f.Partition())
		}
	}
	return *spec, normPartition(first.Partition()), maxFile, nil
}

func normPartition(p map[int]any) map[int]any {
	if len(p) == 0 {
		return nil
	}
	return p
}

// groupMeter turns the rows a group has read and written into the input
// bytes they stand for, for [GroupOptions.Progress].
type groupMeter struct {
	fn            func(int64)
	bytes         int64
	rows          int64 // record count of the inputs, deletes not applied
	read, written atomic.Int64

	mu   sync.Mutex
	last int64
}

// newGroupMeter returns nil (a meter that does nothing) when fn is nil.
func newGroupMeter(fn func(int64), tasks []table.FileScanTask, bytes int64) *groupMeter {
	if fn == nil {
		return nil
	}
	m := &groupMeter{fn: fn, bytes: bytes}
	for _, t := range tasks {
		m.rows += t.File.Count()
	}
	return m
}

// restart forgets the rows read and written, for a group read again from
// the start: fn is called again only once the new read passes the work
// already reported.
func (m *groupMeter) restart() {
	if m == nil {
		return
	}
	m.read.Store(0)
	m.written.Store(0)
}

// add counts rows read and written. The sorter may read on a goroutine of
// its own while this one writes: the counters are atomic and the calls of
// fn serialized.
func (m *groupMeter) add(read, written int64) {
	if m == nil || m.rows <= 0 {
		return
	}
	r, w := m.read.Add(read), m.written.Add(written)
	done := int64(float64(m.bytes) * min(1, float64(r+w)/float64(2*m.rows)))
	m.mu.Lock()
	defer m.mu.Unlock()
	if done > m.last {
		m.last = done
		m.fn(done)
	}
}
