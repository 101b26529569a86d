package control_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

func TestChoosePlan(t *testing.T) {
	proj := func(layout string, skipped float64, rewrite int64) simulator.Projection {
		return simulator.Projection{Layout: mustLayout(t, layout), SkippedPct: skipped, RewriteBytes: rewrite}
	}
	for _, tc := range []struct {
		name        string
		projs       []simulator.Projection
		best        string
		currentPct  float64
		gain        bool
		nothingToDo bool
	}{
		{name: "best skips more than current", projs: []simulator.Projection{proj("current", 4, 0), proj("sort(a)", 71, 100), proj("zorder(a, b)", 50, 100)},
			best: "sort(a)", currentPct: 4, gain: true},
		{name: "no gain: best skips as many as current", projs: []simulator.Projection{proj("current", 30, 0), proj("sort(a)", 30, 100), proj("binpack", 10, 100)},
			best: "sort(a)", currentPct: 30},
		{name: "no gain: best skips fewer than current", projs: []simulator.Projection{proj("current", 60, 0), proj("binpack", 5, 100)},
			best: "binpack", currentPct: 60},
		{name: "tie goes to fewer bytes rewritten", projs: []simulator.Projection{proj("current", 0, 0), proj("sort(a)", 50, 200), proj("hilbert(a, b)", 50, 100)},
			best: "hilbert(a, b)", gain: true},
		{name: "tie with equal bytes keeps the first", projs: []simulator.Projection{proj("sort(a)", 50, 100), proj("sort(b)", 50, 100), proj("current", 0, 0)},
			best: "sort(a)", gain: true},
		{name: "without current the baseline is zero", projs: []simulator.Projection{proj("sort(a)", 20, 100)},
			best: "sort(a)", gain: true},
		{name: "without current a zero skip gains nothing", projs: []simulator.Projection{proj("binpack", 0, 100)},
			best: "binpack"},
		{name: "only current: nothing to plan", projs: []simulator.Projection{proj("current", 10, 0)}, nothingToDo: true},
		{name: "no projections: nothing to plan", nothingToDo: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := control.ChoosePlan(tc.projs, control.ChooseOptions{})
			if tc.nothingToDo {
				require.ErrorIs(t, err, control.ErrNothingToPlan)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.best, c.Best.Layout.String())
			require.Equal(t, tc.currentPct, c.Current.SkippedPct)
			require.Equal(t, tc.gain, c.Gain)
			if tc.gain {
				require.Empty(t, c.Reason("db.t"))
			} else {
				require.Contains(t, c.Reason("db.t"), "no plan proposed for db.t: the best candidate, "+tc.best+",")
			}
		})
	}
}

// A candidate must beat the current layout by the minimum gain, and a
// candidate projected to leave more files than the table has today and its
// bytes fill at the target is not chosen while one within the limit is.
// A candidate worse than today beyond its error loses: no path proposes
// it. One worse within its error does not lose, and is no gain either.
func TestChoosePlanHonoursTheErrorBar(t *testing.T) {
	proj := func(layout string, skipped, errPP float64) simulator.Projection {
		return simulator.Projection{Layout: mustLayout(t, layout), SkippedPct: skipped, ErrorPP: errPP, RewriteBytes: 100}
	}
	for _, tc := range []struct {
		name        string
		best        simulator.Projection
		gain, loses bool
		reason      string
	}{
		{"clear gain", proj("sort(a)", 70, 2), true, false, ""},
		{"gain within the error: still a gain, the run checks it", proj("sort(a)", 33, 4), true, false, ""},
		{"loss within the error", proj("sort(a)", 29, 2), false, false, "is not projected to skip more files"},
		{"loss beyond the error", proj("sort(tenant_id, ts) target 128MiB", 14.7, 1.5), false, true,
			"is projected to skip 14.7% of files vs 30.0% today, 15.3 pp worse (error ±1.5 pp): rewriting into it would make the table worse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := control.ChoosePlan([]simulator.Projection{proj("current", 30, 0), tc.best}, control.ChooseOptions{MinGainPP: 1})
			require.NoError(t, err)
			require.Equal(t, tc.gain, c.Gain)
			require.Equal(t, tc.loses, c.Loses)
			if tc.reason != "" {
				require.Contains(t, c.Reason("db.t"), tc.reason)
			}
		})
	}
}

