package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// A table has at most one active hold: a second failure keeps the first as
// the reason; resuming records who did it, and the table can be held again.
func TestTableHolds(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

		_, err := s.TableHold(ctx, "local.db.t")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.ResumeTable(ctx, "local.db.t", "ana", "", t0)
		require.ErrorIs(t, err, store.ErrNotFound, "nothing to resume")

		h, placed, err := s.HoldTable(ctx, store.HoldRecord{Table: "local.db.T", RunID: "r1", Reason: "content mismatch", HeldAt: t0})
		require.NoError(t, err)
		require.True(t, placed)
		require.Equal(t, "r1", h.RunID)
		require.True(t, h.Active())
		h2, placed, err := s.HoldTable(ctx, store.HoldRecord{Table: "local.db.t", RunID: "r2", Reason: "missing output", HeldAt: t0.Add(time.Minute)})
		require.NoError(t, err)
		require.False(t, placed, "one active hold per table, whatever the spelling")
		require.Equal(t, h, h2, "the first failure stays the reason")

		got, err := s.TableHold(ctx, "LOCAL.db.t")
		require.NoError(t, err)
		require.Equal(t, h, got)
		active, err := s.TableHolds(ctx, false)
		require.NoError(t, err)
		require.Equal(t, []store.HoldRecord{h}, active)

		r, err := s.ResumeTable(ctx, "local.db.t", "ana", "replaced the lost file", t0.Add(time.Hour))
		require.NoError(t, err)
		require.False(t, r.Active())
		require.Equal(t, "ana", r.ResumedBy)
		require.Equal(t, "replaced the lost file", r.Note)
		_, err = s.TableHold(ctx, "local.db.t")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.ResumeTable(ctx, "local.db.t", "bob", "", t0.Add(2*time.Hour))
		require.ErrorIs(t, err, store.ErrNotFound, "resumed once")

		h3, placed, err := s.HoldTable(ctx, store.HoldRecord{Table: "local.db.t", RunID: "r3", Reason: "again", HeldAt: t0.Add(3 * time.Hour)})
		require.NoError(t, err)
		require.True(t, placed, "a resumed table can be held again")
		all, err := s.TableHolds(ctx, true)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, h3.ID, all[0].ID, "newest first")
		require.Equal(t, "ana", all[1].ResumedBy, "the record of who resumed it is kept")
	})
}

// A queued run is started once, by StartRun, or ended unstarted; a lapsed
// queued run is recovered as cancelled, not abandoned.
func TestQueuedRuns(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		q := store.RunRecord{ID: "q1", Table: "local.db.t", Status: store.RunQueued, Trigger: "api", StartedBy: "ana", StartedAt: t0, LeaseExpiresAt: t0.Add(time.Minute)}
		require.NoError(t, s.StartRun(ctx, q))
		got, err := s.Run(ctx, "q1")
		require.NoError(t, err)
		require.Equal(t, store.RunQueued, got.Status)
		require.Equal(t, t0, got.QueuedAt)

		require.ErrorIs(t, s.StartRun(ctx, store.RunRecord{ID: "q1", Table: "local.db.other", Status: "running", StartedAt: t0}), store.ErrStateConflict,
			"a queued run starts on its own table only")
		start := t0.Add(5 * time.Second)
		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "q1", Table: "local.db.t", Status: "running", Trigger: "api", StartedBy: "ana", StartedAt: start}))
		got, err = s.Run(ctx, "q1")
		require.NoError(t, err)
		require.Equal(t, "running", got.Status)
		require.Equal(t, start, got.StartedAt)
		require.Equal(t, t0, got.QueuedAt, "when it was asked for is kept")
		err = s.StartRun(ctx, store.RunRecord{ID: "q1", Table: "local.db.t", Status: "running", StartedAt: start})
		require.ErrorIs(t, err, store.ErrStateConflict, "a queued run starts once")
		require.ErrorContains(t, err, "it is running")
		require.ErrorIs(t, s.EndQueuedRun(ctx, "q1", store.RunCancelled, "no", t0), store.ErrStateConflict, "a started run is not ended as queued")
		require.ErrorIs(t, s.EndQueuedRun(ctx, "nope", store.RunCancelled, "no", t0), store.ErrNotFound)

		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "q2", Table: "local.db.u", Status: store.RunQueued, StartedAt: t0, LeaseExpiresAt: t0.Add(time.Minute)}))
		require.NoError(t, s.EndQueuedRun(ctx, "q2", store.RunCancelled, "floe serve stopped", t0.Add(time.Second)))
		got, err = s.Run(ctx, "q2")
		require.NoError(t, err)
		require.Equal(t, store.RunCancelled, got.Status)
		require.Equal(t, "floe serve stopped", got.Error)

		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "q3", Table: "local.db.v", Status: store.RunQueued, StartedAt: t0, LeaseExpiresAt: t0.Add(time.Minute)}))
		require.NoError(t, s.RenewRun(ctx, "q3", t0.Add(2*time.Minute)), "a queued run's lease is renewed while it waits")
		recovered, err := s.RecoverAbandoned(ctx, t0.Add(90*time.Second))
		require.NoError(t, err)
		require.Empty(t, recovered, "its lease is live")
		recovered, err = s.RecoverAbandoned(ctx, t0.Add(3*time.Minute))
		require.NoError(t, err)
		require.Len(t, recovered, 1)
		require.Equal(t, "q3", recovered[0].ID)
		require.Equal(t, store.RunCancelled, recovered[0].Status, "nothing of it ran: cancelled, not abandoned")
		require.Contains(t, recovered[0].Error, "never started")
	})
}
