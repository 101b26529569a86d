package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
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
	return setupOn(t, testlake.New(t))
}

// setupOn is [setup] on warehouse w.
func setupOn(t *testing.T, w *testlake.Warehouse) (*testlake.Warehouse, lake.Ident, *store.Store) {
	t.Helper()
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
	require.Equal(t, control.TriggerManual, stored.Trigger, "a run without a trigger is manual")
	var steps []string
	for _, s := range stored.Steps {
		steps = append(steps, s.Name)
		require.Equal(t, control.StatusDone, s.Status)
		require.NotEmpty(t, s.Before)
		require.NotEmpty(t, s.After)
	}
	require.Equal(t, []string{control.StepExpire, control.StepOrphans, control.StepCompact, control.StepDeletes, control.StepManifests}, steps)
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestOptimizeFailingStepFailsTheRun(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	// A data file gone from storage fails the compaction when it reads it:
	// the run must fail at that step, record it, and not go on.
	state, err := lake.LoadState(ctx, id, mustTable(t, w, id), lake.LoadOptions{})
	require.NoError(t, err)
	w.Remove(t, state.DataFiles[0].Path)
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{})
	require.Error(t, err)
	require.Equal(t, control.StatusFailed, run.Status)
	stored, serr := control.GetRun(ctx, st, run.ID)
	require.NoError(t, serr)
	require.Equal(t, control.StatusFailed, stored.Status)
	require.Contains(t, stored.Error, "compact")
	require.Len(t, stored.Steps, 3, "expire and orphans ran, compact failed, nothing after")
	require.Equal(t, control.StatusFailed, stored.Steps[2].Status)
	require.NotEmpty(t, stored.Steps[2].Error)
	st2, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	for _, s := range st2.Metadata().Snapshots() {
		require.NotEqual(t, "replace", string(s.Summary.Operation), "a failed compaction commits nothing")
	}
}

// What a step would refuse is refused before the run starts: no run is
// recorded and no step runs (an orphan age under the 24h floor without
// Force, a layout column the table lacks, a table that does not exist).
func TestOptimizeRefusesBadOptionsBeforeTheRun(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	snaps := len(mustTable(t, w, id).Metadata().Snapshots())
	for _, tc := range []struct {
		name string
		id   lake.Ident
		opts control.OptimizeOptions
		is   error
	}{
		{"unsafe orphan age", id, control.OptimizeOptions{Orphans: rewriter.OrphanOptions{OlderThan: time.Hour}, Expire: rewriter.ExpireOptions{OlderThan: time.Millisecond}}, rewriter.ErrUnsafeAge},
		{"unknown layout column", id, control.OptimizeOptions{Compact: rewriter.CompactOptions{Layout: mustLayout(t, "sort(nosuchcol)")}}, rewriter.ErrInvalidOptions},
		{"memory below the minimum", id, control.OptimizeOptions{Compact: rewriter.CompactOptions{Group: rewriter.GroupOptions{MemoryBytes: 1024}}}, rewriter.ErrInvalidOptions},
		{"no such table", lake.Ident{Catalog: id.Catalog, Namespace: []string{"db"}, Name: "nosuch"}, control.OptimizeOptions{}, lake.ErrNoSuchTable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := control.Optimize(ctx, w.Catalog, st, tc.id, tc.opts)
			require.ErrorIs(t, err, tc.is)
			require.Empty(t, run.ID)
			runs, err := st.Runs(ctx, "", 0)
			require.NoError(t, err)
			require.Empty(t, runs, "a refused run is not recorded")
			require.Len(t, mustTable(t, w, id).Metadata().Snapshots(), snaps, "no step ran")
		})
	}
}

// A dry run checks what the run would, plans every step, and records
// nothing: no run, no change to the table.
func TestPlanOptimize(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	before := mustTable(t, w, id).Metadata().Snapshots()
	dry, err := control.PlanOptimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Expire:  rewriter.ExpireOptions{OlderThan: time.Millisecond, OlderThanSet: true},
		Compact: rewriter.CompactOptions{Layout: mustLayout(t, "sort(id)")},
		Skip:    map[string]bool{control.StepOrphans: true},
	})
	require.NoError(t, err)
	require.True(t, dry.DryRun)
	require.Equal(t, id.String(), dry.Table)
	var steps []string
	for _, s := range dry.Steps {
		steps = append(steps, s.Step+":"+string(s.Status))
	}
	require.Equal(t, []string{"expire:planned", "orphans:skipped", "compact:planned", "deletes:planned", "manifests:planned"}, steps)
	require.NotNil(t, dry.Steps[0].Expire)
	require.NotEmpty(t, dry.Steps[0].Expire.Snapshots, "all but the newest snapshot are older than 1ms")
	require.Nil(t, dry.Steps[1].Orphans)
	require.NotNil(t, dry.Steps[2].Compact)
	require.NotEmpty(t, dry.Steps[2].Compact.Groups)
	require.Equal(t, "sort(id)", dry.Steps[2].Compact.Layout.String())
	require.NotNil(t, dry.Steps[3].Deletes)
	require.Empty(t, dry.Steps[3].Deletes.Actions, "the table has no deletes")
	require.NotNil(t, dry.Steps[4].Manifests)
	require.Positive(t, dry.Steps[4].Manifests.Rewrite, "eight appends left eight manifests to cluster")

	runs, err := st.Runs(ctx, "", 0)
	require.NoError(t, err)
	require.Empty(t, runs, "a dry run records no run")
	require.Equal(t, before, mustTable(t, w, id).Metadata().Snapshots(), "a dry run changes nothing")

	_, err = control.PlanOptimize(ctx, w.Catalog, st, lake.Ident{Catalog: id.Catalog, Namespace: []string{"db"}, Name: "nosuch"}, control.OptimizeOptions{})
	require.ErrorIs(t, err, lake.ErrNoSuchTable)
	_, err = control.PlanOptimize(ctx, w.Catalog, st, id, control.OptimizeOptions{Compact: rewriter.CompactOptions{Layout: mustLayout(t, "sort(nosuchcol)")}})
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
	runs, err = st.Runs(ctx, "", 0)
	require.NoError(t, err)
	require.Empty(t, runs)
}

func mustTable(t *testing.T, w *testlake.Warehouse, id lake.Ident) *table.Table {
	t.Helper()
	tbl, err := lake.LoadTable(context.Background(), w.Catalog, id)
	require.NoError(t, err)
	return tbl
}

// The trigger is recorded with the run; one that is not a trigger starts no
// run.
func TestOptimizeRecordsTrigger(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	skip := map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepCompact: true, control.StepManifests: true}
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{Skip: skip, Trigger: control.TriggerAPI})
	require.NoError(t, err)
	stored, err := control.GetRun(ctx, st, run.ID)
	require.NoError(t, err)
	require.Equal(t, control.TriggerAPI, stored.Trigger)

	_, err = control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{Skip: skip, Trigger: "cron"})
	require.ErrorContains(t, err, `unknown run trigger "cron"`)
	runs, err := control.ListRuns(ctx, st, id.String(), 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
}
