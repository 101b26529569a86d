package control

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// TestPruneRunsKeepsWhatTheReadsNeed: a table whose every run ended
// before the retention's cutoff keeps, after pruning, exactly what the
// reads of its history see: its last success, its freshness and failures
// alerts, the last compaction health counts from, the no-op compaction its
// trigger backs off from, and when its orphans were last listed. The runs
// nothing reads any more are gone.
func TestPruneRunsKeepsWhatTheReadsNeed(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	id := lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "t"}
	day := func(d float64) time.Time { return now.Add(-time.Duration(d * float64(24*time.Hour))) }
	snap := func(n int64) *StepHealth { return &StepHealth{SnapshotID: n} }
	step := func(name string, status RunStatus, before, after *StepHealth) Step {
		return Step{Name: name, Status: status, Before: before, After: after}
	}
	record := func(runID string, status RunStatus, ended time.Time, steps ...Step) {
		t.Helper()
		r := Run{ID: runID, Table: id.String(), Status: StatusRunning, StartedAt: ended.Add(-time.Minute)}
		rec, err := runRecord(r, nil)
		require.NoError(t, err)
		require.NoError(t, st.StartRun(ctx, rec))
		for _, s := range steps {
			s.StartedAt, s.EndedAt = r.StartedAt, ended
			sr, err := stepRecord(s)
			require.NoError(t, err)
			require.NoError(t, st.PutRunStep(ctx, runID, sr))
		}
		require.NoError(t, st.EndRun(ctx, runID, string(status), "", ended))
	}
	record("r1", StatusDone, day(200), step(StepCompact, StatusDone, snap(5), snap(6)))
	record("r2", StatusDone, day(150), step(StepCompact, StatusDone, snap(7), snap(7)), step(StepManifests, StatusDone, snap(7), snap(8)))
	record("r3", StatusDone, day(120), step(StepOrphans, StatusDone, nil, nil), step(StepCompact, StatusNotDue, nil, nil))
	record("r4", StatusFailed, day(100), step(StepCompact, StatusFailed, snap(8), nil))
	record("r5", StatusDone, day(95), step(StepExpire, StatusDone, snap(8), snap(8)))
	record("r6", StatusFailed, day(92), step(StepCompact, StatusFailed, snap(8), nil))
	record("r7", StatusAbandoned, day(91.5), step(StepCompact, StatusAbandoned, snap(8), nil))
	record("r8", StatusCancelled, day(91))

	p := policy.Default()
	cfg := &config.Config{}
	svc := &Service{cfg: cfg, store: st, now: func() time.Time { return now }}
	type reads struct {
		success time.Time
		alerts  []alert.Alert
		health  HealthOptions
		orphans bool
	}
	read := func() reads {
		t.Helper()
		var r reads
		r.success, err = svc.LastSuccess(ctx, id.String())
		require.NoError(t, err)
		recent, err := ListRuns(ctx, st, id.String(), alertRuns)
		require.NoError(t, err)
		r.alerts = alert.Evaluate(alertInputOf(id, p, recent), now)
		r.health, err = PolicyHealth(ctx, cfg, st, id, p, HealthOptions{})
		require.NoError(t, err)
		runs, err := ListRuns(ctx, st, id.String(), 0)
		require.NoError(t, err)
		r.orphans = orphansStale(runs, day(119.5))
		return r
	}
	before := read()
	require.Equal(t, day(95), before.success)
	require.Equal(t, alert.Firing, before.alerts[1].State, "two runs failed in a row: %s", before.alerts[1].Summary)
	require.Equal(t, day(120), before.health.LastCompaction)
	require.Equal(t, &NoOpCompaction{RunID: "r2", SnapshotID: 8, At: day(150)}, before.health.History.Unchanged)
	require.False(t, before.orphans)

	res, err := PruneRuns(ctx, st, RunPruneOptions{Retention: 90 * 24 * time.Hour, Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.Equal(t, day(90), res.Before)
	require.Equal(t, 3, res.Deleted)
	runs, err := ListRuns(ctx, st, id.String(), 0)
	require.NoError(t, err)
	var kept []string
	for _, r := range runs {
		kept = append(kept, r.ID)
	}
	require.Equal(t, []string{"r7", "r6", "r5", "r3", "r2"}, kept, "r1 (compacted again since), r4 (failed before a success) and r8 (cancelled) went")
	require.Equal(t, before, read())

	_, err = PruneRuns(ctx, st, RunPruneOptions{Retention: -time.Hour})
	require.ErrorContains(t, err, "retention -1h0m0s is negative")
}
