package rewriter_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" for the embedded catalog

	"github.com/floe-project/floe/rewriter"
)

// eventsSchema is the test table: id is the layout key of most tests.
var eventsSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	iceberg.NestedField{ID: 3, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 5, Name: "payload", Type: iceberg.PrimitiveTypes.String},
)

var regions = []string{"eu", "us", "ap"}

// newCatalog opens a SQL catalog on SQLite with a file:// warehouse, both in
// a test temp dir.
func newCatalog(t testing.TB) *sqlcat.Catalog {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "catalog.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	cat, err := sqlcat.NewCatalog("local", db, sqlcat.SQLite, iceberg.Properties{
		"warehouse": "file://" + filepath.Join(dir, "warehouse"),
	})
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"db"}, nil))
	return cat
}

// createEvents creates db.<name>, partitioned by identity(region) when
// partitioned is set.
func createEvents(t testing.TB, cat *sqlcat.Catalog, name string, partitioned bool, props iceberg.Properties) *table.Table {
	t.Helper()
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if partitioned {
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		opts = append(opts, catalog.WithPartitionSpec(&spec))
	}
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"db", name}, eventsSchema, opts...)
	require.NoError(t, err)
	return tbl
}

// eventRows builds n rows starting at id start. ids are shuffled within the
// batch so that sorting has work to do; region is fixed when given, else
// cycles.
func eventRows(t testing.TB, tbl *table.Table, start, n int, region string, seed uint64) arrow.RecordBatch {
	t.Helper()
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(seed, uint64(start)))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	ids := rnd.Perm(n)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := int64(start + ids[i])
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base.Add(time.Duration(id) * time.Second).UnixMicro()))
		r := region
		if r == "" {
			r = regions[id%int64(len(regions))]
		}
		b.Field(2).(*array.StringBuilder).Append(r)
		if id%11 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(float64(rnd.IntN(1_000_000)) / 100)
		}
		b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("%016x", rnd.Uint64()))
	}
	return b.NewRecordBatch()
}

// appendBatch commits rec as one append and returns the new table.
func appendBatch(t testing.TB, tbl *table.Table, rec arrow.RecordBatch) *table.Table {
	t.Helper()
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()
	out, err := tbl.Append(t.Context(), rdr, nil)
	require.NoError(t, err)
	return out
}

// localPath turns a file:// location into a path.
func localPath(loc string) string { return strings.TrimPrefix(loc, "file://") }

// scanCount reads the whole table through iceberg-go and counts rows.
func scanCount(ctx context.Context, t testing.TB, tbl *table.Table) int64 {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	require.NoError(t, err)
	var n int64
	for rec, err := range it {
		require.NoError(t, err)
		n += rec.NumRows()
		rec.Release()
	}
	return n
}

// partitionGroups plans tbl's files and groups the tasks by the region
// partition value ("" when unpartitioned).
func partitionGroups(t testing.TB, tbl *table.Table) (map[string][]table.FileScanTask, []string) {
	t.Helper()
	scan := tbl.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(t.Context())
	require.NoError(t, err)
	groups := make(map[string][]table.FileScanTask)
	var order []string
	for _, task := range tasks {
		k, _ := task.File.Partition()[1000].(string)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], task)
	}
	return groups, order
}

// rewriteResult is what rewriteTable did.
type rewriteResult struct {
	tbl   *table.Table
	files map[string][]iceberg.DataFile // new files per partition, in key order
	stats []rewriter.GroupStats
}

// rewriteTable rewrites every partition of tbl with opts and commits the
// result as one rewrite snapshot: old data files and their position delete
// files out, new files in.
func rewriteTable(t testing.TB, tbl *table.Table, opts rewriter.GroupOptions) rewriteResult {
	t.Helper()
	ctx := t.Context()
	duckBefore := duckSum(t, tbl)
	groups, order := partitionGroups(t, tbl)
	res := rewriteResult{files: make(map[string][]iceberg.DataFile)}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	removed := make(map[string]bool)
	for _, k := range order {
		files, st, err := rewriter.RewriteGroup(ctx, tbl, groups[k], opts)
		require.NoError(t, err)
		require.NotEmpty(t, files)
		res.files[k] = files
		res.stats = append(res.stats, st)
		for _, task := range groups[k] {
			for _, df := range append([]iceberg.DataFile{task.File}, task.DeleteFiles...) {
				if !removed[df.FilePath()] {
					removed[df.FilePath()] = true
					rw.DeleteFile(df)
				}
			}
		}
		for _, f := range files {
			rw.AddDataFile(f)
		}
	}
	require.NoError(t, rw.Commit(ctx))
	out, err := tx.Commit(ctx)
	require.NoError(t, err)
	require.Equal(t, table.OpReplace, out.CurrentSnapshot().Summary.Operation)
	checkWithDuckDB(t, duckBefore, out, res.files, opts.Keyer != nil)
	res.tbl = out
	return res
}

// requireGloballyOrdered reads files back with the pure-Go Parquet reader and
// checks that ids never decrease, within and across files, in the order
// given.
func requireGloballyOrdered(t testing.TB, files []iceberg.DataFile) {
	t.Helper()
	prev := int64(math.MinInt64)
	for i, df := range files {
		rdr, err := file.OpenParquetFile(localPath(df.FilePath()), false)
		require.NoError(t, err)
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
		require.NoError(t, err)
		tbl, err := fr.ReadTable(t.Context())
		require.NoError(t, err)
		col := tbl.Column(0)
		require.Equal(t, "id", col.Name())
		for _, chunk := range col.Data().Chunks() {
			ids := chunk.(*array.Int64)
			for j := range ids.Len() {
				require.LessOrEqual(t, prev, ids.Value(j), "file %d row %d out of order", i, j)
				prev = ids.Value(j)
			}
		}
		tbl.Release()
		require.NoError(t, rdr.Close())
	}
}
