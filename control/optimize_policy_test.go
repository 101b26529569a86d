package control_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

func policyOf(t *testing.T, id lake.Ident, yaml string) policy.Policy {
	t.Helper()
	set, err := policy.ParseFile("floe.yaml", []byte(yaml))
	require.NoError(t, err)
	eff, err := set.Resolve(id)
	require.NoError(t, err)
	return eff.Policy
}

// serviceOf is a service over warehouse w's catalog and store st, with the
// policies of yaml (floe.yaml's policies: section's body).
func serviceOf(t *testing.T, w *testlake.Warehouse, st *store.Store, yaml string) *control.Service {
	t.Helper()
	set, err := policy.ParseFile("floe.yaml", []byte(yaml))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, DefaultCatalog: w.Name, Policies: set}
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})
	require.NoError(t, err)
	return svc
}

func stepsOf(run control.Run) map[string]control.Step {
	out := map[string]control.Step{}
	for _, s := range run.Steps {
		out[s.Name] = s
	}
	return out
}

// TestOptimizeByPolicyWaitsForApproval: a fixed layout that needs approval
// is proposed as a plan and holds the compaction back, the steps that need
// none run; once approved, the next run rewrites the table into it, and
// an independent read finds every row.
func TestOptimizeByPolicyWaitsForApproval(t *testing.T) {
	ctx := t.Context()
	w, id, st := setup(t)
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	svc := serviceOf(t, w, st, "default:\n  layout: sort(id)\n")

	// The dry run says what the run then does: the plan it would propose,
	// and the compaction held back.
	dry, err := svc.DryRun(ctx, control.Request{Table: id})
	require.NoError(t, err)
	require.NotNil(t, dry.Decision.Plan)
	require.Equal(t, control.PlanPropose, dry.Decision.Plan.Action)
	require.False(t, dry.Decision.Plan.Stored)
	plans, err := control.ListPlans(ctx, st, control.PlanFilter{Table: id.String()})
	require.NoError(t, err)
	require.Empty(t, plans, "a dry run stores no plan")

	pr, err := svc.Run(ctx, control.Request{Table: id, User: "ana"})
	require.NoError(t, err)
	require.NotNil(t, pr.Decision.Plan)
	require.Equal(t, dry.Decision.Plan.Plan.ID, pr.Decision.Plan.Plan.ID, "the run proposes the plan its dry run showed")
	require.True(t, pr.Decision.Plan.Stored)
	require.Equal(t, control.PlanProposed, pr.Decision.Plan.Plan.State)
	require.Equal(t, "sort(id)", pr.Decision.Plan.Plan.Layout.String())
	require.Equal(t, "ana", pr.Run.StartedBy)
	steps := stepsOf(pr.Run)
	require.Equal(t, control.StatusSkipped, steps[control.StepCompact].Status)
	require.Contains(t, steps[control.StepCompact].Reason, "waits for approval of plan "+pr.Decision.Plan.Plan.ID)
	require.Equal(t, control.StatusDone, steps[control.StepOrphans].Status)
	stored, err := control.GetRun(ctx, st, pr.Run.ID)
	require.NoError(t, err)
	require.Equal(t, steps[control.StepCompact].Reason, stepsOf(stored)[control.StepCompact].Reason, "the reason is recorded")
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	require.Len(t, dataFiles(t, tbl), 8, "nothing rewritten before approval")

	planID := pr.Decision.Plan.Plan.ID
	_, err = control.ApprovePlan(ctx, st, planID, "bo", time.Now())
	require.NoError(t, err)
	pr2, err := svc.Run(ctx, control.Request{Table: id, User: "ana"})
	require.NoError(t, err)
	require.Equal(t, planID, pr2.Run.PlanID)
	require.Equal(t, control.StatusDone, stepsOf(pr2.Run)[control.StepCompact].Status)
	require.Equal(t, []control.Approval{{Step: control.StepCompact, What: "plan " + planID + " (sort(id))", By: "bo", How: "plan",
		At: pr2.Run.Approvals[0].At}}, []control.Approval(pr2.Run.Approvals), "the run records whose approval it rests on")
	stored2, err := control.GetRun(ctx, st, pr2.Run.ID)
	require.NoError(t, err)
	require.Equal(t, pr2.Run.Approvals[0].By, stored2.Approvals[0].By)
	plan, err := control.GetPlan(ctx, st, planID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, plan.State)
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, "id", lake.SortOrderText(tbl.Metadata().SortOrder(), tbl.Metadata().CurrentSchema()))

	// The table is in the policy's layout now: a later run keeps it without a plan.
	pr3, err := svc.Run(ctx, control.Request{Table: id})
	require.NoError(t, err)
	require.Nil(t, pr3.Decision.Plan)
	require.Equal(t, "sort(id)", pr3.Decision.Layout.String())
}

