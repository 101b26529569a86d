package rewriter_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// commitSchema is the table of the commit and maintenance tests: one
// identity partition per region.
var commitSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 3, Name: "v", Type: iceberg.PrimitiveTypes.Float64},
)

// twinTables is a table under test and its twin: every change a test makes
// to the data (appends, deletes) goes to both, maintenance only to the table
// under test, so at the end both must hold the same multiset of rows.
type twinTables struct {
	w     *testlake.Warehouse
	ident lake.Ident
	tbl   *table.Table
	twin  *table.Table
}

func newTwinTables(t testing.TB, props iceberg.Properties) *twinTables {
	t.Helper()
	w := testlake.New(t)
	closeCatalog(t, w)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	all := iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}
	for k, v := range props {
		all[k] = v
	}
	tt := &twinTables{
		w:     w,
		ident: lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "events"},
		tbl:   w.CreateTable(t, "db", "events", commitSchema, &spec, all, nil),
		twin:  w.CreateTable(t, "db", "twin", commitSchema, &spec, all, nil),
	}
	return tt
}

// closeCatalog closes the warehouse's catalog (and its database handle)
// when the test ends.
func closeCatalog(t testing.TB, w *testlake.Warehouse) {
	t.Helper()
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
}

// rows builds n rows with ids from start, all in region.
func commitRows(t testing.TB, tbl *table.Table, start, n int, region string) arrow.RecordBatch {
	t.Helper()
	return rowsOf(testlake.ArrowSchema(t, tbl), start, n, region)
}

// rowsOf builds n rows of schema sc with ids from start, all in region.
func rowsOf(sc *arrow.Schema, start, n int, region string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(region)
		if i%7 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(i) * 0.25)
		}
	}
	return b.NewRecordBatch()
}

// appendBoth appends the same rows to the table under test (through its
// catalog, so the newest head) and to the twin.
func (tt *twinTables) appendBoth(t testing.TB, start, n int, region string) {
	t.Helper()
	tt.tbl = appendFresh(t, tt.tbl, start, n, region)
	tt.twin = appendFresh(t, tt.twin, start, n, region)
}

// appendFresh appends to the newest version of tbl.
func appendFresh(t testing.TB, tbl *table.Table, start, n int, region string) *table.Table {
	t.Helper()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(context.Background()))
	rec := commitRows(t, &fresh, start, n, region)
	defer rec.Release()
	return testlake.Append(t, &fresh, rec)
}

// deleteBoth deletes the rows with id in [lo, hi) from both tables
// (merge-on-read: position delete files).
func (tt *twinTables) deleteBoth(t testing.TB, lo, hi int64) {
	t.Helper()
	tt.tbl = deleteFresh(t, tt.tbl, lo, hi)
	tt.twin = deleteFresh(t, tt.twin, lo, hi)
}

func deleteFresh(t testing.TB, tbl *table.Table, lo, hi int64) *table.Table {
	t.Helper()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(context.Background()))
	filter := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), lo),
		iceberg.LessThan(iceberg.Reference("id"), hi))
	out, err := fresh.Delete(context.Background(), filter, nil)
	require.NoError(t, err)
	return out
}

// state loads the current state of tbl.
func (tt *twinTables) state(t testing.TB, tbl *table.Table) *lake.State {
	t.Helper()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(context.Background()))
	st, err := lake.LoadState(context.Background(), tt.ident, &fresh, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

// requireSameRows checks, through the oracle, that the table under test and
// its twin hold the same multiset of rows.
func (tt *twinTables) requireSameRows(t testing.TB) {
	t.Helper()
	got, want := rowSum(t, tt.tbl), rowSum(t, tt.twin)
	require.Equal(t, want, got, "rows of the maintained table differ from its twin")
}

// rewriteGroups rewrites the data files of each named partition of st
// (region values) with the native engine and returns the commit groups.
func rewriteGroups(t testing.TB, st *lake.State, regions ...string) []rewriter.CommitGroup {
	t.Helper()
	scan := st.Table.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(context.Background())
	require.NoError(t, err)
	byRegion := map[string][]table.FileScanTask{}
	for _, task := range tasks {
		r, _ := task.File.Partition()[1000].(string)
		byRegion[r] = append(byRegion[r], task)
	}
	var groups []rewriter.CommitGroup
	for _, r := range regions {
		require.NotEmpty(t, byRegion[r], "no files in region %s", r)
		out, stats, err := rewriter.RewriteGroup(context.Background(), st.Table, rewriter.CollapseTasks(byRegion[r]),
			rewriter.GroupOptions{TempDir: t.TempDir()})
		require.NoError(t, err)
		g, err := rewriter.NewCommitGroup(st, "region="+r, byRegion[r], out, stats.Content)
		require.NoError(t, err)
		groups = append(groups, g)
	}
	return groups
}

// instantSleep makes backoff instant in tests.
func instantSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// livePaths lists the live data file paths of st, sorted.
func livePaths(st *lake.State) []string {
	var out []string
	for _, f := range st.DataFiles {
		out = append(out, f.Path)
	}
	sort.Strings(out)
	return out
}

func regionFiles(st *lake.State, region string) int {
	n := 0
	for _, f := range st.DataFiles {
		if f.PartitionKey == fmt.Sprintf("region=%s", region) {
			n++
		}
	}
	return n
}
