package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
)

// expireJSON is what floe expire -o json prints, the fields these tests
// read.
type expireJSON struct {
	Plan struct {
		Snapshots []string `json:"snapshot_ids"`
		Files     []string `json:"files"`
		Siblings  []string `json:"siblings"`
		Shared    int      `json:"shared"`
		KeepFiles bool     `json:"keep_files"`
	} `json:"plan"`
	Result *struct {
		Expired   []string `json:"expired_snapshot_ids"`
		Deleted   []string `json:"deleted"`
		Siblings  []string `json:"siblings"`
		Shared    []string `json:"shared"`
		KeepFiles bool     `json:"keep_files"`
	} `json:"result"`
}

// The expiry counterpart of issue 37's case through the CLI: compact
// db.flat, then floe expire db.flat with no flag once its old snapshots are
// past the table's expiry age. db.twin shares the location, and its
// current snapshot is the one the compaction replaced: its manifest list
// and data files are reached, in flat's metadata, only by the expired
// snapshots. They must stay, and twin must read the same rows.
func TestExpireKeepsWhatAnEntrySharingTheLocationReferences(t *testing.T) {
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
	require.Equal(t, 0, runWith(t, io, s.dir, "expire", "local.db.flat", "--output", "json"), errOut.String())
	var rep expireJSON
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.NotEmpty(t, rep.Plan.Snapshots)
	require.Equal(t, []string{"local.db.twin"}, rep.Plan.Siblings)
	require.NotContains(t, rep.Plan.Files, twinList)
	require.NotNil(t, rep.Result)
	require.ElementsMatch(t, rep.Plan.Snapshots, rep.Result.Expired)
	require.Equal(t, []string{"local.db.twin"}, rep.Result.Siblings)
	require.Contains(t, rep.Result.Shared, twinList)
	require.NotContains(t, rep.Result.Deleted, twinList)
	require.Len(t, s.load(t, "local.db.flat").Metadata().Snapshots(), 1)
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
	testlake.RequireIntact(t, s.load(t, "local.db.twin"), want)
}

// An entry floe cannot load may share the location: floe expire refuses,
// naming it, and changes nothing; --keep-files expires the snapshots and
// deletes no file.
func TestExpireRefusesWhenAnEntryCannotBeRead(t *testing.T) {
	s := newSharedLake(t)
	ctx := context.Background()
	flat := s.load(t, "local.db.flat")
	want := mustSum(t, ctx, flat)
	snaps := len(flat.Metadata().Snapshots())
	require.Greater(t, snaps, 1)
	lists := make([]string, 0, snaps)
	for _, sn := range flat.Metadata().Snapshots() {
		lists = append(lists, oracle.LocalPath(sn.ManifestList))
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
		require.FileExists(t, p)
	}

	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "expire", "local.db.flat", "--older-than", "0", "--keep-files"), errOut.String())
	require.Contains(t, out.String(), "deleted no file (--keep-files)")
	require.Len(t, s.load(t, "local.db.flat").Metadata().Snapshots(), 1)
	for _, p := range lists {
		require.FileExists(t, p, "--keep-files deletes nothing")
	}
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
	testlake.RequireIntact(t, s.load(t, "local.db.twin"), want)
}
