package alert_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const table = "local.web.events"

func pol(sla time.Duration, after int) policy.Policy {
	var p policy.Policy
	p.FreshnessSLA, p.AlertAfterFailures = sla, after
	return p
}

func run(id, status, errText string, endedAgo time.Duration) alert.Run {
	return alert.Run{ID: id, Status: status, Error: errText, StartedAt: t0.Add(-endedAgo - time.Minute), EndedAt: t0.Add(-endedAgo)}
}

func byKind(t *testing.T, as []alert.Alert, k alert.Kind) (alert.Alert, bool) {
	t.Helper()
	for _, a := range as {
		if a.Kind == k {
			return a, true
		}
	}
	return alert.Alert{}, false
}

func TestEvaluateFreshness(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      alert.Input
		state   alert.State
		judged  bool
		summary string
		age     float64
		since   time.Time
	}{
		{"stale, with the failed run", alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: t0.Add(-63 * time.Hour),
			Runs: []alert.Run{run("20260501T110000Z-ab12", alert.StatusFailed, "compact: dial tcp trino:8080: connection refused", time.Hour)}},
			alert.Firing, true, "local.web.events: last compaction 63 h ago, SLA 48 h (run 20260501T110000Z-ab12 failed: compact: dial tcp trino:8080: connection refused); look further: floe health local.web.events; floe runs local.web.events",
			63, t0.Add(-15 * time.Hour)},
		{"stale, last run fine", alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: t0.Add(-50 * time.Hour),
			Runs: []alert.Run{run("r2", alert.StatusDone, "", time.Hour)}},
			alert.Firing, true, "local.web.events: last compaction 50 h ago, SLA 48 h; look further: floe health local.web.events; floe runs local.web.events", 50, t0.Add(-2 * time.Hour)},
		{"fresh", alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: t0.Add(-2 * time.Hour)},
			alert.Resolved, true, "local.web.events: fresh: last compaction 2 h ago, SLA 48 h", 2, time.Time{}},
		{"never compacted, long history", alert.Input{Table: table, Policy: pol(24*time.Hour, 2), HistorySince: t0.Add(-70 * time.Hour)},
			alert.Firing, true, "local.web.events: never compacted in 70 h of history, SLA 24 h (floe never ran on it); look further: floe health local.web.events; floe runs local.web.events", 70, t0.Add(-46 * time.Hour)},
		{"nothing known", alert.Input{Table: table, Policy: pol(24*time.Hour, 2)}, "", false, "", 0, time.Time{}},
		// Measured from the table's metadata: the backlog decides, for a
		// table floe never ran on as for one it runs on.
		{"backlog past the SLA, never ran", alert.Input{Table: table, Policy: pol(48*time.Hour, 2), Backlog: 60 * time.Hour, BacklogAt: t0.Add(-2 * time.Hour)},
			alert.Firing, true, "local.web.events: writes have waited 62 h for a compaction (never compacted), SLA 48 h (floe never ran on it); look further: floe health local.web.events; floe runs local.web.events", 62, t0.Add(-14 * time.Hour)},
		{"no backlog: nothing written since the last compaction", alert.Input{Table: table, Policy: pol(48*time.Hour, 2), Backlog: 0, BacklogAt: t0,
			LastCompaction: t0.Add(-1000 * time.Hour)},
			alert.Resolved, true, "local.web.events: fresh: nothing waits for a compaction (last compaction 1000 h ago), SLA 48 h", 0, time.Time{}},
		{"backlog within the SLA", alert.Input{Table: table, Policy: pol(48*time.Hour, 2), Backlog: 10 * time.Hour, BacklogAt: t0,
			LastCompaction: t0.Add(-11 * time.Hour)},
			alert.Resolved, true, "local.web.events: fresh: writes have waited 10 h for a compaction (last compaction 11 h ago), SLA 48 h", 10, time.Time{}},
		{"no SLA", alert.Input{Table: table, Policy: pol(0, 2), LastCompaction: t0.Add(-1000 * time.Hour)},
			alert.Resolved, true, "local.web.events: no freshness SLA", 0, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := byKind(t, alert.Evaluate(tc.in, t0), alert.KindFreshness)
			require.Equal(t, tc.judged, ok)
			if !ok {
				return
			}
			require.Equal(t, tc.state, a.State)
			require.Equal(t, tc.summary, a.Summary)
			require.Equal(t, table, a.Key)
			require.InDelta(t, tc.age, a.AgeHours, 0.01)
			require.Equal(t, tc.since, a.Since)
		})
	}
}

