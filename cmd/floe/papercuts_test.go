package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFirstHourPapercuts: what a new user types first gets an answer in
// their words — the argument a verb needs, an empty list said so, a table
// name in another case, a near miss with a suggestion.
func TestFirstHourPapercuts(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 2, 20) // local.db.flat

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compact"}, "compact needs TABLE; usage: floe compact TABLE"},
		{[]string{"plan", "show"}, "plan show needs ID; usage: floe plan show ID"},
		{[]string{"tables", "db.flat"}, `tables takes no arguments, got "db.flat"`},
	} {
		_, errOut, code := run(t, dir, tc.args...)
		require.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
		require.NotContains(t, errOut, "arg(s)", "%v: cobra's words", tc.args)
	}

	out, errOut, code := run(t, dir, "runs")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "no runs recorded")
	out, errOut, code = run(t, dir, "runs", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, "[]", out)

	// Engines read names without regard to case; so does floe.
	out, errOut, code = run(t, dir, "health", "DB.Flat")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "local.db.flat")
	require.NotContains(t, out, "DB.Flat", "the table is named as the catalog names it")

	_, errOut, code = run(t, dir, "health", "db.flta")
	require.Equal(t, exitNotFound, code)
	require.Contains(t, errOut, "no such table: local.db.flta; did you mean local.db.flat?")
	_, errOut, code = run(t, dir, "health", "db.nothing_like_it")
	require.Equal(t, exitNotFound, code)
	require.NotContains(t, errOut, "did you mean")
}

// TestReadOnlyVerbsCreateNothing: run where no warehouse is yet, the verbs
// that only read say so and leave no catalog, warehouse or state store
// behind; a verb that writes still creates them.
func TestReadOnlyVerbsCreateNothing(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t) // data_dir: <dir>/data, not created
	data := filepath.Join(dir, "data")
	for _, args := range [][]string{{"tables"}, {"health"}, {"runs"}, {"queries"}, {"plans"}, {"simulate", "web.events"}, {"report"}} {
		_, errOut, code := run(t, dir, args...)
		if code != 0 {
			require.Contains(t, errOut, "has no warehouse yet", "%v", args)
			require.Equal(t, exitNotFound, code, "%v: %s", args, errOut)
		}
		_, err := os.Stat(data)
		require.ErrorIs(t, err, fs.ErrNotExist, "%v created %s", args, data)
	}
	_, errOut, code := run(t, dir, "collect", filepath.Join(dir, "floe.yaml"))
	require.NotEqual(t, -1, code, errOut)
	_, err := os.Stat(filepath.Join(data, "state.db"))
	require.NoError(t, err, "collect records what it read: the state store is made")
}

// TestCollectPapercuts: a log floe cannot read is a failure a script sees
// (exit 1, naming the file and --source), an unknown --source a usage
// error (exit 2), and collect --listen follows
// floe serve's rule: beyond loopback only with server.token.
func TestCollectPapercuts(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 1, 5)
	junk := filepath.Join(dir, "notes.log")
	require.NoError(t, os.WriteFile(junk, []byte("hello, this is no query log\n"), 0o644))
	_, errOut, code := run(t, dir, "collect", junk)
	require.Equal(t, exitError, code, errOut)
	require.Contains(t, errOut, "floe: collect: 1 input(s) in no log format floe reads: "+junk+"; name the format with --source")
	out, _, code := run(t, dir, "collect", junk, "-o", "json")
	require.Equal(t, exitError, code)
	require.Contains(t, out, `"unrecognized": true`)

	// A --source that names no source is a bad flag value: exit 2, as
	// README.md's table says, and "collect:" said once.
	_, errOut, code = run(t, dir, "collect", junk, "--source", "trino")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, `floe: collect: unknown source "trino" (known: trino-event, trino-runtime,`)

	_, errOut, code = run(t, dir, "collect", "trino", "--listen", "0.0.0.0:0")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "beyond loopback the endpoint needs server.token (FLOE_SERVER_TOKEN)")
	_, errOut, code = run(t, dir, "collect", "trino", "--listen", ":0")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "needs server.token")
}
