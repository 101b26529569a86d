package rewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/layout"
)

// KeyColumn is the extra column of [Dataset.KeyedCopy] files: floe's layout
// key of the row, which DuckDB sorts by for z-order and Hilbert.
const KeyColumn = "_floe_key"

// NewKeyer builds floe's key encoder of layout spec for records of schema. The
// quantiles file (layout.Quantiles JSON) is needed by hilbert and rank
// z-order layouts and ignored by the others; z-order is Iceberg-exact, the
// default.
func NewKeyer(spec string, schema *arrow.Schema, quantilesFile string) (layout.Encoder, error) {
	l, err := layout.Parse(spec)
	if err != nil {
		return nil, err
	}
	var opts layout.EncoderOptions
	if l.Strategy == layout.StrategyHilbert {
		if opts.Quantiles, err = loadQuantiles(quantilesFile, schema); err != nil {
			return nil, err
		}
	}
	return layout.NewEncoder(l, schema, opts)
}

// NeedsKeyColumn reports whether DuckDB needs floe's precomputed key to
// reproduce layout spec (z-order and Hilbert), rather than ordering by the
// layout's columns itself (sort).
func NeedsKeyColumn(spec string) (bool, error) {
	l, err := layout.Parse(spec)
	if err != nil {
		return false, err
	}
	return l.Strategy != layout.StrategySort, nil
}

// KeyedCopy returns DuckDB's input for layout: a copy of every data file with
// [KeyColumn] appended, computed by [NewKeyer]. Copies are cached in the
// dataset directory next to the table.
func (d *Dataset) KeyedCopy(ctx context.Context, layout string) ([]string, error) {
	dir := filepath.Join(d.Dir, "duckdb-input-"+slug(layout))
	paths := make([]string, len(d.Paths))
	for i := range d.Paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%05d.parquet", i))
	}
	marker := filepath.Join(dir, "complete")
	if _, err := os.Stat(marker); err == nil {
		return paths, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("keyed copy for %s: %w", layout, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("keyed copy for %s: %w", layout, err)
	}
	for i, in := range d.Paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := keyedCopy(ctx, in, paths[i], layout, d.QuantilesFile); err != nil {
			return nil, fmt.Errorf("keyed copy for %s: %w", layout, err)
		}
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return nil, fmt.Errorf("keyed copy for %s: %w", layout, err)
	}
	return paths, nil
}

func keyedCopy(ctx context.Context, in, out, layout, quantilesFile string) (err error) {
	return eachRecord(ctx, in, func(sch *arrow.Schema) (func(arrow.RecordBatch) error, func() error, error) {
		enc, err := NewKeyer(layout, sch, quantilesFile)
		if err != nil {
			return nil, nil, err
		}
		fields := append(sch.Fields(), arrow.Field{Name: KeyColumn, Type: arrow.BinaryTypes.Binary})
		outSch := arrow.NewSchema(fields, nil)
		f, err := os.Create(out)
		if err != nil {
			return nil, nil, fmt.Errorf("create %s: %w", out, err)
		}
		w, err := pqarrow.NewFileWriter(outSch, f,
			parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)), pqarrow.DefaultWriterProps())
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("write %s: %w", out, err), f.Close())
		}
		var key []byte
		write := func(rec arrow.RecordBatch) error {
			kb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
			defer kb.Release()
			for r := range int(rec.NumRows()) {
				if key, err = enc.AppendKey(key[:0], rec, r); err != nil {
					return err
				}
				kb.Append(key)
			}
			keys := kb.NewArray()
			defer keys.Release()
			cols := append(append([]arrow.Array(nil), rec.Columns()...), keys)
			keyed := array.NewRecordBatch(outSch, cols, rec.NumRows())
			defer keyed.Release()
			return w.Write(keyed)
		}
		closeFn := func() error {
			if err := w.Close(); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			return nil
		}
		return write, closeFn, nil
	})
}

// eachRecord reads the Parquet file at path batch by batch. open is called
// once with the file's Arrow schema and returns the per-batch function and a
// close function, which is called once at the end, also on error.
func eachRecord(ctx context.Context, path string, open func(*arrow.Schema) (func(arrow.RecordBatch) error, func() error, error)) (err error) {
	path = localPath(path)
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, pf.Close()) }()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 16384}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer rr.Release()
	fn, closeFn, err := open(rr.Schema())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// OrderCheck is the result of [CheckOrder].
type OrderCheck struct {
	// Rows is the number of rows read.
	Rows int64
	// Violations counts adjacent rows, across the files in the order given,
	// whose layout key decreases. Zero means globally ordered.
	Violations int64
}

// CheckOrder reads the Parquet files at paths in order, recomputes each
// row's layout key with [NewKeyer], and counts adjacent rows out of order.
func CheckOrder(ctx context.Context, paths []string, layout, quantilesFile string) (OrderCheck, error) {
	var (
		res       OrderCheck
		prev, cur []byte
		first     = true
	)
	for _, p := range paths {
		err := eachRecord(ctx, p, func(sch *arrow.Schema) (func(arrow.RecordBatch) error, func() error, error) {
			enc, err := NewKeyer(layout, sch, quantilesFile)
			if err != nil {
				return nil, nil, err
			}
			return func(rec arrow.RecordBatch) error {
				for r := range int(rec.NumRows()) {
					if cur, err = enc.AppendKey(cur[:0], rec, r); err != nil {
						return err
					}
					if !first && bytes.Compare(prev, cur) > 0 {
						res.Violations++
					}
					first = false
					prev, cur = cur, prev
					res.Rows++
				}
				return nil
			}, func() error { return nil }, nil
		})
		if err != nil {
			return res, fmt.Errorf("check order: %w", err)
		}
	}
	return res, nil
}

// Digest is an order-independent digest of the rows of the Parquet files at
// paths, computed in Go over every column's value text: the row count, and
// the sum and xor of the row hashes. It does not depend on how rows are
// split into files, so input and output of a rewrite must digest equal.
// It is slow (a string per value); the DuckDB checksum of internal/oracle
// is the fast path.
func Digest(ctx context.Context, paths []string) (oracle.Sum, error) {
	var s oracle.Sum
	var buf []byte
	for _, p := range paths {
		err := eachRecord(ctx, p, func(sch *arrow.Schema) (func(arrow.RecordBatch) error, func() error, error) {
			cols := make([]int, 0, sch.NumFields())
			for i, f := range sch.Fields() {
				if f.Name != KeyColumn {
					cols = append(cols, i)
				}
			}
			return func(rec arrow.RecordBatch) error {
				for r := range int(rec.NumRows()) {
					buf = buf[:0]
					for _, c := range cols {
						buf = append(buf, rec.Column(c).ValueStr(r)...)
						buf = append(buf, 0x1f)
					}
					h := fnv.New64a()
					_, _ = h.Write(buf) // hash.Hash never fails
					v := h.Sum64()
					// Spread the bits so that sums of similar rows do not collide.
					v ^= v >> 33
					v *= 0xff51afd7ed558ccd
					v ^= v >> 33
					s.Rows++
					s.Sum += v
					s.Xor ^= v
				}
				return nil
			}, func() error { return nil }, nil
		})
		if err != nil {
			return s, fmt.Errorf("digest: %w", err)
		}
	}
	return s, nil
}
