package control_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

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
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// planLake is a table whose eight files each hold every eighth id, so that
// every file spans the whole id range: sorting by id changes its layout.
// setupPlan's files hold 4,000 rows each, so that sorted by id (which
// encodes in under half the bytes) they still fill several files of the
// table's 16 KiB target: with fewer, the rewrite writes one file, in which
// no layout skips anything, and the simulator now projects exactly that.
type planLake struct {
	w  *testlake.Warehouse
	id lake.Ident
	st *store.Store
}

func setupPlan(t *testing.T) *planLake {
	t.Helper()
	return setupPlanWith(t, 4000, func(file, j int) int64 { return int64(j*8 + file) })
}

// setupPlanWith is setupPlan's table with rows rows per file, row j of
// file file given id id(file, j).
func setupPlanWith(t *testing.T, rows int, id func(file, j int) int64) *planLake {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	w.CreateTable(t, "db", "p", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "16384"}, nil)
	st, err := store.Open(context.Background(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	pl := &planLake{w: w, id: lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "p"}, st: st}
	for i := range 8 {
		pl.appendRows(t, func(j int) int64 { return id(i, j) }, rows)
	}
	return pl
}

func (pl *planLake) table(t *testing.T) *table.Table {
	t.Helper()
	tbl, err := lake.LoadTable(context.Background(), pl.w.Catalog, pl.id)
	require.NoError(t, err)
	return tbl
}

func (pl *planLake) appendRows(t *testing.T, id func(j int) int64, n int) {
	t.Helper()
	tbl := pl.table(t)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for j := range n {
		b.Field(0).(*array.Int64Builder).Append(id(j))
		b.Field(1).(*array.Int64Builder).Append(id(j) % 7)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	testlake.Append(t, tbl, rec)
}

func (pl *planLake) checksum(t *testing.T) oracle.Sum {
	t.Helper()
	sum, err := oracle.ChecksumIceberg(context.Background(), pl.table(t))
	require.NoError(t, err)
	return sum
}

func (pl *planLake) snapshot(t *testing.T) int64 {
	t.Helper()
	return pl.table(t).Metadata().CurrentSnapshot().SnapshotID
}

// propose proposes spec with a made-up projection.
func (pl *planLake) propose(t *testing.T, spec string) control.Plan {
	t.Helper()
	l, err := layout.Parse(spec)
	require.NoError(t, err)
	proj := simulator.Projection{Layout: l, FilesBefore: 8, FilesAfter: 3, SkippedPct: 66, RewriteBytes: 40 << 10,
		PerQuery: []simulator.QueryResult{{}}}
	p, err := control.ProposePlan(context.Background(), pl.w.Catalog, pl.st, pl.id, l, proj, "carol",
		control.WithBaseline(simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategyCurrent}, SkippedPct: 0}))
	require.NoError(t, err)
	return p
}

func (pl *planLake) approved(t *testing.T, spec string) control.Plan {
	t.Helper()
	p := pl.propose(t, spec)
	p, err := control.ApprovePlan(context.Background(), pl.st, p.ID, "alice", time.Time{})
	require.NoError(t, err)
	return p
}

