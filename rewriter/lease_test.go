package rewriter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// A live lease keeps orphan removal off every file written since its run
// started, whatever the age and force options say; once released (or
// lapsed) the same files are ordinary orphans, and a lapsed lease's own
// file goes with them.
func TestOrphansKeepFilesOfLiveRuns(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	tt.appendBoth(t, 0, 100, "eu")
	loc := tt.tbl.Location()
	now := time.Now()
	clock := func() time.Time { return now }
	forced := rewriter.OrphanOptions{OlderThan: time.Millisecond, Force: true, Now: func() time.Time { return now.Add(time.Second) }}

	lease, err := rewriter.AcquireLease(ctx, tt.tbl, rewriter.LeaseOptions{RunID: "run-a", Table: "db.events", Operation: "compact", Now: clock})
	require.NoError(t, err)
	t.Cleanup(func() { _ = lease.Release() })
	// What the run writes after its lease: a data file nothing references.
	written := loc + "/data/region=eu/00000-1-run-a.parquet"
	plant(t, tt.w, written, now)
	// A stray from before the run (older than the lease's clock-skew margin).
	stray := loc + "/data/region=eu/stray.parquet"
	plant(t, tt.w, stray, now.Add(-time.Hour))

	plan, err := rewriter.PlanOrphans(ctx, tt.tbl, forced)
	require.NoError(t, err)
	require.Equal(t, localPaths([]string{stray}), orphanPaths(plan))
	require.Equal(t, 2, plan.InFlight, "the run's file and its lease file")
	require.Len(t, plan.Leases, 1)
	require.Equal(t, "run-a", plan.Leases[0].RunID)
	require.Equal(t, "compact", plan.Leases[0].Operation)

	// A run that starts between planning and deleting is seen by the
	// delete's second look at the leases.
	require.NoError(t, lease.Release())
	plan2, err := rewriter.PlanOrphans(ctx, tt.tbl, forced)
	require.NoError(t, err)
	require.Len(t, orphanPaths(plan2), 2, "released: the run's uncommitted file is an orphan now")
	late, err := rewriter.AcquireLease(ctx, tt.tbl, rewriter.LeaseOptions{RunID: "run-b", Now: func() time.Time { return now.Add(-time.Minute) }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = late.Release() })
	res, err := rewriter.DeleteOrphans(ctx, tt.tbl, plan2, 2)
	require.NoError(t, err)
	require.Equal(t, localPaths([]string{stray}), localPaths(res.Deleted))
	require.Len(t, res.InFlight, 1)
	requireStored(t, tt.w, written)

	// A lapsed lease (its holder was killed) protects nothing and is
	// removed itself. Its clock stops at now-1m, its TTL is 2m: at now+5m
	// it has lapsed.
	lapsed := rewriter.OrphanOptions{OlderThan: time.Millisecond, Force: true, Now: func() time.Time { return now.Add(5 * time.Minute) }}
	plan3, err := rewriter.PlanOrphans(ctx, tt.tbl, lapsed)
	require.NoError(t, err)
	require.Empty(t, plan3.Leases)
	paths := orphanPaths(plan3)
	require.Contains(t, paths, oracle.LocalPath(written))
	require.Contains(t, paths, oracle.LocalPath(loc+"/"+rewriter.LeaseDir+"/run-b.json"))
}

// orphanPaths lists the planned orphans, file:// stripped.
func orphanPaths(p rewriter.OrphanPlan) []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Path)
	}
	return localPaths(out)
}

func TestLeaseCheckAndRelease(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	lease, err := rewriter.AcquireLease(ctx, tt.tbl, rewriter.LeaseOptions{TTL: time.Hour, Now: clock})
	require.NoError(t, err)
	require.NoError(t, lease.Check())
	leases, err := rewriter.Leases(ctx, tt.tbl)
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.Equal(t, lease.RunID(), leases[0].RunID)
	require.True(t, leases[0].Live(now))

	mu.Lock()
	now = now.Add(2 * time.Hour) // no renewal happened in between
	mu.Unlock()
	require.ErrorIs(t, lease.Check(), rewriter.ErrLeaseLost)
	require.ErrorIs(t, lease.Check(), rewriter.ErrInvariant)

	require.NoError(t, lease.Release())
	require.NoError(t, lease.Release(), "twice is fine")
	leases, err = rewriter.Leases(ctx, tt.tbl)
	require.NoError(t, err)
	require.Empty(t, leases)
}

// A spill directory is swept only once nobody holds its lock: a run in
// this process keeps its own, the directory of a run whose lock went with
// its process is removed.
func TestSweepRunDirs(t *testing.T) {
	temp := t.TempDir()
	live, err := rewriter.NewRunDir(temp, "live")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(live.Path, "floe-sort-1.arrows"), make([]byte, 100), 0o600))
	// A dead run's directory: a lock file nobody holds, and spill bytes.
	dead := filepath.Join(temp, "floe-run-dead")
	require.NoError(t, os.MkdirAll(dead, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dead, "lock"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dead, "floe-sort-2.arrows"), make([]byte, 4096), 0o600))
	// Not floe's: never touched.
	other := filepath.Join(temp, "something-else")
	require.NoError(t, os.MkdirAll(other, 0o700))

	swept, err := rewriter.SweepRunDirs(temp)
	require.NoError(t, err)
	require.Equal(t, []rewriter.SweptDir{{Path: dead, Bytes: 4096}}, swept)
	require.DirExists(t, live.Path)
	require.DirExists(t, other)
	require.NoDirExists(t, dead)

	_, err = rewriter.NewRunDir(temp, "live")
	require.Error(t, err, "a held run dir cannot be taken twice")
	require.NoError(t, live.Remove())
	require.NoDirExists(t, live.Path)
}

