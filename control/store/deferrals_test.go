package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// TestDeferralStreaks: passes that defer a table without a run make one
// streak per table (case-insensitive), counted and dated, with the newest
// reason; buying its rewrites ends the streak; the list is by window.
func TestDeferralStreaks(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
		require.NoError(t, s.NoteDeferrals(ctx, nil, t0), "nothing deferred: nothing to note")
		require.NoError(t, s.NoteDeferrals(ctx, map[string]string{"local.db.a": "needs 2 MiB", "local.db.b": "needs 1 MiB"}, t0))
		require.NoError(t, s.NoteDeferrals(ctx, map[string]string{"local.DB.A": "needs 3 MiB"}, t0.Add(time.Minute)))

		got, err := s.Deferrals(ctx, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []store.DeferralRecord{
			{Table: "local.DB.A", FirstAt: t0, LastAt: t0.Add(time.Minute), Passes: 2, Reason: "needs 3 MiB"},
			{Table: "local.db.b", FirstAt: t0, LastAt: t0, Passes: 1, Reason: "needs 1 MiB"},
		}, got)

		got, err = s.Deferrals(ctx, t0.Add(30*time.Second))
		require.NoError(t, err)
		require.Len(t, got, 1, "b's newest deferral is before the window")
		require.Equal(t, "local.DB.A", got[0].Table)

		require.NoError(t, s.EndDeferrals(ctx, []string{"local.db.a"}))
		require.NoError(t, s.NoteDeferrals(ctx, map[string]string{"local.db.a": "needs 4 MiB"}, t0.Add(time.Hour)))
		got, err = s.Deferrals(ctx, t0.Add(30*time.Second))
		require.NoError(t, err)
		require.Equal(t, []store.DeferralRecord{{Table: "local.db.a", FirstAt: t0.Add(time.Hour), LastAt: t0.Add(time.Hour), Passes: 1, Reason: "needs 4 MiB"}}, got,
			"a new streak after its rewrites were bought")
	})
}
