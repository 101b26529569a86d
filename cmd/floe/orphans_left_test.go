package main

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// recordRun stores run id, on table, ended as status, in the state store of
// the configuration in dir, as an optimize run does.
func recordRun(t *testing.T, dir, id, table, status string) {
	t.Helper()
	ctx := context.Background()
	io, _, _ := testIO()
	f := newFactory(io)
	f.ConfigPath = filepath.Join(dir, "floe.yaml")
	st, err := f.Store(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	now := time.Now().UTC()
	require.NoError(t, st.StartRun(ctx, store.RunRecord{ID: id, Table: table, Status: "running", StartedAt: now.Add(-time.Minute)}))
	require.NoError(t, st.EndRun(ctx, id, status, "interrupted", now))
}

// Files a floe run on the table wrote and could not remove are reported by
// 'floe orphans' at its default age, named as that run's, not only under
// --force; --apply removes them. Which table the run was on comes from its
// record: files of a run nothing records are judged by their age.
func TestOrphansReportsFilesLeftByARun(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 3, 100)
	ctx := context.Background()
	cat, id, _ := openDemoTable(t, dir, "db.flat")
	tbl, err := lake.LoadTable(ctx, cat, id)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	// What a run interrupted on a store that refused the removal leaves:
	// files it wrote and did not commit, its lease released.
	files, _, err := rewriter.RewriteGroup(ctx, tbl, tasks, rewriter.GroupOptions{RunID: "20261129T101500Z-3fa9c2d1"})
	require.NoError(t, err)
	require.NotEmpty(t, files)

	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, dir, "orphans", "db.flat"), errOut.String())
	require.NotContains(t, out.String(), "left by run", "no record says which table the run was on")
	require.Contains(t, out.String(), ": 0 orphan files")

	recordRun(t, dir, "20261129T101500Z-3fa9c2d1", id.String(), "cancelled")
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "orphans", "db.flat"), errOut.String())
	require.Contains(t, out.String(), "left by run 20261129T101500Z-3fa9c2d1")
	require.Contains(t, out.String(), "run again with --apply")

	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "orphans", "db.flat", "--apply"), errOut.String())
	require.Contains(t, out.String(), "deleted "+strconv.Itoa(len(files))+" orphan files")
}
