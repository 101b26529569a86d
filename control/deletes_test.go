package control_test

import (
	"fmt"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
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
	"github.com/floe-project/floe/rewriter"
)

// regionTable is a table of format version version, partitioned by
// identity(region), with four files of 50 rows in each of eu (ids 0–399)
// and us (ids 1000–1399): iceberg-go writes every file.
func regionTable(t *testing.T, version int) (*testlake.Warehouse, lake.Ident, *store.Store) {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl := w.CreateTable(t, "db", "t", schema, &spec, iceberg.Properties{table.PropertyFormatVersion: fmt.Sprint(version), table.WriteDeleteModeKey: table.WriteModeMergeOnRead}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for i := range 4 {
		for r, region := range []string{"eu", "us"} {
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for j := range 50 {
				b.Field(0).(*array.Int64Builder).Append(int64(r*1000 + i*100 + j))
				b.Field(1).(*array.StringBuilder).Append(region)
			}
			rec := b.NewRecordBatch()
			b.Release()
			tbl = testlake.Append(t, tbl, rec)
			rec.Release()
		}
	}
	st, err := store.Open(t.Context(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return w, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, st
}

// deleteIDs deletes the rows of ids by merge-on-read, as iceberg-go writes
// it: a position delete file per partition on v2, deletion vectors on v3.
func deleteIDs(t *testing.T, w *testlake.Warehouse, id lake.Ident, ids ...int64) {
	t.Helper()
	tbl, err := lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	_, err = tbl.Delete(t.Context(), iceberg.IsIn(iceberg.Reference("id"), ids...), nil)
	require.NoError(t, err)
}

// deleteEquality commits equality deletes (on id) of ids in region.
func deleteEquality(t *testing.T, w *testlake.Warehouse, id lake.Ident, region string, ids ...int64) {
	t.Helper()
	ctx := t.Context()
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	sc := testlake.ArrowSchema(t, tbl)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, v := range ids {
		b.Field(0).(*array.Int64Builder).Append(v)
		b.Field(1).(*array.StringBuilder).Append(region)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var records iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	tx := tbl.NewTransaction()
	require.NoError(t, tx.CommitEqualityDeletes(ctx, []int{1}, records, nil))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
}

// upgrade moves the table to format version 3.
func upgrade(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
	t.Helper()
	tbl, err := lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpgradeFormatVersion(3))
	_, err = tx.Commit(t.Context())
	require.NoError(t, err)
}

// deleteKinds counts the table's deletes by kind.
func deleteKinds(t *testing.T, w *testlake.Warehouse, id lake.Ident) map[lake.DeleteKind]int {
	t.Helper()
	tbl, err := lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	st, err := lake.LoadState(t.Context(), id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	out := map[lake.DeleteKind]int{}
	for _, d := range st.DeleteFiles {
		out[d.DeleteKind]++
	}
	return out
}

// liveRows are the table's live rows read two ways: by the oracle that
// applies every kind of delete itself, and by iceberg-go's scan.
func liveRows(t *testing.T, w *testlake.Warehouse, id lake.Ident) (applied, scanned oracle.Sum) {
	t.Helper()
	tbl, err := lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	applied, err = oracle.ChecksumApplied(t.Context(), tbl)
	require.NoError(t, err)
	scanned, err = oracle.ChecksumIceberg(t.Context(), tbl)
	require.NoError(t, err)
	return applied, scanned
}

func actionKinds(p rewriter.DeleteRewritePlan) []string {
	out := []string{}
	for _, a := range p.Actions {
		out = append(out, a.Kind)
	}
	return out
}

// TestDeleteStepByPolicy: the delete step of floe optimize, decided by
// triggers.delete_files on tables iceberg-go wrote. When due, the dry run
// plans exactly the actions the run then commits, the run records the
// step with its typed report, deletes go down, the format version stays,
// and the live rows (read by the oracle that applies deletes itself, and
// by iceberg-go) are unchanged. When not due, turned off or waiting for
// approval it is recorded as such and changes nothing.
func TestDeleteStepByPolicy(t *testing.T) {
	// The other steps stay out of the way: only the delete step's work
	// changes the table.
	const quiet = "  enabled: {expire: false, orphans: false, compact: false, manifests: false}\n"
	cases := []struct {
		name     string
		version  int
		build    func(t *testing.T, w *testlake.Warehouse, id lake.Ident)
		policy   string
		status   control.RunStatus // of the step in the run
		reason   string            // in the decision's reason
		kinds    []string          // actions planned and run
		after    map[lake.DeleteKind]int
		version3 bool // the table is at format 3 when the step runs
	}{
		{
			name: "v2-merged-when-due", version: 2,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				deleteIDs(t, w, id, 3)
				deleteIDs(t, w, id, 104)
				deleteIDs(t, w, id, 7, 205)
			},
			policy: "default:\n" + quiet + "  triggers: {delete_files: 3}\n",
			status: control.StatusDone, reason: "3 position and 0 equality delete files ≥ triggers.delete_files 3",
			kinds: []string{rewriter.DeleteActionMerge},
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 1},
		},
		{
			name: "v2-not-due-below-the-trigger", version: 2,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				deleteIDs(t, w, id, 3)
				deleteIDs(t, w, id, 104)
			},
			policy: "default:\n" + quiet + "  triggers: {delete_files: 3}\n",
			status: control.StatusNotDue, reason: "2 position and 0 equality delete files: below triggers.delete_files 3",
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 2},
		},
		{
			name: "v2-turned-off", version: 2,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				deleteIDs(t, w, id, 3)
				deleteIDs(t, w, id, 104)
			},
			policy: "default:\n  enabled: {expire: false, orphans: false, compact: false, manifests: false, deletes: false}\n  triggers: {delete_files: 1}\n",
			status: control.StatusSkipped, reason: "turned off by the policy (enabled.deletes: false)",
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 2},
		},
		{
			name: "v2-waits-for-approval", version: 2,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				deleteIDs(t, w, id, 3)
				deleteIDs(t, w, id, 104)
			},
			policy: "default:\n" + quiet + "  approval: {deletes: required}\n  triggers: {delete_files: 1}\n",
			status: control.StatusSkipped, reason: "needs approval (approval.deletes: required): run it by hand with 'floe rewrite-deletes'",
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 2},
		},
		{
			name: "v2-equality-deletes-applied", version: 2,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				var ids []int64
				for i := range int64(100) {
					ids = append(ids, i*2)
				}
				deleteEquality(t, w, id, "eu", ids...)
				deleteEquality(t, w, id, "us", 1001)
			},
			policy: "default:\n" + quiet + "  triggers: {delete_files: 2, equality_delete_ratio: 0.2}\n",
			status: control.StatusDone, reason: "0 position and 2 equality delete files ≥ triggers.delete_files 2",
			kinds: []string{rewriter.DeleteActionApply},
			after: map[lake.DeleteKind]int{lake.EqualityDeletes: 1}, // us: under the ratio
		},
		{
			name: "v2-upgraded-to-v3-converted-to-vectors", version: 2,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				deleteIDs(t, w, id, 3, 104)
				deleteIDs(t, w, id, 1003)
				upgrade(t, w, id)
			},
			policy: "default:\n" + quiet + "  triggers: {delete_files: 2}\n",
			status: control.StatusDone, reason: "2 position and 0 equality delete files ≥ triggers.delete_files 2",
			kinds: []string{rewriter.DeleteActionConvert, rewriter.DeleteActionConvert},
			after: map[lake.DeleteKind]int{lake.DeletionVector: 3}, version3: true,
		},
		{
			name: "v3-vectors-not-counted", version: 3,
			build: func(t *testing.T, w *testlake.Warehouse, id lake.Ident) {
				deleteIDs(t, w, id, 3, 104, 1003)
			},
			policy: "default:\n" + quiet + "  triggers: {delete_files: 1}\n",
			status: control.StatusNotDue, reason: "0 position and 0 equality delete files: below triggers.delete_files 1",
			after: map[lake.DeleteKind]int{lake.DeletionVector: 3}, version3: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			w, id, st := regionTable(t, tc.version)
			tc.build(t, w, id)
			wantApplied, wantScanned := liveRows(t, w, id)
			svc := serviceOf(t, w, st, tc.policy)

			d, err := svc.Decide(ctx, control.Request{Table: id})
			require.NoError(t, err)
			sd := decisionByStep(t, d, control.StepDeletes)
			require.Equal(t, tc.status == control.StatusDone, sd.Run)
			require.Contains(t, sd.Reason, tc.reason)
			triggers, err := svc.Triggers(ctx, id)
			require.NoError(t, err)
			require.Contains(t, triggers, sd, "the scheduler's triggers are the decision's")

			dry, err := svc.DryRun(ctx, control.Request{Table: id})
			require.NoError(t, err)
			var planned []string
			for _, s := range dry.Steps {
				if s.Step != control.StepDeletes {
					continue
				}
				if tc.status == control.StatusDone {
					require.Equal(t, control.StatusPlanned, s.Status)
					require.NotNil(t, s.Deletes)
					planned = actionKinds(*s.Deletes)
				} else {
					require.Equal(t, tc.status, s.Status)
					require.Nil(t, s.Deletes)
				}
			}
			require.Equal(t, tc.kinds, nilIfEmpty(planned), "the dry run plans the actions")

			res, err := svc.Run(ctx, control.Request{Table: id})
			require.NoError(t, err)
			require.Equal(t, control.StatusDone, res.Run.Status)
			stored, err := control.GetRun(ctx, st, res.Run.ID)
			require.NoError(t, err)
			step, ok := stepsOf(stored)[control.StepDeletes]
			require.True(t, ok, "the run records the delete step")
			require.Equal(t, tc.status, step.Status, step.Error)
			if tc.status == control.StatusDone {
				require.NotNil(t, step.Report.Deletes, "the stored report decodes as the step's result")
				require.Equal(t, tc.kinds, actionKinds(step.Report.Deletes.Plan), "the run does what its dry run said")
				require.Empty(t, step.Report.Deletes.Skipped)
				require.Less(t, step.After.Metrics.PositionDeleteFiles+step.After.Metrics.EqualityDeleteFiles,
					step.Before.Metrics.PositionDeleteFiles+step.Before.Metrics.EqualityDeleteFiles, "fewer delete files to read")
			} else {
				require.Equal(t, sd.Reason, step.Reason)
				require.True(t, step.Report.IsZero())
			}

			require.Equal(t, tc.after, deleteKinds(t, w, id))
			gotApplied, gotScanned := liveRows(t, w, id)
			require.Equal(t, wantApplied, gotApplied, "live rows, deletes applied by the oracle")
			require.Equal(t, wantScanned, gotScanned, "live rows, read by iceberg-go")
			tbl, err := lake.LoadTable(ctx, w.Catalog, id)
			require.NoError(t, err)
			want := tc.version
			if tc.version3 {
				want = 3
			}
			require.Equal(t, want, tbl.Metadata().Version(), "the format version is kept")
		})
	}
}

