package rewriter_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/rewriter"
)

// expireLater is a clock ten days ahead: every snapshot of a fresh table is
// past the default 5-day expiry age.
func expireLater() time.Time { return time.Now().Add(10 * 24 * time.Hour) }

// sharedForExpiry is a location shared by entries a and b (see
// [newSharedEntries]), then an append that only a commits, then a's
// compaction: a's expired snapshots reach files that b's current snapshot
// still reads (its manifest list, the data files a's compaction replaced)
// and files that only a ever referenced (onlyA).
type sharedForExpiry struct {
	*sharedEntries
	want  oracle.Sum // the rows of b
	wantA oracle.Sum // the rows of a
	onlyA []string   // the manifest list and data file of a's own append
}

// localPaths is paths without their file: scheme.
func localPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = oracle.LocalPath(p)
	}
	return out
}

func newSharedForExpiry(t *testing.T) *sharedForExpiry {
	t.Helper()
	s := &sharedForExpiry{sharedEntries: newSharedEntries(t)}
	var err error
	s.want, err = oracle.ChecksumIceberg(t.Context(), s.b)
	require.NoError(t, err)
	before := liveFiles(t, s.a)
	s.a = appendFresh(t, s.a, 20000, 50, "eu")
	s.onlyA = []string{s.a.CurrentSnapshot().ManifestList}
	for _, p := range liveFiles(t, s.a) {
		if !slices.Contains(before, p) {
			s.onlyA = append(s.onlyA, p)
		}
	}
	require.Len(t, s.onlyA, 2)
	s.wantA, err = oracle.ChecksumIceberg(t.Context(), s.a)
	require.NoError(t, err)
	s.compactA(t)
	return s
}

// snapshotCount is the number of snapshots tbl's newest metadata has.
func snapshotCount(t *testing.T, w *testlake.Warehouse, tbl *table.Table) int {
	t.Helper()
	fresh, err := w.Catalog.LoadTable(t.Context(), tbl.Identifier())
	require.NoError(t, err)
	return len(fresh.Metadata().Snapshots())
}

// The expiry counterpart of issue 37's adversarial case: entry a is
// compacted, then its snapshots are expired with the default options once
// they are old. b shares the location, and its current snapshot is the one
// a's compaction replaced: its manifest list and data files are reached, in
// a's metadata, only by a's expired snapshots. They must stay, and b must
// read the same rows; what only a referenced still goes.
func TestExpireKeepsWhatAnEntrySharingTheLocationReferences(t *testing.T) {
	ctx := t.Context()
	s := newSharedForExpiry(t)
	bList := s.b.CurrentSnapshot().ManifestList

	// What a alone sees: b's current manifest list is its to delete. This
	// is what the sibling check must prevent.
	alone, err := rewriter.PlanExpire(ctx, s.a, rewriter.ExpireOptions{Now: expireLater})
	require.NoError(t, err)
	require.Contains(t, alone.Files, bList)

	opts := rewriter.ExpireOptions{Now: expireLater, Siblings: sibling("local.db.b", s.b)}
	plan, err := rewriter.PlanExpire(ctx, s.a, opts)
	require.NoError(t, err)
	require.Equal(t, alone.Snapshots, plan.Snapshots, "expiring a's snapshots is a's own business")
	require.Equal(t, []string{"local.db.b"}, plan.Siblings)
	require.NotContains(t, plan.Files, bList)
	require.Equal(t, len(alone.Files)-len(plan.Files), plan.Shared)
	require.Positive(t, plan.Shared)
	for _, p := range s.onlyA {
		require.Contains(t, localPaths(plan.Files), oracle.LocalPath(p), "a file only a referenced is still a's to delete")
	}

	res, err := rewriter.Expire(ctx, s.w.Catalog, s.a, plan, opts)
	require.NoError(t, err)
	require.ElementsMatch(t, plan.Snapshots, res.Expired)
	require.Equal(t, []string{"local.db.b"}, res.Siblings)
	require.ElementsMatch(t, plan.Files, res.Deleted)
	require.Len(t, res.Shared, plan.Shared)
	require.Contains(t, res.Shared, bList)
	requireGone(t, s.w, s.onlyA...)
	a, err := s.w.Catalog.LoadTable(ctx, s.a.Identifier())
	require.NoError(t, err)
	require.Len(t, a.Metadata().Snapshots(), 1)
	testlake.RequireIntact(t, s.b, s.want)
	testlake.RequireIntact(t, a, s.wantA)
}

