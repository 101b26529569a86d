package simulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// SampleOptions tunes [TakeSample]. The zero value uses the defaults.
type SampleOptions struct {
	// Seed makes the sample reproducible. Default: 1.
	Seed uint64
	// RowsPerProjectedFile is the number of sample rows wanted per projected file.
	// Default: 10,000.
	RowsPerProjectedFile int
	// MinFraction is the least fraction of the table's rows sampled. Default: 0.001.
	MinFraction float64
	// MaxRows caps the sample. Default: 2,000,000.
	MaxRows int
	// FileOversampling is how many times more files than the row fraction are opened
	// when the table is sampled (rows are then thinned within each file), so that the
	// sample spreads over many files. Default: 8.
	FileOversampling float64
	// ProjectedFiles is the number of files the rewrite is expected to write, which sizes
	// the sample. Default: the table's bytes divided by its target file size.
	ProjectedFiles int
}

// DefaultSampleOptions returns the defaults of [SampleOptions].
func DefaultSampleOptions() SampleOptions {
	return SampleOptions{Seed: 1, RowsPerProjectedFile: 10_000, MinFraction: 0.001, MaxRows: 2_000_000, FileOversampling: 8}
}

func (o SampleOptions) withDefaults() SampleOptions {
	d := DefaultSampleOptions()
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

// Sample is a seeded sample of rows of a table's live data (deletes applied), holding only
// the columns a workload filters on and a layout orders by. Records are in arrival order:
// source files in data-sequence order, rows in file order.
type Sample struct {
	// Schema is the Iceberg schema of the table the sample was taken from.
	Schema *iceberg.Schema
	// Records hold the sampled rows; release them with [Sample.Release].
	Records []arrow.RecordBatch
	// Rows is the number of sampled rows.
	Rows int
	// Fraction is the expected share of the table's rows in the sample (1 when every row
	// was read).
	Fraction float64
	// TableRows and TableBytes are the table's live data rows (before deletes) and bytes.
	TableRows, TableBytes int64
	// FilesBefore is the number of live data files.
	FilesBefore int
	// Partitions are the partition keys rows belong to (their source file's), and
	// PartitionRows/PartitionBytes those partitions' rows and bytes in the table.
	Partitions                    []string
	PartitionRows, PartitionBytes []int64
	// rowPart is the partition index of every sampled row, in record order.
	rowPart []int32
	// columnBytes are the compressed bytes of each column (by field id) over the live
	// data files that report column sizes, and sizedBytes those files' bytes.
	columnBytes map[int]int64
	sizedBytes  int64
	// concat holds the sampled columns concatenated for the size model (see
	// concatColumns), built once.
	concatOnce sync.Once
	concat     []arrow.Array
	concatErr  error
	// metrics maps a column (lower-case name) to its bounds truncation length: 0 means
	// full bounds, -1 no bounds.
	metrics func(column string) int
}

// Release frees the sample's records.
func (s *Sample) Release() {
	for _, r := range s.Records {
		r.Release()
	}
	s.Records = nil
	for _, c := range s.concat {
		c.Release()
	}
	s.concat = nil
}

// TakeSample reads a uniform, seeded sample of the named columns from the live data files
// of st (deletes applied). Its size is max(RowsPerProjectedFile × projected files,
// MinFraction × rows), capped at MaxRows; when that is half the table or more, every row
// is read. Otherwise a seeded random subset of files (FileOversampling times the row
// fraction) is read, only the named columns, and each of their rows is kept with the
// probability that makes every row of the table equally likely to be sampled.
func TakeSample(ctx context.Context, st *lake.State, columns []string, opts SampleOptions) (*Sample, error) {
	opts = opts.withDefaults()
	schema := st.Metadata.CurrentSchema()
	s := &Sample{Schema: schema, FilesBefore: len(st.DataFiles), metrics: metricsModes(st.Metadata.Properties()), columnBytes: map[int]int64{}}
	partIdx := map[string]int32{}
	fileOf := map[string]*lake.File{}
	for i := range st.DataFiles {
		f := &st.DataFiles[i]
		s.TableRows += f.Records
		s.TableBytes += f.SizeBytes
		if f.DataFile != nil {
			if cs := f.DataFile.ColumnSizes(); len(cs) > 0 {
				for id, n := range cs {
					s.columnBytes[id] += n
				}
				s.sizedBytes += f.SizeBytes
			}
		}
		fileOf[f.Path] = f
		pi, ok := partIdx[f.PartitionKey]
		if !ok {
			pi = int32(len(s.Partitions))
			partIdx[f.PartitionKey] = pi
			s.Partitions = append(s.Partitions, f.PartitionKey)
			s.PartitionRows = append(s.PartitionRows, 0)
			s.PartitionBytes = append(s.PartitionBytes, 0)
		}
		s.PartitionRows[pi] += f.Records
		s.PartitionBytes[pi] += f.SizeBytes
	}
	if st.Current == nil || s.TableRows == 0 {
		s.Fraction = 1
		return s, nil
	}
	var names []string
	for _, c := range columns {
		f, ok := schema.FindFieldByNameCaseInsensitive(c)
		if !ok {
			return nil, fmt.Errorf("sample %s: column %q: %w", st.Ident, c, layout.ErrColumnNotFound)
		}
		n, _ := schema.FindColumnName(f.ID)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("sample %s: no columns", st.Ident)
	}
	projected := opts.ProjectedFiles
	if projected <= 0 {
		projected = int(math.Ceil(float64(s.TableBytes) / float64(st.TargetFileSizeBytes(512<<20))))
	}
	want := max(float64(opts.RowsPerProjectedFile)*float64(projected), opts.MinFraction*float64(s.TableRows))
	want = min(want, float64(opts.MaxRows))
	frac := min(1, want/float64(s.TableRows))
	fileFrac := 1.0
	if frac >= 0.5 {
		frac = 1
	} else {
		fileFrac = min(1, frac*opts.FileOversampling)
	}
	s.Fraction = frac

	scan := st.Table.Scan(table.WithSelectedFields(names...))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("sample %s: plan files: %w", st.Ident, err)
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
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	rowFrac := frac / fileFrac
	for _, p := range paths {
		if fileFrac < 1 && rng.Float64() >= fileFrac {
			continue
		}
		if err := ctx.Err(); err != nil {
			s.Release()
			return nil, fmt.Errorf("sample %s: %w", st.Ident, err)
		}
		pi := int32(0)
		if f := fileOf[p]; f != nil {
			pi = partIdx[f.PartitionKey]
		}
		_, it, err := scan.ReadTasks(ctx, byFile[p])
		if err != nil {
			s.Release()
			return nil, fmt.Errorf("sample %s: read %s: %w", st.Ident, p, err)
		}
		for rec, err := range it {
			if err != nil {
				s.Release()
				return nil, fmt.Errorf("sample %s: read %s: %w", st.Ident, p, err)
			}
			kept, err := thin(ctx, rec, rowFrac, rng)
			rec.Release()
			if err != nil {
				s.Release()
				return nil, fmt.Errorf("sample %s: thin %s: %w", st.Ident, p, err)
			}
			if kept == nil {
				continue
			}
			n := int(kept.NumRows())
			s.Records = append(s.Records, kept)
			s.Rows += n
			for range n {
				s.rowPart = append(s.rowPart, pi)
			}
		}
	}
	return s, nil
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

// metricsModes reads the table's write.metadata.metrics.* properties: the returned
// function gives a column's bounds truncation length (0 full, -1 no bounds).
func metricsModes(props iceberg.Properties) func(string) int {
	parse := func(m string) int {
		m = strings.ToLower(strings.TrimSpace(m))
		switch {
		case m == "full":
			return 0
		case m == "none" || m == "counts":
			return -1
		case strings.HasPrefix(m, "truncate(") && strings.HasSuffix(m, ")"):
			var n int
			if _, err := fmt.Sscanf(m, "truncate(%d)", &n); err == nil && n > 0 {
				return n
			}
		}
		return 16
	}
	def := parse(props.Get("write.metadata.metrics.default", "truncate(16)"))
	cols := map[string]int{}
	for k, v := range props {
		if c, ok := strings.CutPrefix(k, "write.metadata.metrics.column."); ok {
			cols[strings.ToLower(c)] = parse(v)
		}
	}
	return func(c string) int {
		if n, ok := cols[strings.ToLower(c)]; ok {
			return n
		}
		return def
	}
}

// errNoSample is returned when a layout other than current must be projected from a
// table that has no rows.
var errNoSample = errors.New("table has no rows to sample")
