package rewriter

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"golang.org/x/sync/errgroup"
)

// parquetFile is what [Writer] needs of an open Parquet file: buffered row
// groups, flushed on demand. *pqarrow.FileWriter is one; [columnFile] is the
// other.
type parquetFile interface {
	WriteBuffered(rec arrow.RecordBatch) error
	NewBufferedRowGroupChecked() error
	Close() error
	FileMetadata() (*metadata.FileMetaData, error)
}

// columnFile writes a Parquet file of a flat schema (every column a single
// leaf: no structs, lists or maps), encoding the columns of each batch on
// several goroutines. Encoding (values, dictionaries, statistics, zstd) is
// most of a rewrite's remaining CPU and pqarrow.FileWriter does it one column
// after the other; the column chunks of a buffered row group are
// independent writers, so each column is handed to pqarrow.WriteArrowToColumn
// with its own write context. The file is the one pqarrow.FileWriter would
// write: same Parquet schema (pqarrow.ToParquet), same key-value metadata
// (the Arrow schema under ARROW:schema, as pqarrow.WithStoreSchema does),
// same writer properties.
type columnFile struct {
	w        *file.Writer
	rgw      file.BufferedRowGroupWriter
	maxRows  int64
	names    []string
	nullable []bool // the Parquet leaf is optional: definition levels 0/1
	ctxs     []context.Context
	defs     [][]int16
	dicts    []*dictColumn // dictionary-encoded columns held until the row group is flushed; nil for the others
	books    []*codebook   // by column, the codes a coded column's batches hold ([Writer.useCodes]); nil for the others
	types    []arrow.DataType
	scratch  scratchPool
	mem      memory.Allocator
	rows     int64 // rows in the buffered row group
	workers  int
	closed   bool

	// Each column is encoded by its own goroutine from its own queue, so a
	// column that is slow on one batch (a page being compressed, say) does
	// not hold the others up: no barrier per batch, only when the row
	// group is flushed. sem bounds the columns encoding at once to workers.
	queues  []chan columnWork
	sem     chan struct{}
	pending sync.WaitGroup // arrays queued and not yet encoded
	running sync.WaitGroup // column goroutines
	errMu   sync.Mutex
	err     error // the first encoding error
	stopped bool
}

// columnWork is one batch of one column to encode: an array, or the column
// of picked rows (the array is nil then).
type columnWork struct {
	arr  arrow.Array
	pick *pickBatch
}

// columnQueue is the number of batches a column may lag behind the one
// being written: enough to ride out a page compression on another column.
const columnQueue = 8

// flatColumns reports whether sch can be written by a [columnFile]: every
// field a single Parquet leaf with no repetition, optional exactly when the
// field is nullable.
func flatColumns(sch *arrow.Schema, pqs *schema.Schema) bool {
	if pqs.NumColumns() != sch.NumFields() {
		return false
	}
	for i, f := range sch.Fields() {
		if !flatType(f.Type) {
			return false
		}
		c := pqs.Column(i)
		def := c.MaxDefinitionLevel()
		if c.MaxRepetitionLevel() != 0 || (f.Nullable && def != 1) || (!f.Nullable && def != 0) {
			return false
		}
	}
	return true
}

// flatType reports whether a column of type dt is one Parquet leaf that
// columnFile writes itself.
func flatType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP,
		arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.DICTIONARY, arrow.RUN_END_ENCODED,
		arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.NULL:
		return false
	}
	return true
}