// A file the rewrite is about to commit that has gone (or changed size)
// fails the commit before it is made: nothing dangling is committed.
func TestCommitRefusesMissingOutputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, w *testlake.Warehouse, loc string)
	}{
		{name: "deleted", damage: func(t *testing.T, w *testlake.Warehouse, loc string) { w.Remove(t, loc) }},
		{name: "truncated", damage: func(t *testing.T, w *testlake.Warehouse, loc string) {
			w.Plant(t, loc, w.Read(t, loc)[:10], time.Now())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tt := fillTwins(t)
			base := tt.state(t, tt.tbl)
			groups := rewriteGroups(t, base, "eu")
			victim := groups[0].Outputs[0].FilePath()
			_, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{Sleep: instantSleep,
				BeforeCommit: func(context.Context, int, int) error { tc.damage(t, tt.w, victim); return nil }})
			require.ErrorIs(t, err, rewriter.ErrMissingOutput)
			require.Contains(t, err.Error(), groups[0].Outputs[0].FilePath())
			after := tt.state(t, tt.tbl)
			require.Equal(t, base.Current.SnapshotID, after.Current.SnapshotID, "nothing committed")
			tt.requireSameRows(t)
		})
	}
}

// A layout run that fails before its first commit leaves the table's
// metadata as it was: no sort order, no floe.layout, no snapshot. Its
// written files are removed on the way out.
func TestFailedLayoutRunCommitsNothing(t *testing.T) {
	ctx := t.Context()
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	metaBefore := tt.tbl.MetadataLocation()
	layout, err := layout.Parse("sort(v desc, id)")
	require.NoError(t, err)
	boom := errors.New("injected failure before commit")
	temp := t.TempDir()
	opts := rewriter.CompactOptions{Layout: layout, TargetFileSizeBytes: 16 << 10,
		Group:  rewriter.GroupOptions{TempDir: temp},
		Commit: rewriter.CommitOptions{Sleep: instantSleep, BeforeCommit: func(context.Context, int, int) error { return boom }}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.ErrorIs(t, err, boom)
	require.Empty(t, res.Commits)
	require.Positive(t, res.RemovedOutputs)

	fresh := *tt.tbl
	require.NoError(t, fresh.Refresh(ctx))
	require.Equal(t, metaBefore, fresh.MetadataLocation(), "no metadata-only commit")
	require.True(t, fresh.SortOrder().IsUnsorted())
	_, ok := fresh.Properties()[rewriter.PropLayout]
	require.False(t, ok)
	tt.requireSameRows(t)
	// Nothing of the run is left: no output files, no lease, no spill dir.
	orphans, err := rewriter.PlanOrphans(ctx, &fresh, rewriter.OrphanOptions{OlderThan: time.Nanosecond, Force: true})
	require.NoError(t, err)
	require.Empty(t, orphans.Files)
	require.Zero(t, orphans.InFlight)
	entries, err := os.ReadDir(temp)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// Two layout runs racing on one table: whichever commits last, the
// table's declared layout is the layout of its newest rewrite, and for a
// sort the files carry the declared order's id.
func TestRacingLayoutRunsDeclareTheirFilesLayout(t *testing.T) {
	ctx := t.Context()
	tt := fillTwins(t)
	specs := []string{"sort(id)", "zorder(v, id)"}
	var wg sync.WaitGroup
	errs := make([]error, len(specs))
	for i, spec := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			layout, err := layout.Parse(spec)
			if err != nil {
				errs[i] = err
				return
			}
			st := tt.state(t, tt.tbl)
			opts := rewriter.CompactOptions{Layout: layout, TargetFileSizeBytes: 16 << 10, Group: rewriter.GroupOptions{TempDir: t.TempDir()},
				Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			plan, err := rewriter.PlanCompaction(st, opts)
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = rewriter.Compact(ctx, st, plan, opts)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		// A run may lose every group to the other (skipped, not failed) or
		// fail on a conflict; it never commits a wrong declaration.
		if err != nil {
			require.ErrorIs(t, err, rewriter.ErrConflict, "run %s", specs[i])
		}
	}
	fresh := *tt.tbl
	require.NoError(t, fresh.Refresh(ctx))
	tt.tbl = &fresh
	tt.requireSameRows(t)
	st := tt.state(t, tt.tbl)
	var newest string
	for _, s := range st.Snapshots {
		if s.Operation == "replace" {
			newest = s.Summary[rewriter.PropLayout]
		}
	}
	require.NotEmpty(t, newest, "some run committed")
	require.Equal(t, newest, st.Metadata.Properties()[rewriter.PropLayout])
	requireDeclaredSortOrder(t, &fresh, newest)
}

func requireDeclaredSortOrder(t *testing.T, tbl *table.Table, layout string) {
	t.Helper()
	if !strings.HasPrefix(layout, "sort(") {
		return
	}
	require.False(t, tbl.SortOrder().IsUnsorted())
}
