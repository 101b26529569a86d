//go:build duckdb

package duckdb_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/stretchr/testify/require"
)

// TestDBFile logs the workload with a real DuckDB into memory, copies the
// log into a table of a database file, and reads that file back.
func TestDBFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queries.duckdb")
	db, err := sql.Open("duckdb", path)
	require.NoError(t, err)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	exec1(ctx, t, conn, createOrders)
	exec1(ctx, t, conn, "CALL enable_logging('QueryLog', storage = 'memory')")
	runWorkload(ctx, t, conn)
	exec1(ctx, t, conn, "CREATE TABLE query_log AS SELECT * FROM duckdb_logs WHERE type = 'QueryLog'")
	exec1(ctx, t, conn, "CALL disable_logging()")
	exec1(ctx, t, conn, "CREATE TABLE unrelated AS SELECT 1 AS x")
	require.NoError(t, conn.Close())
	require.NoError(t, db.Close())

	head := make([]byte, 64)
	f, err := os.Open(path)
	require.NoError(t, err)
	_, err = f.Read(head)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	p := duckdb.DBParser{}
	require.True(t, p.Detect("queries.duckdb", head))

	var evs []collectors.QueryEvent
	err = p.Parse(ctx, path, bytes.NewReader(nil), func(e collectors.QueryEvent) error {
		evs = append(evs, e)
		return nil
	}, func(b collectors.BadRecord) error { return b })
	require.NoError(t, err)
	var sqls []string
	for _, e := range evs {
		require.Equal(t, duckdb.SourceDB, e.Source)
		require.NotEmpty(t, e.QueryID)
		require.False(t, e.StartTime.IsZero())
		sqls = append(sqls, e.SQL)
	}
	require.Equal(t, workload[:4], sqls)

	st, err := collectors.Collect(ctx, []collectors.Parser{duckdb.LogParser{}, p}, collectors.CollectOptions{Strict: true}, []string{path}, func(collectors.QueryEvent) error { return nil })
	require.NoError(t, err)
	require.Equal(t, 4, st.Events)
	require.Equal(t, duckdb.SourceDB, st.Files[0].Source)
}
