package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// A telemetry source's record round-trips on both drivers: its cursor,
// times and error, replaced whole by the next put.
func TestTelemetrySources(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		t0 := time.Date(2026, 11, 29, 10, 0, 0, 123, time.UTC)

		_, err := s.TelemetrySource(ctx, "trino")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Error(t, s.PutTelemetrySource(ctx, store.SourceRecord{Name: "trino"}), "kind is required")

		first := store.SourceRecord{Name: "trino", Kind: "trino", Cursor: "2026-11-29T09:59:00Z", FirstSeen: t0,
			NewestEvent: t0.Add(-time.Minute), LastNew: t0, CollectedAt: t0}
		require.NoError(t, s.PutTelemetrySource(ctx, first))
		got, err := s.TelemetrySource(ctx, "trino")
		require.NoError(t, err)
		require.Equal(t, first, got)

		next := first
		next.Cursor, next.Error, next.ErrorAt = "2026-11-29T10:00:00Z", "connection refused", t0.Add(time.Minute)
		require.NoError(t, s.PutTelemetrySource(ctx, next))
		require.NoError(t, s.PutTelemetrySource(ctx, store.SourceRecord{Name: "files", Kind: "files", FirstSeen: t0}))
		all, err := s.TelemetrySources(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.SourceRecord{{Name: "files", Kind: "files", FirstSeen: t0}, next}, all)
	})
}