func TestEvaluateFailures(t *testing.T) {
	failed := func(id string, ago time.Duration) alert.Run { return run(id, alert.StatusFailed, "boom "+id, ago) }
	for _, tc := range []struct {
		name     string
		after    int
		runs     []alert.Run
		state    alert.State
		failures int
		runID    string
	}{
		{"no runs", 2, nil, alert.Resolved, 0, ""},
		{"one failure is below the default 2", 0, []alert.Run{failed("r2", time.Hour), run("r1", alert.StatusDone, "", 2*time.Hour)}, alert.Resolved, 1, ""},
		{"two in a row fire", 0, []alert.Run{failed("r3", time.Hour), failed("r2", 2*time.Hour), run("r1", alert.StatusDone, "", 3*time.Hour)}, alert.Firing, 2, "r3"},
		{"abandoned counts, running is passed over", 2, []alert.Run{{ID: "r4", Status: "running"}, run("r3", alert.StatusAbandoned, "abandoned: lease lapsed", time.Hour), failed("r2", 2*time.Hour)}, alert.Firing, 2, "r3"},
		{"a good run resets", 2, []alert.Run{run("r4", alert.StatusDone, "", time.Hour), failed("r3", 2*time.Hour), failed("r2", 3*time.Hour)}, alert.Resolved, 0, ""},
		{"policy's threshold", 3, []alert.Run{failed("r3", time.Hour), failed("r2", 2*time.Hour)}, alert.Resolved, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := byKind(t, alert.Evaluate(alert.Input{Table: table, Policy: pol(0, tc.after), Runs: tc.runs}, t0), alert.KindFailures)
			require.True(t, ok)
			require.Equal(t, tc.state, a.State)
			require.Equal(t, tc.failures, a.Failures)
			require.Equal(t, tc.runID, a.RunID)
		})
	}
	a, _ := byKind(t, alert.Evaluate(alert.Input{Table: table, Runs: []alert.Run{failed("r3", time.Hour), failed("r2", 2*time.Hour)}}, t0), alert.KindFailures)
	require.Equal(t, "local.web.events: 2 runs failed in a row (alert_after_failures 2); run r3 failed: boom r3; look further: floe health local.web.events; floe runs local.web.events", a.Summary)
	require.Equal(t, "boom r3", a.Error)
	require.Equal(t, t0.Add(-2*time.Hour), a.Since, "since the first failure of the streak")
}

func TestObserveMetrics(t *testing.T) {
	in := alert.Input{LastCompaction: t0.Add(-10 * time.Hour)}
	in.ObserveMetrics(lake.Metrics{LastCompactionAgeSec: 3600, OldestSnapshotAgeSec: 100 * 3600}, t0)
	require.Equal(t, t0.Add(-time.Hour), in.LastCompaction, "another engine compacted later than floe")
	require.Equal(t, t0.Add(-100*time.Hour), in.HistorySince)
	in.ObserveMetrics(lake.Metrics{LastCompactionAgeSec: 50 * 3600}, t0)
	require.Equal(t, t0.Add(-time.Hour), in.LastCompaction, "an older metadata compaction does not win")
	in = alert.Input{}
	in.ObserveMetrics(lake.Metrics{LastCompactionAgeSec: -1}, t0)
	require.True(t, in.LastCompaction.IsZero())
}

func TestCheck(t *testing.T) {
	a := alert.Check("catalog prod", errors.New("GET /v1/config: 401 Unauthorized"))
	require.Equal(t, alert.Firing, a.State)
	require.Equal(t, alert.KindCheck, a.Kind)
	require.Equal(t, "check catalog prod fails: GET /v1/config: 401 Unauthorized", a.Summary)
	require.Equal(t, alert.Resolved, alert.Check("catalog prod", nil).State)
}

func TestHalted(t *testing.T) {
	since := time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC)
	a := alert.Halted("local.db.t", &alert.Halt{RunID: "r1", Reason: "values differ in column name", Since: since})
	require.Equal(t, alert.KindHalted, a.Kind)
	require.Equal(t, "local.db.t", a.Key)
	require.Equal(t, "local.db.t", a.Table)
	require.Equal(t, alert.Firing, a.State)
	require.Equal(t, "r1", a.RunID)
	require.Equal(t, "values differ in column name", a.Error)
	require.Equal(t, since, a.Since)
	require.Contains(t, a.Summary, "floe resume local.db.t")
	r := alert.Halted("local.db.t", nil)
	require.Equal(t, alert.Resolved, r.State)
	require.Equal(t, a.Key, r.Key, "the resolution resolves the same alert")
}
