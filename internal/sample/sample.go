// Package sample reads a seeded sample of the live rows of an Iceberg table
// (deletes applied), holding only the columns asked for, stratified by
// partition.
//
// The simulator projects a layout from such a sample and the rewriter fits
// the quantiles of a rank z-order or Hilbert key on one, sized the same way,
// so the cells a rewrite cuts are those a projection would; both read it
// through [Read], which is why it sits below them.
//
// Every partition is a stratum and gets rows of its own: RowsPerProjectedFile
// for each file the rewrite is expected to write in it (the partition's share
// of ProjectedFiles, at least one), and at least MinFraction of its rows. The
// total is capped at MaxRows by scaling every partition down alike, so the
// sample's memory is bounded whatever the table's size; a partition whose
// share is half its rows or more is read whole. Within a partition a share of
// its files is read (FileOversampling times the row fraction of them, at
// least MinFilesPerPartition), chosen by systematic sampling with probability
// proportional to their rows in data-sequence order (so the files read spread
// over the partition's arrival time, and a large file is as likely to be read
// as its rows make it), and each row of a chosen file is kept with the
// probability that makes every row of the partition equally likely to be
// sampled. Files are read concurrently (one per core) and their rows are
// handed over in data-sequence order; each file is thinned by a random stream
// of its own, so the same table, columns and options give the same rows
// however the reads interleave.
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
	// the sample; each partition's share is its share of the table's bytes. Default: the
	// table's bytes divided by its target file size.
	ProjectedFiles int
	// MinFilesPerPartition is the least number of files read in a partition that is
	// sampled (all of them when it has fewer), so that the spread between files can be
	// measured. Default: 2.
	MinFilesPerPartition int
}

// DefaultOptions returns the defaults of [Options].
func DefaultOptions() Options {
	return Options{Seed: 1, RowsPerProjectedFile: 1_000, MinFraction: 0.001, MaxRows: 128_000, FileOversampling: 8, MinFilesPerPartition: 2}
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
	if o.MinFilesPerPartition <= 0 {
		o.MinFilesPerPartition = d.MinFilesPerPartition
	}
	return o
}

// Read reads a sample of the named columns (matched case-insensitively; an
// unknown one is an error wrapping [layout.ErrColumnNotFound]) from the live
// data files of st and calls visit with every non-empty batch of sampled
// rows, in arrival order, and the file it came from (nil if st does not list
// it). visit owns the batch and must release it. Read returns the expected
// share of the table's rows in the sample: 1 when every row was read, and
// when the table has no rows (then visit is never called). Every partition
// with rows is sampled (see the package doc).
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
	strata := stratify(paths, fileOf)
	want := allocate(strata, rows, bytes, projected, opts)
	// Files are chosen per partition by one seeded systematic draw each
	// (choosePPS); each chosen file's rows are thinned by a stream of its own
	// (seeded by the file's position), so that the files can be read
	// concurrently and still give the same rows.
	type pick struct {
		i    int     // index into paths
		keep float64 // probability of keeping each row
	}
	var chosen []pick
	var expected float64
	for si, s := range strata {
		frac := want[si] / float64(s.rows)
		if frac >= 0.5 {
			frac = 1
		}
		expected += frac * float64(s.rows)
		fileRows := make([]int64, len(s.files))
		for j, i := range s.files {
			fileRows[j] = recordsOf(fileOf[paths[i]])
		}
		k := max(float64(opts.MinFilesPerPartition), math.Ceil(frac*opts.FileOversampling*float64(len(s.files))))
		if frac >= 1 {
			k = float64(len(s.files))
		}
		idx, prob := choosePPS(fileRows, k, frac, rand.New(rand.NewPCG(opts.Seed, 0x5eed+uint64(si))))
		for j, c := range idx {
			chosen = append(chosen, pick{i: s.files[c], keep: min(1, frac/prob[j])})
		}
	}
	slices.SortFunc(chosen, func(a, b pick) int { return a.i - b.i })
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
	for k, c := range chosen {
		p := paths[c.i]
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return fmt.Errorf("sample %s: %w", st.Ident, err)
			}
			frng := rand.New(rand.NewPCG(opts.Seed, 0x5eed0000+uint64(c.i)))
			_, it, err := scan.ReadTasks(gctx, byFile[p])
			if err != nil {
				return fmt.Errorf("sample %s: read %s: %w", st.Ident, p, err)
			}
			for rec, err := range it {
				if err != nil {
					return fmt.Errorf("sample %s: read %s: %w", st.Ident, p, err)
				}
				kept, err := thin(gctx, rec, c.keep, frng)
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
	for k, c := range chosen {
		for j, rec := range got[k] {
			got[k][j] = nil
			visit(fileOf[paths[c.i]], rec)
		}
	}
	return min(1, expected/float64(rows)), nil
}

