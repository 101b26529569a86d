package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
)

// TestMigrateFromVersion1 builds a version-1 database holding an event,
// then opens it with the current binary: the later migrations are applied
// and the data is kept.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := openTo(ctx, path, 1)
	require.NoError(t, err)
	v, err := s.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, v)
	var n int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'plans'`).Scan(&n))
	require.Zero(t, n, "version 1 has no plans table")
	ev := collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: "q1",
		StartTime: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), State: collectors.StateSucceeded}
	ins, _, err := s.InsertEvents(ctx, []collectors.QueryEvent{ev})
	require.NoError(t, err)
	require.Equal(t, 1, ins)
	require.NoError(t, s.Close())

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	v, err = s.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion(), v)
	for _, tbl := range []string{"plans", "runs", "run_steps"} {
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tbl).Scan(&n))
		require.Equal(t, 1, n, tbl)
	}
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n))
	require.Equal(t, len(migrations), n)
	evs, err := s.Queries(ctx, QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "q1", evs[0].QueryID)
}

// A run stored before triggers were recorded reads as manual once the
// database is migrated.
func TestMigrateRunTrigger(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := openTo(ctx, path, 3)
	require.NoError(t, err)
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs (id, table_name, plan_id, status, error, started_at) VALUES ('r1', 'local.db.t', '', 'done', '', 1)`)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	r, err := s.Run(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, "manual", r.Trigger)
}
