package store_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// TestSpendSumsTheWindowsRewrites: Spend sums, by table, the bytes and CPU
// the steps recorded of the runs that ended in the window and of the runs
// still going; runs that ended before it, and steps that rewrote nothing,
// count nothing, and a table named in two spellings is one table.
func TestSpendSumsTheWindowsRewrites(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		since := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
		type step struct {
			name       string
			bytes, cpu int64
		}
		for _, r := range []struct {
			id, table, status string
			ended             time.Time // zero: still going
			steps             []step
		}{
			{"old", "local.db.a", "done", since.Add(-time.Minute), []step{{"compact", 1000, 10}}},
			{"a1", "local.db.a", "done", since, []step{{"expire", 0, 0}, {"compact", 100, 3}, {"deletes", 20, 1}}},
			{"a2", "local.DB.A", "failed", since.Add(time.Hour), []step{{"compact", 5, 0}}},
			{"b1", "local.db.b", "running", time.Time{}, []step{{"compact", 7, 2}}},
			{"c1", "local.db.c", "done", since.Add(time.Hour), []step{{"expire", 0, 0}, {"orphans", 0, 0}}},
		} {
			start := since.Add(-2 * time.Hour)
			if !r.ended.IsZero() {
				start = r.ended.Add(-time.Minute)
			}
			require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: r.id, Table: r.table, Status: "running", StartedAt: start}))
			for _, st := range r.steps {
				require.NoError(t, s.PutRunStep(ctx, r.id, store.StepRecord{Step: st.name, Status: "done", StartedAt: start, EndedAt: start,
					RewrittenBytes: st.bytes, RewriteCPUMillis: st.cpu}))
			}
			if !r.ended.IsZero() {
				require.NoError(t, s.EndRun(ctx, r.id, r.status, "", r.ended))
			}
		}
		got, err := s.Spend(ctx, since)
		require.NoError(t, err)
		slices.SortFunc(got, func(a, b store.TableSpend) int {
			return strings.Compare(strings.ToLower(a.Table), strings.ToLower(b.Table))
		})
		require.Equal(t, []store.TableSpend{
			{Table: "local.DB.A", RewrittenBytes: 125, RewriteCPUMillis: 4},
			{Table: "local.db.b", RewrittenBytes: 7, RewriteCPUMillis: 2},
		}, got)

		run, err := s.Run(ctx, "a1")
		require.NoError(t, err)
		require.Equal(t, int64(100), run.Steps[1].RewrittenBytes, "the step reads back what it spent")
		require.Equal(t, int64(3), run.Steps[1].RewriteCPUMillis)
	})
}
