package control_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/simulator"
)

// TestRunChecksItsProjection: a run of an approved plan measures, once its
// compaction commits, the workload on the files it wrote and records that
// beside the plan's projection, in the run and in the store. The measure
// agrees with iceberg-go's own planning of every query (simulator.Measure).
func TestRunChecksItsProjection(t *testing.T) {
	ctx := t.Context()
	pl := setupPlan(t) // ids interleaved over the files: id queries skip nothing today
	now := time.Now().UTC()
	pl.collected(t, now.Add(-time.Hour), now.Add(-2*time.Hour), now.Add(-3*time.Hour))
	svc := serviceOf(t, pl.w, pl.st, "default: {}\n")
	prop, err := control.PlanBest(ctx, pl.w.Catalog, pl.st, pl.state(t), control.PlanOptions{By: "carol"})
	require.NoError(t, err)
	require.NotNil(t, prop.Plan, prop.Choice.Reason(pl.id.String()))
	_, err = control.ApprovePlan(ctx, pl.st, prop.Plan.ID, "bo", now)
	require.NoError(t, err)
	want := pl.checksum(t)

	res, err := svc.Run(ctx, control.Request{Table: pl.id, PlanID: prop.Plan.ID, User: "ana"})
	require.NoError(t, err)
	require.Equal(t, want, pl.checksum(t))
	var compact control.Step
	for _, s := range res.Run.Steps {
		if s.Name == control.StepCompact {
			compact = s
		}
	}
	require.Equal(t, control.StatusDone, compact.Status)
	c := compact.Layout
	require.NotNil(t, c, "the run checks the plan's projection")
	require.Empty(t, c.Error)
	require.Equal(t, prop.Plan.ID, c.PlanID)
	require.Equal(t, 3, c.Queries)
	require.Equal(t, prop.Plan.Projection.SkippedPct, c.ProjectedSkippedPct)

	truth, err := simulator.Measure(ctx, pl.table(t), workloadQueries(t, pl))
	require.NoError(t, err)
	require.InDelta(t, truth.SkippedPct, c.MeasuredSkippedPct, 1e-9, "measured as iceberg-go plans it")
	require.InDelta(t, c.MeasuredSkippedPct-c.ProjectedSkippedPct, c.DeltaPP, 1e-9)
	require.Equal(t, math.Abs(c.DeltaPP) <= max(c.ErrorPP, control.ProjectionTolerancePP), c.WithinError)
	// Whether the projection held is the simulator's to answer (its own
	// tests hold projections to their error); the check's part is to say
	// so truthfully, which the log shows.
	t.Logf("plan %s: %+v; files after: %d (projected %d)", prop.Plan.Layout, *c, len(dataFiles(t, pl.table(t))), prop.Plan.Projection.FilesAfter)

	stored, err := control.GetRun(ctx, pl.st, res.Run.ID)
	require.NoError(t, err)
	for _, s := range stored.Steps {
		if s.Name == control.StepCompact {
			require.Equal(t, c, s.Layout, "the check is recorded with the run")
		}
	}
}

// workloadQueries are the table's collected queries, as a projection
// replays them.
func workloadQueries(t *testing.T, pl *planLake) []simulator.Query {
	t.Helper()
	w, err := control.LoadWorkload(t.Context(), pl.st, pl.id, control.WorkloadOptions{})
	require.NoError(t, err)
	return w.Queries
}
