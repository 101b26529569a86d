package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFirstHourPapercuts: what a new user types first gets an answer in
// their words — the argument a verb needs, an empty list said so, a table
// name in another case, a near miss with a suggestion.
func TestFirstHourPapercuts(t *testing.T) {
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
