package rewrite

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/rewriter"
)

// runFloor is the Parquet floor of a floe job: the same input files read
// with arrow-go's Parquet reader (pqarrow, columns decoded in parallel,
// rewriter.DefaultScanBatchRows rows a batch) and their rows written in
// file order, unsorted, through floe's own rewriter.Writer with the options
// rewriter.RewriteGroup gives it for the same group
// (rewriter.GroupOptions.WriterOptions): the same codec and level, the same
// row-group sizes and file cuts, the same dictionary rule. Partitions are
// spread over workers as rewriter.RewriteGroups spreads them
// (rewriter.GroupOptions.Share), each group's Arrow memory tracked over one
// rewriter.PagePool as floe's is. What it leaves out is what a layout
// rewrite adds: layout keys, the sort and its spills, the gathers into key
// order, dictionary codes carried from the scan, and the content check. It
// is what floe cannot go below without changing the bytes it writes.
//
// It differs from floe's work in one place that favours floe: floe carries
// low-cardinality strings from the scan to the writer as dictionary codes
// (see the rewriter's package documentation), so its writer takes each
// row's dictionary entry by a slice lookup, where the floor's writer hashes
// each value into the dictionary. The phase split shows that cost under
// encode.
func runFloor(ctx context.Context, job Job) (res JobResult, err error) {
	tbl, err := loadTable(ctx, job.Warehouse)
	if err != nil {
		return res, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return res, fmt.Errorf("plan files: %w", err)
	}
	stop, err := startTimedPart(job)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	groups, parts := partitionGroups(tasks)
	pages := rewriter.NewPagePool()
	per, workers := rewriter.GroupOptions{
		TargetFileSizeBytes: job.TargetFileSizeBytes,
		MemoryBytes:         job.MemoryBytes,
		Pages:               pages,
	}.Share(len(groups))
	type groupOut struct {
		files []iceberg.DataFile
		rows  int64
		peak  int64
	}
	out := make([]groupOut, len(groups))
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range groups {
		g.Go(func() error {
			files, rows, peak, err := floorGroup(ctx, tbl, groups[i], per)
			out[i] = groupOut{files: files, rows: rows, peak: peak}
			if err != nil {
				return fmt.Errorf("group %s: %w", parts[i], err)
			}
			return nil
		})
	}
	gerr := g.Wait()
	res.PeakPoolBytes = pages.PeakMappedBytes()
	if err := errors.Join(gerr, pages.Close()); err != nil {
		for _, o := range out {
			for _, f := range o.files {
				err = errors.Join(err, os.Remove(localPath(f.FilePath())))
			}
		}
		return res, err
	}
	for i, o := range out {
		jg := JobGroup{Partition: parts[i]}
		for _, t := range groups[i] {
			jg.Inputs = append(jg.Inputs, localPath(t.File.FilePath()))
		}
		for _, f := range o.files {
			res.Files = append(res.Files, localPath(f.FilePath()))
			res.FileRows = append(res.FileRows, f.Count())
			jg.FileRows = append(jg.FileRows, f.Count())
		}
		res.Groups = append(res.Groups, jg)
		res.Rows += o.rows
		res.PeakArrowBytes += o.peak // groups run at once, as floe's
	}
	return res, nil
}

// floorGroup writes the rows of tasks' files, in order, through a
// rewriter.Writer with the options floe's rewrite of the group would use,
// and checks that it wrote as many rows as the files' manifests count.
func floorGroup(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, opts rewriter.GroupOptions) (files []iceberg.DataFile, rows, peak int64, err error) {
	alloc := rewriter.NewTrackingAllocator(opts.Pages)
	opts.Allocator = alloc
	wopts, err := opts.WriterOptions(tbl, tasks)
	if err != nil {
		return nil, 0, 0, err
	}
	w, err := rewriter.NewWriter(ctx, tbl, wopts)
	if err != nil {
		return nil, 0, 0, err
	}
	var want int64
	for _, t := range rewriter.CollapseTasks(tasks) {
		want += t.File.Count()
		n, err := floorFile(ctx, localPath(t.File.FilePath()), w, alloc, wopts.Parallelism > 1)
		rows += n
		if err != nil {
			return nil, rows, alloc.PeakBytes(), errors.Join(err, w.Abort())
		}
	}
	files, err = w.Close()
	if err == nil && (rows != want || w.Stats().Rows != want) {
		err = fmt.Errorf("floor read %d rows and wrote %d, the manifests count %d", rows, w.Stats().Rows, want)
	}
	if err != nil {
		return nil, rows, alloc.PeakBytes(), errors.Join(err, w.Abort())
	}
	return files, rows, alloc.PeakBytes(), nil
}

// floorFile reads one Parquet file with pqarrow into w and returns its
// rows. Its columns must be the writer's, by name and type, so that the
// floor measures no conversion floe's read does not make either.
func floorFile(ctx context.Context, path string, w *rewriter.Writer, alloc *rewriter.TrackingAllocator, parallel bool) (rows int64, err error) {
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(alloc)))
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, pf.Close()) }()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{Parallel: parallel, BatchSize: rewriter.DefaultScanBatchRows}, alloc)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer rr.Release()
	if !sameNamesAndTypes(rr.Schema(), w.Schema()) {
		return 0, fmt.Errorf("%s has columns %s, the writer takes %s", path, rr.Schema(), w.Schema())
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		if err := w.Write(ctx, rec); err != nil {
			return rows, err
		}
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return rows, fmt.Errorf("read %s: %w", path, err)
	}
	return rows, nil
}

func sameNamesAndTypes(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i, f := range b.Fields() {
		if g := a.Field(i); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return false
		}
	}
	return true
}
