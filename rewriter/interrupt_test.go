package rewriter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// The files a compaction writes carry its run id, so that what an
// interrupted run could not remove is known as its leftover.
func TestCompactNamesFilesWithRunID(t *testing.T) {
	st := unpartitioned(t, 6, 500)
	opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}},
		TargetFileSizeBytes: 64 << 10, Commit: rewriter.CommitOptions{RunID: "20261129T101500Z-3fa9c2d1"}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	res, err := rewriter.Compact(context.Background(), st, plan, opts)
	require.NoError(t, err)
	after, err := lake.LoadState(context.Background(), st.Ident, res.Table, lake.LoadOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, after.DataFiles)
	for _, f := range after.DataFiles {
		require.Equal(t, "20261129T101500Z-3fa9c2d1", rewriter.RunOfFile(f.Path), f.Path)
	}
	again, err := rewriter.PlanCompaction(after, opts)
	require.NoError(t, err)
	require.Empty(t, again.Groups, "the layout tag is still recognized after the run tag")
}

func TestRunOfFile(t *testing.T) {
	for p, want := range map[string]string{
		"file:///w/db/t/data/00000-1-3d9f2c1a-5b6c-4d7e-8f90-1a2b3c4d5e6f-00001-run-20261129T101500Z-3fa9c2d1-floe-0a1b2c3d.parquet":  "20261129T101500Z-3fa9c2d1",
		"s3://b/t/data/region=eu/00000-2-3d9f2c1a-5b6c-4d7e-8f90-1a2b3c4d5e6f-00002-run-6c1e0b1e-2f9a-4d3b-9a51-0b3e8e0f2a11.parquet": "6c1e0b1e-2f9a-4d3b-9a51-0b3e8e0f2a11",
		"file:///w/db/t/data/00000-1-3d9f2c1a-5b6c-4d7e-8f90-1a2b3c4d5e6f-00001-floe-0a1b2c3d.parquet":                                "",
		"file:///w/db/t/data/00000-0-3d9f2c1a-5b6c-4d7e-8f90-1a2b3c4d5e6f.parquet":                                                    "",
		"file:///w/db/t/metadata/snap-1-run-x.avro":                                                                                   "",
	} {
		require.Equal(t, want, rewriter.RunOfFile(p), p)
	}
}

// A file a floe run on the table wrote and never committed is an orphan at
// the default age once the run is over, with the run named; while the run's
// lease is live, or only just lapsed, it is kept. Which table the run was on
// comes from its lease while that is there, then from the run's record.
func TestOrphansOfAnInterruptedRun(t *testing.T) {
	ctx := context.Background()
	st := unpartitioned(t, 4, 500)
	tasks, _ := partitionGroups(t, st.Table)
	lease, err := rewriter.AcquireLease(ctx, st.Table, rewriter.LeaseOptions{RunID: "run-1", Table: st.Ident.String(), Operation: "compact"})
	require.NoError(t, err)
	files, _, err := rewriter.RewriteGroup(ctx, st.Table, tasks[""], rewriter.GroupOptions{RunID: "run-1"})
	require.NoError(t, err)
	require.NotEmpty(t, files)

	plan, err := rewriter.PlanOrphans(ctx, st.Table, rewriter.OrphanOptions{Table: st.Ident.String()})
	require.NoError(t, err)
	require.Empty(t, plan.Files, "the run is live")

	// Killed: the lease is left and lapses; one TTL later the files are
	// the dead run's leftovers.
	rec := lease.Record()
	lapsed := func() time.Time { return rec.ExpiresAt.Add(time.Second) }
	plan, err = rewriter.PlanOrphans(ctx, st.Table, rewriter.OrphanOptions{Now: lapsed, Table: st.Ident.String()})
	require.NoError(t, err)
	require.Empty(t, plan.Files, "a lease that only just lapsed still protects its run's files, and is kept with them")
	later := func() time.Time { return rec.ExpiresAt.Add(rewriter.DefaultLeaseTTL + time.Second) }
	plan, err = rewriter.PlanOrphans(ctx, st.Table, rewriter.OrphanOptions{Now: later, Table: st.Ident.String()})
	require.NoError(t, err)
	var left []string
	for _, f := range plan.Files {
		if f.RunID != "" {
			require.Equal(t, "run-1", f.RunID)
			left = append(left, f.Path)
		}
	}
	require.Len(t, left, len(files), "every file of the run, at the default age")
	require.Len(t, plan.Files, len(files)+1, "and the lapsed lease")
	// Another table's name: the lease says the run was not on it.
	plan, err = rewriter.PlanOrphans(ctx, st.Table, rewriter.OrphanOptions{Now: later, Table: "local.db.other"})
	require.NoError(t, err)
	require.Len(t, plan.Files, 1, "only the lapsed lease")

	// Released (the run ended, as on Ctrl-C): at once, when the run's
	// record says it was on this table; by age when nothing says.
	require.NoError(t, lease.Release())
	plan, err = rewriter.PlanOrphans(ctx, st.Table, rewriter.OrphanOptions{Table: st.Ident.String()})
	require.NoError(t, err)
	require.Empty(t, plan.Files)
	plan, err = rewriter.PlanOrphans(ctx, st.Table, rewriter.OrphanOptions{Table: st.Ident.String(),
		RunTable: recorded(map[string]string{"run-1": st.Ident.String()})})
	require.NoError(t, err)
	require.Len(t, plan.Files, len(files))
	res, err := rewriter.DeleteOrphans(ctx, st.Table, plan, 2)
	require.NoError(t, err)
	require.Len(t, res.Deleted, len(files))
	require.Equal(t, int64(2000), scanCount(ctx, t, st.Table))
}

// A cancelled compaction says what it kept and what it did not do, removes
// what the interrupted group wrote, and is still a context.Canceled.
func TestCompactInterrupted(t *testing.T) {
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}}, TargetFileSizeBytes: 1 << 20}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	// Cancel while the second group is being rewritten, the first being
	// committed.
	opts.Progress = func(done, _ int, bd, _ int64) {
		if done == 1 && bd > plan.Groups[0].Bytes {
			cancel()
		}
	}
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.Error(t, err)
	require.ErrorIs(t, err, context.Canceled)
	var ie *rewriter.InterruptedError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, 2, ie.Total)
	require.Equal(t, []string{plan.Groups[0].Partition}, ie.Committed)
	require.Contains(t, err.Error(), "1 of 2 partitions committed in 1 snapshot and kept; 1 partition not rewritten")
	require.NotContains(t, err.Error(), "context canceled")
	t.Log(err)
	tt.tbl = res.Table
	tt.requireSameRows(t)
	after := tt.state(t, tt.tbl)
	orphans, err := rewriter.PlanOrphans(context.Background(), after.Table, rewriter.OrphanOptions{OlderThan: 0, OlderThanSet: true, Force: true})
	require.NoError(t, err)
	require.Empty(t, orphans.Files, "the interrupted run removed what no commit took")
}
