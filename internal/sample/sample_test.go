package sample_test

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/sample"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// table writes files appends of rowsPerFile consecutive ids.
func table(t *testing.T, files, rowsPerFile int) *lake.State {
	t.Helper()
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64},
	)
	id := int64(0)
	return build(t, "t", schema, nil, files, func(b *array.RecordBuilder) {
		for range rowsPerFile {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.Int64Builder).Append(id % 7)
			id++
		}
	})
}

// build creates table name and appends files batches, each filled by fill.
func build(t *testing.T, name string, schema *iceberg.Schema, spec *iceberg.PartitionSpec, files int, fill func(*array.RecordBuilder)) *lake.State {
	t.Helper()
	w := testlake.New(t)
	t.Cleanup(func() {
		if c, ok := w.Catalog.(io.Closer); ok {
			require.NoError(t, c.Close())
		}
	})
	props := iceberg.Properties{"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}
	tbl := w.CreateTable(t, "db", name, schema, spec, props, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		fill(b)
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	st, err := lake.LoadState(context.Background(), lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: name}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

// ids reads a sample and returns its ids in arrival order.
func ids(t *testing.T, st *lake.State, columns []string, opts sample.Options) ([]int64, float64) {
	t.Helper()
	var out []int64
	frac, err := sample.Read(context.Background(), st, columns, opts, func(f *lake.File, rec arrow.RecordBatch) {
		defer rec.Release()
		require.NotNil(t, f)
		require.Equal(t, 1, int(rec.NumCols()))
		col := rec.Column(0).(*array.Int64)
		out = append(out, col.Int64Values()...)
	})
	require.NoError(t, err)
	return out, frac
}

func TestReadSamplesSeededAndUniform(t *testing.T) {
	st := table(t, 40, 500)
	// 100 rows per projected file × 10 files = 1,000 of 20,000 rows: 5%, from 40% of the files.
	opts := sample.Options{RowsPerProjectedFile: 100, ProjectedFiles: 10}
	got, frac := ids(t, st, []string{"ID"}, opts)
	require.InDelta(t, 0.05, frac, 1e-12)
	require.InDelta(t, 1000, len(got), 400)
	again, _ := ids(t, st, []string{"id"}, opts)
	require.Equal(t, got, again, "the same seed gives the same rows")
	// Files are read concurrently: one at a time gives the same rows too.
	prev := runtime.GOMAXPROCS(1)
	serial, _ := ids(t, st, []string{"id"}, opts)
	runtime.GOMAXPROCS(4)
	wide, _ := ids(t, st, []string{"id"}, opts)
	runtime.GOMAXPROCS(prev)
	require.Equal(t, got, serial, "one file at a time")
	require.Equal(t, got, wide, "four files at a time")
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1], got[i], "rows arrive in data-sequence and file order")
	}
	opts.Seed = 2
	other, _ := ids(t, st, []string{"id"}, opts)
	require.NotEqual(t, got, other)
}

func TestReadWholeTableAndEdgeCases(t *testing.T) {
	st := table(t, 4, 50)
	got, frac := ids(t, st, []string{"id"}, sample.Options{})
	require.InDelta(t, 1.0, frac, 1e-12)
	require.Len(t, got, 200, "a sample of half the table or more reads every row")

	visit := func(*lake.File, arrow.RecordBatch) { t.Fatal("no rows to visit") }
	_, err := sample.Read(context.Background(), st, []string{"missing"}, sample.Options{}, visit)
	require.ErrorIs(t, err, layout.ErrColumnNotFound)
	_, err = sample.Read(context.Background(), st, nil, sample.Options{}, visit)
	require.ErrorContains(t, err, "no columns")

	empty := table(t, 0, 0)
	frac, err = sample.Read(context.Background(), empty, []string{"id"}, sample.Options{}, visit)
	require.NoError(t, err)
	require.InDelta(t, 1.0, frac, 1e-12)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = sample.Read(ctx, st, []string{"id"}, sample.Options{}, visit)
	require.ErrorIs(t, err, context.Canceled)
}

// partitioned writes days partitions (identity on day) of files appends each,
// rowsPerFile rows per file, ids consecutive.
func partitioned(t *testing.T, days, files, rowsPerFile int) *lake.State {
	t.Helper()
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Int32, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "day", Transform: iceberg.IdentityTransform{}})
	id := int64(0)
	return build(t, "p", schema, &spec, files, func(b *array.RecordBuilder) {
		for d := range days {
			for range rowsPerFile {
				b.Field(0).(*array.Int64Builder).Append(id)
				b.Field(1).(*array.Int32Builder).Append(int32(d))
				id++
			}
		}
	})
}

// TestReadStratifiesByPartition is the demo's shape: one file per day
// partition, a sample far smaller than a file. Every partition must be in the
// sample, in proportion to its rows, however few files there are.
func TestReadStratifiesByPartition(t *testing.T) {
	st := partitioned(t, 8, 1, 2000)
	require.Len(t, st.DataFiles, 8)
	perDay := map[int32]int{}
	var n int
	frac, err := sample.Read(context.Background(), st, []string{"day"}, sample.Options{RowsPerProjectedFile: 100, ProjectedFiles: 1, MinFraction: 0.0001}, func(f *lake.File, rec arrow.RecordBatch) {
		defer rec.Release()
		for _, d := range rec.Column(0).(*array.Int32).Int32Values() {
			perDay[d]++
			n++
		}
	})
	require.NoError(t, err)
	require.Len(t, perDay, 8, "every partition is sampled")
	for d, c := range perDay {
		require.InDelta(t, 100, c, 40, "day %d", d)
	}
	require.InDelta(t, 800.0/16000, frac, 1e-9)
	require.InDelta(t, 800, n, 150)

	// Many files per partition: a share of them is read in each, never all.
	st = partitioned(t, 4, 12, 300)
	files := map[string]bool{}
	perDay = map[int32]int{}
	_, err = sample.Read(context.Background(), st, []string{"day"}, sample.Options{RowsPerProjectedFile: 30, ProjectedFiles: 4, MinFraction: 0.0001}, func(f *lake.File, rec arrow.RecordBatch) {
		defer rec.Release()
		files[f.Path] = true
		for _, d := range rec.Column(0).(*array.Int32).Int32Values() {
			perDay[d]++
		}
	})
	require.NoError(t, err)
	require.Len(t, perDay, 4)
	require.Greater(t, len(files), 4*1, "at least two files per partition")
	require.Less(t, len(files), 48)
}
