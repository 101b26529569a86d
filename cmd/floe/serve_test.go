package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeOnce: one scheduling pass over the warehouse runs what each
// table's policy calls for and exits 0; a manual table is left alone.
func TestServeOnce(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "policies:\n  default: {layout: none}\n")
	out, errOut, code := run(t, dir, "serve", "--once", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var pass struct {
		Decisions []struct {
			Table, Trigger, Reason string
			Due                    bool
		} `json:"decisions"`
		Runs []struct {
			Run struct {
				Status string `json:"status"`
			} `json:"run"`
		} `json:"runs"`
		Errors []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pass))
	require.Len(t, pass.Decisions, 1)
	require.Equal(t, "local.db.flat", pass.Decisions[0].Table)
	require.True(t, pass.Decisions[0].Due, pass.Decisions[0].Reason)
	require.Equal(t, "adaptive", pass.Decisions[0].Trigger)
	require.Len(t, pass.Runs, 1)
	require.Equal(t, "done", pass.Runs[0].Run.Status)
	require.Empty(t, pass.Errors)

	manual := policyWarehouse(t, "policies:\n  tables:\n    local.db.*: {mode: manual}\n")
	out, errOut, code = run(t, manual, "serve", "--once")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "local.db.flat  no")
	require.Contains(t, out, "mode: manual")
}

// Beyond loopback floe serve refuses a weak token before it listens: the
// error names the key and where it was set, never the token.
func TestServeRefusesWeakTokenBeyondLoopback(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "server:\n  token: letmein\n")
	out, errOut, code := run(t, dir, "serve", "--listen", "0.0.0.0:0")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "server.token: too weak for an address other hosts can reach")
	require.Contains(t, errOut, "floe.yaml:")
	require.NotContains(t, out+errOut, "letmein")
	require.NotContains(t, errOut, "listening on", "it never listened")
}
