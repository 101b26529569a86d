package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// TestAlerts: an alert is inserted once, changed only at the notification
// number it was read at, and keeps its state and deliveries across a
// reopening of the file.
func TestAlerts(t *testing.T) {
	store.ForEachDriver(t, testAlerts)
}

func testAlerts(t *testing.T, db store.TestDB) {
	ctx := t.Context()
	s, err := store.OpenConfig(ctx, db.Cfg)
	require.NoError(t, err)

	_, err = s.Alert(ctx, "freshness", "local.web.events")
	require.ErrorIs(t, err, store.ErrNotFound)

	r := store.AlertRecord{Kind: "freshness", Key: "local.web.events", Table: "local.web.events", State: "firing",
		Summary: "late", Age: 63 * time.Hour, SLA: 48 * time.Hour, RunID: "r1", Error: "boom", Failures: 1,
		Since: t0, ChangedAt: t0, Seq: 1, Pending: true}
	require.NoError(t, s.PutAlert(ctx, r, 0))
	require.ErrorIs(t, s.PutAlert(ctx, r, 0), store.ErrStateConflict, "a second insert")

	done := r
	done.Pending, done.NotifiedAt = false, t0.Add(time.Minute)
	require.NoError(t, s.PutAlert(ctx, done, 1))
	stale := r
	stale.Seq = 2
	require.ErrorIs(t, s.PutAlert(ctx, stale, 5), store.ErrStateConflict, "a change from a notification number that is gone")
	require.NoError(t, s.RecordAlertDelivery(ctx, "freshness", "local.web.events", "ops", 1, t0.Add(time.Minute)))
	require.NoError(t, s.RecordAlertDelivery(ctx, "freshness", "local.web.events", "ops", 1, t0.Add(2*time.Minute)))
	require.NoError(t, s.Close())

	s = db.Open(t)
	got, err := s.Alert(ctx, "freshness", "local.web.events")
	require.NoError(t, err)
	require.Equal(t, done, got)
	d, err := s.AlertDeliveries(ctx, "freshness", "local.web.events")
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"ops": 1}, d)

	require.NoError(t, s.PutAlert(ctx, store.AlertRecord{Kind: "check", Key: "catalog prod", State: "resolved", ChangedAt: t0.Add(time.Hour), Seq: 1}, 0))
	all, err := s.Alerts(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "check", all[0].Kind, "most recently changed first")
	firing, err := s.Alerts(ctx, "firing")
	require.NoError(t, err)
	require.Len(t, firing, 1)
	require.Equal(t, "local.web.events", firing[0].Key)
}
