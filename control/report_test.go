package control_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// The report of a real table gathers health, ranking, projections with
// their cost/benefit, the stored plan and the recorded run; a tight
// max_payback turns the recommendation down, and a window without queries
// reports no projection and says why.
func TestReport(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	pl.collected(t, now.Add(-time.Hour), now.Add(-2*time.Hour))

	// One recorded run (no compaction: the table keeps its files) for the
	// health history.
	run, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{Skip: map[string]bool{control.StepCompact: true}})
	require.NoError(t, err)

	// A pending plan for the layout the report recommends.
	po := control.ProjectOptions{Seed: 1, TargetFileSizeBytes: 8 << 10, Workload: control.WorkloadOptions{Since: 30 * 24 * time.Hour, Now: clock}}
	prop, err := control.PlanBest(ctx, pl.w.Catalog, pl.st, pl.state(t), control.PlanOptions{Project: po, By: "carol", Now: clock})
	require.NoError(t, err)
	require.NotNil(t, prop.Plan)

	opts := control.ReportOptions{
		Since: 30 * 24 * time.Hour, Now: clock, Lake: true, Seed: 1, TargetFileSizeBytes: 8 << 10, MinGainPP: 5,
		Policy: func(id lake.Ident) (policy.Policy, error) {
			require.Equal(t, pl.id, id)
			return policy.Default(), nil
		},
	}
	r, err := control.Report(ctx, pl.st, []*lake.State{pl.state(t)}, opts)
	require.NoError(t, err)
	require.Equal(t, now, r.GeneratedAt)
	require.Len(t, r.Tables, 1)
	tb := r.Tables[0]
	require.Equal(t, pl.id.String(), tb.Table)
	require.Equal(t, 2, tb.Queries)
	// The queries span two hours: --since 30d does not divide them by 30
	// days, the window is what was collected (at least a day), as the
	// dashboard, which sets no since, counts it.
	require.InDelta(t, 1.0, tb.WindowDays, 1e-9)
	require.InDelta(t, 2.0, tb.QueriesPerDay, 1e-9)
	all := opts
	all.Since = 0
	ra, err := control.Report(ctx, pl.st, []*lake.State{pl.state(t)}, all)
	require.NoError(t, err)
	require.Equal(t, tb.QueriesPerDay, ra.Tables[0].QueriesPerDay, "the CLI and the dashboard state the same rate")
	require.InDelta(t, 30.0, tb.MaxPaybackDays, 1e-9, "the built-in max_payback")
	require.NotEmpty(t, tb.Health.Status)
	require.Equal(t, "id", tb.Columns[0].Column)

	require.NotNil(t, tb.Recommendation.Layout)
	require.Equal(t, prop.Plan.Layout.String(), tb.Recommendation.Layout.String())
	require.Equal(t, prop.Plan.ID, tb.Recommendation.PlanID)
	require.Equal(t, "floe plan approve "+prop.Plan.ID, tb.Recommendation.Next)
	require.Len(t, tb.Plans, 1)

	var cur, rec report.Candidate
	for _, c := range tb.Candidates {
		switch {
		case c.Layout.Strategy == layout.StrategyCurrent:
			cur = c
		case c.Recommended:
			rec = c
		}
	}
	require.Equal(t, "baseline", cur.Verdict)
	require.Equal(t, prop.Plan.Layout.String(), rec.Layout.String())
	// A query pays its bytes and, for each file it opens, the built-in
	// 4 MiB; the rewrite its bytes read and written.
	require.Equal(t, int64(control.DefaultFileOpenBytes), tb.Cost.FileOpenBytes)
	want := ((cur.BytesReadPct-rec.BytesReadPct)/100*float64(tb.DataBytes) + (cur.MeanFilesRead-rec.MeanFilesRead)*float64(4<<20)) * tb.QueriesPerDay
	require.Greater(t, want, 0.0)
	require.InDelta(t, want, rec.SavedBytesPerDay, 1e-3)
	require.Greater(t, rec.RewriteIOBytes, rec.RewriteBytes, "read and written")
	require.NotNil(t, rec.PaybackDays)
	require.InDelta(t, float64(rec.RewriteIOBytes)/want, *rec.PaybackDays, 1e-9)
	require.LessOrEqual(t, *rec.PaybackDays, 30.0)

	require.Len(t, r.Ranking, 1)
	require.Equal(t, &rec.Layout, r.Ranking[0].Recommended)

	require.Contains(t, tb.FileSizes.Note, "a rewrite writes files of about its target size")
	nowFiles, thenFiles, nowQueries := 0, 0, 0
	for _, b := range tb.FileSizes.Buckets {
		nowFiles += b.Now
		thenFiles += b.Then
	}
	for _, b := range tb.FilesRead.Buckets {
		nowQueries += b.Now
	}
	require.Equal(t, tb.DataFiles, nowFiles)
	require.Equal(t, rec.FilesAfter, thenFiles)
	require.Equal(t, 2, nowQueries, "one entry per query replayed")

	require.Len(t, tb.Runs, 1)
	require.Equal(t, run.ID, tb.Runs[0].ID)
	require.Len(t, tb.HealthHistory, 2)
	require.Equal(t, "before", tb.HealthHistory[0].When)
	require.Equal(t, "after", tb.HealthHistory[1].When)

	var md, js, page bytes.Buffer
	require.NoError(t, report.Markdown(&md, r))
	require.NoError(t, report.JSON(&js, r))
	require.NoError(t, report.HTML(&page, r))
	require.Contains(t, md.String(), "Cost/benefit: rewrites")

	// A max_payback shorter than the recommendation's payback: shown, not
	// recommended, with the reason.
	opts.Policy = func(lake.Ident) (policy.Policy, error) {
		p := policy.Default()
		p.MaxPayback = time.Duration(*rec.PaybackDays * 24 * float64(time.Hour) / 2)
		return p, nil
	}
	r, err = control.Report(ctx, pl.st, []*lake.State{pl.state(t)}, opts)
	require.NoError(t, err)
	tb = r.Tables[0]
	require.Nil(t, tb.Recommendation.Layout)
	require.Empty(t, tb.Recommendation.Next)
	found := false
	for _, c := range tb.Candidates {
		require.False(t, c.Recommended)
		if c.Layout.String() == rec.Layout.String() {
			found = true
			require.Contains(t, c.Verdict, "beyond max_payback")
		}
	}
	require.True(t, found)
	require.Empty(t, r.Ranking[0].Recommended)

	// No query in the window: health, plans and runs, no projection.
	opts.Since = time.Minute
	r, err = control.Report(ctx, pl.st, []*lake.State{pl.state(t)}, opts)
	require.NoError(t, err)
	tb = r.Tables[0]
	require.Zero(t, tb.Queries)
	require.Empty(t, tb.Candidates)
	require.NotEmpty(t, tb.Notes)
	require.Contains(t, tb.Notes[0], "no queries of "+pl.id.String())
	require.Len(t, tb.Runs, 1)
}
