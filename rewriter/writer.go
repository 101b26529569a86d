package rewriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-project/floe/internal/pqdict"
	"github.com/floe-project/floe/layout"
)

// Table properties the writer reads that iceberg-go does not export.
const (
	propDictEnabled       = "parquet.enable.dictionary"
	propDictColumnEnabled = "write.parquet.dict-encoding-enabled.column."
)

// Defaults of [WriterOptions].
const (
	// DefaultRowGroupsPerFile is how many row groups a file is cut into when
	// RowGroupBytes is not set: the rollover decision is made at row-group
	// boundaries, so files land within about half a row group of the target.
	DefaultRowGroupsPerFile = 8
	// DefaultDictionaryMaxDistinctRatio enables dictionary encoding for a
	// column whose sampled distinct/non-null ratio is at most this.
	DefaultDictionaryMaxDistinctRatio = pqdict.DefaultMaxRatio
)

// WriterOptions tunes [Writer]. The zero value writes unpartitioned,
// unsorted files of the table's target size.
type WriterOptions struct {
	// TargetFileSizeBytes is the size files are rolled over at. Default: the
	// table's write.target-file-size-bytes (512 MiB unless set).
	TargetFileSizeBytes int64
	// RowGroupBytes is the encoded size of each row group. Default:
	// TargetFileSizeBytes / DefaultRowGroupsPerFile, lowered to MemoryBytes
	// when that is smaller. Every row group repeats each column's dictionary
	// and page headers: at small targets (a 160 KiB file cut into eighths)
	// that made files about 15% larger than the same rows in one row group.
	RowGroupBytes int64
	// MemoryBytes caps the writer's buffered row group (a Parquet row group is
	// held in memory, encoded, until it is flushed, with 4 bytes a row for
	// each dictionary-encoded column). Zero: no cap.
	MemoryBytes int64
	// PartitionValues maps partition field id to the partition value of every
	// row written (the group's partition, in the table's current spec). Nil
	// for unpartitioned tables.
	PartitionValues map[int]any
	// ExpectedRows, when positive, is about how many rows the writer will be
	// given in all (a compaction group's records). With it a file at the
	// target takes the rest too, rather than leaving them a small file of
	// their own, when the rest would keep it within layout.TailAllowance
	// over the target (Iceberg's rule; the simulator projects the same, see
	// layout.FilesFor). Zero: every file is closed at the target.
	ExpectedRows int64
	// SortOrderID, when set, is recorded as each file's sort_order_id. Set it
	// only when the rows are written ordered by that Iceberg sort order.
	SortOrderID *int
	// DictionaryMaxDistinctRatio decides dictionary encoding per column from
	// the first batch written: on when distinct/non-null values is at most
	// this. Table properties parquet.enable.dictionary and
	// write.parquet.dict-encoding-enabled.column.<name> override it. Default:
	// DefaultDictionaryMaxDistinctRatio; negative disables dictionaries.
	DictionaryMaxDistinctRatio float64
	// Parallelism is how many columns of a batch are encoded at once (files
	// with nested columns are encoded one column at a time). Default:
	// runtime.GOMAXPROCS(0).
	Parallelism int
	// Allocator receives the writer's Arrow allocations. Default:
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// WriteUUID names the files of this write. Default: a random UUID.
	WriteUUID uuid.UUID
	// NameTag, when set, ends each file name before ".parquet" (as
	// "-<tag>"), so that a file can be recognised from its path alone, as
	// [LayoutTag] makes a layout recognisable after the snapshot that added
	// the file has been expired. Letters, digits and '-' only.
	NameTag string
	// RunID, when set, names the run writing the files: each name carries
	// "-run-<RunID>" before the NameTag, so that [RunOfFile] tells which
	// floe run left a file that no commit took. A run id with characters
	// other than letters, digits and '-', or longer than 64, is left out of
	// the names.
	RunID string
	// RowLineage writes the row-lineage columns, _row_id and
	// _last_updated_sequence_number, after the table's columns, as columns
	// of the files with the spec's reserved field ids: batches must carry
	// them there, as iceberg-go's scan gives them with
	// table.WithRowLineage. Only for tables of format version 3 or later;
	// [RewriteGroup] sets it on those, so that every row keeps its lineage
	// (see "Row lineage" in the package documentation). Without it a
	// writer to a v3 table writes new rows, whose lineage readers inherit
	// from the new files.
	RowLineage bool
}

// Validate reports every invalid field at once.
func (o WriterOptions) Validate() error {
	var errs []error
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("target file size must be >= 0, got %d", o.TargetFileSizeBytes))
	}
	if o.RowGroupBytes < 0 {
		errs = append(errs, fmt.Errorf("row group bytes must be >= 0, got %d", o.RowGroupBytes))
	}
	if o.MemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("memory bytes must be >= 0, got %d", o.MemoryBytes))
	}
	if o.SortOrderID != nil && *o.SortOrderID < 0 {
		errs = append(errs, fmt.Errorf("sort order id must be >= 0, got %d", *o.SortOrderID))
	}
	if o.Parallelism < 0 {
		errs = append(errs, fmt.Errorf("parallelism must be >= 0, got %d", o.Parallelism))
	}
	if strings.TrimFunc(o.NameTag, func(r rune) bool {
		return r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
	}) != "" {
		errs = append(errs, fmt.Errorf("name tag %q: only letters, digits and '-' are allowed", o.NameTag))
	}
	return errors.Join(errs...)
}

