package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/demo"
)

// TestPruneLeavesAnalyzeUnchanged collects real-format logs of all six
// sources spanning 60 days over the demo warehouse, prunes the raw events
// older than the default 30-day retention, and runs floe analyze, floe
// simulate and floe queries with a 60-day window before and after: the
// output is the same byte for byte, and no raw event older than the
// retention is left.
func TestPruneLeavesAnalyzeUnchanged(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the demo warehouse")
	}
	dir := demoConfig(t)
	asOf, err := time.Parse(time.RFC3339, testAsOf)
	require.NoError(t, err)
	now := asOf.Add(time.Hour)
	ctx := t.Context()
	do := func(args ...string) string {
		t.Helper()
		var out, errOut lockedBuffer
		code := runAt(t, ctx, dir, now, &out, &errOut, args...)
		require.Equal(t, 0, code, "floe %s: %s", strings.Join(args, " "), errOut.String())
		return out.String()
	}
	do(demoArgs("--event-commits", "60", "--orders", "2000", "--queries", "200")...)
	logs := filepath.Join(dir, "logs60")
	sum, err := demo.WriteLogs(logs, demo.LogOptions{Now: asOf, Window: 60 * 24 * time.Hour, Queries: 1200, Seed: 7, Orders: 2000})
	require.NoError(t, err)
	do("collect", logs)

	verbs := [][]string{
		{"analyze", "--since", "61d", "-o", "json"},
		{"analyze", "--since", "61d", "--half-life", "3d", "-o", "json"},
		{"analyze", "web.events", "--since", "45d", "-o", "json"},
		{"simulate", "web.events", "--since", "61d", "-o", "json"},
	}
	var before []string
	for _, v := range verbs {
		before = append(before, do(v...))
	}

	st, err := store.Open(ctx, filepath.Join(dir, "floe-data", "state.db"))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	res, err := control.PruneTelemetry(ctx, st, control.PruneOptions{Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.Equal(t, now.Add(-30*24*time.Hour), res.Before)
	require.Greater(t, res.Deleted, sum.Events()/4, "about half of the 60-day logs are older than 30 days")
	require.Equal(t, res.Deleted, res.Folded)
	old, err := st.Queries(ctx, store.QueryFilter{Until: res.Before})
	require.NoError(t, err)
	require.Empty(t, old, "no raw event older than the retention is left")

	for i, v := range verbs {
		require.Equal(t, before[i], do(v...), "floe %s", strings.Join(v, " "))
	}
}
