package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// prunedRun is a run of a pruning test: its table, status, when it ended
// (days from the cutoff: negative is before it) and its steps' statuses.
type prunedRun struct {
	id, table, status string
	endedDays         int
	steps             map[string]string
}

// TestPruneRunsKeepsWhatHistoryNeeds: runs that ended before the cutoff
// are deleted with their steps, except those the reads of a table's
// history need — its newest done and newest failed runs, its failures in a
// row, the newest run of each step that ran to the end, the run an active
// hold names — and runs that have not ended. A second prune finds nothing.
func TestPruneRunsKeepsWhatHistoryNeeds(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		cutoff := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		runs := []prunedRun{
			// An active table: superseded runs go; the newest failed run
			// and the only orphan listing stay.
			{"a1", "local.db.a", "done", -10, map[string]string{"compact": "done"}},
			{"a2", "local.db.a", "failed", -9, map[string]string{"compact": "failed"}},
			{"a3", "local.db.a", "done", -8, map[string]string{"orphans": "done", "compact": "done"}},
			{"a4", "local.db.a", "failed", -7, map[string]string{"expire": "failed"}},
			{"a6", "local.db.a", "cancelled", -6, nil},
			{"a5", "local.DB.A", "done", 1, map[string]string{"compact": "done"}},
			// A quiet table whose runs are all old: its last success and
			// the failures since stay, whatever their age.
			{"b1", "local.db.b", "done", -30, map[string]string{"compact": "not_due"}},
			{"b2", "local.db.b", "done", -20, map[string]string{"compact": "done"}},
			{"b3", "local.db.b", "failed", -15, map[string]string{"compact": "failed"}},
			{"b4", "local.db.b", "abandoned", -14, map[string]string{"compact": "abandoned"}},
			{"b5", "local.db.b", "cancelled", -13, nil},
			// A held table: the run its hold names stays.
			{"c1", "local.db.c", "failed", -5, map[string]string{"compact": "failed"}},
			{"c2", "local.db.c", "done", -4, map[string]string{"compact": "done"}},
			{"c3", "local.db.c", "failed", -3, map[string]string{"compact": "failed"}},
		}
		for _, r := range runs {
			ended := cutoff.Add(time.Duration(r.endedDays) * 24 * time.Hour)
			started := ended.Add(-time.Minute)
			require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: r.id, Table: r.table, Status: "running", StartedAt: started}))
			for _, step := range []string{"expire", "orphans", "compact"} {
				if st, ok := r.steps[step]; ok {
					require.NoError(t, s.PutRunStep(ctx, r.id, store.StepRecord{Step: step, Status: st, StartedAt: started, EndedAt: ended}))
				}
			}
			require.NoError(t, s.EndRun(ctx, r.id, r.status, "", ended))
		}
		// A run still going, started long ago, and a queued one.
		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "d1", Table: "local.db.d", Status: "running", StartedAt: cutoff.Add(-100 * 24 * time.Hour)}))
		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "d2", Table: "local.db.d", Status: store.RunQueued, StartedAt: cutoff.Add(-90 * 24 * time.Hour)}))
		_, placed, err := s.HoldTable(ctx, store.HoldRecord{Table: "local.db.c", RunID: "c1", Reason: "content mismatch", HeldAt: cutoff.Add(-5 * 24 * time.Hour)})
		require.NoError(t, err)
		require.True(t, placed)
		stepsBefore := store.CountRows(t, s, "run_steps")

		n, err := s.PruneRuns(ctx, cutoff)
		require.NoError(t, err)
		require.Equal(t, 5, n)
		all, err := s.Runs(ctx, "", 0)
		require.NoError(t, err)
		var kept []string
		for _, r := range all {
			kept = append(kept, r.ID)
		}
		slices.Sort(kept)
		require.Equal(t, []string{"a3", "a4", "a5", "b2", "b3", "b4", "c1", "c2", "c3", "d1", "d2"}, kept)
		require.Equal(t, stepsBefore-3, store.CountRows(t, s, "run_steps"), "the steps of a1, a2 and b1 went with them")

		last, err := s.LastRunEnded(ctx, "local.db.b", "done")
		require.NoError(t, err)
		require.Equal(t, cutoff.Add(-20*24*time.Hour), last, "a quiet table's last success is kept")

		n, err = s.PruneRuns(ctx, cutoff)
		require.NoError(t, err)
		require.Zero(t, n, "idempotent")
	})
}

// TestPruneRunsInBatches: more prunable runs than a batch are all
// deleted, oldest first, and the newest stays.
func TestPruneRunsInBatches(t *testing.T) {
	s := store.NewTestDB(t, store.DriverSQLite).Open(t)
	ctx := t.Context()
	cutoff := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	total := store.PruneBatch + 7
	for i := range total {
		ended := cutoff.Add(-time.Duration(total-i) * time.Minute)
		id := "r" + time.Duration(i).String()
		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: id, Table: "local.db.t", Status: "done", StartedAt: ended.Add(-time.Second), EndedAt: ended}))
	}
	n, err := s.PruneRuns(ctx, cutoff)
	require.NoError(t, err)
	require.Equal(t, total-1, n)
	left, err := s.Runs(ctx, "local.db.t", 0)
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.Equal(t, "r"+time.Duration(total-1).String(), left[0].ID, "the newest done run")
}
