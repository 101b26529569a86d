package rewriter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// sharedEntries is a warehouse with table db.a and db.b, an entry
// registered with a's metadata file: two catalog entries, one location.
type sharedEntries struct {
	w    *testlake.Warehouse
	a, b *table.Table
}

func newSharedEntries(t *testing.T) *sharedEntries {
	t.Helper()
	w := testlake.New(t)
	closeCatalog(t, w)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	a := w.CreateTable(t, "db", "a", commitSchema, &spec, iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}, nil)
	for i := 5; i >= 0; i-- {
		a = appendFresh(t, a, i*300, 300, "eu")
		a = appendFresh(t, a, 10000+i*200, 200, "us")
	}
	a = deleteFresh(t, a, 40, 60)
	b := w.Register(t, "db", "b", a.MetadataLocation())
	require.Equal(t, a.Location(), b.Location())
	return &sharedEntries{w: w, a: a, b: b}
}

func ident(name string) lake.Ident {
	return lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: name}
}

// compactA compacts entry a with the native engine and returns it after.
func (s *sharedEntries) compactA(t *testing.T) *table.Table {
	t.Helper()
	ctx := t.Context()
	st, err := lake.LoadState(ctx, ident("a"), s.a, lake.LoadOptions{})
	require.NoError(t, err)
	opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}},
		TargetFileSizeBytes: 16 << 10, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.NotEmpty(t, plan.Groups)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.NoError(t, err)
	require.NotEmpty(t, res.Commits)
	s.a = res.Table
	return s.a
}

// brokenSibling creates db.broken inside the shared location, one append,
// and removes its manifest list: a sibling whose snapshots cannot be read.
// It returns a Siblings function that supplies it as local.db.broken.
func (s *sharedEntries) brokenSibling(t *testing.T) func(context.Context) ([]rewriter.Sibling, error) {
	t.Helper()
	broken, err := s.w.Catalog.CreateTable(t.Context(), table.Identifier{"db", "broken"}, commitSchema,
		catalog.WithLocation(s.a.Location()+"/nested/broken"))
	require.NoError(t, err)
	broken = appendFresh(t, broken, 0, 10, "eu")
	s.w.Remove(t, broken.CurrentSnapshot().ManifestList)
	return sibling("local.db.broken", broken)
}

// sibling is a Siblings function that always supplies tbl as name.
func sibling(name string, tbl *table.Table) func(context.Context) ([]rewriter.Sibling, error) {
	return func(ctx context.Context) ([]rewriter.Sibling, error) {
		fresh := *tbl
		if err := fresh.Refresh(ctx); err != nil {
			return nil, err
		}
		return []rewriter.Sibling{{Name: name, Table: &fresh}}, nil
	}
}

// recorded is a RunTable function answering from runs (run id → table).
func recorded(runs map[string]string) func(context.Context, string) (string, bool, error) {
	return func(_ context.Context, id string) (string, bool, error) {
		t, ok := runs[id]
		return t, ok, nil
	}
}

// liveFiles is every data and delete file of tbl's current snapshot.
func liveFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	data, deletes, err := oracle.LiveFiles(t.Context(), tbl)
	require.NoError(t, err)
	return append(data, deletes...)
}

// requireNoneListed fails when plan lists one of paths.
func requireNoneListed(t *testing.T, plan rewriter.OrphanPlan, paths []string) {
	t.Helper()
	listed := map[string]bool{}
	for _, f := range plan.Files {
		listed[oracle.LocalPath(f.Path)] = true
	}
	for _, p := range paths {
		require.False(t, listed[oracle.LocalPath(p)], "%s is referenced by another entry, yet listed as an orphan", p)
	}
}

// The adversarial case of issue 37: entry a is compacted, then the orphans
// of entry b — same location — are removed with the default options. a's
// compaction outputs are seconds old and named after a's run, which is
// over; b's metadata does not reference them. They must stay, and a must
// read the same rows.
func TestOrphansOfAnEntryKeepWhatAnEntrySharingItsLocationCommitted(t *testing.T) {
	ctx := t.Context()
	s := newSharedEntries(t)
	before := rowSum(t, s.a)
	a := s.compactA(t)
	outputs := liveFiles(t, a)
	var tagged int
	for _, p := range outputs {
		if rewriter.RunOfFile(p) != "" {
			tagged++
		}
	}
	require.Positive(t, tagged, "a's current files are the compaction's, named after its run")

	plan, err := rewriter.PlanOrphans(ctx, s.b, rewriter.OrphanOptions{})
	require.NoError(t, err)
	requireNoneListed(t, plan, outputs)
	res, err := rewriter.DeleteOrphans(ctx, s.b, plan, 4)
	require.NoError(t, err)
	requireNoneListed(t, rewriter.OrphanPlan{Files: filesOf(res.Deleted)}, outputs)
	requireReachableExist(t, a)
	requireReachableExist(t, s.b)
	require.Equal(t, before, rowSum(t, a), "a reads other rows after orphan removal on b")
	require.Equal(t, before, rowSum(t, s.b))
}