// stratum is one partition's files (indexes into the ordered paths, in
// data-sequence order), rows and bytes.
type stratum struct {
	files       []int
	rows, bytes int64
}

// stratify groups the ordered paths by partition, in order of each
// partition's first file; a file st does not list is its own stratum.
func stratify(paths []string, fileOf map[string]*lake.File) []stratum {
	var out []stratum
	byKey := map[string]int{}
	for i, p := range paths {
		f := fileOf[p]
		key := "\x00" + p
		if f != nil {
			key = f.PartitionKey
		}
		si, ok := byKey[key]
		if !ok {
			si = len(out)
			byKey[key] = si
			out = append(out, stratum{})
		}
		out[si].files = append(out[si].files, i)
		out[si].rows += recordsOf(f)
		if f != nil {
			out[si].bytes += f.SizeBytes
		}
	}
	// A stratum whose files report no rows is read whole (rows stands in as 1
	// per file so that it is never divided by zero).
	for i := range out {
		if out[i].rows == 0 {
			out[i].rows = int64(len(out[i].files))
		}
	}
	return out
}

func recordsOf(f *lake.File) int64 {
	if f == nil {
		return 0
	}
	return f.Records
}

// allocate returns the rows wanted from each stratum: RowsPerProjectedFile
// per projected file of the stratum (its share of the table's bytes, at
// least one file) and at least MinFraction of its rows, never more than its
// rows; when the sum passes MaxRows every stratum is scaled down alike.
func allocate(strata []stratum, rows, bytes int64, projected int, opts Options) []float64 {
	out := make([]float64, len(strata))
	var sum float64
	for i, s := range strata {
		share := float64(s.rows) / float64(max(rows, 1))
		if bytes > 0 {
			share = float64(s.bytes) / float64(bytes)
		}
		files := max(1, math.Ceil(share*float64(projected)))
		w := max(float64(opts.RowsPerProjectedFile)*files, opts.MinFraction*float64(s.rows))
		out[i] = min(w, float64(s.rows))
		sum += out[i]
	}
	if sum > float64(opts.MaxRows) {
		scale := float64(opts.MaxRows) / sum
		for i := range out {
			out[i] *= scale
		}
	}
	return out
}

// choosePPS picks about k of the files whose rows are given, by systematic
// sampling with probability proportional to rows (each at least minProb, at
// most 1) over the files in their order, from one seeded random start. It
// returns the chosen indexes, ascending, and each one's inclusion
// probability. With k at least the number of files every file is chosen.
func choosePPS(rows []int64, k, minProb float64, rng *rand.Rand) ([]int, []float64) {
	n := len(rows)
	if n == 0 {
		return nil, nil
	}
	if k >= float64(n) {
		idx := make([]int, n)
		prob := make([]float64, n)
		for i := range idx {
			idx[i], prob[i] = i, 1
		}
		return idx, prob
	}
	var total int64
	for _, r := range rows {
		total += r
	}
	prob := make([]float64, n)
	for i, r := range rows {
		p := k / float64(n)
		if total > 0 {
			p = k * float64(r) / float64(total)
		}
		prob[i] = min(1, max(p, minProb))
	}
	var idx []int
	var ps []float64
	u := rng.Float64()
	cum := 0.0
	for i, p := range prob {
		// File i covers [cum, cum+p): it is chosen when a point u + j falls in it.
		next := cum + p
		if math.Ceil(next-u) > math.Ceil(cum-u) || p >= 1 {
			idx = append(idx, i)
			ps = append(ps, p)
		}
		cum = next
	}
	if len(idx) == 0 {
		// Fewer than one file expected and the draw missed every one: read the
		// file the start points at, so that the partition is never unsampled.
		i := min(n-1, int(u*float64(n)))
		idx, ps = []int{i}, []float64{prob[i]}
	}
	return idx, ps
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
