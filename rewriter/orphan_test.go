package rewriter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/rewriter"
)

func TestNormalizeLocation(t *testing.T) {
	schemes := map[string]string{"s3": "s3", "s3a": "s3", "s3n": "s3"}
	auths := map[string]string{"bucket-eu.example.com": "bucket"}
	cases := []struct {
		name, a, b string
		same       bool
	}{
		{name: "s3a=s3", a: "s3a://bucket/wh/t/data/f.parquet", b: "s3://bucket/wh/t/data/f.parquet", same: true},
		{name: "s3n=s3", a: "s3n://bucket/k", b: "s3://bucket/k", same: true},
		{name: "scheme-case", a: "S3A://bucket/k", b: "s3://bucket/k", same: true},
		{name: "equal-authority", a: "s3://bucket-eu.example.com/k", b: "s3a://bucket/k", same: true},
		{name: "other-bucket", a: "s3://other/k", b: "s3://bucket/k"},
		{name: "gs-is-not-s3", a: "gs://bucket/k", b: "s3://bucket/k"},
		{name: "key-case-matters", a: "s3://bucket/K", b: "s3://bucket/k"},
		{name: "file-uri=path", a: "file:///tmp/wh/f.parquet", b: "/tmp/wh/f.parquet", same: true},
		{name: "file-one-slash", a: "file:/tmp/wh/f.parquet", b: "/tmp/wh//f.parquet", same: true},
		{name: "file-localhost", a: "file://localhost/tmp/f", b: "/tmp/f", same: true},
		{name: "other-local", a: "/tmp/wh/g.parquet", b: "/tmp/wh/f.parquet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := rewriter.NormalizeLocation(tc.a, schemes, auths)
			b := rewriter.NormalizeLocation(tc.b, schemes, auths)
			if tc.same {
				require.Equal(t, a, b)
			} else {
				require.NotEqual(t, a, b)
			}
		})
	}
}

func TestPlanOrphansRefusesYoungAgeWithoutForce(t *testing.T) {
	tt := newTwinTables(t, nil)
	tt.appendBoth(t, 0, 10, "eu")
	cases := []struct {
		name    string
		opts    rewriter.OrphanOptions
		wantErr error
	}{
		{name: "1h", opts: rewriter.OrphanOptions{OlderThan: time.Hour}, wantErr: rewriter.ErrUnsafeAge},
		{name: "23h59m", opts: rewriter.OrphanOptions{OlderThan: 24*time.Hour - time.Minute}, wantErr: rewriter.ErrUnsafeAge},
		{name: "1h-forced", opts: rewriter.OrphanOptions{OlderThan: time.Hour, Force: true}},
		{name: "24h", opts: rewriter.OrphanOptions{OlderThan: 24 * time.Hour}},
		{name: "default", opts: rewriter.OrphanOptions{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := rewriter.PlanOrphans(t.Context(), tt.tbl, tc.opts)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Empty(t, plan.Files, "a clean young table has no orphans")
			require.Positive(t, plan.Scanned)
		})
	}
}

// plant writes a stray file at loc (a URI in w) as if written at mod.
func plant(t *testing.T, w *testlake.Warehouse, loc string, mod time.Time) {
	t.Helper()
	w.Plant(t, loc, []byte("stray bytes"), mod)
}

// requireStored fails unless a file is at each of locs (URIs in w).
func requireStored(t *testing.T, w *testlake.Warehouse, locs ...string) {
	t.Helper()
	for _, loc := range locs {
		require.True(t, w.Exists(t, loc), "%s is gone", loc)
	}
}

// requireGone fails if a file is at one of locs (URIs in w).
func requireGone(t *testing.T, w *testlake.Warehouse, locs ...string) {
	t.Helper()
	for _, loc := range locs {
		require.False(t, w.Exists(t, loc), "%s is still stored", loc)
	}
}

