package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

func TestMaintenanceVerbs(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "30", "--orders", "400", "--queries", "60")...)
	require.Equal(t, 0, code, errOut)
	sum := func() oracle.Sum {
		io, _, _ := testIO()
		f := newTestFactory(t, io)
		f.ConfigPath = dir + "/floe.yaml"
		id, err := f.ResolveTable("web.events")
		require.NoError(t, err)
		cat, err := f.Catalog(context.Background(), id.Catalog)
		require.NoError(t, err)
		tbl, err := lake.LoadTable(context.Background(), cat, id)
		require.NoError(t, err)
		s, err := oracle.ChecksumIceberg(context.Background(), tbl)
		require.NoError(t, err)
		return s
	}
	before := sum()

	// Dry run changes nothing and shows the plan.
	out, errOut, code := run(t, dir, "compact", "web.events", "--layout", "sort(tenant_id)", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	dry := dryRunOf(t, []byte(out))
	require.Len(t, dry.Steps, 1)
	require.NotNil(t, dry.Steps[0].Compact)
	require.NotEmpty(t, dry.Steps[0].Compact.Groups)

	out, errOut, code = run(t, dir, "compact", "web.events", "--layout", "sort(tenant_id)", "--memory", "64MiB", "-o", "json")
	require.Equal(t, 0, code, errOut)
	res := runResultOf(t, []byte(out))
	step, ok := stepOf(res.Run, "compact")
	require.True(t, ok)
	require.NotNil(t, step.Report.Compact)
	require.Equal(t, step.Before.Metrics.DataFiles, step.Report.Compact.FilesIn)
	require.Less(t, step.After.Metrics.DataFiles, step.Before.Metrics.DataFiles)
	require.Equal(t, before, sum(), "compaction changed the rows")
	require.Equal(t, []control.Approval{{Step: "compact", What: "layout sort(tenant_id)", By: res.Decision.By, How: "typed", At: res.Run.Approvals[0].At}},
		[]control.Approval(res.Run.Approvals), "typing the layout is recorded as the approval of the layout change")

	// Bad input exits 2.
	_, _, code = run(t, dir, "compact", "web.events", "--layout", "zorder(tenant_id")
	require.Equal(t, exitUsage, code)
	_, _, code = run(t, dir, "orphans", "web.events", "--older-than", "1h")
	require.Equal(t, exitUsage, code)

	out, errOut, code = run(t, dir, "expire", "web.events", "--older-than", "1s", "--retain-last", "2", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	ex := dryRunOf(t, []byte(out)).Steps[0].Expire
	require.NotNil(t, ex)
	require.NotEmpty(t, ex.Snapshots)

	out, errOut, code = run(t, dir, "optimize", "web.events", "--layout", "sort(tenant_id)", "--expire-older-than", "1s", "-o", "json")
	require.Equal(t, 0, code, errOut)
	r := runResultOf(t, []byte(out))
	require.Equal(t, control.StatusDone, r.Run.Status)
	require.Len(t, r.Run.Steps, 5, "expire, orphans, compact, deletes, manifests")
	require.Equal(t, before, sum(), "optimize changed the rows")

	// Every change is a run: the compaction's and the optimize's.
	out, errOut, code = run(t, dir, "runs", "web.events", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &runs))
	require.Len(t, runs, 2)

	_, errOut, code = run(t, dir, "rewrite-manifests", "web.events")
	require.Equal(t, 0, code, errOut)
}
