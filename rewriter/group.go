package rewriter

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"reflect"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
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
	// the more files it had read. Default: DefaultScanChunkFiles.
	ScanChunkFiles int
	// Allocator receives every Arrow allocation of the group. Default: a
	// fresh [TrackingAllocator] per group, whose peak is reported in
	// [GroupStats].
	Allocator *TrackingAllocator
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
	if o.MemoryBytes > 0 && o.MemoryBytes < 1<<20 {
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
	// Rows is the number of live rows read (deletes applied) and written.
	Rows int64
	// OutputFiles and OutputBytes describe the files written.
	OutputFiles int
	OutputBytes int64
	// Sort describes the external sort (zero for bin-pack).
	Sort SortStats
	// Writer describes the Parquet output.
	Writer WriterStats
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

// RewriteGroup reads the data files of tasks (one partition of tbl's current
// spec), with their position deletes, equality deletes and deletion vectors
// applied by iceberg-go's scan, orders the rows by opts.Keyer with an external
// merge sort bounded by opts.MemoryBytes, and writes them to new data files of
// about opts.TargetFileSizeBytes. It returns the new files without
// committing them; the caller replaces the input files (every distinct
// task.File) and the delete files that applied only to them with these in
// one rewrite snapshot. On error the files written so far are removed.
//
// Within the group the new files are globally ordered: file i's last key is
// at most file i+1's first key, in the order returned.
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
	partition, maxFile, err := groupPartition(tbl, tasks)
	if err != nil {
		return nil, stats, fmt.Errorf("rewrite group: %w", err)
	}
	for _, t := range tasks {
		stats.InputBytes += t.File.FileSizeBytes()
	}

	alloc := opts.Allocator
	if alloc == nil {
		alloc = NewTrackingAllocator(nil)
	}
	par := opts.Parallelism
	if par == 0 {
		par = runtime.GOMAXPROCS(0)
	}
	scanWorkers := par
	if opts.MemoryBytes > 0 && 4*maxFile*int64(par) > opts.MemoryBytes/8 {
		// A waiting decoded file (about 4x its Parquet size) must fit in
		// what the budget leaves to the scan.
		scanWorkers = 1
	}
	batchRows := opts.ScanBatchRows
	if batchRows == 0 {
		batchRows = DefaultScanBatchRows
	}
	chunk := opts.ScanChunkFiles
	if chunk == 0 {
		chunk = DefaultScanChunkFiles
	}

	var sorter *Sorter
	if opts.Keyer != nil {
		sorter, err = NewSorter(opts.Keyer, SortOptions{
			MemoryBytes: opts.MemoryBytes * 3 / 4,
			TempDir:     opts.TempDir,
			BatchRows:   batchRows,
			Parallelism: par,
			Allocator:   alloc,
		})
		if err != nil {
			return nil, stats, fmt.Errorf("rewrite group: %w", err)
		}
	}
	w, err := NewWriter(ctx, tbl, WriterOptions{
		TargetFileSizeBytes: opts.TargetFileSizeBytes,
		MemoryBytes:         opts.MemoryBytes / 8,
		PartitionValues:     partition,
		SortOrderID:         opts.SortOrderID,
		NameTag:             opts.NameTag,
		Parallelism:         par,
		Allocator:           alloc,
	})
	if err != nil {
		return nil, stats, fmt.Errorf("rewrite group: %w", err)
	}

	scan := tbl.Scan(table.WithMaxConcurrency(scanWorkers), table.WithArrowBatchSize(batchRows))
	defer scan.Close()

	// The scan and the sort run on a producer goroutine; this goroutine
	// encodes. On a write error the producer is cancelled and the queue
	// drained, so no batch is left unreleased.
	batches := make(chan arrow.RecordBatch, writerQueue)
	pctx, cancel := context.WithCancelCause(compute.WithAllocator(ctx, alloc))
	defer cancel(nil)
	perrc := make(chan error, 1)
	go func() {
		defer close(batches)
		perrc <- produce(pctx, scan, tasks, chunk, sorter, batches)
	}()
	var werr error
	for rec := range batches {
		if werr == nil {
			if werr = w.Write(pctx, rec); werr != nil {
				cancel(werr)
			}
		}
		rec.Release()
	}
	err = werr
	if perr := <-perrc; err == nil {
		err = perr
	}
	var files []iceberg.DataFile
	if err == nil {
		files, err = w.Close()
	}
	if sorter != nil {
		stats.Sort = sorter.Stats()
	}
	stats.Writer = w.Stats()
	stats.PeakArrowBytes = alloc.PeakBytes()
	stats.Duration = time.Since(start)
	if err != nil {
		return nil, stats, errors.Join(fmt.Errorf("rewrite group of %d files: %w", len(tasks), err), w.Abort())
	}
	stats.Rows = stats.Writer.Rows
	stats.OutputFiles = len(files)
	stats.OutputBytes = stats.Writer.Bytes
	return files, stats, nil
}

