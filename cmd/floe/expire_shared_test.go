package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
)

// The expiry counterpart of issue 37's case through the CLI: compact
// db.flat, then floe expire db.flat with no flag once its old snapshots are
// past the table's expiry age. db.twin shares the location, and its
// current snapshot is the one the compaction replaced: its manifest list
// and data files are reached, in flat's metadata, only by the expired
// snapshots. They must stay, and twin must read the same rows.
func TestExpireKeepsWhatAnEntrySharingTheLocationReferences(t *testing.T) {
	t.Parallel()
	s := newSharedLake(t)
	ctx := context.Background()
	want := mustSum(t, ctx, s.load(t, "local.db.flat"))
	twinList := s.load(t, "local.db.twin").CurrentSnapshot().ManifestList

	io, _, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "compact", "local.db.flat", "--layout", "sort(id)"), errOut.String())
	// The table's own expiry age, so that floe expire needs no flag.
	setTableProperty(t, s.dir, "local.db.flat", "history.expire.max-snapshot-age-ms", "1")

	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "expire", "local.db.flat", "--dry-run"), errOut.String())
	require.Contains(t, out.String(), "the location is shared with local.db.twin: kept ")

	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "expire", "local.db.flat", "--dry-run", "--output", "json"), errOut.String())
	plan := dryRunOf(t, out.Bytes()).Steps[0].Expire
	require.NotNil(t, plan, out.String())
	require.NotEmpty(t, plan.Snapshots)
	require.Equal(t, []string{"local.db.twin"}, plan.Siblings)
	require.NotContains(t, plan.Files, twinList)

	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "expire", "local.db.flat", "--output", "json"), errOut.String())
	result := reportOf(t, runResultOf(t, out.Bytes()), "expire").Expire
	require.NotNil(t, result, out.String())
	require.ElementsMatch(t, plan.Snapshots, result.Expired)
	require.Equal(t, []string{"local.db.twin"}, result.Siblings)
	require.Contains(t, result.Shared, twinList)
	require.NotContains(t, result.Deleted, twinList)
	require.Len(t, s.load(t, "local.db.flat").Metadata().Snapshots(), 1)
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
	testlake.RequireIntact(t, s.load(t, "local.db.twin"), want)
}

// An entry floe cannot load may share the location: floe expire refuses,
// naming it, and changes nothing; --keep-files expires the snapshots and
// deletes no file.
func TestExpireRefusesWhenAnEntryCannotBeRead(t *testing.T) {
	t.Parallel()
	s := newSharedLake(t)
	ctx := context.Background()
	flat := s.load(t, "local.db.flat")
	want := mustSum(t, ctx, flat)
	snaps := len(flat.Metadata().Snapshots())
	require.Greater(t, snaps, 1)
	lists := make([]string, 0, snaps)
	for _, sn := range flat.Metadata().Snapshots() {
		lists = append(lists, sn.ManifestList)
	}

	s.registerDamaged(t, flat)

	for _, args := range [][]string{{"--dry-run"}, {}} {
		io, out, errOut := testIO()
		code := runWith(t, io, s.dir, append([]string{"expire", "local.db.flat", "--older-than", "0"}, args...)...)
		require.Equal(t, exitError, code, out.String())
		require.Contains(t, errOut.String(), "entry local.db.broken could not be loaded")
		require.Contains(t, errOut.String(), "nothing deleted")
		require.Contains(t, errOut.String(), "--keep-files")
	}
	require.Len(t, s.load(t, "local.db.flat").Metadata().Snapshots(), snaps, "nothing expired")
	for _, p := range lists {
		require.True(t, s.w.Exists(t, p), "%s deleted", p)
	}

	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "expire", "local.db.flat", "--older-than", "0", "--keep-files"), errOut.String())
	require.Contains(t, out.String(), "deleted no file (--keep-files)")
	require.Len(t, s.load(t, "local.db.flat").Metadata().Snapshots(), 1)
	for _, p := range lists {
		require.True(t, s.w.Exists(t, p), "--keep-files deleted %s", p)
	}
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
	testlake.RequireIntact(t, s.load(t, "local.db.twin"), want)
}