// WriterStats describes what a [Writer] wrote.
type WriterStats struct {
	// Files, Rows and Bytes count the data files written.
	Files int
	Rows  int64
	Bytes int64
	// RowGroups counts Parquet row groups over all files.
	RowGroups int
	// DictionaryColumns lists the top-level columns written with dictionary
	// encoding.
	DictionaryColumns []string
}

// Writer writes record batches, in the order given, to Parquet data files of
// an Iceberg table, rolling over to a new file when the target size is
// reached. Files are named and placed like the table's own (its location
// provider, data/<partition path>/<name>.parquet), carry Iceberg field ids,
// and are described with full column statistics by iceberg-go's
// table.DataFileFromMetadata under the table's metrics configuration. Nothing
// is committed.
//
// Size control: the writer knows the exact bytes of every flushed row group
// and estimates the buffered one from the bytes per row measured so far; it
// sizes row groups to RowGroupBytes and closes a file at a row-group boundary
// once the flushed plus estimated bytes come within half a row group of the
// target. The writer [RewriteGroup] gives a tree's sorted rows ends its
// files at the tree's leaves instead, each leaf split into files of equal
// rows (see startLeaf and settleCap).
//
// A Writer is not safe for concurrent use.
type Writer struct {
	opts     WriterOptions
	fs       icebergio.WriteFileIO
	loc      table.LocationProvider
	partPath string
	// schema is the table's schema with Parquet-safe names (what
	// iceberg-go and Java Iceberg write to files); arrowSch is the table's
	// schema as batches carry it, with the column names as Iceberg allows
	// them ("order-id", "a.b"), and fileSch the same columns under the
	// names written to Parquet. Columns are matched by position, which is
	// by field id: the three schemas are one schema, renamed. tblSchema is
	// the table's schema itself. With RowLineage all four end with the
	// row-lineage columns.
	schema    *iceberg.Schema
	tblSchema *iceberg.Schema
	arrowSch  *arrow.Schema
	fileSch   *arrow.Schema
	spec      iceberg.PartitionSpec
	props     iceberg.Properties
	version   int
	base      []parquet.WriterProperty
	wprops    *parquet.WriterProperties
	rgLimit   int64
	target    int64
	rgBytes   int64

	files []iceberg.DataFile
	stats WriterStats
	count int

	// bytesPerRow is the measured encoded bytes per row (flushed row groups);
	// zero until the first flush.
	flushedRows  int64
	flushedBytes int64
	guessPerRow  float64
	// overheadPerRG is the footer and page-header bytes per row group beyond
	// the column chunks, measured on the last closed file; it matters for
	// small targets, where the footer is a noticeable share of the file.
	overheadPerRG float64

	cur *openFile
	// scratch is what the files' columns gather picked values into.
	scratch scratchPool

	// leafRows, when set, gives the rows of each leaf of a tree (the
	// sorter's count, complete once the first rows arrive): rows then come
	// in batches of one leaf each (pickBatch.leaf), and the writer closes
	// its file where a leaf ends and splits each leaf into files of equal
	// rows (see startLeaf). leaf is the leaf being written (-1 before the
	// first), leafLeft its rows not written yet.
	leafRows func() []int64
	leaf     int32
	leafLeft int64
	// inputPerRow is the bytes a row of the group held in its input files,
	// by which a leaf too small for files of its own is packed with its
	// neighbours (layout.LeafPacked); leafPacked says the leaf being
	// written is.
	inputPerRow float64
	leafPacked  bool

	// codes, when set (useCodes), are the columns that reach the writer
	// as dictionary codes; codedSch is arrowSch with those columns int32.
	codes    *columnCodes
	codedSch *arrow.Schema

	// cleanupFS is the file io files are removed through: opened without
	// the writer's cancellation, since an object store io keeps the context
	// it was opened with, and a cancelled run must still remove its files.
	cleanupFS func() (icebergio.IO, error)
	// reloadFS is the file io of the table reloaded from its catalog, for
	// a removal the store refused the credentials of.
	reloadFS func() (icebergio.IO, error)
}

type openFile struct {
	path    string
	out     icebergio.FileWriter
	counter *countingWriter
	pw      parquetFile
	rgRows  int64 // rows in the buffered row group
	rgQuota int64 // rows the buffered row group is allowed
	rows    int64
	rgs     int
	// leafRest, when positive, is the rows of the leaf being written that
	// were not written yet when the file opened: the file is one of the
	// files they are split into, and takes cap rows of them (see
	// Writer.settleCap; 0 until the bytes per row are measured). Zero
	// outside a tree.
	leafRest int64
	cap      int64
	// packed: the file holds small leaves of a tree, packed and cut at
	// the target size (layout.LeafPacked).
	packed bool
}