func filesOf(paths []string) []rewriter.OrphanFile {
	out := make([]rewriter.OrphanFile, len(paths))
	for i, p := range paths {
		out[i] = rewriter.OrphanFile{Path: p}
	}
	return out
}

// Past the age floor, only the sibling check keeps a's files: b's metadata
// never references them, and they are old. A run recorded on a is not b's
// to judge. With a given as b's sibling, b's orphans are the genuine ones.
func TestOrphansKeepWhatASiblingReferencesWhateverItsAge(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	s := newSharedEntries(t)
	before := rowSum(t, s.a)
	a := s.compactA(t)
	outputs := liveFiles(t, a)
	loc := a.Location()
	s.w.AgeTree(t, loc, now.Add(-10*24*time.Hour))
	stray := loc + "/data/region=eu/stray.parquet"
	plant(t, s.w, stray, now.Add(-10*24*time.Hour))
	clock := func() time.Time { return now }

	// What b alone sees: a's outputs are old and unreferenced. This is
	// what the sibling check must prevent.
	alone, err := rewriter.PlanOrphans(ctx, s.b, rewriter.OrphanOptions{Now: clock})
	require.NoError(t, err)
	var listed int
	for _, f := range alone.Files {
		if rewriter.RunOfFile(f.Path) != "" {
			listed++
		}
	}
	require.Positive(t, listed, "without its sibling, b takes a's old outputs for orphans")

	opts := rewriter.OrphanOptions{Now: clock, Table: ident("b").String(), Siblings: sibling(ident("a").String(), a),
		RunTable: recorded(map[string]string{})}
	plan, err := rewriter.PlanOrphans(ctx, s.b, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"local.db.a"}, plan.Siblings)
	requireNoneListed(t, plan, outputs)
	require.Positive(t, plan.Shared)
	var got []string
	for _, f := range plan.Files {
		got = append(got, oracle.LocalPath(f.Path))
		require.Empty(t, f.RunID)
	}
	require.Contains(t, got, oracle.LocalPath(stray))
	res, err := rewriter.DeleteOrphans(ctx, s.b, plan, 4)
	require.NoError(t, err)
	var deleted []string
	for _, p := range res.Deleted {
		deleted = append(deleted, oracle.LocalPath(p))
	}
	require.Contains(t, deleted, oracle.LocalPath(stray))
	requireReachableExist(t, a)
	requireReachableExist(t, s.b)
	require.Equal(t, before, rowSum(t, a))
	require.Equal(t, before, rowSum(t, s.b))
}

// DeleteOrphans asks for the siblings again: files a sibling committed
// since the plan are kept.
func TestDeleteOrphansKeepsWhatASiblingCommittedSincePlanning(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	s := newSharedEntries(t)
	st, err := lake.LoadState(ctx, ident("a"), s.a, lake.LoadOptions{})
	require.NoError(t, err)
	groups := rewriteGroups(t, st, "eu")
	s.w.AgeTree(t, s.a.Location(), now.Add(-5*24*time.Hour))
	opts := rewriter.OrphanOptions{Now: func() time.Time { return now }, Siblings: sibling("local.db.a", s.a)}
	plan, err := rewriter.PlanOrphans(ctx, s.b, opts)
	require.NoError(t, err)
	require.Len(t, plan.Files, len(groups[0].Outputs), "a's uncommitted outputs are orphans of both")
	rep, err := rewriter.CommitGroups(ctx, st, groups, rewriter.CommitOptions{Sleep: instantSleep})
	require.NoError(t, err)
	require.Len(t, rep.Commits, 1)
	res, err := rewriter.DeleteOrphans(ctx, s.b, plan, 2)
	require.NoError(t, err)
	require.Empty(t, res.Deleted)
	require.Len(t, res.Shared, len(groups[0].Outputs))
	requireReachableExist(t, rep.Table)
}

