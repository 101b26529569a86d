package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// Files a floe run wrote and could not remove are reported by 'floe
// orphans' at its default age, named as that run's, not only under --force;
// --apply removes them.
func TestOrphansReportsFilesLeftByARun(t *testing.T) {
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
	require.Contains(t, out.String(), "left by run 20261129T101500Z-3fa9c2d1")
	require.Contains(t, out.String(), "run again with --apply")

	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "orphans", "db.flat", "--apply"), errOut.String())
	require.Contains(t, out.String(), "deleted "+strconv.Itoa(len(files))+" files")
}