// NewWriter prepares a writer for tbl. It opens no file until the first
// non-empty batch.
func NewWriter(ctx context.Context, tbl *table.Table, opts WriterOptions) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("new writer: %w", err)
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Parallelism == 0 {
		opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	if opts.DictionaryMaxDistinctRatio == 0 {
		opts.DictionaryMaxDistinctRatio = DefaultDictionaryMaxDistinctRatio
	}
	if opts.WriteUUID == uuid.Nil {
		opts.WriteUUID = uuid.New()
	}
	props := tbl.Properties()
	if opts.TargetFileSizeBytes == 0 {
		opts.TargetFileSizeBytes = int64(props.GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	if opts.RowGroupBytes == 0 {
		opts.RowGroupBytes = max(opts.TargetFileSizeBytes/DefaultRowGroupsPerFile, 1)
		if opts.MemoryBytes > 0 {
			opts.RowGroupBytes = min(opts.RowGroupBytes, opts.MemoryBytes)
		}
	}
	if f := props.Get(table.WriteFormatDefaultKey, "parquet"); !strings.EqualFold(f, "parquet") {
		return nil, fmt.Errorf("new writer for %s: write format %q is not supported, only parquet", tbl.Location(), f)
	}

	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file io of %s: %w", tbl.Location(), err)
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("file io of %s cannot write files", tbl.Location())
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil, fmt.Errorf("location provider of %s: %w", tbl.Location(), err)
	}
	if opts.RowLineage && tbl.Metadata().Version() < minLineageVersion {
		return nil, fmt.Errorf("new writer for %s: row lineage needs format version %d, the table has %d", tbl.Location(), minLineageVersion, tbl.Metadata().Version())
	}
	tblSchema := lineageSchema(tbl.Schema(), opts.RowLineage)
	sch, err := iceberg.SanitizeColumnNames(tblSchema)
	if err != nil {
		return nil, fmt.Errorf("sanitize schema of %s: %w", tbl.Location(), err)
	}
	arrowSch, err := table.SchemaToArrowSchemaWithOptions(tblSchema, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: props})
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", tbl.Location(), err)
	}
	fileSch, err := table.SchemaToArrowSchemaWithOptions(sch, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: props})
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", tbl.Location(), err)
	}
	spec := tbl.Spec()
	partPath := ""
	if !spec.IsUnpartitioned() {
		for id := range opts.PartitionValues {
			if !specHasField(spec, id) {
				return nil, fmt.Errorf("new writer: partition field id %d is not in the current spec %d", id, spec.ID())
			}
		}
		partPath = spec.PartitionToPath(partitionRecord(spec, opts.PartitionValues), tbl.Schema())
	} else {
		// A spec of void fields only (a v1 table's removed fields) is
		// unpartitioned: its files carry nulls.
		for id, v := range opts.PartitionValues {
			if v != nil || !specHasField(spec, id) {
				return nil, errors.New("new writer: partition values given for an unpartitioned table")
			}
		}
	}
	base, rgLimit, err := parquetProps(props, fileNames(arrowSch, fileSch))
	if err != nil {
		return nil, fmt.Errorf("parquet properties of %s: %w", tbl.Location(), err)
	}
	base = append(base, parquet.WithAllocator(opts.Allocator))
	return &Writer{
		opts: opts,
		fs:   wfs,
		cleanupFS: sync.OnceValues(func() (icebergio.IO, error) {
			return tbl.FS(context.WithoutCancel(ctx))
		}),
		reloadFS: sync.OnceValues(func() (icebergio.IO, error) {
			return reloadedIO(context.WithoutCancel(ctx), tbl)
		}),
		loc:       loc,
		partPath:  partPath,
		schema:    sch,
		tblSchema: tblSchema,
		arrowSch:  arrowSch,
		fileSch:   fileSch,
		spec:      spec,
		props:     props,
		version:   tbl.Metadata().Version(),
		base:      base,
		rgLimit:   rgLimit,
		target:    opts.TargetFileSizeBytes,
		rgBytes:   opts.RowGroupBytes,
		scratch:   newScratchPool(opts.Parallelism),
		leaf:      -1,
	}, nil
}

// Schema is the Arrow schema, with Iceberg field ids, of the files written.
func (w *Writer) Schema() *arrow.Schema { return w.arrowSch }

// Write appends rec's rows. rec must have the table's columns; it is
// converted to the file schema when its Arrow schema differs. Write does not
// take ownership of rec.
func (w *Writer) Write(ctx context.Context, rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if w.codes != nil && sameColumns(rec.Schema(), w.codedSch) {
		rec = array.NewRecordBatch(w.codedSch, rec.Columns(), rec.NumRows())
		defer rec.Release()
		w.prepare(rec)
		return w.write(ctx, rec.NumRows(), func(pw parquetFile, off, n int64) error {
			part := rec.NewSlice(off, off+n)
			defer part.Release()
			return w.writeBuffered(pw, part)
		})
	}
	rec, err := w.conform(ctx, rec)
	if err != nil {
		return err
	}
	defer rec.Release()
	w.prepare(rec)
	return w.write(ctx, rec.NumRows(), func(pw parquetFile, off, n int64) error {
		part := rec.NewSlice(off, off+n)
		defer part.Release()
		return w.writeBuffered(pw, part)
	})
}

// prepare settles, from the first batch, the writer properties (which
// columns are dictionary-encoded) and the first estimate of bytes per row.
func (w *Writer) prepare(sample arrow.RecordBatch) {
	if w.wprops != nil {
		return
	}
	w.wprops = parquet.NewWriterProperties(append(w.base, w.dictionaryProps(sample)...)...)
	if w.guessPerRow == 0 {
		// Before anything is flushed, the Arrow size is the estimate;
		// encoding nearly always shrinks it, so early row groups err small.
		w.guessPerRow = max(float64(recordBytes(sample)+w.codedValueBytes(sample))/float64(sample.NumRows()), 1)
	}
}

// sampleRows is the rows of picked rows copied to settle the writer
// properties when they come first: the sorter's batch, which used to be the
// first batch written.
const sampleRows = DefaultBatchRows