// TestOptimizeByPolicyTriggers: the policy's triggers decide whether the
// compaction runs, its switches turn steps off, and a compaction not due
// counts as fresh.
func TestOptimizeByPolicyTriggers(t *testing.T) {
	ctx := t.Context()
	w, id, st := setup(t)
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)

	quiet := serviceOf(t, w, st, "default:\n  layout: none\n  triggers: {small_file_ratio: 0, delete_ratio: 0, clustering_depth: 0}\n  enabled: {orphans: false}\n")
	pr, err := quiet.Run(ctx, control.Request{Table: id})
	require.NoError(t, err)
	steps := stepsOf(pr.Run)
	require.Equal(t, control.StatusNotDue, steps[control.StepCompact].Status)
	require.Contains(t, steps[control.StepCompact].Reason, "below every trigger")
	require.Equal(t, control.StatusSkipped, steps[control.StepOrphans].Status)
	require.Contains(t, steps[control.StepOrphans].Reason, "enabled.orphans: false")
	last, err := control.LastCompaction(ctx, st, id.String())
	require.NoError(t, err)
	require.False(t, last.IsZero(), "a compaction not due counts as fresh")

	busy := serviceOf(t, w, st, "default:\n  layout: none\n")
	pr, err = busy.Run(ctx, control.Request{Table: id})
	require.NoError(t, err)
	steps = stepsOf(pr.Run)
	require.Equal(t, control.StatusDone, steps[control.StepCompact].Status)
	d := pr.Decision.Steps[2]
	require.True(t, d.Run)
	require.Contains(t, d.Reason, "small-file ratio")
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	require.Less(t, len(dataFiles(t, tbl)), 8)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestDecide(t *testing.T) {
	p := policy.Default()
	h := func(m lake.Metrics) lake.Health { return lake.Health{Metrics: m} }
	tests := []struct {
		name   string
		m      lake.Metrics
		step   int
		run    bool
		reason string
	}{
		{"many snapshots", lake.Metrics{Snapshots: 600}, 0, true, "600 snapshots ≥ triggers.snapshots 500"},
		{"old snapshots", lake.Metrics{Snapshots: 3, OldestSnapshotAgeSec: 6 * 86400}, 0, true, "oldest snapshot 144 h old"},
		{"young snapshots", lake.Metrics{Snapshots: 3, OldestSnapshotAgeSec: 3600}, 0, false, "nothing older than the 120 h expiry age"},
		{"orphans always", lake.Metrics{}, 1, true, "only by listing"},
		{"small files", lake.Metrics{DataFiles: 100, SmallFileRatio: 0.5}, 2, true, "small-file ratio 0.50"},
		{"deletes", lake.Metrics{DataFiles: 10, DeleteFiles: 3, DeleteToDataRatio: 0.3}, 2, true, "delete ratio 0.30"},
		{"clustering", lake.Metrics{DataFiles: 10, Clustering: []lake.Clustering{{Column: "ts", AverageDepth: 6}}}, 2, true, "clustering depth 6.0 on ts"},
		{"healthy files", lake.Metrics{DataFiles: 10, SmallFileRatio: 0.1}, 2, false, "below every trigger"},
		{"delete files", lake.Metrics{DataFiles: 100, DeleteFiles: 10, PositionDeleteFiles: 8, EqualityDeleteFiles: 2}, 3, true, "8 position and 2 equality delete files ≥ triggers.delete_files 10"},
		{"few delete files", lake.Metrics{DataFiles: 100, DeleteFiles: 9, PositionDeleteFiles: 9}, 3, false, "9 position and 0 equality delete files: below triggers.delete_files 10"},
		{"deletion vectors not counted", lake.Metrics{DataFiles: 100, DeleteFiles: 60, DeletionVectors: 60}, 3, false, "0 position and 0 equality delete files"},
		{"manifests", lake.Metrics{DataFiles: 100, Manifests: 10}, 4, true, "100 manifests per 1,000 data files"},
		{"few manifests", lake.Metrics{DataFiles: 1000, Manifests: 10}, 4, false, "below triggers.manifests_per_1k_files 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := control.Decide(h(tt.m), p, control.History{})[tt.step]
			require.Equal(t, tt.run, d.Run)
			require.Contains(t, d.Reason, tt.reason)
			if !tt.run {
				require.Equal(t, control.StatusNotDue, d.Status)
			}
		})
	}
	q := p
	q.Approval.Expire = policy.ApprovalRequired
	d := control.Decide(h(lake.Metrics{Snapshots: 600}), q, control.History{})[0]
	require.False(t, d.Run)
	require.Equal(t, control.StatusSkipped, d.Status)
	require.Contains(t, d.Reason, "approval.expire: required")

	// A delete step that changed nothing at this snapshot is not due
	// again until the table moves; the compaction's history is its own.
	m := lake.Metrics{DataFiles: 100, PositionDeleteFiles: 12}
	hist := control.History{UnchangedDeletes: &control.NoOpCompaction{RunID: "r1", SnapshotID: 7}}
	d = control.Decide(lake.Health{SnapshotID: 7, Metrics: m}, p, hist)[3]
	require.False(t, d.Run)
	require.Contains(t, d.Reason, "delete maintenance run r1 changed nothing at this snapshot (7)")
	require.True(t, control.Decide(lake.Health{SnapshotID: 8, Metrics: m}, p, hist)[3].Run, "the table moved")
	require.True(t, control.Decide(lake.Health{SnapshotID: 7, Metrics: m}, p, control.History{Unchanged: hist.UnchangedDeletes})[3].Run)
}