// TestDeleteStepNoOpNotRepeated: delete files one per partition fire the
// trigger but give the planner nothing to merge; the step runs once,
// changes nothing, and is not due again until the table changes.
func TestDeleteStepNoOpNotRepeated(t *testing.T) {
	ctx := t.Context()
	w, id, st := regionTable(t, 2)
	deleteIDs(t, w, id, 3)
	deleteIDs(t, w, id, 1003)
	svc := serviceOf(t, w, st, "default:\n  enabled: {expire: false, orphans: false, compact: false, manifests: false}\n  triggers: {delete_files: 2}\n")

	first, err := svc.Run(ctx, control.Request{Table: id})
	require.NoError(t, err)
	step := stepsOf(first.Run)[control.StepDeletes]
	require.Equal(t, control.StatusDone, step.Status, step.Error)
	require.NotNil(t, step.Report.DeletePlan, "nothing to do: the plan is the report")
	require.Empty(t, step.Report.DeletePlan.Actions)

	d, err := svc.Decide(ctx, control.Request{Table: id})
	require.NoError(t, err)
	sd := decisionByStep(t, d, control.StepDeletes)
	require.False(t, sd.Run)
	require.Contains(t, sd.Reason, "delete maintenance run "+first.Run.ID+" changed nothing at this snapshot")

	deleteIDs(t, w, id, 4) // the table changes: a second eu file to merge
	d, err = svc.Decide(ctx, control.Request{Table: id})
	require.NoError(t, err)
	require.True(t, decisionByStep(t, d, control.StepDeletes).Run)
}

