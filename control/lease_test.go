package control_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
)

// A table whose lease another process holds is neither run by Optimize nor
// by a scheduler pass; once the lease lapses the table is taken over, and
// the run records the runner that ran it.
func TestTableLeaseAcrossProcesses(t *testing.T) {
	f := newScheduler(t, "default:\n  layout: none\n")
	ctx := t.Context()
	now := f.clock.Now()
	got, err := f.st.ClaimTables(ctx, "host-b:77/other", []string{f.id.String()}, 1, now.Add(time.Minute), now)
	require.NoError(t, err)
	require.Equal(t, []string{f.id.String()}, got)

	_, err = control.Optimize(ctx, f.w.Catalog, f.st, f.id, control.OptimizeOptions{Now: f.clock.Now})
	require.ErrorIs(t, err, control.ErrBusy)
	require.ErrorContains(t, err, "host-b:77/other holds its lease")
	runs, err := control.ListRuns(ctx, f.st, f.id.String(), 0)
	require.NoError(t, err)
	require.Empty(t, runs, "a refused run records nothing")

	p := f.pass(t)
	require.True(t, p.Decisions[0].Due)
	require.Empty(t, p.Runs, "the pass leaves a table another process holds")
	require.Empty(t, p.Errors)

	// The other process died: its lease lapses and this one takes over.
	f.clock.Add(2 * time.Minute)
	p = f.pass(t)
	require.Len(t, p.Runs, 1)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status)
	require.Equal(t, control.RunnerID(), p.Runs[0].Run.Runner)
	stored, err := control.GetRun(ctx, f.st, p.Runs[0].Run.ID)
	require.NoError(t, err)
	require.Equal(t, control.RunnerID(), stored.Runner, "the run records its runner")

	leases, err := f.st.TableLeases(ctx)
	require.NoError(t, err)
	for _, l := range leases {
		require.False(t, l.ExpiresAt.After(f.clock.Now()), "the run released the table when it ended: %+v", l)
	}
}

// A run's table lease names the run from its start, not from its first
// renewal a quarter of the TTL later: a run refused as busy meanwhile says
// which run holds the table, and a process killed early leaves a lease
// that names its run.
func TestTableLeaseNamesItsRun(t *testing.T) {
	w, id, st := setup(t)
	ctx := t.Context()
	var busy error
	var holding string
	opts := control.OptimizeOptions{Steps: []string{control.StepCompact},
		OnPlan: func(string, control.StepReport) {
			leases, err := st.TableLeases(ctx)
			require.NoError(t, err)
			require.Len(t, leases, 1)
			holding = leases[0].RunID
			_, busy = control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{})
		}}
	run, err := control.Optimize(ctx, w.Catalog, st, id, opts)
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.Equal(t, run.ID, holding, "the lease names the run while it runs")
	require.ErrorIs(t, busy, control.ErrBusy)
	require.ErrorContains(t, busy, "(run "+run.ID+")")
}
