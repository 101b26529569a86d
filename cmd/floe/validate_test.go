package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// Bad input is refused before any work, the dry run refuses what the run
// would, a dry run of optimize records nothing, and a workload file's
// filters choose the candidates simulate projects.
func TestValidateBeforeWork(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "30", "--orders", "400", "--queries", "60")...)
	require.Equal(t, 0, code, errOut)
	runs := func() int {
		out, errOut, code := run(t, dir, "runs", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var rs []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &rs))
		return len(rs)
	}
	before := runs()

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown layout column, dry run", []string{"compact", "web.events", "--layout", "sort(nosuchcol)", "--dry-run"}, exitUsage, `no column "nosuchcol"`},
		{"unknown layout column", []string{"compact", "web.events", "--layout", "hilbert(nosuchcol, tenant_id)"}, exitUsage, `no column "nosuchcol"`},
		{"nested column", []string{"compact", "web.events", "--layout", "sort(addr.city)", "--dry-run"}, exitUsage, `no column "addr.city"`},
		{"memory below the minimum, dry run", []string{"compact", "web.events", "--layout", "sort(tenant_id)", "--memory", "1KiB", "--dry-run"}, exitUsage, "--memory 1KiB is below the 1.0 MiB"},
		{"groups per commit zero", []string{"compact", "web.events", "--groups-per-commit", "0", "--dry-run"}, exitUsage, "--groups-per-commit must be at least 1"},
		{"partition matching nothing", []string{"compact", "web.events", "--partition", "bogus", "--dry-run"}, exitUsage, `partition "bogus" matches no data file`},
		{"optimize: unknown layout column", []string{"optimize", "web.events", "--layout", "sort(nosuchcol)"}, exitUsage, `no column "nosuchcol"`},
		{"optimize: unknown column, dry run", []string{"optimize", "web.events", "--layout", "sort(nosuchcol)", "--dry-run"}, exitUsage, `no column "nosuchcol"`},
		{"optimize: no such table, dry run", []string{"optimize", "web.nosuch", "--dry-run"}, exitNotFound, "no such table"},
		{"optimize: no such table", []string{"optimize", "web.nosuch"}, exitNotFound, "no such table"},
		{"simulate: unknown layout column", []string{"simulate", "web.events", "--layout", "sort(nosuchcol)"}, exitUsage, `no column "nosuchcol"`},
		{"plan: unknown layout column", []string{"plan", "web.events", "--layout", "zorder(tenant_id, nosuchcol)"}, exitUsage, `no column "nosuchcol"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, dir, tc.args...)
			require.Equal(t, tc.code, code, errOut)
			require.Contains(t, errOut, tc.want)
		})
	}
	require.Equal(t, before, runs(), "a refused optimize records no run")

	// --memory 0 is unbounded, not out of range.
	_, errOut, code = run(t, dir, "compact", "web.events", "--layout", "sort(tenant_id)", "--memory", "0", "--dry-run")
	require.Equal(t, 0, code, errOut)

	// optimize --dry-run says what each step would do, marks itself a dry
	// run, and records nothing.
	out, errOut, code := run(t, dir, "optimize", "web.events", "--layout", "sort(tenant_id)", "--dry-run")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "dry run on local.web.events: nothing changed, no run recorded")
	require.Contains(t, out, "rewrite ")
	require.NotContains(t, out, "done")
	out, errOut, code = run(t, dir, "optimize", "web.events", "--layout", "sort(tenant_id)", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var dry struct {
		DryRun bool `json:"dry_run"`
		Steps  []struct {
			Step    string          `json:"step"`
			Status  string          `json:"status"`
			Compact json.RawMessage `json:"compact"`
		} `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &dry))
	require.True(t, dry.DryRun)
	require.Len(t, dry.Steps, 5, "expire, orphans, compact, deletes, manifests")
	for _, s := range dry.Steps {
		require.Equal(t, "planned", s.Status, s.Step)
	}
	require.NotEmpty(t, dry.Steps[2].Compact)
	require.Equal(t, before, runs(), "a dry run records no run")

	// A workload file filtering on tenant_id: without --layout, simulate
	// projects the analyzer's candidates for that workload.
	sql := filepath.Join(dir, "q.sql")
	var b strings.Builder
	for i := range 20 {
		b.WriteString("SELECT count(*) FROM web.events WHERE tenant_id = " + string(rune('1'+i%9)) + " AND event_type = 'click';\n")
	}
	require.NoError(t, os.WriteFile(sql, []byte(b.String()), 0o644))
	out, errOut, code = run(t, dir, "simulate", "web.events", "--workload", sql, "--dialect", "trino", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var sim struct {
		Queries    int `json:"queries"`
		Candidates []struct {
			Layout layout.Layout `json:"layout"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sim))
	require.Equal(t, 20, sim.Queries)
	var layouts []string
	for _, c := range sim.Candidates {
		layouts = append(layouts, c.Layout.String())
	}
	require.Contains(t, layouts, "current")
	require.Contains(t, layouts, "binpack")
	require.Greater(t, len(layouts), 2, "the workload's filters add sort, z-order or Hilbert candidates: %v", layouts)
	require.True(t, strings.HasPrefix(layouts[0], "sort(tenant_id") || strings.Contains(strings.Join(layouts, " "), "sort(tenant_id"), layouts)
}
