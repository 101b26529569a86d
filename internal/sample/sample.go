// Package sample reads a seeded, uniform sample of the live rows of an
// Iceberg table (deletes applied), holding only the columns asked for.
//
// The simulator projects a layout from such a sample and the rewriter fits
// the quantiles of a rank z-order or Hilbert key on one, sized the same way,
// so the cells a rewrite cuts are those a projection would; both read it
// through [Read], which is why it sits below them.
//
// A sample has max(RowsPerProjectedFile × projected files, MinFraction ×
// rows) rows, capped at MaxRows; when that is half the table or more, every
// row is read. Otherwise a seeded random subset of files (FileOversampling
// times the row fraction of them, an exact count) is read, and each of
// their rows is kept with the probability that makes every row of the table
// equally likely to be sampled. Files are read concurrently (one per core) and their rows are
// handed over in data-sequence order; each file is thinned by a random
// stream of its own, so the same table, columns and options give the same
// rows however the reads interleave.
package sample

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// Options sizes and seeds a sample. A zero field means its default.
type Options struct {
	// Seed makes the sample reproducible. Default: 1.
	Seed uint64
	// RowsPerProjectedFile is the number of sample rows wanted per projected file.
	// Default: 1,000. On the layout benchmark's three shapes (TPC-H and mixed
	// workloads at ~100 files, TPC-H at ~26) projections from 1,000 rows per file
	// were as close to the rewritten tables as the committed results from 10,000
	// (mean per-query error 0.44, 1.69 and 0.49 pp against 0.52, 1.86 and 0.54;
	// bench/results/layout*.json): the error left is the model's, not the sample's. Rank
	// z-order and Hilbert quantiles fitted on the smaller sample moved the real
	// rewrite's skip rate by at most 0.7 pp either way.
	RowsPerProjectedFile int
	// MinFraction is the least fraction of the table's rows sampled. Default: 0.001.
	MinFraction float64
	// MaxRows caps the sample. Default: 128,000: 1,000 rows for each of up to
	// 128 projected files, which covers the layout benchmark's shapes (120
	// files); past that a file gets fewer rows, and planning costs the same
	// however large the table grows. On bench/plan's 60M-row table (1,150
	// projected files, about 110 sampled rows each) the projection of
	// sort(l_shipdate) was within a tenth of a point per query of the files
	// the real rewrite wrote, closer than at 6M rows with about 1,100 rows per
	// file (bench/results/plan.json, rewrite_query_error_pp): a file misjudged
	// at the edge of a query's range is 0.09 pp of 1,150 files but 0.9 pp of
	// 110. The cap was 500,000 before, and planning then grew 3 to 9 times
	// from 6M to 60M rows.
	MaxRows int
	// FileOversampling is how many times more files than the row fraction are opened
	// when the table is sampled (rows are then thinned within each file), so that the
	// sample spreads over many files. Default: 8.
	FileOversampling float64
	// ProjectedFiles is the number of files the rewrite is expected to write, which sizes
	// the sample. Default: the table's bytes divided by its target file size.
	ProjectedFiles int
}

// DefaultOptions returns the defaults of [Options].
func DefaultOptions() Options {
	return Options{Seed: 1, RowsPerProjectedFile: 1_000, MinFraction: 0.001, MaxRows: 128_000, FileOversampling: 8}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Seed == 0 {
		o.Seed = d.Seed
	}
	if o.RowsPerProjectedFile <= 0 {
		o.RowsPerProjectedFile = d.RowsPerProjectedFile
	}
	if o.MinFraction <= 0 {
		o.MinFraction = d.MinFraction
	}
	if o.MaxRows <= 0 {
		o.MaxRows = d.MaxRows
	}
	if o.FileOversampling < 1 {
		o.FileOversampling = d.FileOversampling
	}
	return o
}

