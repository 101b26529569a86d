package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/pgtest"
)

var pg pgtest.Shared

func TestMain(m *testing.M) { goleak.VerifyTestMain(pg.Wrap(m)) }

func query(t *testing.T, dsn string) (db string, n int) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close(context.WithoutCancel(ctx))) }()
	require.NoError(t, conn.QueryRow(ctx, `SELECT current_database(), 1 + 1`).Scan(&db, &n))
	return db, n
}

// Each database is fresh and separate, on one shared server.
func TestSharedDatabases(t *testing.T) {
	a, b := pg.NewDatabase(t), pg.NewDatabase(t)
	require.NotEqual(t, a, b)
	dbA, n := query(t, a)
	require.Equal(t, 2, n)
	dbB, _ := query(t, b)
	require.NotEqual(t, dbA, dbB)
}

// A cluster of its own starts, serves and stops, leaving no process.
func TestStartStop(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	_, n := query(t, dsn)
	require.Equal(t, 2, n)
	require.NoError(t, c.Stop())
	require.NoError(t, c.Stop(), "stop twice")
	_, err := pgx.Connect(t.Context(), dsn)
	require.Error(t, err, "the server is gone")
}