// TestDeleteStepAskedByName: a step kept for a person (approval.deletes:
// required) runs when asked for by name, whatever its trigger, and the run
// records who approved it.
func TestDeleteStepAskedByName(t *testing.T) {
	ctx := t.Context()
	w, id, st := regionTable(t, 2)
	deleteIDs(t, w, id, 3)
	deleteIDs(t, w, id, 104)
	want, _ := liveRows(t, w, id)
	svc := serviceOf(t, w, st, "default:\n  approval: {deletes: required}\n")

	res, err := svc.Run(ctx, control.Request{Table: id, Steps: []string{control.StepDeletes}, User: "ana"})
	require.NoError(t, err)
	require.Len(t, res.Run.Steps, 1)
	step := res.Run.Steps[0]
	require.Equal(t, control.StatusDone, step.Status, step.Error)
	require.NotNil(t, step.Report.Deletes)
	require.Equal(t, []string{rewriter.DeleteActionMerge}, actionKinds(step.Report.Deletes.Plan))
	require.Contains(t, res.Decision.Approvals, control.Approval{Step: control.StepDeletes, What: "step deletes", By: "ana", How: "asked", At: res.Decision.Approvals[0].At})
	got, _ := liveRows(t, w, id)
	require.Equal(t, want, got)
}

func decisionByStep(t *testing.T, d control.Decision, step string) control.StepDecision {
	t.Helper()
	for _, s := range d.Steps {
		if s.Step == step {
			return s
		}
	}
	require.FailNow(t, "no decision", "step %s is not in the decision %+v", step, d.Steps)
	return control.StepDecision{}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