// writeRows appends the rows of p, handing them to the encoder uncopied when
// the file is written column by column and their columns are the file's
// (see pickBatch); otherwise they are copied into a batch and written as
// one. It does not release p.
func (w *Writer) writeRows(ctx context.Context, p *pickBatch) error {
	if p.numRows() == 0 {
		return nil
	}
	if w.leafRows != nil {
		if err := w.startLeaf(p.leaf); err != nil {
			return err
		}
	}
	if rec, ok := p.contiguous(); ok {
		defer rec.Release()
		return w.Write(ctx, rec)
	}
	if !sameColumns(p.sch, w.fileSchema()) {
		rec, err := p.record(ctx, w.opts.Allocator, w.opts.Parallelism)
		if err != nil {
			return fmt.Errorf("copy sorted rows: %w", err)
		}
		defer rec.Release()
		return w.Write(ctx, rec)
	}
	if w.wprops == nil {
		head := p.slice(0, min(p.n, sampleRows))
		sample, err := head.record(ctx, w.opts.Allocator, w.opts.Parallelism)
		head.release()
		if err != nil {
			return fmt.Errorf("copy sorted rows: %w", err)
		}
		w.prepare(sample)
		sample.Release()
	}
	return w.write(ctx, p.numRows(), func(pw parquetFile, off, n int64) error {
		part := p.slice(int(off), int(n))
		defer part.release()
		if cf, ok := pw.(*columnFile); ok {
			return cf.WritePicked(part)
		}
		rec, err := part.record(ctx, w.opts.Allocator, w.opts.Parallelism)
		if err != nil {
			return fmt.Errorf("copy sorted rows: %w", err)
		}
		defer rec.Release()
		// Same columns (checked above); the file's schema carries the
		// field ids, and pqarrow wants it exactly.
		out := array.NewRecordBatch(w.fileSchema(), rec.Columns(), rec.NumRows())
		defer out.Release()
		return w.writeBuffered(pw, out)
	})
}

// fileSchema is the schema of the batches the open file takes: arrowSch,
// with the coded columns int32 when the writer takes codes.
func (w *Writer) fileSchema() *arrow.Schema {
	if w.codes != nil {
		return w.codedSch
	}
	return w.arrowSch
}

// writeBuffered appends rec, of fileSchema, to pw's buffered row group. A
// [columnFile] takes codes as they are, its columns by position; pqarrow's
// writer (nested schemas, which chooseCodes never codes) gets the values,
// under the names of the file (fileSch).
func (w *Writer) writeBuffered(pw parquetFile, rec arrow.RecordBatch) error {
	if _, ok := pw.(*columnFile); ok {
		return pw.WriteBuffered(rec)
	}
	if w.codes != nil {
		plain, err := w.codes.decode(w.opts.Allocator, rec)
		if err != nil {
			return err
		}
		defer plain.Release()
		rec = plain
	}
	out, err := renamed(rec, w.fileSch)
	if err != nil {
		return err
	}
	defer out.Release()
	return pw.WriteBuffered(out)
}

// write appends rows rows, handing each piece that fits the buffered row
// group to put, which writes rows [off, off+n) to the open file.
func (w *Writer) write(ctx context.Context, rows int64, put func(pw parquetFile, off, n int64) error) error {
	var off int64
	for off < rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.cur == nil {
			if err := w.open(); err != nil {
				return err
			}
		}
		f := w.cur
		if f.rgRows == f.rgQuota {
			if err := w.endRowGroup(); err != nil {
				return err
			}
			continue
		}
		n := min(rows-off, f.rgQuota-f.rgRows)
		if err := put(f.pw, off, n); err != nil {
			return fmt.Errorf("write parquet file %s: %w", f.path, err)
		}
		f.rgRows += n
		f.rows += n
		off += n
		if w.leaf >= 0 {
			w.leafLeft -= n
		}
	}
	return nil
}