func TestProposePlanIsIdempotent(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	p := pl.propose(t, "sort(ID)")
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{12}$`), p.ID)
	require.Equal(t, control.PlanProposed, p.State)
	require.Equal(t, "local.db.p", p.Table)
	require.Equal(t, "sort(id)", p.Layout.String(), "columns take the schema's spelling")
	require.Equal(t, pl.snapshot(t), p.BaseSnapshot)
	require.Equal(t, "carol", p.CreatedBy)
	pp := p.Projection
	require.Equal(t, "sort(id)", pp.Layout.String())
	require.InDelta(t, 66.0, pp.SkippedPct, 1e-9)
	require.NotNil(t, pp.CurrentSkippedPct)
	require.Nil(t, pp.PerQuery, "per-query detail is not stored")
	require.Empty(t, pp.ZOrderMode)

	again := pl.propose(t, "sort(id)")
	require.Equal(t, p, again, "the same table, snapshot and layout is the same plan")
	_, err := control.ApprovePlan(ctx, pl.st, p.ID, "alice", time.Time{})
	require.NoError(t, err)
	again = pl.propose(t, "sort(id)")
	require.Equal(t, p.ID, again.ID)
	require.Equal(t, control.PlanApproved, again.State, "proposing again keeps the decision")

	other := pl.propose(t, "sort(id) target 8KiB")
	require.NotEqual(t, p.ID, other.ID, "the target file size is part of the layout")
	z := pl.propose(t, "zorder(id, v)")
	l, err := layout.Parse("zorder(id, v)")
	require.NoError(t, err)
	zr, err := control.ProposePlan(ctx, pl.w.Catalog, pl.st, pl.id, l, simulator.Projection{}, "carol", control.WithZOrderMode(layout.ZOrderRank))
	require.NoError(t, err)
	require.NotEqual(t, z.ID, zr.ID, "the z-order key is part of a zorder plan")
	require.Equal(t, "rank", zr.Projection.ZOrderMode)

	pl.appendRows(t, func(j int) int64 { return int64(100000 + j) }, 10)
	moved := pl.propose(t, "sort(id)")
	require.NotEqual(t, p.ID, moved.ID, "a new base snapshot is a new plan")

	for _, bad := range []string{"sort(nope)", "current"} {
		l, err := layout.Parse(bad)
		require.NoError(t, err)
		_, err = control.ProposePlan(ctx, pl.w.Catalog, pl.st, pl.id, l, simulator.Projection{}, "carol")
		require.Error(t, err, bad)
	}
}

func TestDecidePlan(t *testing.T) {
	ctx := context.Background()
	approve := func(st *store.Store, id string) (control.Plan, error) {
		return control.ApprovePlan(ctx, st, id, "alice", time.Time{})
	}
	reject := func(st *store.Store, id string) (control.Plan, error) {
		return control.RejectPlan(ctx, st, id, "bob", time.Time{})
	}
	type decide func(*store.Store, string) (control.Plan, error)
	for _, tc := range []struct {
		name      string
		first     decide // nil: the plan stays proposed
		then      decide
		wantState control.PlanState
		wantBy    string
		wantErr   string
	}{
		{name: "approve", then: approve, wantState: control.PlanApproved, wantBy: "alice"},
		{name: "reject", then: reject, wantState: control.PlanRejected, wantBy: "bob"},
		{name: "approve twice", first: approve, then: approve, wantErr: "approve plan %s: it is approved"},
		{name: "reject approved", first: approve, then: reject, wantErr: "reject plan %s: it is approved"},
		{name: "approve rejected", first: reject, then: approve, wantErr: "approve plan %s: it is rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(ctx, ":memory:")
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, st.Close()) })
			_, err = st.InsertPlan(ctx, store.PlanRecord{ID: "p1", Table: "local.db.p", Layout: "sort(id)", State: string(control.PlanProposed)})
			require.NoError(t, err)
			if tc.first != nil {
				_, err := tc.first(st, "p1")
				require.NoError(t, err)
			}
			p, err := tc.then(st, "p1")
			if tc.wantErr != "" {
				require.ErrorIs(t, err, store.ErrStateConflict)
				var pse *control.PlanStateError
				require.ErrorAs(t, err, &pse)
				require.ErrorContains(t, err, fmt.Sprintf(tc.wantErr, "p1"))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantState, p.State)
			require.Equal(t, tc.wantBy, p.DecidedBy)
			require.False(t, p.DecidedAt.IsZero())
		})
	}
	st, err := store.Open(ctx, ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	_, err = approve(st, "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestRunRefusesAPlanThatIsNotApproved(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	proposed := pl.propose(t, "sort(id)")
	rejected := pl.propose(t, "zorder(id, v)")
	_, err := control.RejectPlan(ctx, pl.st, rejected.ID, "bob", time.Time{})
	require.NoError(t, err)
	snap, sum := pl.snapshot(t), pl.checksum(t)
	for _, tc := range []struct {
		name, id, want string
		state          control.PlanState
	}{
		{"proposed", proposed.ID, "plan " + proposed.ID + " is proposed, approve it first: floe plan approve " + proposed.ID, control.PlanProposed},
		{"rejected", rejected.ID, "plan " + rejected.ID + " is rejected; only an approved plan runs", control.PlanRejected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: tc.id})
			require.ErrorIs(t, err, store.ErrStateConflict)
			require.EqualError(t, err, tc.want)
			p, err := control.GetPlan(ctx, pl.st, tc.id)
			require.NoError(t, err)
			require.Equal(t, tc.state, p.State)
		})
	}
	_, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: "nope"})
	require.ErrorIs(t, err, store.ErrNotFound)
	require.Equal(t, snap, pl.snapshot(t), "a refused plan leaves the table alone")
	require.Equal(t, sum, pl.checksum(t))
	runs, err := pl.st.Runs(ctx, "", 0)
	require.NoError(t, err)
	require.Empty(t, runs, "a refused plan starts no run")
}

func TestRunApprovedPlan(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	want := pl.checksum(t)
	// A small target, so that the rewrite writes several files.
	p := pl.approved(t, "sort(id) target 4KiB")

	// A dry run of the plan changes neither the table nor the plan.
	snap := pl.snapshot(t)
	dry, err := control.PlanOptimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.NoError(t, err)
	require.Equal(t, p.ID, dry.PlanID)
	require.Equal(t, "sort(id) target 4096", dry.Steps[2].Compact.Layout.String(), "the dry run plans the plan's layout")
	require.Equal(t, snap, pl.snapshot(t))
	runs, err := pl.st.Runs(ctx, "", 0)
	require.NoError(t, err)
	require.Empty(t, runs, "a dry run records no run")
	got, err := control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanApproved, got.State)

	run, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{
		PlanID:  p.ID,
		Expire:  rewriter.ExpireOptions{OlderThan: time.Millisecond},
		Compact: rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}}, // the plan's layout wins
	})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.Equal(t, p.ID, run.PlanID)
	stored, err := control.GetRun(ctx, pl.st, run.ID)
	require.NoError(t, err)
	require.Equal(t, p.ID, stored.PlanID)
	got, err = control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, got.State)
	require.Equal(t, "alice", got.DecidedBy, "the approver stays on the plan")
	require.Equal(t, want, pl.checksum(t), "running the plan changed the rows")

	// The files are in the plan's layout: the table sorts by id and the
	// files follow each other on it.
	tbl := pl.table(t)
	state, err := lake.LoadState(ctx, pl.id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	require.Greater(t, len(state.DataFiles), 1)
	var sortIDs []int
	for _, f := range state.Metadata.SortOrder().Fields() {
		sortIDs = append(sortIDs, f.SourceIDs...)
	}
	require.Equal(t, []int{1}, sortIDs, "the table sorts by id")
	for _, f := range state.DataFiles {
		require.NotNil(t, f.SortOrderID)
	}
	require.InDelta(t, 1.0, lake.MeasureClustering("id", 1, state.DataFiles).AverageDepth, 1e-9, "files overlap on id")

	_, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	var pse *control.PlanStateError
	require.ErrorAs(t, err, &pse)
	require.Equal(t, control.PlanDone, pse.State, "a done plan does not run again")
}

func TestPlanSurvivesAppends(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	p := pl.approved(t, "sort(id)")
	pl.appendRows(t, func(j int) int64 { return int64(50000 + j) }, 300)
	want := pl.checksum(t)
	run, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.Equal(t, want, pl.checksum(t))
	got, err := control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, got.State)
}

func TestStalePlanRefusesToRun(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	p := pl.approved(t, "sort(id)")
	// Another compaction rewrites the files the plan was made from.
	other, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{
		Compact: rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}},
	})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, other.Status)
	snap, sum := pl.snapshot(t), pl.checksum(t)

	_, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.ErrorIs(t, err, control.ErrStalePlan)
	require.ErrorContains(t, err, "no longer live")
	require.ErrorContains(t, err, "re-plan: floe plan local.db.p")
	got, err := control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanStale, got.State)
	require.Equal(t, snap, pl.snapshot(t))
	require.Equal(t, sum, pl.checksum(t))
	runs, err := pl.st.Runs(ctx, "", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1, "only the other compaction ran")

	_, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.ErrorContains(t, err, "is stale")
}

func TestCheckPlan(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	tbl := pl.table(t)
	cur := tbl.Metadata().CurrentSnapshot().SnapshotID
	parent := *tbl.Metadata().CurrentSnapshot().ParentSnapshotID
	for _, tc := range []struct {
		name string
		plan control.Plan
		want string // a fragment of the reason; "" when the plan holds
	}{
		{"at base", control.Plan{ID: "a", Layout: mustLayout(t, "sort(id)"), BaseSnapshot: cur}, ""},
		{"appended since base", control.Plan{ID: "b", Layout: mustLayout(t, "sort(id)"), BaseSnapshot: parent}, ""},
		{"column gone", control.Plan{ID: "c", Layout: mustLayout(t, "sort(gone)"), BaseSnapshot: cur}, `no column "gone"`},
		{"base expired", control.Plan{ID: "d", Layout: mustLayout(t, "sort(id)"), BaseSnapshot: 42}, "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, err := control.CheckPlan(ctx, tbl, tc.plan)
			require.NoError(t, err)
			if tc.want == "" {
				require.Empty(t, reason)
				return
			}
			require.Contains(t, reason, tc.want)
		})
	}
}

func TestFailingStepFailsThePlan(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	p := pl.approved(t, "sort(id)")
	// Options the run refuses (an orphan age under the 24h floor) start no
	// run and leave the plan approved.
	run, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{
		PlanID:  p.ID,
		Orphans: rewriter.OrphanOptions{OlderThan: time.Hour},
	})
	require.ErrorIs(t, err, rewriter.ErrUnsafeAge)
	require.Empty(t, run.ID)
	got, err := control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanApproved, got.State)

	// A data file gone from storage fails the compaction: the run and the
	// plan fail. Put back, the plan approved again runs.
	state := pl.state(t)
	restore := pl.w.Hide(t, state.DataFiles[0].Path)
	run, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.Error(t, err)
	require.Equal(t, control.StatusFailed, run.Status)
	restore()
	stored, err := control.GetRun(ctx, pl.st, run.ID)
	require.NoError(t, err)
	require.Equal(t, p.ID, stored.PlanID)
	require.Equal(t, control.StatusFailed, stored.Status)
	got, err = control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanFailed, got.State)

	// Approving a failed plan again retries it.
	_, err = control.RejectPlan(ctx, pl.st, p.ID, "bob", time.Time{})
	require.ErrorIs(t, err, store.ErrStateConflict, "a failed plan cannot be rejected")
	again, err := control.ApprovePlan(ctx, pl.st, p.ID, "alice", time.Time{})
	require.NoError(t, err)
	require.Equal(t, control.PlanApproved, again.State)
	run, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	got, err = control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, got.State)
}

// TestPlanRunCutsTheProjectedCells: a Hilbert plan carries the quantiles its projection
// ordered the sample by, and the run uses them rather than fitting its own. A plan whose
// quantiles miss a layout column fails its run, which shows they reach the rewrite.
func TestPlanRunCutsTheProjectedCells(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	st, err := lake.LoadState(ctx, pl.id, pl.table(t), lake.LoadOptions{})
	require.NoError(t, err)
	l, err := layout.Parse("hilbert(id, v)")
	require.NoError(t, err)
	l.TargetFileSizeBytes = 16 << 10
	queries := []simulator.Query{{ID: "q"}}
	projs, err := simulator.Project(ctx, st, []layout.Layout{l}, queries, simulator.ProjectOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, projs[0].Quantiles, "a Hilbert projection records its quantiles")

	// Quantiles of id only: the run must refuse them.
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, pl.table(t)))
	for j := range 100 {
		b.Field(0).(*array.Int64Builder).Append(int64(j))
		b.Field(1).(*array.Int64Builder).Append(int64(j % 7))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"id"}, 4)
	require.NoError(t, err)
	partial := projs[0]
	partial.Quantiles, err = q.MarshalJSON()
	require.NoError(t, err)
	bad, err := control.ProposePlan(ctx, pl.w.Catalog, pl.st, pl.id, l, partial, "carol", control.WithZOrderMode(layout.ZOrderRank))
	require.NoError(t, err)
	_, err = control.ApprovePlan(ctx, pl.st, bad.ID, "alice", time.Time{})
	require.NoError(t, err)
	before := pl.checksum(t)
	_, err = control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: bad.ID})
	require.ErrorContains(t, err, "do not cover layout column v")
	require.Equal(t, before, pl.checksum(t), "a refused rewrite leaves the rows as they were")

	// The projection's own quantiles run (another target size: another plan).
	l.TargetFileSizeBytes = 32 << 10
	projs, err = simulator.Project(ctx, st, []layout.Layout{l}, queries, simulator.ProjectOptions{})
	require.NoError(t, err)
	good, err := control.ProposePlan(ctx, pl.w.Catalog, pl.st, pl.id, l, projs[0], "carol", control.WithZOrderMode(layout.ZOrderRank))
	require.NoError(t, err)
	require.NotEqual(t, bad.ID, good.ID)
	_, err = control.ApprovePlan(ctx, pl.st, good.ID, "alice", time.Time{})
	require.NoError(t, err)
	run, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: good.ID})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.Equal(t, before, pl.checksum(t), "same rows")
	got, err := control.GetPlan(ctx, pl.st, good.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, got.State)
}

// A killed optimize leaves its run and plan running; once the run's lease
// lapses, recovery marks the run abandoned with the reason and returns the
// plan to approved, and the plan runs again. A live run is left alone.
func TestAbandonedRunReturnsItsPlan(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	p := pl.approved(t, "sort(id) target 4KiB")
	now := time.Now()
	// What a process killed mid-run leaves: the plan running, the run
	// running with a lease that nobody renews any more.
	require.NoError(t, pl.st.TransitionPlan(ctx, p.ID, string(control.PlanApproved), string(control.PlanRunning), p.DecidedBy, now))
	require.NoError(t, pl.st.StartRun(ctx, store.RunRecord{ID: "killed", Table: pl.id.String(), PlanID: p.ID, Status: string(control.StatusRunning),
		StartedAt: now.Add(-10 * time.Minute), LeaseExpiresAt: now.Add(-5 * time.Minute)}))
	require.NoError(t, pl.st.PutRunStep(ctx, "killed", store.StepRecord{Step: control.StepCompact, Status: string(control.StatusRunning)}))
	require.NoError(t, pl.st.StartRun(ctx, store.RunRecord{ID: "live", Table: pl.id.String(), Status: string(control.StatusRunning),
		StartedAt: now, LeaseExpiresAt: now.Add(time.Minute)}))
	_, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	var pse *control.PlanStateError
	require.ErrorAs(t, err, &pse, "before recovery the plan is refused as running")

	recovered, err := pl.st.RecoverAbandoned(ctx, now)
	require.NoError(t, err)
	require.Len(t, recovered, 1)
	require.Equal(t, "killed", recovered[0].ID)
	require.Equal(t, store.RunAbandoned, recovered[0].Status)
	require.Contains(t, recovered[0].Error, "lease")
	require.False(t, recovered[0].EndedAt.IsZero())
	require.Equal(t, store.RunAbandoned, recovered[0].Steps[0].Status)
	live, err := pl.st.Run(ctx, "live")
	require.NoError(t, err)
	require.Equal(t, string(control.StatusRunning), live.Status)
	got, err := control.GetPlan(ctx, pl.st, p.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanApproved, got.State)

	run, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{PlanID: p.ID})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.False(t, run.LeaseExpiresAt.IsZero(), "runs hold a lease")
	again, err := pl.st.RecoverAbandoned(ctx, now)
	require.NoError(t, err)
	require.Empty(t, again, "recovery is idempotent")
}
