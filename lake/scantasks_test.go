package lake_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// TestScanTasksAreThePlannersTasks checks that the tasks built from the state
// of a table without deletes are the ones iceberg-go's planner makes, and
// that a scan of another snapshot, or of a table with a delete file, goes
// through the planner, whose tasks carry the deletes.
func TestScanTasksAreThePlannersTasks(t *testing.T) {
	ctx := context.Background()
	w := testlake.New(t)
	idOnly := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl := w.CreateTable(t, "db", "t", idOnly, nil, iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for f := range 5 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range 100 {
			b.Field(0).(*array.Int64Builder).Append(int64(f*100 + i))
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}
	load := func(tbl *table.Table) (*lake.State, *table.Scan) {
		st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
		require.NoError(t, err)
		return st, tbl.Scan(table.WithSelectedFields("id"))
	}
	byPath := func(ts []table.FileScanTask) []table.FileScanTask {
		ts = slices.Clone(ts)
		slices.SortFunc(ts, func(a, b table.FileScanTask) int { return strings.Compare(a.File.FilePath(), b.File.FilePath()) })
		return ts
	}

	st, scan := load(tbl)
	// A scan of an older snapshot than the state's is planned by iceberg-go.
	old, err := st.ScanTasks(ctx, tbl.Scan(table.WithSnapshotID(tbl.Metadata().Snapshots()[0].SnapshotID)))
	require.NoError(t, err)
	require.Len(t, old, 1, "the first snapshot has one file")
	got, err := st.ScanTasks(ctx, scan)
	require.NoError(t, err)
	want, err := scan.PlanFiles(ctx)
	require.NoError(t, err)
	got, want = byPath(got), byPath(want)
	require.Len(t, got, 5)
	require.Len(t, want, 5)
	for i := range want {
		require.Equal(t, want[i].File.FilePath(), got[i].File.FilePath())
		require.Equal(t, want[i].Start, got[i].Start)
		require.Equal(t, want[i].Length, got[i].Length)
		require.Equal(t, want[i].FirstRowID, got[i].FirstRowID)
		require.Equal(t, want[i].DataSequenceNumber, got[i].DataSequenceNumber)
		require.Empty(t, want[i].DeleteFiles)
	}

	tbl, err = tbl.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(50)), nil)
	require.NoError(t, err)
	st, scan = load(tbl)
	require.NotEmpty(t, st.DeleteFiles)
	got, err = st.ScanTasks(ctx, scan)
	require.NoError(t, err)
	var deletes int
	for _, tk := range got {
		deletes += len(tk.DeleteFiles) + len(tk.DeletionVectorFiles)
	}
	require.Positive(t, deletes, "the planner attaches the delete file")
}