// startLeaf is called before rows of leaf are written, in a tree's
// writer (leafRows set): when they begin a new leaf, the open file is
// closed, so that no file holds rows of two leaves, and the leaf's rows
// are counted down from the sorter's count as files take them.
func (w *Writer) startLeaf(leaf int32) error {
	if leaf < 0 {
		return fmt.Errorf("%w: rows of no known leaf reached a tree's writer", ErrInvariant)
	}
	if leaf == w.leaf {
		return nil
	}
	if leaf < w.leaf {
		return fmt.Errorf("%w: rows of leaf %d came after leaf %d", ErrInvariant, leaf, w.leaf)
	}
	counts := w.leafRows()
	if int(leaf) >= len(counts) || counts[leaf] <= 0 {
		return fmt.Errorf("%w: rows of leaf %d, which the sort counted no rows in", ErrInvariant, leaf)
	}
	if w.leaf >= 0 && w.leafLeft != 0 {
		return fmt.Errorf("%w: leaf %d ended with %d of the rows the sort counted in it not written", ErrInvariant, w.leaf, w.leafLeft)
	}
	packed := w.inputPerRow > 0 && layout.LeafPacked(float64(counts[leaf])*w.inputPerRow, float64(w.target))
	// A small leaf after small leaves goes on in their file; every other
	// leaf starts a file of its own.
	if w.cur != nil && w.cur.rows > 0 && !(packed && w.cur.packed) {
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	w.leaf, w.leafLeft, w.leafPacked = leaf, counts[leaf], packed
	return nil
}

// settleCap decides the rows the open file f of a tree's leaf takes
// (f.cap), once the writer has flushed half a target file's bytes, so
// that its bytes per row are measured, not guessed from the Arrow size
// (several times the encoded one) or from the first small row groups
// (their pages' headers and dictionaries weigh on few rows): the rows of
// the leaf left when f opened (f.leafRest), split into as many files of
// equal rows as make a file's size nearest the target (layout.LeafFilesFor,
// the rule the simulator projects), with the footer and page-header
// overhead of a file of the target's row groups taken from the room. A
// file that is not its leaf's only one is at least two thirds of the
// target, so the cap is settled before any file could need it. Each later file of the leaf
// splits what is left again: at the same bytes per row, into the same
// rows.
//
// The bytes per row vary within a leaf (sorted nulls first, a leaf's first
// rows are nearly free) and from leaf to leaf, so a leaf whose rows encode
// larger than those measured before it makes files larger than the
// target, and one whose rows encode smaller makes smaller ones: each file
// of a leaf still holds its equal share of the leaf's rows.
func (w *Writer) settleCap(f *openFile) {
	if f.leafRest <= 0 || f.cap > 0 || w.flushedBytes < w.target/2 {
		return
	}
	over := w.overheadPerRG * float64(max(w.target/max(w.rgBytes, 1), 1))
	room := max(float64(w.target)-over, float64(w.target)/2)
	n := int64(layout.LeafFilesFor(float64(f.leafRest)*w.perRow(), room))
	f.cap = (f.leafRest + n - 1) / n
}

// rowGroupQuota is the row count of f's next row group, f at fileBytes:
// quota's, and in a tree's leaf no more than the file has left to take.
func (w *Writer) rowGroupQuota(f *openFile, fileBytes int64) int64 {
	q := w.quota(fileBytes)
	if f.cap > 0 {
		q = min(q, max(f.cap-f.rows, 1))
	}
	return q
}

// fileNames maps each top-level column name of sch to the name it has in
// file, the same columns under Parquet-safe names.
func fileNames(sch, file *arrow.Schema) map[string]string {
	m := make(map[string]string, sch.NumFields())
	for i, f := range sch.Fields() {
		m[f.Name] = file.Field(i).Name
	}
	return m
}

// renamed returns rec under sch, the same columns under other names (down
// to the fields of nested types): a new reference either way.
func renamed(rec arrow.RecordBatch, sch *arrow.Schema) (arrow.RecordBatch, error) {
	if rec.Schema().Equal(sch) {
		rec.Retain()
		return rec, nil
	}
	if rec.Schema().NumFields() != sch.NumFields() {
		return nil, fmt.Errorf("batch has %d columns, the file %d", rec.Schema().NumFields(), sch.NumFields())
	}
	cols := make([]arrow.Array, sch.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range sch.Fields() {
		col := rec.Column(i)
		if arrow.TypeEqual(col.DataType(), f.Type) {
			col.Retain()
			cols[i] = col
			continue
		}
		data, err := retyped(col.Data(), f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		cols[i] = array.MakeFromData(data)
		data.Release()
	}
	return array.NewRecordBatch(sch, cols, rec.NumRows()), nil
}

// retyped is d as type dt, which must be d's type with other field names.
func retyped(d arrow.ArrayData, dt arrow.DataType) (arrow.ArrayData, error) {
	var kids []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			kids = append(kids, f.Type)
		}
	case arrow.ListLikeType:
		kids = []arrow.DataType{t.Elem()}
	}
	children := d.Children()
	if len(kids) == 0 && !arrow.TypeEqual(d.DataType(), dt) || len(kids) != len(children) || d.DataType().ID() != dt.ID() {
		return nil, fmt.Errorf("type %s is not %s renamed", d.DataType(), dt)
	}
	out := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		rc, err := retyped(c, kids[i])
		if err != nil {
			for _, o := range out[:i] {
				o.Release()
			}
			return nil, err
		}
		out[i] = rc
	}
	data := array.NewData(dt, d.Len(), d.Buffers(), out, d.NullN(), d.Offset())
	for _, o := range out {
		o.Release()
	}
	return data, nil
}

