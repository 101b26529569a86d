//go:build duckdb

package duckdb_test

// This file regenerates the DuckDB fixtures under testdata/logs/duckdb from a
// real DuckDB (the version bundled by github.com/duckdb/duckdb-go/v2 in
// go.mod). Run:
//
//	FLOE_GEN_DUCKDB_FIXTURES=1 go test -tags duckdb -run TestGenerateFixtures ./collectors/duckdb/
//
// Files it does not write (DuckDB 2.x profile layout, 2.0 double logging,
// .duckdb_history) are hand-written from the reference and say so in
// testdata/logs/duckdb/README.md. The .duckdb database-file test builds its
// database at test time (db_duckdb_test.go), so no binary is committed.

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"
)

const fixtureDir = "../../testdata/logs/duckdb"

// workload is the statement mix every log fixture records: equality, range,
// IN lists, commas and newlines inside literals, a prepared statement and a
// failing statement.
var genWorkload = []struct {
	sql  string
	args []any
}{
	{sql: "SELECT order_id, amount FROM orders WHERE order_date >= TIMESTAMP '2024-02-01' AND customer_id = 42"},
	{sql: "SELECT region, count(*) AS n FROM orders WHERE region IN ('eu', 'us') GROUP BY region"},
	{sql: "SELECT order_id\nFROM orders\nWHERE region = 'a,b'\n  AND amount > 50"},
	{sql: "SELECT count(*) FROM orders WHERE customer_id = ?", args: []any{7}},
	{sql: "SELECT * FROM missing_table WHERE x = 1"},
}

func runWorkload(ctx context.Context, t *testing.T, conn *sql.Conn) {
	t.Helper()
	for _, w := range genWorkload {
		rows, err := conn.QueryContext(ctx, w.sql, w.args...)
		if err != nil {
			continue // the failing statement is part of the workload
		}
		for rows.Next() {
		}
		require.NoError(t, rows.Close())
	}
}

func exec1(ctx context.Context, t *testing.T, conn *sql.Conn, q string) {
	t.Helper()
	_, err := conn.ExecContext(ctx, q)
	require.NoError(t, err, q)
}

const createOrders = `CREATE OR REPLACE TABLE orders AS
SELECT range AS order_id, range % 100 AS customer_id, (range % 1000) / 10.0 AS amount,
       TIMESTAMP '2024-01-01' + to_days(CAST(range % 60 AS INTEGER)) AS order_date,
       ['eu', 'us', 'apac'][range % 3 + 1] AS region
FROM range(20000)`

func TestGenerateFixtures(t *testing.T) {
	if os.Getenv("FLOE_GEN_DUCKDB_FIXTURES") == "" {
		t.Skip("set FLOE_GEN_DUCKDB_FIXTURES=1 to regenerate the DuckDB fixtures")
	}
	ctx := t.Context()
	tmp := t.TempDir()
	dbPath := filepath.Join(tmp, "gen.duckdb")
	db, err := sql.Open("duckdb", dbPath)
	require.NoError(t, err)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)

	var version string
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT version()").Scan(&version))
	t.Logf("duckdb %s", version)
	exec1(ctx, t, conn, createOrders)

	// Normalized file storage: duckdb_log_entries.csv + duckdb_log_contexts.csv.
	normDir := filepath.Join(fixtureDir, "log-normalized")
	require.NoError(t, os.RemoveAll(normDir))
	require.NoError(t, os.MkdirAll(normDir, 0o755))
	abs, err := filepath.Abs(normDir)
	require.NoError(t, err)
	exec1(ctx, t, conn, "CALL enable_logging('QueryLog', storage = 'file', storage_path = '"+abs+"')")
	runWorkload(ctx, t, conn)
	exec1(ctx, t, conn, "CALL disable_logging()")

	// Denormalized single CSV.
	denorm, err := filepath.Abs(filepath.Join(fixtureDir, "querylog-denormalized.csv"))
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(denorm))
	exec1(ctx, t, conn, "CALL enable_logging('QueryLog', storage = 'file', storage_path = '"+denorm+"', storage_normalize = false)")
	runWorkload(ctx, t, conn)
	exec1(ctx, t, conn, "CALL disable_logging()")

	// JSON profiles, one file per query (the profiler overwrites its output).
	for i, q := range []string{
		genWorkload[0].sql,
		"SELECT * FROM orders WHERE customer_id IN (1, 3) AND order_date BETWEEN TIMESTAMP '2024-02-01' AND TIMESTAMP '2024-02-10'",
		"SELECT o.region, sum(o.amount) FROM orders o JOIN orders p ON o.order_id = p.order_id WHERE o.region LIKE 'e%' AND p.amount < 10 GROUP BY o.region",
	} {
		out, err := filepath.Abs(filepath.Join(fixtureDir, "profile-1x-"+string(rune('a'+i))+".json"))
		require.NoError(t, err)
		exec1(ctx, t, conn, "PRAGMA enable_profiling = 'json'")
		exec1(ctx, t, conn, "SET profiling_output = '"+out+"'")
		rows, err := conn.QueryContext(ctx, q)
		require.NoError(t, err)
		for rows.Next() {
		}
		require.NoError(t, rows.Close())
		exec1(ctx, t, conn, "PRAGMA disable_profiling")
	}
	require.NoError(t, conn.Close())
	require.NoError(t, db.Close())

	// stdout storage: run the helper below in a child process, because
	// DuckDB writes to the process's standard output.
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGenerateStdoutHelper$", "-test.v=false")
	cmd.Env = append(os.Environ(), "FLOE_GEN_DUCKDB_STDOUT=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	var keep []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, "\tQueryLog\t") || (len(keep) > 0 && !strings.HasPrefix(line, "PASS") && !strings.HasPrefix(line, "ok") && line != "") {
			keep = append(keep, line)
		}
	}
	require.NotEmpty(t, keep)
	require.NoError(t, os.WriteFile(filepath.Join(fixtureDir, "querylog-stdout.tsv"), []byte(strings.Join(keep, "\n")+"\n"), 0o644))
}

func TestGenerateStdoutHelper(t *testing.T) {
	if os.Getenv("FLOE_GEN_DUCKDB_STDOUT") == "" {
		t.Skip("helper process of TestGenerateFixtures")
	}
	ctx := t.Context()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	exec1(ctx, t, conn, createOrders)
	exec1(ctx, t, conn, "CALL enable_logging('QueryLog', storage = 'stdout')")
	runWorkload(ctx, t, conn)
	exec1(ctx, t, conn, "CALL disable_logging()")
	require.NoError(t, conn.Close())
	require.NoError(t, db.Close())
}
