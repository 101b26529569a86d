package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

func setup(t *testing.T) (*testlake.Warehouse, lake.Ident, *store.Store) {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	tbl := w.CreateTable(t, "db", "t", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "65536"}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for i := 7; i >= 0; i-- {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for j := range 500 {
			b.Field(0).(*array.Int64Builder).Append(int64(i*500 + j))
			b.Field(1).(*array.StringBuilder).Append("row")
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	st, err := store.Open(context.Background(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return w, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, st
}

func TestOptimizeRecordsEveryStep(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	layout, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Expire:  rewriter.ExpireOptions{OlderThan: time.Millisecond},
		Compact: rewriter.CompactOptions{Layout: layout},
	})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	stored, err := control.GetRun(ctx, st, run.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, stored.Status)
	var steps []string
	for _, s := range stored.Steps {
		steps = append(steps, s.Name)
		require.Equal(t, control.StatusDone, s.Status)
		require.NotEmpty(t, s.Before)
		require.NotEmpty(t, s.After)
	}
	require.Equal(t, []string{control.StepExpire, control.StepOrphans, control.StepCompact, control.StepManifests}, steps)
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestOptimizeFailingStepFailsTheRun(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	// An orphan age under the 24h floor without Force is refused: the run
	// must fail at that step, record it, and not compact.
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Orphans: rewriter.OrphanOptions{OlderThan: time.Hour},
	})
	require.Error(t, err)
	require.ErrorIs(t, err, rewriter.ErrUnsafeAge)
	require.Equal(t, control.StatusFailed, run.Status)
	stored, serr := control.GetRun(ctx, st, run.ID)
	require.NoError(t, serr)
	require.Equal(t, control.StatusFailed, stored.Status)
	require.Contains(t, stored.Error, "orphans")
	require.Len(t, stored.Steps, 2, "expire ran, orphans failed, nothing after")
	require.Equal(t, control.StatusFailed, stored.Steps[1].Status)
	require.NotEmpty(t, stored.Steps[1].Error)
	st2, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	for _, s := range st2.Metadata().Snapshots() {
		require.NotEqual(t, "replace", string(s.Summary.Operation), "compaction must not run after a failed step")
	}
}