func TestChoosePlanMinGainAndFileLimit(t *testing.T) {
	pl := setupPlan(t)
	state := pl.state(t)
	files := len(state.DataFiles)
	require.Greater(t, files, 1)
	var bytes int64
	for _, f := range state.DataFiles {
		bytes += f.SizeBytes
	}
	// At a target of the table's size, one file per partition fills it: the
	// limit is the files the table has today.
	target := bytes
	require.Equal(t, files, control.FileLimit(state, target))
	// At a tiny target, the bytes fill more files than there are.
	require.Greater(t, control.FileLimit(state, 1024), files)

	spec := func(l string) string { return l + " target " + strconv.FormatInt(target, 10) }
	proj := func(layout string, skipped float64, after int) simulator.Projection {
		return simulator.Projection{Layout: mustLayout(t, layout), SkippedPct: skipped, FilesBefore: files, FilesAfter: after, RewriteBytes: bytes}
	}
	current := proj("current", 50, files)

	// The case: +2.5 pp for a rewrite of everything.
	c, err := control.ChoosePlan([]simulator.Projection{current, proj(spec("sort(id)"), 52.5, files)}, control.ChooseOptions{MinGainPP: 5, State: state})
	require.NoError(t, err)
	require.False(t, c.Gain, "2.5 pp is below the 5 pp asked for")
	require.InDelta(t, 2.5, c.GainPP, 1e-9)
	require.Contains(t, c.Reason("db.p"), "a gain of 2.5 pp, below the minimum of 5.0 pp")
	c, err = control.ChoosePlan([]simulator.Projection{current, proj(spec("sort(id)"), 52.5, files)}, control.ChooseOptions{MinGainPP: 2, State: state})
	require.NoError(t, err)
	require.True(t, c.Gain, "2.5 pp is enough when 2 are asked for")

	// More files than the limit: the best skip is passed over for one within it.
	c, err = control.ChoosePlan([]simulator.Projection{current, proj(spec("hilbert(id, v)"), 90, 2*files), proj(spec("sort(id)"), 70, files)},
		control.ChooseOptions{MinGainPP: 5, State: state})
	require.NoError(t, err)
	require.Equal(t, spec("sort(id)"), c.Best.Layout.String())
	require.True(t, c.Gain)
	// Only candidates past the limit: the best of them, without gain.
	c, err = control.ChoosePlan([]simulator.Projection{current, proj(spec("hilbert(id, v)"), 90, 2*files)}, control.ChooseOptions{MinGainPP: 5, State: state})
	require.NoError(t, err)
	require.False(t, c.Gain)
	require.Equal(t, files, c.FileLimit)
	require.Contains(t, c.Reason("db.p"), "every candidate would write more data files")
	// Without a state, no file rule.
	c, err = control.ChoosePlan([]simulator.Projection{current, proj(spec("hilbert(id, v)"), 90, 2*files)}, control.ChooseOptions{MinGainPP: 5})
	require.NoError(t, err)
	require.True(t, c.Gain)
}

