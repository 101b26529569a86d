package rewriter_test

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
)

func TestRewriteManifestsClustersByPartition(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	regions := []string{"eu", "us", "ap"}
	for i := range 50 {
		tt.appendBoth(t, i*10, 10, regions[i%3])
	}
	st := tt.state(t, tt.tbl)
	plan := rewriter.PlanManifests(st)
	require.Equal(t, 50, plan.DataManifests, "one one-entry manifest per append")
	require.Equal(t, 50, plan.LiveEntries)
	require.Equal(t, 3, plan.Partitions)
	require.True(t, plan.Worthwhile)
	snaps := len(st.Snapshots)

	tbl, res, err := rewriter.RewriteManifests(ctx, tt.tbl, rewriter.ManifestOptions{})
	require.NoError(t, err)
	require.False(t, res.NoOp)
	require.Equal(t, 50, res.Rewritten)
	require.Equal(t, 1, res.Added, "three small neighbouring partitions share one manifest")
	tt.tbl = tbl
	after := tt.state(t, tt.tbl)
	require.Len(t, after.Snapshots, snaps+1)
	require.Equal(t, table.OpReplace, after.Current.Summary.Operation)
	require.Equal(t, res.SnapshotID, after.Current.SnapshotID)
	require.Len(t, after.Manifests, 1)
	require.Len(t, after.DataFiles, 50)
	require.False(t, rewriter.PlanManifests(after).Worthwhile)
	// No partition is spread over several manifests, read with iceberg-go.
	fio, err := tt.tbl.FS(ctx)
	require.NoError(t, err)
	ms, err := tt.tbl.CurrentSnapshot().Manifests(fio)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, m := range ms {
		parts := map[string]bool{}
		n := 0
		for e, err := range m.Entries(fio, true) {
			require.NoError(t, err)
			r, _ := e.DataFile().Partition()[1000].(string)
			parts[r] = true
			n++
		}
		for r := range parts {
			require.False(t, seen[r], "partition %s split over manifests", r)
			seen[r] = true
		}
		require.Equal(t, iceberg.ManifestContentData, m.ManifestContent())
		require.Positive(t, n)
	}
	tt.requireSameRows(t)

	// A second run finds nothing to do and commits nothing.
	tbl, res, err = rewriter.RewriteManifests(ctx, tt.tbl, rewriter.ManifestOptions{})
	require.NoError(t, err)
	require.True(t, res.NoOp)
	require.Zero(t, res.SnapshotID)
	require.Len(t, tt.state(t, tbl).Snapshots, snaps+1)
}

func TestRewriteManifestsRejectsBadOptions(t *testing.T) {
	tt := newTwinTables(t, nil)
	_, _, err := rewriter.RewriteManifests(t.Context(), tt.tbl, rewriter.ManifestOptions{TargetSizeBytes: -1, MaxAttempts: -2})
	require.ErrorContains(t, err, "target manifest size")
	require.ErrorContains(t, err, "max attempts")
}

// One-entry manifests of nine partitions are not "already clustered"
// against an 8 MiB target: they merge into one, and the result is left
// alone by the next run.
func TestRewriteManifestsMergesSmallPartitions(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	for i := range 9 {
		tt.appendBoth(t, i*10, 10, fmt.Sprintf("r%d", i))
	}
	tbl, res, err := rewriter.RewriteManifests(ctx, tt.tbl, rewriter.ManifestOptions{})
	require.NoError(t, err)
	require.False(t, res.NoOp)
	require.Equal(t, 9, res.Rewritten)
	require.Equal(t, 1, res.Added)
	tt.tbl = tbl
	tt.requireSameRows(t)
	_, res, err = rewriter.RewriteManifests(ctx, tt.tbl, rewriter.ManifestOptions{})
	require.NoError(t, err)
	require.True(t, res.NoOp)

	// With a target below one partition's entries, partitions keep
	// manifests of their own, and a run on that converges.
	tt2 := newTwinTables(t, nil)
	for i := range 40 {
		tt2.appendBoth(t, i*10, 10, fmt.Sprintf("r%d", i%4))
	}
	cur := tt2.tbl
	for run := range 4 {
		next, res, err := rewriter.RewriteManifests(ctx, cur, rewriter.ManifestOptions{TargetSizeBytes: 8 << 10})
		require.NoError(t, err)
		cur = next
		if res.NoOp {
			require.Positive(t, run, "the one-entry manifests are rewritten at least once")
			tt2.tbl = cur
			tt2.requireSameRows(t)
			return
		}
	}
	t.Fatal("rewrite-manifests did not converge in 3 runs")
}