// A table whose location lies inside another's: the outer table's orphan
// removal lists the inner one's files, which it must keep, and the inner
// one's live runs protect their files under the outer listing too.
func TestOrphansKeepTheFilesOfATableInsideTheLocation(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	s := newSharedEntries(t)
	inner, err := s.w.Catalog.CreateTable(ctx, table.Identifier{"db", "inner"}, commitSchema,
		catalog.WithLocation(s.a.Location()+"/nested/inner"))
	require.NoError(t, err)
	inner = appendFresh(t, inner, 0, 100, "eu")
	inner = appendFresh(t, inner, 100, 100, "eu")
	innerFiles := liveFiles(t, inner)
	s.w.AgeTree(t, s.a.Location(), now.Add(-10*24*time.Hour))
	clock := func() time.Time { return now }

	alone, err := rewriter.PlanOrphans(ctx, s.a, rewriter.OrphanOptions{Now: clock})
	require.NoError(t, err)
	require.NotEmpty(t, alone.Files, "without the sibling the inner table's files are old orphans of the outer one")

	plan, err := rewriter.PlanOrphans(ctx, s.a, rewriter.OrphanOptions{Now: clock, Siblings: sibling("local.db.inner", inner)})
	require.NoError(t, err)
	requireNoneListed(t, plan, innerFiles)
	for _, f := range plan.Files {
		require.NotContains(t, f.Path, "/nested/inner/", "every file of the inner table is referenced by it")
	}

	// A run on the inner table, in flight: its lease is under the inner
	// location, and its young file must survive even a forced zero age.
	lease, err := rewriter.AcquireLease(ctx, inner, rewriter.LeaseOptions{RunID: "inner-run", Table: "local.db.inner", Operation: "compact"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, lease.Release()) })
	written := inner.Location() + "/data/00000-0-x-run-inner-run.parquet"
	plant(t, s.w, written, time.Now())
	forced, err := rewriter.PlanOrphans(ctx, s.a, rewriter.OrphanOptions{OlderThan: 0, OlderThanSet: true, Force: true,
		Siblings: sibling("local.db.inner", inner)})
	require.NoError(t, err)
	requireNoneListed(t, forced, []string{written, lease.Record().Path})
	require.Len(t, forced.Leases, 1)
	require.Equal(t, "inner-run", forced.Leases[0].RunID)
	requireReachableExist(t, inner)
}

// A sibling that cannot be read refuses the removal, named, before and
// after planning; nothing is deleted.
func TestOrphansRefuseWhenASiblingCannotBeRead(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	s := newSharedEntries(t)
	loc := s.a.Location()
	s.w.AgeTree(t, loc, now.Add(-10*24*time.Hour))
	stray := loc + "/data/stray.parquet"
	plant(t, s.w, stray, now.Add(-10*24*time.Hour))
	clock := func() time.Time { return now }

	// The finder itself fails (a catalog could not be listed).
	unlisted := errors.New("catalog backup: list namespaces: connection refused")
	_, err := rewriter.PlanOrphans(ctx, s.b, rewriter.OrphanOptions{Now: clock,
		Siblings: func(context.Context) ([]rewriter.Sibling, error) { return nil, unlisted }})
	require.ErrorIs(t, err, unlisted)
	require.ErrorContains(t, err, "catalog backup")

	_, err = rewriter.PlanOrphans(ctx, s.b, rewriter.OrphanOptions{Now: clock, Siblings: s.brokenSibling(t)})
	require.ErrorIs(t, err, rewriter.ErrSiblingUnknown)
	require.ErrorContains(t, err, "local.db.broken")

	// Readable at planning, unreadable by the time of deleting.
	fine := true
	flaky := func(ctx context.Context) ([]rewriter.Sibling, error) {
		if !fine {
			return nil, errors.New("load local.db.a: metadata file unreadable")
		}
		return sibling("local.db.a", s.a)(ctx)
	}
	plan, err := rewriter.PlanOrphans(ctx, s.b, rewriter.OrphanOptions{Now: clock, Siblings: flaky})
	require.NoError(t, err)
	require.NotEmpty(t, plan.Files)
	fine = false
	res, err := rewriter.DeleteOrphans(ctx, s.b, plan, 2)
	require.ErrorContains(t, err, "local.db.a")
	require.Empty(t, res.Deleted)
	requireStored(t, s.w, stray)
}