// Read reads a sample of the named columns (matched case-insensitively; an
// unknown one is an error wrapping [layout.ErrColumnNotFound]) from the live
// data files of st and calls visit with every non-empty batch of sampled
// rows, in arrival order, and the file it came from (nil if st does not list
// it). visit owns the batch and must release it. Read returns the expected
// share of the table's rows in the sample: 1 when every row was read, and
// when the table has no rows (then visit is never called).
func Read(ctx context.Context, st *lake.State, columns []string, opts Options, visit func(f *lake.File, rec arrow.RecordBatch)) (float64, error) {
	opts = opts.withDefaults()
	var rows, bytes int64
	fileOf := map[string]*lake.File{}
	for i := range st.DataFiles {
		f := &st.DataFiles[i]
		rows += f.Records
		bytes += f.SizeBytes
		fileOf[f.Path] = f
	}
	if st.Current == nil || rows == 0 {
		return 1, nil
	}
	schema := st.Metadata.CurrentSchema()
	var names []string
	for _, c := range columns {
		f, ok := schema.FindFieldByNameCaseInsensitive(c)
		if !ok {
			return 0, fmt.Errorf("sample %s: column %q: %w", st.Ident, c, layout.ErrColumnNotFound)
		}
		n, _ := schema.FindColumnName(f.ID)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("sample %s: no columns", st.Ident)
	}
	projected := opts.ProjectedFiles
	if projected <= 0 {
		projected = int(math.Ceil(float64(bytes) / float64(st.TargetFileSizeBytes(512<<20))))
	}
	want := max(float64(opts.RowsPerProjectedFile)*float64(projected), opts.MinFraction*float64(rows))
	want = min(want, float64(opts.MaxRows))
	frac := min(1, want/float64(rows))
	fileFrac := 1.0
	if frac >= 0.5 {
		frac = 1
	} else {
		fileFrac = min(1, frac*opts.FileOversampling)
	}

	scan := st.Table.Scan(table.WithSelectedFields(names...))
	defer scan.Close()
	tasks, err := st.ScanTasks(ctx, scan)
	if err != nil {
		return 0, fmt.Errorf("sample %s: plan files: %w", st.Ident, err)
	}
	// Group split tasks by file; visit files in data-sequence (arrival) order.
	byFile := map[string][]table.FileScanTask{}
	var paths []string
	for _, t := range tasks {
		p := t.File.FilePath()
		if _, ok := byFile[p]; !ok {
			paths = append(paths, p)
		}
		byFile[p] = append(byFile[p], t)
	}
	seq := func(p string) int64 {
		if f := fileOf[p]; f != nil {
			return f.SequenceNumber
		}
		return math.MaxInt64
	}
	slices.SortStableFunc(paths, func(a, b string) int {
		if c := compareInt64(seq(a), seq(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	// Files are chosen by one seeded permutation (chooseFiles); each chosen
	// file's rows are thinned by a stream of its own (seeded by the file's
	// position), so that the files can be read concurrently and still give the
	// same rows.
	chosen := chooseFiles(len(paths), fileFrac, rand.New(rand.NewPCG(opts.Seed, 0x5eed)))
	rowFrac := 1.0
	if len(chosen) > 0 {
		rowFrac = min(1, frac*float64(len(paths))/float64(len(chosen)))
	}
	got := make([][]arrow.RecordBatch, len(chosen))
	release := func() {
		for _, recs := range got {
			for _, r := range recs {
				r.Release()
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k, i := range chosen {
		p := paths[i]
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return fmt.Errorf("sample %s: %w", st.Ident, err)
			}
			frng := rand.New(rand.NewPCG(opts.Seed, 0x5eed0000+uint64(i)))
			_, it, err := scan.ReadTasks(gctx, byFile[p])
			if err != nil {
				return fmt.Errorf("sample %s: read %s: %w", st.Ident, p, err)
			}
			for rec, err := range it {
				if err != nil {
					return fmt.Errorf("sample %s: read %s: %w", st.Ident, p, err)
				}
				kept, err := thin(gctx, rec, rowFrac, frng)
				rec.Release()
				if err != nil {
					return fmt.Errorf("sample %s: thin %s: %w", st.Ident, p, err)
				}
				if kept != nil {
					got[k] = append(got[k], kept)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		release()
		return 0, err
	}
	for k, i := range chosen {
		for j, rec := range got[k] {
			got[k][j] = nil
			visit(fileOf[paths[i]], rec)
		}
	}
	return frac, nil
}

// chooseFiles picks exactly ceil(frac × n) of n files, a seeded simple
// random sample in ascending order: every file is as likely to be read as
// any other, and the number read, so the sample's size, does not wander
// with the draw (choosing each file with probability frac, as before, made
// it binomial: ±17% at 32 files expected, one standard deviation).
func chooseFiles(n int, frac float64, rng *rand.Rand) []int {
	if frac >= 1 {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	k := min(n, int(math.Ceil(frac*float64(n))))
	out := rng.Perm(n)[:k]
	slices.Sort(out)
	return out
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// thin keeps each row of rec with probability p (all rows when p ≥ 1); nil when none.
func thin(ctx context.Context, rec arrow.RecordBatch, p float64, rng *rand.Rand) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	if n == 0 {
		return nil, nil
	}
	if p >= 1 {
		rec.Retain()
		return rec, nil
	}
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		if rng.Float64() < p {
			b.Append(int32(i))
		}
	}
	if b.Len() == 0 {
		return nil, nil
	}
	idx := b.NewInt32Array()
	defer idx.Release()
	cols := make([]arrow.Array, rec.NumCols())
	var err error
	for i := range cols {
		cols[i], err = compute.TakeArray(ctx, rec.Column(i), idx)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, err
		}
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(idx.Len()))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}