// A sort by id gains on a table whose files all span the id range, for a
// workload that filters on id: PlanBest proposes it. Planning the layout the
// table already has gains nothing: no plan, unless forced.
func TestPlanBest(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	state := pl.state(t)
	trino, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	workload := func() control.WorkloadOptions {
		return control.WorkloadOptions{SQL: strings.NewReader("SELECT * FROM db.p WHERE id = 42; SELECT * FROM db.p WHERE id BETWEEN 100 AND 200"), Dialect: trino}
	}
	sortID, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	binpack, err := layout.Parse("binpack")
	require.NoError(t, err)

	res, err := control.PlanBest(ctx, pl.w.Catalog, pl.st, state, control.PlanOptions{
		Project: control.ProjectOptions{Layouts: []layout.Layout{binpack, sortID}, Workload: workload(), Seed: 1},
		By:      "alice",
	})
	require.NoError(t, err)
	require.Len(t, res.Projections.Projections, 3, "current is added as the baseline")
	require.Equal(t, "current", res.Projections.Projections[0].Layout.String())
	require.Len(t, res.Projections.Workload.Queries, 2)
	require.True(t, res.Choice.Gain)
	require.Equal(t, "sort(id)", res.Choice.Best.Layout.String())
	require.NotNil(t, res.Plan)
	require.Equal(t, control.PlanProposed, res.Plan.State)
	require.Equal(t, "sort(id)", res.Plan.Layout.String())
	require.Equal(t, "alice", res.Plan.CreatedBy)

	// Binpack alone skips no more files than the table as it is.
	res, err = control.PlanBest(ctx, pl.w.Catalog, pl.st, state, control.PlanOptions{
		Project: control.ProjectOptions{Layouts: []layout.Layout{binpack}, Workload: workload(), Seed: 1},
	})
	require.NoError(t, err)
	require.False(t, res.Choice.Gain)
	require.Nil(t, res.Plan, "no gain, no plan")

	res, err = control.PlanBest(ctx, pl.w.Catalog, pl.st, state, control.PlanOptions{
		Project: control.ProjectOptions{Layouts: []layout.Layout{binpack}, Workload: workload(), Seed: 1},
		Force:   true,
	})
	require.NoError(t, err)
	require.NotNil(t, res.Plan, "--force proposes it anyway")
	require.Equal(t, "binpack", res.Plan.Layout.String())

	// Only current: nothing to choose from.
	_, err = control.PlanBest(ctx, pl.w.Catalog, pl.st, state, control.PlanOptions{
		Project: control.ProjectOptions{Layouts: []layout.Layout{{Strategy: layout.StrategyCurrent}}, Workload: workload()},
	})
	require.ErrorIs(t, err, control.ErrNothingToPlan)
}

// TestPlanBestKeepsThePendingPlan: proposing the same layout again after
// an append finds the plan made before it (the daemon would otherwise
// propose one plan per new snapshot); after the files it was made from are
// rewritten, that plan is marked stale and a new one is proposed.
func TestPlanBestKeepsThePendingPlan(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	trino, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	propose := func() control.Proposal {
		t.Helper()
		res, err := control.PlanBest(ctx, pl.w.Catalog, pl.st, pl.state(t), control.PlanOptions{
			Project: control.ProjectOptions{Layouts: []layout.Layout{mustLayout(t, "sort(id)")}, Seed: 1,
				Workload: control.WorkloadOptions{SQL: strings.NewReader("SELECT * FROM db.p WHERE id = 42"), Dialect: trino}},
			By: "alice", Force: true,
		})
		require.NoError(t, err)
		require.NotNil(t, res.Plan)
		return res
	}
	first := propose().Plan
	pl.appendRows(t, func(j int) int64 { return int64(50000 + j) }, 300)
	again := propose().Plan
	require.Equal(t, first.ID, again.ID, "an append since the plan leaves it standing")
	require.NotEqual(t, first.BaseSnapshot, pl.snapshot(t))

	// Another compaction rewrites the files the plan was made from.
	other, err := control.Optimize(ctx, pl.w.Catalog, pl.st, pl.id, control.OptimizeOptions{
		Compact: rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}},
	})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, other.Status)
	fresh := propose().Plan
	require.NotEqual(t, first.ID, fresh.ID)
	require.Equal(t, pl.snapshot(t), fresh.BaseSnapshot)
	old, err := control.GetPlan(ctx, pl.st, first.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanStale, old.State, "nobody is asked to approve a plan that no longer holds")
	require.Equal(t, "floe", old.DecidedBy)
	plans, err := control.ListPlans(ctx, pl.st, control.PlanFilter{Table: pl.id.String(), State: control.PlanProposed})
	require.NoError(t, err)
	require.Len(t, plans, 1)
}

func (pl *planLake) state(t *testing.T) *lake.State {
	t.Helper()
	st, err := lake.LoadState(context.Background(), pl.id, pl.table(t), lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

func mustLayout(t *testing.T, s string) layout.Layout {
	t.Helper()
	l, err := layout.Parse(s)
	require.NoError(t, err)
	return l
}