// newColumnFile starts a Parquet file of sch on out, or returns (nil, nil)
// when sch is not flat and pqarrow.FileWriter must write it instead.
func newColumnFile(sch *arrow.Schema, out io.Writer, props *parquet.WriterProperties, arrProps pqarrow.ArrowWriterProperties, workers int) (*columnFile, error) {
	pqs, err := pqarrow.ToParquet(sch, props, arrProps)
	if err != nil {
		return nil, fmt.Errorf("parquet schema: %w", err)
	}
	if !flatColumns(sch, pqs) {
		return nil, nil
	}
	var buf bytes.Buffer
	iw := ipc.NewWriter(&buf, ipc.WithSchema(sch), ipc.WithAllocator(props.Allocator()))
	if err := iw.Close(); err != nil {
		return nil, fmt.Errorf("serialize arrow schema: %w", err)
	}
	meta := make(metadata.KeyValueMetadata, 0)
	md := sch.Metadata()
	for i, k := range md.Keys() {
		meta.Append(k, md.Values()[i])
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(buf.Bytes()))
	w, err := file.NewParquetWriterWithError(out, pqs.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, fmt.Errorf("start parquet writer: %w", err)
	}
	c := &columnFile{
		w:        w,
		maxRows:  props.MaxRowGroupLength(),
		names:    make([]string, sch.NumFields()),
		nullable: make([]bool, sch.NumFields()),
		types:    make([]arrow.DataType, sch.NumFields()),
		ctxs:     make([]context.Context, sch.NumFields()),
		defs:     make([][]int16, sch.NumFields()),
		dicts:    make([]*dictColumn, sch.NumFields()),
		scratch:  newScratchPool(max(workers, 1)),
		mem:      props.Allocator(),
		workers:  max(workers, 1),
	}
	for i, f := range sch.Fields() {
		c.names[i], c.nullable[i], c.types[i] = f.Name, f.Nullable, f.Type
		// The uncompressed columns' cost check (dictionary or plain,
		// decided at the first page) counts raw bytes as values are put;
		// dictionary indices carry none, so those columns stay dense.
		if path := pqs.Column(i).Path(); props.DictionaryEnabledFor(path) && !props.DictionaryCostFallbackEnabledFor(path) {
			c.dicts[i] = newDictColumn(f.Type, props)
		}
		// A write context only carries pqarrow's scratch buffer and
		// properties; one per column keeps the goroutines apart.
		c.ctxs[i] = pqarrow.NewArrowWriteContext(context.Background(), &arrProps)
	}
	return c, nil
}

// WriteBuffered appends rec to the buffered row group. Its columns are
// queued to the column goroutines, which encode them while the caller goes
// on; an encoding error is returned by a later call, at the latest by the
// flush of the row group or Close.
func (c *columnFile) WriteBuffered(rec arrow.RecordBatch) error {
	return c.enqueue(rec.NumRows(), func(i int) columnWork {
		arr := rec.Column(i)
		arr.Retain()
		return columnWork{arr: arr}
	})
}

// WritePicked is WriteBuffered for picked rows: each column takes a
// reference to p and gathers its rows when its turn comes (writePicked).
func (c *columnFile) WritePicked(p *pickBatch) error {
	return c.enqueue(p.numRows(), func(int) columnWork {
		p.retain()
		return columnWork{pick: p}
	})
}