// What a floe run on the table itself wrote and never committed is still
// taken at once, whatever its age; a run on another entry, or one nobody
// recorded, is judged by its age.
func TestOrphansLeftByARunJudgedByTheRunsOwnTable(t *testing.T) {
	ctx := t.Context()
	s := newSharedEntries(t)
	before := rowSum(t, s.a)
	tasks, _ := partitionGroups(t, s.a)
	written, _, err := rewriter.RewriteGroup(ctx, s.a, tasks["eu"], rewriter.GroupOptions{RunID: "run-1"})
	require.NoError(t, err)
	require.NotEmpty(t, written)
	cases := []struct {
		name  string
		opts  rewriter.OrphanOptions
		taken bool
	}{
		{name: "nobody recorded the run", opts: rewriter.OrphanOptions{Table: "local.db.a"}},
		{name: "no table named", opts: rewriter.OrphanOptions{RunTable: recorded(map[string]string{"run-1": "local.db.a"})}},
		{name: "the run was on the other entry", opts: rewriter.OrphanOptions{Table: "local.db.b", RunTable: recorded(map[string]string{"run-1": "local.db.a"})}},
		{name: "the run was on this table", opts: rewriter.OrphanOptions{Table: "local.db.a", RunTable: recorded(map[string]string{"run-1": "local.db.a"})}, taken: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := s.a
			if tc.opts.Table == "local.db.b" {
				tbl = s.b
			}
			plan, err := rewriter.PlanOrphans(ctx, tbl, tc.opts)
			require.NoError(t, err)
			if !tc.taken {
				require.Empty(t, plan.Files)
				require.Equal(t, len(written), plan.Young)
				return
			}
			require.Len(t, plan.Files, len(written))
			for _, f := range plan.Files {
				require.Equal(t, "run-1", f.RunID)
			}
		})
	}
	plan, err := rewriter.PlanOrphans(ctx, s.a, cases[3].opts)
	require.NoError(t, err)
	res, err := rewriter.DeleteOrphans(ctx, s.a, plan, 2)
	require.NoError(t, err)
	require.Len(t, res.Deleted, len(written))
	for _, f := range written {
		requireGone(t, s.w, f.FilePath())
	}
	requireReachableExist(t, s.a)
	require.Equal(t, before, rowSum(t, s.a))
}

// A lookup that fails fails the plan: the run's table is not guessed.
func TestOrphansRunTableErrorFailsThePlan(t *testing.T) {
	ctx := t.Context()
	s := newSharedEntries(t)
	tasks, _ := partitionGroups(t, s.a)
	_, _, err := rewriter.RewriteGroup(ctx, s.a, tasks["us"], rewriter.GroupOptions{RunID: "run-2"})
	require.NoError(t, err)
	down := errors.New("state store: database is locked")
	_, err = rewriter.PlanOrphans(ctx, s.a, rewriter.OrphanOptions{Table: "local.db.a",
		RunTable: func(context.Context, string) (string, bool, error) { return "", false, down }})
	require.ErrorIs(t, err, down)
	require.ErrorContains(t, err, "run-2")
}

func TestOrphanOptionsOverlap(t *testing.T) {
	opts := rewriter.OrphanOptions{EqualAuthorities: map[string]string{"lake-eu.example.com,lake": "lake"}}
	cases := []struct {
		name, a, b string
		overlap    bool
	}{
		{name: "equal", a: "s3://lake/wh/db/t", b: "s3://lake/wh/db/t", overlap: true},
		{name: "s3a-is-s3", a: "s3a://lake/wh/db/t", b: "s3://lake/wh/db/t", overlap: true},
		{name: "s3n-is-s3a", a: "s3n://lake/wh/db/t/", b: "s3a://lake/wh/db/t", overlap: true},
		{name: "trailing-slash", a: "s3://lake/wh/db/t/", b: "s3://lake/wh/db/t", overlap: true},
		{name: "inside", a: "s3://lake/wh/db/t", b: "s3a://lake/wh/db/t/nested/u", overlap: true},
		{name: "outside", a: "s3://lake/wh/db/t/data", b: "s3://lake/wh/db/t", overlap: true},
		{name: "equal-authority", a: "s3://lake-eu.example.com/wh/db/t", b: "s3a://lake/wh/db/t", overlap: true},
		{name: "bucket-root", a: "s3://lake", b: "s3://lake/wh/db/t", overlap: true},
		{name: "name-prefix-is-not-a-directory", a: "s3://lake/wh/db/t", b: "s3://lake/wh/db/t_v2"},
		{name: "other-bucket", a: "s3://lake/wh/db/t", b: "s3://backup/wh/db/t"},
		{name: "other-store", a: "gs://lake/wh/db/t", b: "s3://lake/wh/db/t"},
		{name: "file-uri-and-path", a: "file:///w/db/t", b: "/w/db/t/nested", overlap: true},
		{name: "siblings-in-one-directory", a: "/w/db/t", b: "/w/db/u"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.overlap, opts.Overlap(tc.a, tc.b))
			require.Equal(t, tc.overlap, opts.Overlap(tc.b, tc.a))
		})
	}
}