// sameColumns reports whether a batch of schema a can be written as one of
// schema b without conversion: same names and types, column by column.
func sameColumns(a, b *arrow.Schema) bool {
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

// perRow is the current estimate of encoded bytes per row.
func (w *Writer) perRow() float64 {
	if w.flushedRows > 0 {
		return float64(w.flushedBytes) / float64(w.flushedRows)
	}
	return w.guessPerRow
}

// quota is the row count of the next row group: RowGroupBytes, or what is
// left to the target if that is less, at the measured bytes per row. With
// MemoryBytes set, the row group, encoded, plus the dictionary indices held
// for it (4 bytes a row per dictionary column, see dictColumn) must fit.
func (w *Writer) quota(fileBytes int64) int64 {
	want := min(w.rgBytes, max(w.target-fileBytes, w.rgBytes/2))
	rows := int64(float64(want) / w.perRow())
	if w.opts.MemoryBytes > 0 {
		held := 4 * float64(len(w.stats.DictionaryColumns))
		rows = min(rows, int64(float64(w.opts.MemoryBytes)/(w.perRow()+held)))
	}
	return min(max(rows, 1), w.rgLimit)
}

// endRowGroup is called when the buffered row group is full: it either closes
// the file (when it is within half a row group of the target) or flushes the
// row group and starts the next one.
func (w *Writer) endRowGroup() error {
	f := w.cur
	flushed := f.counter.n
	if f.leafRest > 0 {
		// A tree's leaf: the file ends at its share of the leaf's rows.
		w.settleCap(f)
		if f.cap > 0 && f.rows >= f.cap {
			return w.closeFile()
		}
	} else if est := flushed + int64(float64(f.rgRows)*w.perRow()+w.overheadPerRG*float64(f.rgs+1)); est >= w.target-w.rgBytes/2 && !w.takesTail(est) {
		return w.closeFile()
	}
	if err := f.pw.NewBufferedRowGroupChecked(); err != nil {
		return fmt.Errorf("flush row group of %s: %w", f.path, err)
	}
	w.flushedRows += f.rgRows
	w.flushedBytes += f.counter.n - flushed
	f.rgs++
	f.rgRows = 0
	f.rgQuota = w.rowGroupQuota(f, f.counter.n)
	return nil
}

// takesTail reports whether the open file, at est bytes, should take the
// rows still expected (WriterOptions.ExpectedRows less those written) rather
// than close: they would fit within layout.TailAllowance over the target.
func (w *Writer) takesTail(est int64) bool {
	if w.opts.ExpectedRows <= 0 || w.cur == nil {
		return false
	}
	rest := w.opts.ExpectedRows - w.stats.Rows - w.cur.rows
	if rest <= 0 {
		return false
	}
	return float64(est)+float64(rest)*w.perRow() <= (1+layout.TailAllowance)*float64(w.target)
}

func (w *Writer) open() error {
	w.count++
	tag := ""
	if runTaggable(w.opts.RunID) {
		tag = runTagPrefix + w.opts.RunID
	}
	if w.opts.NameTag != "" {
		tag += "-" + w.opts.NameTag
	}
	name := fmt.Sprintf("00000-%d-%s-%05d%s.parquet", w.count, w.opts.WriteUUID, w.count, tag)
	if w.partPath != "" {
		name = path.Join(w.partPath, name)
	}
	p := w.loc.NewDataLocation(name)
	out, err := w.fs.Create(p)
	if err != nil {
		return fmt.Errorf("create data file %s: %w", p, err)
	}
	cw := &countingWriter{w: out}
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(w.opts.Allocator), pqarrow.WithStoreSchema())
	var pw parquetFile
	cf, err := newColumnFile(w.fileSch, cw, w.wprops, arrProps, w.opts.Parallelism)
	switch {
	case cf != nil:
		cf.scratch = w.scratch
		if w.codes != nil {
			cf.books = w.codes.books
		}
		pw = cf
	case err == nil: // nested columns: pqarrow writes them, one column at a time
		pw, err = pqarrow.NewFileWriter(w.fileSch, cw, w.wprops, arrProps)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("start parquet file %s: %w", p, err), out.Close(), w.remove(p))
	}
	w.cur = &openFile{path: p, out: out, counter: cw, pw: pw}
	switch {
	case w.leaf >= 0 && w.leafPacked:
		w.cur.packed = true // cut at the target size, as any layout's file
	case w.leaf >= 0:
		w.cur.leafRest = w.leafLeft
		w.settleCap(w.cur)
	}
	w.cur.rgQuota = w.rowGroupQuota(w.cur, 0)
	if cf != nil {
		cf.expectRows(w.cur.rgQuota)
	}
	return nil
}

// closeFile finishes the open file and describes it as a DataFile.
func (w *Writer) closeFile() error {
	f := w.cur
	w.cur = nil
	if err := f.pw.Close(); err != nil { // also closes f.out
		return errors.Join(fmt.Errorf("close parquet file %s: %w", f.path, err), w.remove(f.path))
	}
	meta, err := f.pw.FileMetadata()
	if err != nil {
		return errors.Join(fmt.Errorf("footer of %s: %w", f.path, err), w.remove(f.path))
	}
	if f.rgRows > 0 {
		f.rgs++
	}
	w.measureClosed(f, meta)
	args := table.DataFileArgs{
		Schema:          w.schema,
		Spec:            w.spec,
		Format:          iceberg.ParquetFile,
		Metadata:        meta,
		FilePath:        f.path,
		FileSize:        f.counter.n,
		Content:         iceberg.EntryContentData,
		PartitionValues: w.opts.PartitionValues,
		Properties:      w.props,
		FormatVersion:   w.version,
	}
	if w.opts.SortOrderID != nil {
		args.SortOrderID = *w.opts.SortOrderID
	}
	df, err := table.DataFileFromMetadata(args)
	if err != nil {
		return errors.Join(fmt.Errorf("describe data file %s: %w", f.path, err), w.remove(f.path))
	}
	w.files = append(w.files, df)
	w.stats.Files++
	w.stats.Rows += f.rows
	w.stats.Bytes += f.counter.n
	w.stats.RowGroups += f.rgs
	return nil
}

// measureClosed learns from a closed file: the encoded bytes per row of its
// last row group (whose flush was not measured on its own, the footer came
// with it) and the per-row-group overhead outside column chunks.
func (w *Writer) measureClosed(f *openFile, meta *metadata.FileMetaData) {
	rgs := meta.NumRowGroups()
	if rgs == 0 {
		return
	}
	chunkBytes := func(i int) int64 {
		rg := meta.RowGroup(i)
		var n int64
		for c := range rg.NumColumns() {
			if cc, err := rg.ColumnChunk(c); err == nil {
				n += cc.TotalCompressedSize()
			}
		}
		return n
	}
	var data int64
	for i := range rgs {
		data += chunkBytes(i)
	}
	if f.rgRows > 0 {
		w.flushedRows += f.rgRows
		w.flushedBytes += chunkBytes(rgs - 1)
	}
	if f.counter.n > data {
		w.overheadPerRG = float64(f.counter.n-data) / float64(rgs)
	}
}

// Close finishes the open file and returns every file written, in write
// order. After an error, call Abort to remove what was written.
func (w *Writer) Close() ([]iceberg.DataFile, error) {
	if w.cur != nil && w.cur.rows > 0 {
		if err := w.closeFile(); err != nil {
			return nil, err
		}
	} else if w.cur != nil {
		if err := w.discard(); err != nil {
			return nil, err
		}
	}
	return w.files, nil
}

func (w *Writer) discard() error {
	f := w.cur
	w.cur = nil
	if cf, ok := f.pw.(*columnFile); ok {
		cf.release()
	}
	return errors.Join(f.out.Close(), w.remove(f.path))
}