// produce reads the tasks, sorts them when sorter is set, and sends the
// batches to out.
func produce(ctx context.Context, scan *table.Scan, tasks []table.FileScanTask, chunk int, sorter *Sorter, out chan<- arrow.RecordBatch) error {
	schema, records, err := readTasks(ctx, scan, tasks, chunk)
	if err != nil {
		return err
	}
	var stream iter.Seq2[arrow.RecordBatch, error] = records
	if sorter != nil {
		stream = sorter.Sort(ctx, schema, records)
	}
	for rec, err := range stream {
		if err != nil {
			return err
		}
		select {
		case out <- rec:
		case <-ctx.Done():
			rec.Release()
			return context.Cause(ctx)
		}
	}
	return nil
}

// readTasks reads tasks in order, chunk files at a time. iceberg-go's
// ReadTasks keeps what it prepared for every task it has read (the Parquet
// reader with its parsed footer) until its whole iterator is done: 32 MB for
// the first few hundred of 1,600 small files in a heap profile of the
// benchmark, growing with the file count while the memory budget stays put.
// A call per chunk lets each chunk's readers go when the chunk is read.
func readTasks(ctx context.Context, scan *table.Scan, tasks []table.FileScanTask, chunk int) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	first := tasks[:min(chunk, len(tasks))]
	schema, records, err := scan.ReadTasks(ctx, first)
	if err != nil {
		return nil, nil, fmt.Errorf("read %d data files: %w", len(first), err)
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for lo := 0; lo < len(tasks); lo += chunk {
			part := tasks[lo:min(lo+chunk, len(tasks))]
			if lo > 0 {
				var err error
				if _, records, err = scan.ReadTasks(ctx, part); err != nil {
					yield(nil, fmt.Errorf("read %d data files: %w", len(part), err))
					return
				}
			}
			for rec, err := range records {
				if !yield(rec, err) {
					return
				}
				if err != nil {
					return
				}
			}
		}
	}
	return schema, seq, nil
}

// GroupResult is the outcome of one group in [RewriteGroups].
type GroupResult struct {
	Files []iceberg.DataFile
	Stats GroupStats
	Err   error
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
	par := opts.Parallelism
	if par == 0 {
		par = runtime.GOMAXPROCS(0)
	}
	par = max(min(par, len(groups)), 1)
	per := opts
	per.Allocator = nil
	if opts.MemoryBytes > 0 {
		per.MemoryBytes = max(opts.MemoryBytes/int64(par), 1<<20)
	}
	per.Parallelism = max(runtime.GOMAXPROCS(0)/par, 1)
	var g errgroup.Group
	g.SetLimit(par)
	for i, tasks := range groups {
		g.Go(func() error {
			files, st, err := RewriteGroup(ctx, tbl, tasks, per)
			out[i] = GroupResult{Files: files, Stats: st, Err: err}
			return nil
		})
	}
	_ = g.Wait() // goroutines report through out, never through the group
	return out
}

// groupPartition checks that every task reads a data file of the current
// spec and of one partition, and returns that partition and the largest file
// size.
func groupPartition(tbl *table.Table, tasks []table.FileScanTask) (map[int]any, int64, error) {
	spec := tbl.Spec()
	first := tasks[0].File
	var maxFile int64
	for _, t := range tasks {
		f := t.File
		maxFile = max(maxFile, f.FileSizeBytes())
		if f.ContentType() != iceberg.EntryContentData {
			return nil, 0, fmt.Errorf("%s is not a data file", f.FilePath())
		}
		if int(f.SpecID()) != spec.ID() {
			return nil, 0, fmt.Errorf("%s has partition spec %d, not the current spec %d: rewriting across spec changes is not supported", f.FilePath(), f.SpecID(), spec.ID())
		}
		if !reflect.DeepEqual(normPartition(f.Partition()), normPartition(first.Partition())) {
			return nil, 0, fmt.Errorf("group spans partitions: %s is in %v, %s in %v", first.FilePath(), first.Partition(), f.FilePath(), f.Partition())
		}
	}
	return normPartition(first.Partition()), maxFile, nil
}

func normPartition(p map[int]any) map[int]any {
	if len(p) == 0 {
		return nil
	}
	return p
}
