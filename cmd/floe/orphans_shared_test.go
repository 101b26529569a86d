package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// sharedLake is a warehouse whose table db.flat shares its location with
// other catalog entries, and a floe configuration for it.
type sharedLake struct {
	w   *testlake.Warehouse
	dir string // holds floe.yaml
}

// newSharedLake writes db.flat (six small files) and registers db.twin
// with its metadata file: two entries, one location.
func newSharedLake(t *testing.T) *sharedLake {
	t.Helper()
	w := testlake.New(t)
	writeFlatTable(t, w, "flat", 6, 200)
	flat, err := w.Catalog.LoadTable(context.Background(), table.Identifier{"db", "flat"})
	require.NoError(t, err)
	w.Register(t, "db", "twin", flat.MetadataLocation())
	s := &sharedLake{w: w, dir: t.TempDir()}
	s.configure(t, "")
	return s
}

// configure writes floe.yaml with the local catalog and the catalogs in
// extra (YAML lines under catalogs:).
func (s *sharedLake) configure(t *testing.T, extra string) {
	t.Helper()
	writeWarehouseConfig(t, s.dir, s.w, extra)
}

// load loads table name (catalog.namespace.name) through the configuration.
func (s *sharedLake) load(t *testing.T, name string) *table.Table {
	t.Helper()
	cat, id, _ := openDemoTable(t, s.dir, name)
	tbl, err := lake.LoadTable(context.Background(), cat, id)
	require.NoError(t, err)
	return tbl
}

// registerDamaged registers db.broken with a copy of tbl's metadata file,
// then damages the copy: an entry floe cannot load. It returns the copy's
// location and its good content, to repair it with.
func (s *sharedLake) registerDamaged(t *testing.T, tbl *table.Table) (string, []byte) {
	t.Helper()
	copied := tbl.Location() + "/metadata/99999-copy.metadata.json"
	b := s.w.Read(t, tbl.MetadataLocation())
	s.w.Plant(t, copied, b, time.Now())
	s.w.Register(t, "db", "broken", copied)
	s.w.Plant(t, copied, []byte("{not json"), time.Now())
	return copied, b
}

// The adversarial case of issue 37 through the CLI, default flags: compact
// db.flat, then floe orphans --apply on db.twin, which shares its location.
// flat's compaction outputs are seconds old, named after a run that is
// over, and unknown to twin's metadata; they must survive, and flat must
// read the same rows. Then the same with a copied catalog configured beside
// the original.
func TestOrphansApplyKeepsWhatAnEntrySharingTheLocationCommitted(t *testing.T) {
	t.Parallel()
	s := newSharedLake(t)
	ctx := context.Background()
	want, err := oracle.ChecksumIceberg(ctx, s.load(t, "local.db.flat"))
	require.NoError(t, err)

	io, _, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "compact", "local.db.flat", "--layout", "sort(id)"), errOut.String())
	flat := s.load(t, "local.db.flat")
	data, _, err := oracle.LiveFiles(ctx, flat)
	require.NoError(t, err)
	for _, p := range data {
		require.NotEmpty(t, rewriter.RunOfFile(p), "flat's files are now the compaction's: %s", p)
	}

	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "orphans", "local.db.twin", "--apply", "--output", "json"), errOut.String())
	rep := reportOf(t, runResultOf(t, out.Bytes()), "orphans")
	plan := rep.OrphanPlan
	if rep.Orphans != nil {
		plan = &rep.Orphans.Plan
	}
	require.NotNil(t, plan, out.String())
	require.Equal(t, []string{"local.db.flat"}, plan.Siblings)
	require.GreaterOrEqual(t, plan.Shared, len(data)+2, "the compaction's files, its manifest list and metadata file at least")
	require.Empty(t, plan.Files)
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
	testlake.RequireIntact(t, s.load(t, "local.db.twin"), want)

	// The other way round, in text: twin's entry is named.
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "orphans", "local.db.flat", "--apply"), errOut.String())
	require.Contains(t, out.String(), "the location is shared with local.db.twin")

	// A restored backup of the catalog, configured beside it: its entries
	// share every location too.
	backup := filepath.Join(t.TempDir(), "backup.db")
	s.w.CopyCatalog(t, "backup", backup)
	s.configure(t, s.w.CatalogYAML("backup", map[string]string{"uri": backup}))
	io, _, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "compact", "local.db.flat", "--layout", "sort(tenant, id)"), errOut.String())
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "orphans", "backup.db.flat", "--apply"), errOut.String())
	require.Contains(t, out.String(), "the location is shared with backup.db.twin, local.db.flat, local.db.twin")
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
	testlake.RequireIntact(t, s.load(t, "backup.db.flat"), want)

	// optimize runs the same check in its orphans step.
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "optimize", "backup.db.twin", "--layout", "sort(id)", "--output", "json"), errOut.String())
	orep := reportOf(t, runResultOf(t, out.Bytes()), "orphans")
	siblings := []string(nil)
	switch {
	case orep.OrphanPlan != nil:
		siblings = orep.OrphanPlan.Siblings
	case orep.Orphans != nil:
		siblings = orep.Orphans.Plan.Siblings
	}
	require.Equal(t, []string{"backup.db.flat", "local.db.flat", "local.db.twin"}, siblings)
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), want)
}

// An entry floe cannot load, or a catalog it cannot list, may share the
// location: floe orphans refuses, naming it, and deletes nothing.
func TestOrphansRefuseWhenAnEntryOrACatalogCannotBeRead(t *testing.T) {
	t.Parallel()
	s := newSharedLake(t)
	ctx := context.Background()
	flat := s.load(t, "local.db.flat")
	stray := flat.Location() + "/data/stray.parquet"
	s.w.Plant(t, stray, []byte("stray"), time.Now())

	copied, b := s.registerDamaged(t, flat)

	io, out, errOut := testIO()
	code := runWith(t, io, s.dir, "orphans", "local.db.flat", "--apply", "--older-than", "0", "--force")
	require.Equal(t, exitError, code, out.String())
	require.Contains(t, errOut.String(), "entry local.db.broken could not be loaded")
	require.Contains(t, errOut.String(), "nothing deleted")
	require.True(t, s.w.Exists(t, stray), "stray deleted")

	// Repaired, the same call removes the stray file.
	s.w.Plant(t, copied, b, time.Now())
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, s.dir, "orphans", "local.db.flat", "--apply", "--older-than", "0", "--force"), errOut.String())
	require.False(t, s.w.Exists(t, stray), out.String())

	// A configured catalog that cannot be reached.
	s.w.Plant(t, stray, []byte("stray"), time.Now())
	s.configure(t, `  gone:
    type: rest
    uri: http://127.0.0.1:1
`)
	io, out, errOut = testIO()
	code = runWith(t, io, s.dir, "orphans", "local.db.flat", "--apply", "--older-than", "0", "--force")
	require.Equal(t, exitError, code, out.String())
	require.Contains(t, errOut.String(), "catalog gone could not be opened or listed")
	require.True(t, s.w.Exists(t, stray), "stray deleted")
	testlake.RequireIntact(t, s.load(t, "local.db.flat"), mustSum(t, ctx, flat))
}

func mustSum(t *testing.T, ctx context.Context, tbl *table.Table) oracle.Sum {
	t.Helper()
	s, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	return s
}
