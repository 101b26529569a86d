package rewriter_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/rewriter"
)

// expireFixture is a table with five appends (snapshots 1–5, one data file
// each) compacted by a replace (snapshot 6), so that files 1–5 are reached
// only through old snapshots.
type expireFixture struct {
	tt    *twinTables
	snaps []int64  // oldest first
	data  []string // data file added by snapshots 1–5
}

func newExpireFixture(t *testing.T) *expireFixture {
	t.Helper()
	tt := newTwinTables(t, nil)
	for i := range 5 {
		tt.appendBoth(t, i*100, 100, "eu")
	}
	base := tt.state(t, tt.tbl)
	rep, err := rewriter.CommitGroups(t.Context(), base, rewriteGroups(t, base, "eu"), rewriter.CommitOptions{Sleep: instantSleep})
	require.NoError(t, err)
	require.Len(t, rep.Commits, 1)
	tt.tbl = rep.Table
	f := &expireFixture{tt: tt}
	for _, s := range table.AncestorsOf(tt.tbl.CurrentSnapshot().SnapshotID, func(id int64) *table.Snapshot { return tt.tbl.SnapshotByID(id) }) {
		f.snaps = append([]int64{s.SnapshotID}, f.snaps...)
	}
	require.Len(t, f.snaps, 6)
	for _, id := range f.snaps[:5] {
		for _, df := range base.DataFiles {
			if df.SnapshotID == id {
				f.data = append(f.data, df.Path)
			}
		}
	}
	require.Len(t, f.data, 5)
	return f
}

// setRef points a branch or tag at snapshot id.
func (f *expireFixture) setRef(t *testing.T, name string, id int64, typ table.RefType, maxRefAgeMs int64) {
	t.Helper()
	_, _, err := f.tt.w.Catalog.CommitTable(t.Context(), f.tt.tbl.Identifier(), nil,
		[]table.Update{table.NewSetSnapshotRefUpdate(name, id, typ, maxRefAgeMs, 0, 0)})
	require.NoError(t, err)
	fresh, err := f.tt.w.Catalog.LoadTable(t.Context(), f.tt.tbl.Identifier())
	require.NoError(t, err)
	f.tt.tbl = fresh
}

// requireReachableExist walks every snapshot of tbl with iceberg-go and
// checks that each file it reaches is still on disk.
func requireReachableExist(t *testing.T, tbl *table.Table) {
	t.Helper()
	testlake.RequireReachableExist(t, tbl)
}