// A sibling that cannot be read refuses the expiry, named: when planning,
// and when expiring, before anything is committed. One that becomes
// unreadable between the commit and the deletion leaves the snapshots
// expired and every file in place. KeepFiles expires without deleting and
// without asking.
func TestExpireRefusesWhenASiblingCannotBeRead(t *testing.T) {
	ctx := t.Context()
	s := newSharedForExpiry(t)
	snaps := snapshotCount(t, s.w, s.a)

	// The finder itself fails (a catalog could not be listed).
	unlisted := errors.New("catalog backup: list namespaces: connection refused")
	down := func(context.Context) ([]rewriter.Sibling, error) { return nil, unlisted }
	_, err := rewriter.PlanExpire(ctx, s.a, rewriter.ExpireOptions{Now: expireLater, Siblings: down})
	require.ErrorIs(t, err, unlisted)
	require.ErrorContains(t, err, "catalog backup")

	// A sibling whose snapshots cannot be read: its manifest list is gone.
	_, err = rewriter.PlanExpire(ctx, s.a, rewriter.ExpireOptions{Now: expireLater, Siblings: s.brokenSibling(t)})
	require.ErrorIs(t, err, rewriter.ErrSiblingUnknown)
	require.ErrorContains(t, err, "local.db.broken")

	// Readable when planning, not when expiring: nothing changes.
	calls := 0
	flaky := func(fail int) func(context.Context) ([]rewriter.Sibling, error) {
		calls = 0
		return func(ctx context.Context) ([]rewriter.Sibling, error) {
			calls++
			if calls >= fail {
				return nil, errors.New("load local.db.b: metadata file unreadable")
			}
			return sibling("local.db.b", s.b)(ctx)
		}
	}
	opts := rewriter.ExpireOptions{Now: expireLater, Siblings: flaky(2)}
	plan, err := rewriter.PlanExpire(ctx, s.a, opts)
	require.NoError(t, err)
	require.NotEmpty(t, plan.Files)
	res, err := rewriter.Expire(ctx, s.w.Catalog, s.a, plan, opts)
	require.ErrorContains(t, err, "local.db.b")
	require.ErrorContains(t, err, "no snapshot expired, no file deleted")
	require.Empty(t, res.Expired)
	require.Empty(t, res.Deleted)
	require.Equal(t, snaps, snapshotCount(t, s.w, s.a))
	requireStored(t, s.w, plan.Files...)

	// Readable before the commit, not after it: the snapshots are expired
	// (that is a's own metadata), and no file is deleted.
	opts.Siblings = flaky(3)
	plan, err = rewriter.PlanExpire(ctx, s.a, opts)
	require.NoError(t, err)
	res, err = rewriter.Expire(ctx, s.w.Catalog, s.a, plan, opts)
	require.ErrorContains(t, err, "local.db.b")
	require.ErrorContains(t, err, "no file deleted")
	require.ElementsMatch(t, plan.Snapshots, res.Expired)
	require.Empty(t, res.Deleted)
	requireStored(t, s.w, append(plan.Files, s.onlyA...)...)
	testlake.RequireIntact(t, s.b, s.want)
}

// KeepFiles expires the snapshots from the metadata and deletes nothing;
// an unreadable sibling does not stop it, since it is not asked.
func TestExpireKeepFilesDeletesNothing(t *testing.T) {
	ctx := t.Context()
	s := newSharedForExpiry(t)
	asked := false
	opts := rewriter.ExpireOptions{Now: expireLater, KeepFiles: true, Siblings: func(context.Context) ([]rewriter.Sibling, error) {
		asked = true
		return nil, errors.New("catalog backup: unreachable")
	}}
	plan, err := rewriter.PlanExpire(ctx, s.a, opts)
	require.NoError(t, err)
	require.True(t, plan.KeepFiles)
	require.NotEmpty(t, plan.Snapshots)
	require.Empty(t, plan.Files)
	res, err := rewriter.Expire(ctx, s.w.Catalog, s.a, plan, opts)
	require.NoError(t, err)
	require.False(t, asked, "KeepFiles reads no sibling")
	require.True(t, res.KeepFiles)
	require.ElementsMatch(t, plan.Snapshots, res.Expired)
	require.Empty(t, res.Deleted)
	require.Equal(t, 1, snapshotCount(t, s.w, s.a))
	// A file only expired snapshots reached stays for orphan removal.
	requireStored(t, s.w, s.onlyA...)
	testlake.RequireIntact(t, s.b, s.want)
}
