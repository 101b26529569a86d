package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

func TestMaintenanceVerbs(t *testing.T) {
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "30", "--orders", "400", "--queries", "60")...)
	require.Equal(t, 0, code, errOut)
	sum := func() oracle.Sum {
		io, _, _ := testIO()
		f := newFactory(io)
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
	// The parts of compact's JSON the test reads (see
	// testdata/json/compact.json for all of it).
	var cs struct {
		Plan struct {
			Groups []struct {
				Partition string `json:"partition"`
			} `json:"groups"`
		} `json:"plan"`
		Result *struct {
			FilesIn int `json:"files_in"`
		} `json:"result"`
		Before struct {
			DataFiles int `json:"data_files"`
		} `json:"before"`
		After *struct {
			DataFiles int `json:"data_files"`
		} `json:"after"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cs))
	require.NotEmpty(t, cs.Plan.Groups)
	require.Nil(t, cs.Result)

	out, errOut, code = run(t, dir, "compact", "web.events", "--layout", "sort(tenant_id)", "--memory", "64MiB", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &cs))
	require.NotNil(t, cs.Result)
	require.Equal(t, cs.Before.DataFiles, cs.Result.FilesIn)
	require.Less(t, cs.After.DataFiles, cs.Before.DataFiles)
	require.Equal(t, before, sum(), "compaction changed the rows")

	// Bad input exits 2.
	_, _, code = run(t, dir, "compact", "web.events", "--layout", "zorder(tenant_id")
	require.Equal(t, exitUsage, code)
	_, _, code = run(t, dir, "orphans", "web.events", "--older-than", "1h")
	require.Equal(t, exitUsage, code)

	out, errOut, code = run(t, dir, "expire", "web.events", "--older-than", "1s", "--retain-last", "2", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var ex struct {
		Plan struct {
			Snapshots []string `json:"snapshot_ids"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ex))
	require.NotEmpty(t, ex.Plan.Snapshots)

	out, errOut, code = run(t, dir, "optimize", "web.events", "--layout", "sort(tenant_id)", "--expire-older-than", "1s", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Status string `json:"status"`
		Steps  []struct {
			Step, Status string
		} `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "done", r.Status)
	require.Len(t, r.Steps, 4)
	require.Equal(t, before, sum(), "optimize changed the rows")

	out, errOut, code = run(t, dir, "runs", "web.events", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &runs))
	require.Len(t, runs, 1)

	_, errOut, code = run(t, dir, "rewrite-manifests", "web.events")
	require.Equal(t, 0, code, errOut)
}