func TestOrphans(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	tt := newTwinTables(t, nil)
	for i := range 3 {
		tt.appendBoth(t, i*100, 100, "eu")
		tt.appendBoth(t, 1000+i*100, 100, "us")
	}
	tt.deleteBoth(t, 10, 12)
	// A lost compaction race: the us group goes stale, its outputs are
	// never committed and become orphans; the eu group commits.
	base := tt.state(t, tt.tbl)
	groups := rewriteGroups(t, base, "eu", "us")
	tt.deleteBoth(t, 1010, 1012)
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{Sleep: instantSleep})
	require.NoError(t, err)
	require.Len(t, rep.Skipped, 1)
	lost := rep.Skipped[0].Orphans
	require.NotEmpty(t, lost)
	tt.tbl = rep.Table
	before := rowSum(t, tt.tbl)

	loc := tt.tbl.Location()
	// Everything stored so far is old, referenced or not.
	tt.w.AgeTree(t, loc, old)
	oldStray := loc + "/data/region=eu/stray-old.parquet"
	youngStray := loc + "/data/region=eu/stray-young.parquet"
	staging := loc + "/data/_floe_staging/run-7"
	inFlightOld := staging + "/part-0.parquet"
	plant(t, tt.w, oldStray, old)
	plant(t, tt.w, youngStray, now)
	plant(t, tt.w, inFlightOld, old)
	// A commit in flight: files written with the table's location provider,
	// not committed yet, young.
	inFlight := rewriteGroups(t, tt.state(t, tt.tbl), "eu")[0].Outputs
	require.NotEmpty(t, inFlight)

	opts := rewriter.OrphanOptions{Now: func() time.Time { return now }, ExcludePrefixes: []string{staging + "/"}}
	plan, err := rewriter.PlanOrphans(ctx, tt.tbl, opts)
	require.NoError(t, err)
	var got []string
	for _, f := range plan.Files {
		got = append(got, oracle.LocalPath(f.Path))
	}
	want := []string{oracle.LocalPath(oldStray)}
	for _, p := range lost {
		want = append(want, oracle.LocalPath(p))
	}
	require.ElementsMatch(t, want, got, "exactly the old stray and the lost race's outputs")
	require.Equal(t, 1, plan.Excluded, "the staging path of a run in progress")
	require.Equal(t, 1+len(inFlight), plan.Young, "the young stray and the in-flight files")
	require.Empty(t, plan.Mismatched)
	var bytes int64
	for _, f := range plan.Files {
		bytes += f.Size
		require.True(t, f.ModTime.Before(plan.Cutoff))
	}
	require.Equal(t, bytes, plan.Bytes)
	// Planning deleted nothing.
	requireStored(t, tt.w, oldStray)
	requireStored(t, tt.w, lost...)

	res, err := rewriter.DeleteOrphans(ctx, tt.tbl, plan, 4)
	require.NoError(t, err)
	require.Len(t, res.Deleted, len(want))
	require.Equal(t, plan.Bytes, res.Bytes)
	require.Empty(t, res.Referenced)
	requireGone(t, tt.w, oldStray)
	requireGone(t, tt.w, lost...)
	requireStored(t, tt.w, youngStray, inFlightOld)
	for _, f := range inFlight {
		requireStored(t, tt.w, f.FilePath())
	}
	// Every referenced file is still there: snapshots, manifests, data and
	// delete files, every metadata.json, and the table reads the same.
	requireReachableExist(t, tt.tbl)
	requireStored(t, tt.w, tt.tbl.MetadataLocation())
	for e := range tt.tbl.Metadata().PreviousFiles() {
		requireStored(t, tt.w, e.MetadataFile)
	}
	require.Equal(t, before, rowSum(t, tt.tbl))
	tt.requireSameRows(t)

	// A second plan finds nothing new.
	again, err := rewriter.PlanOrphans(ctx, tt.tbl, opts)
	require.NoError(t, err)
	require.Empty(t, again.Files)
}

func TestDeleteOrphansKeepsFilesReferencedSincePlanning(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	tt := newTwinTables(t, nil)
	tt.appendBoth(t, 0, 100, "eu")
	// Outputs written and left unreferenced, then old: orphans at plan time.
	base := tt.state(t, tt.tbl)
	groups := rewriteGroups(t, base, "eu")
	tt.w.AgeTree(t, tt.tbl.Location(), now.Add(-5*24*time.Hour))
	plan, err := rewriter.PlanOrphans(ctx, tt.tbl, rewriter.OrphanOptions{Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.Len(t, plan.Files, len(groups[0].Outputs))
	// Between planning and deleting, the outputs get committed.
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{Sleep: instantSleep})
	require.NoError(t, err)
	require.Len(t, rep.Commits, 1)
	res, err := rewriter.DeleteOrphans(ctx, tt.tbl, plan, 2)
	require.NoError(t, err)
	require.Empty(t, res.Deleted)
	require.Len(t, res.Referenced, len(groups[0].Outputs))
	tt.tbl = rep.Table
	requireReachableExist(t, tt.tbl)
	tt.requireSameRows(t)
}