// Abort removes every file this writer created, finished or not. The files
// were never committed, so nothing references them.
func (w *Writer) Abort() error {
	var errs []error
	if w.cur != nil {
		errs = append(errs, w.discard())
	}
	for _, f := range w.files {
		errs = append(errs, w.remove(f.FilePath()))
	}
	w.files = nil
	return errors.Join(errs...)
}

// remove deletes a file the writer created.
func (w *Writer) remove(p string) error {
	fs, err := w.cleanupFS()
	if err != nil {
		return fmt.Errorf("remove %s: open file io: %w", p, err)
	}
	err = fs.Remove(p)
	if refused(err) {
		// The write failed as its credentials expired, most likely: the
		// table reloaded from its catalog comes with fresh ones.
		if fs, rerr := w.reloadFS(); rerr == nil {
			err = fs.Remove(p)
		}
	}
	if errors.Is(err, iofs.ErrNotExist) {
		// Never created: a write the store refused.
		return nil
	}
	return err
}

// Stats reports what was written so far.
func (w *Writer) Stats() WriterStats { return w.stats }

// conform returns rec in the file schema (a new reference either way).
func (w *Writer) conform(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if rec.Schema().Equal(w.arrowSch) {
		rec.Retain()
		return rec, nil
	}
	if sameColumns(rec.Schema(), w.arrowSch) {
		return array.NewRecordBatch(w.arrowSch, rec.Columns(), rec.NumRows()), nil
	}
	ctx = compute.WithAllocator(ctx, w.opts.Allocator)
	out, err := table.ToRequestedSchema(ctx, w.tblSchema, w.tblSchema, rec, table.SchemaOptions{
		DowncastTimestamp: true, IncludeFieldIDs: true, UseWriteDefault: true,
		FormatVersion: w.version, TableProperties: w.props,
	})
	if err != nil {
		return nil, fmt.Errorf("convert batch to the schema of the table: %w", err)
	}
	if !out.Schema().Equal(w.arrowSch) {
		defer out.Release()
		return nil, fmt.Errorf("batch schema %s does not match the table's %s", out.Schema(), w.arrowSch)
	}
	return out, nil
}

// dictionaryProps decides dictionary encoding per top-level column from a
// sample batch, judged at the scale of a row group (see package pqdict).
func (w *Writer) dictionaryProps(sample arrow.RecordBatch) []parquet.WriterProperty {
	if v, ok := w.props[propDictEnabled]; ok && !strings.EqualFold(v, "true") {
		return nil // disabled table-wide by parquet.enable.dictionary
	}
	// Rows of a row group: its encoded bytes over the batch's in-memory bytes per
	// row, an upper bound of the encoded bytes per row (so a lower bound of rows).
	scale := w.rowGroupScale(sample)
	var props []parquet.WriterProperty
	for i, f := range w.arrowSch.Fields() {
		if _, ok := w.props[propDictColumnEnabled+f.Name]; ok {
			continue // explicit per-column setting, already in base
		}
		if w.codes != nil && w.codes.books[i] != nil {
			// Chosen from the group's first batch by the same rule
			// (chooseCodes); its codes say nothing more to pqdict.
			props = append(props, parquet.WithDictionaryFor(w.fileSch.Field(i).Name, true))
			w.stats.DictionaryColumns = append(w.stats.DictionaryColumns, f.Name)
			continue
		}
		on, ok := w.wantsDictionary(sample.Column(i), scale)
		if !ok {
			// Nested or boolean: keep the default, with the cost fallback.
			continue
		}
		props = append(props, parquet.WithDictionaryFor(w.fileSch.Field(i).Name, on))
		if on {
			w.stats.DictionaryColumns = append(w.stats.DictionaryColumns, f.Name)
		}
	}
	return props
}

// wantsDictionary is the writer's rule for a column sampled by col: its
// distinct ratio at the scale of rows rows (pqdict) at most
// DictionaryMaxDistinctRatio. ok is false where the rule does not apply
// (boolean, nested).
func (w *Writer) wantsDictionary(col arrow.Array, rows int64) (on, ok bool) {
	ratio, ok := pqdict.ScaledDistinctRatio(col, rows)
	return ok && w.opts.DictionaryMaxDistinctRatio >= 0 && ratio <= w.opts.DictionaryMaxDistinctRatio, ok
}

// rowGroupScale is the rows of a row group as sample says: its encoded
// bytes over sample's in-memory bytes per row (coded values counted as the
// values), an upper bound of the encoded bytes per row, so a lower bound of
// rows; at least sample's rows.
func (w *Writer) rowGroupScale(sample arrow.RecordBatch) int64 {
	scale := sample.NumRows()
	if n := sample.NumRows(); n > 0 {
		if per := (recordBytes(sample) + w.codedValueBytes(sample)) / n; per > 0 {
			scale = max(scale, w.rgBytes/per)
		}
	}
	return scale
}

// codedValueBytes is the bytes of the values sample's coded columns stand
// for, beyond the codes' own (which recordBytes counts, as an offset's
// worth): 0 without codes.
func (w *Writer) codedValueBytes(sample arrow.RecordBatch) int64 {
	if w.codes == nil || !sameColumns(sample.Schema(), w.codedSch) {
		return 0
	}
	var n int64
	for i, b := range w.codes.books {
		if b == nil {
			continue
		}
		ca := sample.Column(i).(*array.Int32)
		for j, c := range ca.Int32Values() {
			if ca.IsValid(j) {
				n += b.offs[c+1] - b.offs[c]
			}
		}
	}
	return n
}

