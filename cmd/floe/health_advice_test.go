package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// TestHealthSnapshotAdviceIsTrue: health's snapshot-count reason advises
// what brings the table under the threshold, and doing it does. Before, it
// said "expire them" while floe expire, at the default 5-day age, removed
// none of the demo's young snapshots: the table stayed warning whatever the
// user ran. Now, with no policy, it says the expiry removes none and names
// the command that keeps 99, which clears the reason; with a policy whose
// age the snapshots passed it says "expire them" with the count, and plain
// floe expire clears it.
func TestHealthSnapshotAdviceIsTrue(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a demo warehouse")
	}
	dir := writeConfig(t)
	cfg, err := os.ReadFile(filepath.Join(dir, "floe.yaml"))
	require.NoError(t, err)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "110", "--orders", "10", "--queries", "10")...)
	require.Equal(t, 0, code, errOut)
	snapshotReason := func() string {
		t.Helper()
		out, errOut, code := run(t, dir, "health", "web.events", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var hs []lake.Health
		require.NoError(t, json.Unmarshal([]byte(out), &hs), out)
		require.Len(t, hs, 1)
		for _, r := range hs[0].Reasons {
			if strings.Contains(r, "snapshots: ") {
				return r
			}
		}
		return ""
	}
	doAdvice := func(cmd string) {
		t.Helper()
		words := shellWords(t, cmd)
		require.Equal(t, "floe", words[0], cmd)
		out, errOut, code := run(t, dir, words[1:]...)
		require.Equal(t, 0, code, "%s: %s%s", cmd, out, errOut)
	}

	// No policy: every snapshot is younger than the 5-day default age.
	reason := snapshotReason()
	require.Contains(t, reason, "warning: snapshots: 110 retained (threshold 100); none is older than the expiry age 5d, so floe expire local.web.events removes none", reason)
	out, errOut, code := run(t, dir, "expire", "web.events")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, reason, snapshotReason(), "the default expiry removed none, as the reason said: %s", out)
	m := regexp.MustCompile(`: to keep 99, (floe expire local\.web\.events --older-than 0 --retain-last 99), or lower snapshots\.older_than$`).FindStringSubmatch(reason)
	require.NotNil(t, m, reason)
	doAdvice(m[1])
	require.Empty(t, snapshotReason(), "the advised command brings the table under the threshold")

	// A policy that expires after 1s and warns at 50: its expiry removes
	// enough, and the reason says plain floe expire does it.
	policy := "policies:\n  default:\n    snapshots: {older_than: 1s}\n    health: {snapshots: {warning: 50}}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), append(cfg, policy...), 0o644))
	time.Sleep(1100 * time.Millisecond)
	reason = snapshotReason()
	m = regexp.MustCompile(`^warning: snapshots: 99 retained \(threshold 50\); expire them: (floe expire local\.web\.events) removes the 98 older than 1s$`).FindStringSubmatch(reason)
	require.NotNil(t, m, reason)
	doAdvice(m[1])
	require.Empty(t, snapshotReason(), "the policy's own expiry brings the table under the threshold")
}