func TestExpire(t *testing.T) {
	const day = 24 * time.Hour
	later := func() time.Time { return time.Now().Add(10 * day) }
	cases := []struct {
		name  string
		setup func(t *testing.T, f *expireFixture)
		opts  rewriter.ExpireOptions
		// wantExpired and wantDeletedData index snapshots 1–6 and data
		// files 1–5 (1-based).
		wantExpired     []int
		wantDeletedData []int
		wantRemovedRefs []string
	}{
		{
			name: "retain-last=1,all-old", opts: rewriter.ExpireOptions{RetainLast: 1, Now: later},
			wantExpired: []int{1, 2, 3, 4, 5}, wantDeletedData: []int{1, 2, 3, 4, 5},
		},
		{
			name: "older-than=1h,all-young", opts: rewriter.ExpireOptions{OlderThan: time.Hour},
		},
		{
			name: "default-age=5d,all-young", opts: rewriter.ExpireOptions{},
		},
		{
			name: "retain-last=3", opts: rewriter.ExpireOptions{RetainLast: 3, Now: later},
			wantExpired: []int{1, 2, 3},
		},
		{
			name: "tag-pins-snapshot-2",
			setup: func(t *testing.T, f *expireFixture) {
				f.setRef(t, "audit", f.snaps[1], table.TagRef, 0)
			},
			opts:        rewriter.ExpireOptions{RetainLast: 1, Now: later},
			wantExpired: []int{1, 3, 4, 5}, wantDeletedData: []int{3, 4, 5},
		},
		{
			name: "branch-at-snapshot-3",
			setup: func(t *testing.T, f *expireFixture) {
				f.setRef(t, "dev", f.snaps[2], table.BranchRef, 0)
			},
			opts:        rewriter.ExpireOptions{RetainLast: 1, Now: later},
			wantExpired: []int{1, 2, 4, 5}, wantDeletedData: []int{4, 5},
		},
		{
			name: "tag-older-than-its-max-ref-age",
			setup: func(t *testing.T, f *expireFixture) {
				f.setRef(t, "audit", f.snaps[1], table.TagRef, day.Milliseconds())
			},
			opts:        rewriter.ExpireOptions{RetainLast: 1, Now: later},
			wantExpired: []int{1, 2, 3, 4, 5}, wantDeletedData: []int{1, 2, 3, 4, 5},
			wantRemovedRefs: []string{"audit"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			f := newExpireFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			var wantIDs []int64
			for _, i := range tc.wantExpired {
				wantIDs = append(wantIDs, f.snaps[i-1])
			}
			plan, err := rewriter.PlanExpire(ctx, f.tt.tbl, tc.opts)
			require.NoError(t, err)
			require.Equal(t, wantIDs, plan.Snapshots)
			require.Equal(t, tc.wantRemovedRefs, plan.RemoveRefs)
			// Dry run: planning deleted nothing.
			for _, p := range plan.Files {
				require.True(t, f.tt.w.Exists(t, p), "planning deleted %s", p)
			}
			var wantData []string
			for _, i := range tc.wantDeletedData {
				wantData = append(wantData, f.data[i-1])
			}
			var planData []string
			for _, p := range plan.Files {
				if strings.HasSuffix(p, ".parquet") {
					planData = append(planData, p)
				}
			}
			require.ElementsMatch(t, wantData, planData)
			if len(wantIDs) > 0 {
				require.NotEmpty(t, plan.Files, "expired manifest lists at least")
			}

			res, err := rewriter.Expire(ctx, f.tt.w.Catalog, f.tt.tbl, plan, tc.opts)
			require.NoError(t, err)
			require.ElementsMatch(t, wantIDs, res.Expired)
			require.Equal(t, tc.wantRemovedRefs, res.RemovedRefs)
			require.ElementsMatch(t, plan.Files, res.Deleted)
			for _, p := range res.Deleted {
				require.False(t, f.tt.w.Exists(t, p), "%s not deleted", p)
			}
			fresh, err := f.tt.w.Catalog.LoadTable(ctx, f.tt.tbl.Identifier())
			require.NoError(t, err)
			require.Len(t, fresh.Metadata().Snapshots(), 6-len(wantIDs))
			for _, id := range wantIDs {
				require.Nil(t, fresh.SnapshotByID(id))
			}
			require.Equal(t, f.snaps[5], fresh.CurrentSnapshot().SnapshotID)
			requireReachableExist(t, fresh)
			f.tt.tbl = fresh
			f.tt.requireSameRows(t)
			for _, name := range []string{"audit", "dev"} {
				if ref := fresh.SnapshotByName(name); ref != nil {
					require.False(t, slices.Contains(tc.wantRemovedRefs, name))
				}
			}
		})
	}
}

func TestExpireRefusesBadOptions(t *testing.T) {
	tt := newTwinTables(t, nil)
	tt.appendBoth(t, 0, 10, "eu")
	_, err := rewriter.PlanExpire(context.Background(), tt.tbl, rewriter.ExpireOptions{RetainLast: -1, OlderThan: -time.Hour})
	require.ErrorContains(t, err, "retain-last")
	require.ErrorContains(t, err, "older-than")
}

func TestExpireKeepsSnapshotsTaggedAfterPlanning(t *testing.T) {
	ctx := t.Context()
	f := newExpireFixture(t)
	opts := rewriter.ExpireOptions{RetainLast: 1, Now: func() time.Time { return time.Now().Add(10 * 24 * time.Hour) }}
	plan, err := rewriter.PlanExpire(ctx, f.tt.tbl, opts)
	require.NoError(t, err)
	require.Equal(t, f.snaps[:5], plan.Snapshots)
	// Between planning and running, someone tags snapshot 2.
	f.setRef(t, "audit", f.snaps[1], table.TagRef, 0)
	res, err := rewriter.Expire(ctx, f.tt.w.Catalog, f.tt.tbl, plan, opts)
	require.NoError(t, err)
	require.Equal(t, []int64{f.snaps[1]}, res.Kept)
	require.ElementsMatch(t, []int64{f.snaps[0], f.snaps[2], f.snaps[3], f.snaps[4]}, res.Expired)
	for _, p := range f.data[:2] {
		require.True(t, f.tt.w.Exists(t, p), "data file of the tagged snapshot deleted")
		require.NotContains(t, res.Deleted, p)
	}
	for _, p := range f.data[2:] {
		require.False(t, f.tt.w.Exists(t, p))
	}
	fresh, err := f.tt.w.Catalog.LoadTable(ctx, f.tt.tbl.Identifier())
	require.NoError(t, err)
	requireReachableExist(t, fresh)
	// The tag still reads its snapshot's rows.
	scan := fresh.Scan(table.WithSnapshotID(f.snaps[1]))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, 2)
	f.tt.tbl = fresh
	f.tt.requireSameRows(t)
}