// chooseCodes returns the columns of a sorted group to carry as dictionary
// codes (see columnCodes), judged on sample, the group's first batch as
// read: string and binary columns other than the layout's keys that the
// writer would dictionary-encode by its rule (pqdict at row-group scale, or
// the table's per-column setting) and with its own dictionary path, which
// takes codes (dictColumn: a compressed codec, columns written by
// columnFile). None when sample's columns are not the file's (the scan's
// types differ from the table's and batches are converted), when the table
// disables dictionaries, or when a column is nested.
func (w *Writer) chooseCodes(sample arrow.RecordBatch, keys []string) []int {
	if sample.NumRows() == 0 || !sameColumns(sample.Schema(), w.arrowSch) {
		return nil
	}
	if v, ok := w.props[propDictEnabled]; ok && !strings.EqualFold(v, "true") {
		return nil
	}
	for _, f := range w.arrowSch.Fields() {
		if !flatType(f.Type) {
			return nil
		}
	}
	props := parquet.NewWriterProperties(w.base...)
	scale := w.rowGroupScale(sample)
	var cols []int
	for i, f := range w.arrowSch.Fields() {
		if !codable(f.Type) || isKeyColumn(keys, f.Name) || props.DictionaryCostFallbackEnabledFor(w.fileSch.Field(i).Name) {
			continue
		}
		if v, ok := w.props[propDictColumnEnabled+f.Name]; ok {
			if strings.EqualFold(v, "true") {
				cols = append(cols, i)
			}
			continue
		}
		if on, ok := w.wantsDictionary(sample.Column(i), scale); ok && on {
			cols = append(cols, i)
		}
	}
	return cols
}

// useCodes makes the writer take batches of cc's coded schema, before the
// first is written: coded columns are dictionary-encoded from their codes,
// or turned back into values where a column is written plain.
func (w *Writer) useCodes(cc *columnCodes) {
	w.codes = cc
	w.codedSch = codedSchema(w.arrowSch, cc.books)
}

// dictLimit is the dictionary page size limit of the files written.
func (w *Writer) dictLimit() int64 {
	return parquet.NewWriterProperties(w.base...).DictionaryPageSizeLimit()
}

// parquetProps maps the table's Parquet write properties to arrow-go ones,
// as iceberg-go's own writer does; fileName maps a top-level column's name
// to the name it is written under (per-column properties name the table's
// column). Row-group size is not taken from the table: the writer sizes row
// groups itself (see [Writer]).
func parquetProps(props iceberg.Properties, fileName map[string]string) ([]parquet.WriterProperty, int64, error) {
	rgLimit := int64(props.GetInt(table.ParquetRowGroupLimitKey, table.ParquetRowGroupLimitDefault))
	if rgLimit <= 0 {
		return nil, 0, fmt.Errorf("%s must be > 0, got %d", table.ParquetRowGroupLimitKey, rgLimit)
	}
	var codec compress.Compression
	switch c := strings.ToLower(props.Get(table.ParquetCompressionKey, table.ParquetCompressionDefault)); c {
	case "zstd":
		codec = compress.Codecs.Zstd
	case "snappy":
		codec = compress.Codecs.Snappy
	case "gzip":
		codec = compress.Codecs.Gzip
	case "brotli":
		codec = compress.Codecs.Brotli
	case "lz4":
		codec = compress.Codecs.Lz4
	case "lz4raw":
		codec = compress.Codecs.Lz4Raw
	case "uncompressed", "none":
		codec = compress.Codecs.Uncompressed
	default:
		return nil, 0, fmt.Errorf("%s: unsupported codec %q", table.ParquetCompressionKey, c)
	}
	page := parquet.DataPageV2
	if props.Get(table.ParquetPageVersionKey, table.ParquetPageVersionDefault) == "1" {
		page = parquet.DataPageV1
	}
	out := []parquet.WriterProperty{
		parquet.WithMaxRowGroupLength(rgLimit),
		parquet.WithDataPageSize(int64(props.GetInt(table.ParquetPageSizeBytesKey, table.ParquetPageSizeBytesDefault))),
		parquet.WithDataPageVersion(page),
		parquet.WithBatchSize(int64(props.GetInt(table.ParquetPageRowLimitKey, table.ParquetPageRowLimitDefault))),
		parquet.WithDictionaryPageSizeLimit(int64(props.GetInt(table.ParquetDictSizeBytesKey, table.ParquetDictSizeBytesDefault))),
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(props.GetInt(table.ParquetCompressionLevelKey, table.ParquetCompressionLevelDefault)),
	}
	if v, ok := props[propDictEnabled]; ok {
		out = append(out, parquet.WithDictionaryDefault(strings.EqualFold(v, "true")))
	}
	for k, v := range props {
		if col, ok := strings.CutPrefix(k, propDictColumnEnabled); ok && col != "" {
			out = append(out, parquet.WithDictionaryFor(cmp.Or(fileName[col], col), strings.EqualFold(v, "true")))
		}
	}
	return out, rgLimit, nil
}

func specHasField(spec iceberg.PartitionSpec, id int) bool {
	for _, f := range spec.Fields() {
		if f.FieldID == id {
			return true
		}
	}
	return false
}

// partitionRecord lays the partition values out in spec field order.
type partRecord []any

func partitionRecord(spec iceberg.PartitionSpec, values map[int]any) partRecord {
	rec := make(partRecord, 0, spec.NumFields())
	for _, f := range spec.Fields() {
		rec = append(rec, values[f.FieldID])
	}
	return rec
}

func (r partRecord) Size() int          { return len(r) }
func (r partRecord) Get(pos int) any    { return r[pos] }
func (r partRecord) Set(pos int, v any) { r[pos] = v }

// countingWriter counts the bytes that reach the data file.
type countingWriter struct {
	w io.WriteCloser
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Close() error { return c.w.Close() }