func dataFiles(t *testing.T, tbl *table.Table) []lake.File {
	t.Helper()
	id := lake.Ident{Catalog: "_", Namespace: []string{"_"}, Name: "_"}
	state, err := lake.LoadState(t.Context(), id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return state.DataFiles
}

// TestOptimizeCancelledIsRecordedCancelled: a run stopped by its context
// mid-compaction (SIGTERM in the daemon) is recorded cancelled, not
// failed, and the table keeps every row.
func TestOptimizeCancelledIsRecordedCancelled(t *testing.T) {
	w, id, st := setup(t)
	tbl, err := lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(t.Context(), tbl)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Progress: func(done, total int, _, _ int64) { cancel() },
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, control.StatusCancelled, run.Status)
	stored, err := control.GetRun(t.Context(), st, run.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusCancelled, stored.Status)
	tbl, err = lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(t.Context(), tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// reportJSON is a step report's JSON, as the CLI prints it and the store
// keeps it.
func reportJSON(t *testing.T, r control.StepReport) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return b
}

// TestPolicyLayoutThatLosesIsNotProposed: no plan that loses, by any path.
// A table appended in id order serves its id queries well; a policy's
// fixed layout sorting by another column is projected to skip far fewer
// files, so the run proposes no plan and says why, and its dry run says
// the same.
func TestPolicyLayoutThatLosesIsNotProposed(t *testing.T) {
	ctx := t.Context()
	// Enough rows for a dozen files at the table's 16 KiB target: far from
	// a file-count edge, so the projection's error bar stays narrow.
	pl := setupPlanWith(t, 8000, func(file, j int) int64 { return int64(file*8000 + j) })
	now := time.Now().UTC()
	pl.collected(t, now.Add(-time.Hour), now.Add(-2*time.Hour), now.Add(-3*time.Hour))
	svc := serviceOf(t, pl.w, pl.st, "default:\n  layout: sort(v)\n")
	for _, dry := range []bool{true, false} {
		var d control.Decision
		if dry {
			out, err := svc.DryRun(ctx, control.Request{Table: pl.id})
			require.NoError(t, err)
			d = *out.Decision
		} else {
			out, err := svc.Run(ctx, control.Request{Table: pl.id, User: "ana"})
			require.NoError(t, err)
			d = out.Decision
			require.Equal(t, control.StatusDone, out.Run.Status)
		}
		require.Nil(t, d.Plan, "dry run %v: no plan proposed", dry)
		require.Equal(t, "binpack", d.Layout.String())
		require.Contains(t, d.LayoutReason, "the policy's layout sort(v) is projected to skip", "dry run %v", dry)
		require.Contains(t, d.LayoutReason, "not proposed; change the policy's layout")
	}
	plans, err := control.ListPlans(ctx, pl.st, control.PlanFilter{Table: pl.id.String()})
	require.NoError(t, err)
	require.Empty(t, plans)
}

// TestAutoKeepsTheDeclaredLayout: with layout: auto and no collected queries, a table a
// floe rewrite put into sort(id) is compacted into sort(id) again when its small-file
// trigger fires (bin-pack would merge the appended files unsorted); once another writer
// changes the table's sort order, that order is the table's own, and auto falls back to
// bin-pack rather than revert it.
func TestAutoKeepsTheDeclaredLayout(t *testing.T) {
	ctx := t.Context()
	w, id, st := setup(t)
	typed := serviceOf(t, w, st, "default:\n  layout: none\n")
	sorted, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	pr, err := typed.Run(ctx, control.Request{Table: id, Steps: []string{control.StepCompact}, Layout: &sorted})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, stepsOf(pr.Run)[control.StepCompact].Status)

	auto := serviceOf(t, w, st, "default:\n  layout: auto\n  triggers: {small_file_ratio: 0.1, delete_ratio: 0, clustering_depth: 0}\n  enabled: {orphans: false}\n")
	appendSmall := func(from int64) *table.Table {
		t.Helper()
		tbl, err := lake.LoadTable(ctx, w.Catalog, id)
		require.NoError(t, err)
		for i := range int64(5) {
			b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
			for j := range int64(20) {
				b.Field(0).(*array.Int64Builder).Append(from - i*20 - j)
				b.Field(1).(*array.StringBuilder).Append("late")
			}
			rec := b.NewRecordBatch()
			b.Release()
			tbl = testlake.Append(t, tbl, rec)
			rec.Release()
		}
		return tbl
	}
	tbl := appendSmall(10_000)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	run, err := auto.Run(ctx, control.Request{Table: id, Trigger: control.TriggerScheduled})
	require.NoError(t, err)
	require.Equal(t, "sort", string(run.Decision.Layout.Strategy), run.Decision.LayoutReason)
	require.Contains(t, run.Decision.LayoutReason, "no queries collected for the table yet: keeps the layout the table declares, sort(id)")
	compact := stepsOf(run.Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status, compact.Reason)
	for _, d := range run.Decision.Steps {
		if d.Step == control.StepCompact {
			require.Contains(t, d.Reason, "small-file ratio", "the trigger decides when")
		}
	}
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got, "every row is kept")
	state, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	order := tbl.SortOrder().OrderID()
	for _, f := range state.DataFiles {
		require.NotNil(t, f.SortOrderID, f.Path)
		require.Equal(t, order, *f.SortOrderID, "%s is written in the declared sort order", f.Path)
	}

	// Another writer sorts the table by name now: not floe's to revert.
	byName, err := table.NewSortOrder(order+1, []table.SortField{{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.ReplaceSortOrder(byName))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	appendSmall(20_000)
	run, err = auto.Run(ctx, control.Request{Table: id, Trigger: control.TriggerScheduled})
	require.NoError(t, err)
	require.Equal(t, "binpack", string(run.Decision.Layout.Strategy), run.Decision.LayoutReason)
	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	require.Equal(t, "name", lake.SortOrderText(tbl.Metadata().SortOrder(), tbl.Metadata().CurrentSchema()))
}
