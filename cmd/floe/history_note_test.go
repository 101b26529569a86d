package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTelemetryHistoryNote: every verb whose --since reaches past
// telemetry.history says on stderr that the older queries are gone, and
// goes on; within the history, or replaying a --workload file, it says
// nothing.
func TestTelemetryHistoryNote(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	f, err := os.OpenFile(filepath.Join(dir, "floe.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("telemetry:\n  retention: 7d\n  history: 60d\n")
	require.NoError(t, errors.Join(err, f.Close()))
	workload := filepath.Join(dir, "workload.sql")
	require.NoError(t, os.WriteFile(workload, []byte("SELECT * FROM web.events WHERE tenant_id = 1;\n"), 0o644))
	const note = "note: --since 90d reaches past telemetry.history (60d): queries that started more than 60d ago are deleted"
	for _, tc := range []struct {
		args []string
		note bool
	}{
		{[]string{"queries", "--since", "90d"}, true},
		{[]string{"queries", "--since", "60d"}, false},
		{[]string{"queries"}, false},
		{[]string{"analyze", "--since", "90d"}, true},
		{[]string{"analyze"}, false},
		{[]string{"report", "--since", "90d"}, true},
		{[]string{"simulate", "web.events", "--since", "90d"}, true},
		{[]string{"plan", "web.events", "--since", "90d"}, true},
		{[]string{"measure", "web.events", "--since", "90d"}, true},
		{[]string{"simulate", "web.events", "--since", "90d", "--workload", workload}, false},
	} {
		_, stderr, code := run(t, dir, tc.args...)
		require.NotEqual(t, exitUsage, code, "%v: %s", tc.args, stderr)
		if tc.note {
			require.Contains(t, stderr, note, "%v", tc.args)
		} else {
			require.NotContains(t, stderr, "note:", "%v", tc.args)
		}
	}
}