// enqueue queues work(i) to every column i, rows rows.
func (c *columnFile) enqueue(rows int64, work func(i int) columnWork) error {
	if c.closed {
		return errors.New("write to a closed parquet file")
	}
	if err := c.failed(); err != nil {
		return err
	}
	if c.rgw == nil {
		if err := c.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	if c.rows+rows > c.maxRows {
		return fmt.Errorf("row group of %d rows would exceed the limit of %d", c.rows+rows, c.maxRows)
	}
	c.start()
	for i := range c.queues {
		c.pending.Add(1)
		c.queues[i] <- work(i)
	}
	c.rows += rows
	return nil
}

// start starts the column goroutines, once.
func (c *columnFile) start() {
	if c.queues != nil {
		return
	}
	c.queues = make([]chan columnWork, len(c.names))
	c.sem = make(chan struct{}, c.workers)
	for i := range c.queues {
		c.queues[i] = make(chan columnWork, columnQueue)
		c.running.Add(1)
		go c.encode(i)
	}
}

// encode writes the arrays queued for column i until its queue is closed.
// After an error it only releases them.
func (c *columnFile) encode(i int) {
	defer c.running.Done()
	for work := range c.queues[i] {
		if c.failed() == nil {
			c.sem <- struct{}{}
			var err error
			if work.pick != nil {
				err = c.writePicked(i, work.pick.column(i))
			} else {
				err = c.writeColumn(i, work.arr)
			}
			<-c.sem
			if err != nil {
				c.fail(fmt.Errorf("column %s: %w", c.names[i], err))
			}
		}
		if work.pick != nil {
			work.pick.doneColumn(i)
			work.pick.release()
		} else {
			work.arr.Release()
		}
		c.pending.Done()
	}
}

func (c *columnFile) fail(err error) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

func (c *columnFile) failed() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// stop ends the column goroutines, once they have drained their queues.
func (c *columnFile) stop() {
	if c.stopped {
		return
	}
	c.stopped = true
	for _, q := range c.queues {
		close(q)
	}
	c.running.Wait()
}

func (c *columnFile) writeColumn(i int, arr arrow.Array) error {
	var book *codebook
	if c.books != nil && c.books[i] != nil && arr.DataType().ID() == arrow.INT32 && codable(c.types[i]) {
		book = c.books[i]
	}
	if d := c.dicts[i]; d != nil && !d.dense {
		var took int
		if book != nil {
			took = d.addCodes(arr, book)
		} else {
			took = d.add(arr)
		}
		if took == arr.Len() {
			return nil
		}
		// A value did not fit the dictionary, or the batch has nulls: what
		// is held goes out now, the rest of the row group densely.
		if err := c.flushDict(i); err != nil {
			return err
		}
		d.dense = true
		arr = array.NewSlice(arr, int64(took), int64(arr.Len()))
		defer arr.Release()
	}
	if book != nil {
		// Written plain: the values, not their codes.
		vals, err := decodeColumn(c.mem, book, c.types[i], arr)
		if err != nil {
			return err
		}
		defer vals.Release()
		arr = vals
	}
	cw, err := c.rgw.Column(i)
	if err != nil {
		return err
	}
	var defs []int16
	if c.nullable[i] {
		n := arr.Len()
		if cap(c.defs[i]) < n {
			c.defs[i] = make([]int16, n)
		}
		defs = c.defs[i][:n]
		if arr.NullN() == 0 {
			for j := range defs {
				defs[j] = 1
			}
		} else {
			for j := range defs {
				if arr.IsValid(j) {
					defs[j] = 1
				} else {
					defs[j] = 0
				}
			}
		}
	}
	return pqarrow.WriteArrowToColumn(c.ctxs[i], cw, arr, defs, nil, c.nullable[i])
}

// expectRows tells the dictionary columns how many rows a row group is
// expected to hold, so that their index buffers are sized once.
func (c *columnFile) expectRows(n int64) {
	for _, d := range c.dicts {
		if d != nil {
			d.expect = int(min(n, c.maxRows))
		}
	}
}

// flushDict writes the rows dictionary column i holds to the row group.
func (c *columnFile) flushDict(i int) error {
	cw, err := c.rgw.Column(i)
	if err != nil {
		return err
	}
	return c.dicts[i].flush(c.ctxs[i], cw, c.nullable[i], &c.defs[i])
}

// closeRowGroup waits for the queued columns to be encoded, writes the held
// dictionary columns, several at once, and closes the buffered row group.
func (c *columnFile) closeRowGroup() error {
	c.pending.Wait()
	if err := c.failed(); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(c.workers)
	for i, d := range c.dicts {
		if d == nil {
			continue
		}
		g.Go(func() error {
			if err := c.flushDict(i); err != nil {
				return fmt.Errorf("column %s: %w", c.names[i], err)
			}
			return nil
		})
	}
	err := g.Wait() // each flush also ends its column's dense mode
	c.rows = 0
	if err != nil {
		return err
	}
	return c.rgw.Close()
}

// NewBufferedRowGroupChecked flushes the buffered row group, if any, and
// starts the next.
func (c *columnFile) NewBufferedRowGroupChecked() error {
	if c.rgw != nil {
		if err := c.closeRowGroup(); err != nil {
			return err
		}
	}
	rgw, err := c.w.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	c.rgw = rgw
	return nil
}

// Close flushes the row group and writes the footer; it closes the sink.
func (c *columnFile) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	defer c.release()
	var err error
	if c.rgw != nil {
		err = c.closeRowGroup()
	}
	return errors.Join(err, c.w.Close())
}

// release stops the column goroutines and frees what the dictionary columns
// hold; Close calls it, and a file abandoned without Close needs it.
func (c *columnFile) release() {
	c.fail(errors.New("parquet file released"))
	c.stop()
	for _, d := range c.dicts {
		if d != nil {
			d.release()
		}
	}
}

// FileMetadata is the footer of the closed file.
func (c *columnFile) FileMetadata() (*metadata.FileMetaData, error) {
	return c.w.FileMetadata()
}
