package rewriter_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

func TestIsRetryableCommitError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil},
		{name: "commit-failed", err: fmt.Errorf("commit: %w", table.ErrCommitFailed), want: true},
		{name: "conflicting-deletes", err: table.ErrConflictingDeleteFiles, want: true},
		{name: "diverged", err: fmt.Errorf("x: %w", table.ErrCommitDiverged), want: true},
		{name: "sql-requirement", err: errors.New(`requirement failed: branch "main" has changed: expected id 1, found 2`), want: true},
		{name: "wrapped-requirement", err: fmt.Errorf("commit table: %w", errors.New("requirement failed: branch main was created concurrently")), want: true},
		{name: "conflict", err: rewriter.ErrConflict, want: true},
		{name: "stale-group", err: fmt.Errorf("g: %w", rewriter.ErrStaleGroup)},
		{name: "invariant", err: rewriter.ErrInvariant},
		{name: "canceled", err: context.Canceled},
		{name: "io", err: errors.New("write manifest: disk full")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, rewriter.IsRetryableCommitError(tc.err))
		})
	}
	require.ErrorIs(t, rewriter.ErrStaleGroup, rewriter.ErrConflict)
}

func TestCommitGroupsPlainReplaceRemovesDeadDeletes(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	for i := range 10 {
		tt.appendBoth(t, i*100, 100, "eu")
	}
	tt.deleteBoth(t, 150, 160) // a position delete file on one input
	base := tt.state(t, tt.tbl)
	require.Len(t, base.DataFiles, 10)
	require.NotEmpty(t, base.DeleteFiles)
	snapsBefore := len(base.Snapshots)

	groups := rewriteGroups(t, base, "eu")
	require.Len(t, groups[0].Deletes, len(base.DeleteFiles), "the deletes of rewritten files are dead")
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{RunID: "run-1", Layout: "binpack", Sleep: instantSleep})
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	require.Len(t, rep.Commits, 1)
	c := rep.Commits[0]
	require.Equal(t, 10, c.FilesIn)
	require.Equal(t, len(groups[0].Outputs), c.FilesOut)
	require.Equal(t, len(base.DeleteFiles), c.DeletesRemoved)
	require.Equal(t, 1, c.Attempts)

	tt.tbl = rep.Table
	after := tt.state(t, tt.tbl)
	require.Len(t, after.Snapshots, snapsBefore+1, "one snapshot per group")
	snap := after.Current
	require.Equal(t, c.SnapshotID, snap.SnapshotID)
	require.Equal(t, table.OpReplace, snap.Summary.Operation)
	require.Equal(t, "run-1", snap.Summary.Properties[rewriter.PropRunID])
	require.Equal(t, "binpack", snap.Summary.Properties[rewriter.PropLayout])
	require.Len(t, after.DataFiles, c.FilesOut)
	require.Empty(t, after.DeleteFiles, "dead delete files are removed in the same commit")
	tt.requireSameRows(t)
}

func TestCommitGroupsConcurrentWriters(t *testing.T) {
	cases := []struct {
		name string
		// concurrent runs once, before the first catalog commit.
		concurrent   func(t *testing.T, tt *twinTables)
		wantSkipped  bool
		wantAttempts int
	}{
		{
			name:         "appender",
			concurrent:   func(t *testing.T, tt *twinTables) { tt.appendBoth(t, 10_000, 50, "eu") },
			wantAttempts: 2,
		},
		{
			name:        "deleter-of-an-input",
			concurrent:  func(t *testing.T, tt *twinTables) { tt.deleteBoth(t, 5, 8) }, // eu rows
			wantSkipped: true,
		},
		{
			name:         "deleter-of-another-partition",
			concurrent:   func(t *testing.T, tt *twinTables) { tt.deleteBoth(t, 1005, 1008) }, // ap rows
			wantAttempts: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tt := newTwinTables(t, nil)
			for i := range 4 {
				tt.appendBoth(t, i*100, 100, "eu")
				tt.appendBoth(t, 1000+i*100, 100, "ap")
			}
			base := tt.state(t, tt.tbl)
			groups := rewriteGroups(t, base, "eu")
			fired := false
			rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{
				Sleep: instantSleep,
				BeforeCommit: func(context.Context, int, int) error {
					if !fired {
						fired = true
						tc.concurrent(t, tt)
					}
					return nil
				},
			})
			require.NoError(t, err)
			require.True(t, fired)
			tt.tbl = rep.Table
			after := tt.state(t, tt.tbl)
			if tc.wantSkipped {
				require.Empty(t, rep.Commits)
				require.Len(t, rep.Skipped, 1)
				require.ErrorIs(t, rep.Skipped[0].Err, rewriter.ErrStaleGroup)
				require.Len(t, rep.Skipped[0].Orphans, len(groups[0].Outputs))
				require.Equal(t, 4, regionFiles(after, "eu"), "the stale group's inputs stay")
			} else {
				require.Empty(t, rep.Skipped)
				require.Len(t, rep.Commits, 1)
				require.Equal(t, tc.wantAttempts, rep.Commits[0].Attempts)
				require.Equal(t, table.OpReplace, after.Current.Summary.Operation)
			}
			tt.requireSameRows(t)
		})
	}
}

func TestCommitGroupsPartialProgress(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	regions := []string{"eu", "us", "ap"}
	for i := range 3 {
		for j, r := range regions {
			tt.appendBoth(t, j*1000+i*100, 100, r)
		}
	}
	base := tt.state(t, tt.tbl)
	groups := rewriteGroups(t, base, regions...)
	injected := errors.New("injected: catalog unreachable")
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{
		Sleep: instantSleep,
		BeforeCommit: func(_ context.Context, batch, _ int) error {
			if batch == 3 {
				return injected
			}
			return nil
		},
	})
	require.ErrorIs(t, err, injected)
	require.Len(t, rep.Commits, 2, "the first two groups stay committed")
	after := tt.state(t, rep.Table)
	require.Len(t, after.Snapshots, len(base.Snapshots)+2)
	require.Equal(t, len(groups[0].Outputs), regionFiles(after, "eu"))
	require.Equal(t, len(groups[1].Outputs), regionFiles(after, "us"))
	require.Equal(t, 3, regionFiles(after, "ap"), "the failed group is untouched")
	tt.tbl = rep.Table
	tt.requireSameRows(t)
}

func TestCommitGroupsStaleGroupInBatchIsSkippedOthersCommit(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	for i := range 3 {
		tt.appendBoth(t, i*100, 100, "eu")
		tt.appendBoth(t, 1000+i*100, 100, "us")
	}
	base := tt.state(t, tt.tbl)
	groups := rewriteGroups(t, base, "eu", "us")
	tt.deleteBoth(t, 1010, 1012) // us rows, after the groups were read
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{GroupsPerCommit: 2, Sleep: instantSleep})
	require.NoError(t, err)
	require.Len(t, rep.Commits, 1)
	require.Equal(t, []string{"region=eu"}, rep.Commits[0].Groups)
	require.Len(t, rep.Skipped, 1)
	require.Equal(t, "region=us", rep.Skipped[0].Name)
	tt.tbl = rep.Table
	tt.requireSameRows(t)
}

func TestCommitGroupsGivesUpAfterMaxAttempts(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	for i := range 3 {
		tt.appendBoth(t, i*100, 100, "eu")
	}
	base := tt.state(t, tt.tbl)
	groups := rewriteGroups(t, base, "eu")
	var waits []time.Duration
	n := 0
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{
		MaxAttempts: 3,
		Backoff:     rewriter.Backoff{Base: 10 * time.Millisecond, Max: 15 * time.Millisecond},
		Jitter:      func() float64 { return 0.999999 },
		Sleep: func(_ context.Context, d time.Duration) error {
			waits = append(waits, d)
			return nil
		},
		BeforeCommit: func(context.Context, int, int) error {
			n++
			tt.appendBoth(t, 5000+n*10, 10, "us") // the table moves before every attempt
			return nil
		},
	})
	require.NoError(t, err)
	require.Empty(t, rep.Commits)
	require.Len(t, rep.Skipped, 1)
	require.ErrorIs(t, rep.Skipped[0].Err, rewriter.ErrConflict)
	require.NotErrorIs(t, rep.Skipped[0].Err, rewriter.ErrStaleGroup)
	require.Equal(t, 3, n)
	require.Len(t, waits, 3)
	require.InDelta(t, float64(10*time.Millisecond), float64(waits[0]), float64(time.Millisecond))
	require.InDelta(t, float64(15*time.Millisecond), float64(waits[1]), float64(time.Millisecond), "capped at Max")
	tt.tbl = rep.Table
	tt.requireSameRows(t)
}

func TestCommitGroupsRacingAppenders(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	regions := []string{"eu", "us", "ap"}
	for i := range 3 {
		for j, r := range regions {
			tt.appendBoth(t, j*1000+i*100, 100, r)
		}
	}
	base := tt.state(t, tt.tbl)
	groups := rewriteGroups(t, base, regions...)

	// A real writer in another goroutine appends to the table, retrying
	// its own lost races, while the commit loop runs.
	const appends = 12
	var (
		wg       sync.WaitGroup
		appended []int
	)
	sch := testlake.ArrowSchema(t, base.Table)
	wg.Go(func() {
		for i := range appends {
			start := 100_000 + i*10
			for {
				cur := *base.Table
				if err := cur.Refresh(ctx); err != nil {
					t.Errorf("refresh: %v", err)
					return
				}
				rec := rowsOf(sch, start, 10, regions[i%3])
				rdr, err := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
				if err != nil {
					rec.Release()
					t.Errorf("record reader: %v", err)
					return
				}
				_, err = cur.Append(ctx, rdr, nil)
				rdr.Release()
				rec.Release()
				if err == nil {
					break
				}
				if !rewriter.IsRetryableCommitError(err) {
					t.Errorf("append: %v", err)
					return
				}
			}
			appended = append(appended, start)
		}
	})
	rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{
		MaxAttempts: 50,
		Backoff:     rewriter.Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond},
	})
	wg.Wait()
	require.NoError(t, err)
	for _, s := range rep.Skipped {
		require.ErrorIs(t, s.Err, rewriter.ErrConflict)
	}
	require.NotEmpty(t, rep.Commits)
	t.Logf("commits=%d skipped=%d concurrent appends=%d", len(rep.Commits), len(rep.Skipped), len(appended))
	for i, start := range appended {
		tt.twin = appendFresh(t, tt.twin, start, 10, regions[i%3])
	}
	fresh := *rep.Table
	require.NoError(t, fresh.Refresh(ctx))
	tt.tbl = &fresh
	tt.requireSameRows(t)
}

func TestDeadDeletes(t *testing.T) {
	tt := newTwinTables(t, nil)
	for i := range 3 {
		tt.appendBoth(t, i*100, 100, "eu")
		tt.appendBoth(t, 1000+i*100, 100, "us")
	}
	tt.deleteBoth(t, 10, 12)     // eu, first file
	tt.deleteBoth(t, 1110, 1112) // us, second file
	st := tt.state(t, tt.tbl)
	require.Len(t, st.DeleteFiles, 2)
	var euFirst, euAll, usAll []string
	for _, f := range st.DataFiles {
		switch f.PartitionKey {
		case "region=eu":
			euAll = append(euAll, f.Path)
			if lo, ok := f.Lower[1]; ok && lo.String() == "0" {
				euFirst = append(euFirst, f.Path)
			}
		case "region=us":
			usAll = append(usAll, f.Path)
		}
	}
	require.Len(t, euFirst, 1)
	// iceberg-go writes partition-scoped position deletes (no
	// referenced_data_file): rewriting one file of the partition leaves
	// older files the delete may apply to, so it stays.
	var euDelete lake.File
	for _, d := range st.DeleteFiles {
		if d.PartitionKey == "region=eu" {
			euDelete = d
		}
	}
	var firstOnly []string
	if euDelete.ReferencedDataFile == euFirst[0] {
		firstOnly = []string{"region=eu"}
	}
	set := func(paths ...[]string) map[string]bool {
		m := map[string]bool{}
		for _, ps := range paths {
			for _, p := range ps {
				m[p] = true
			}
		}
		return m
	}
	cases := []struct {
		name      string
		rewritten map[string]bool
		wantParts []string
	}{
		{name: "nothing", rewritten: nil},
		{name: "eu-all", rewritten: set(euAll), wantParts: []string{"region=eu"}},
		{name: "eu-first-file", rewritten: set(euFirst), wantParts: firstOnly},
		{name: "both", rewritten: set(euAll, usAll), wantParts: []string{"region=eu", "region=us"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range rewriter.DeadDeletes(st, tc.rewritten) {
				got = append(got, d.PartitionKey)
			}
			require.ElementsMatch(t, tc.wantParts, got)
		})
	}
}

func TestCommitGroupsKeepsProgressWhenALaterWriteFails(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, nil)
	regions := []string{"eu", "us", "ap"}
	for i := range 3 {
		for j, r := range regions {
			tt.appendBoth(t, j*1000+i*100, 100, r)
		}
	}
	base := tt.state(t, tt.tbl)
	done := rewriteGroups(t, base, "eu", "us")
	rep, err := rewriter.CommitGroups(ctx, base, done, rewriter.CommitOptions{Sleep: instantSleep})
	require.NoError(t, err)
	require.Len(t, rep.Commits, 2)

	// The third group's write fails: on a local warehouse its data path
	// runs through a regular file, so creating the output fails whoever
	// runs the test; on S3 it names a bucket the table's IO refuses.
	badPath, wantErr := "s3://floe-no-such-bucket/data", `authority "floe-no-such-bucket"`
	if strings.HasPrefix(rep.Table.Location(), "file://") {
		blocker := filepath.Join(t.TempDir(), "not-a-dir")
		require.NoError(t, os.WriteFile(blocker, nil, 0o644))
		badPath, wantErr = "file://"+blocker+"/data", "not a directory"
	}
	tx := rep.Table.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{"write.data.path": badPath}))
	broken, err := tx.Commit(ctx)
	require.NoError(t, err)
	st := tt.state(t, broken)
	scan := broken.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	require.NoError(t, err)
	var ap []table.FileScanTask
	for _, task := range tasks {
		if task.File.Partition()[1000] == "ap" {
			ap = append(ap, task)
		}
	}
	require.Len(t, ap, 3)
	_, _, err = rewriter.RewriteGroup(ctx, broken, ap, rewriter.GroupOptions{TempDir: t.TempDir()})
	require.ErrorContains(t, err, wantErr, "the injected write error surfaces")

	// The first two groups stay committed; the third partition is untouched.
	require.Equal(t, len(done[0].Outputs), regionFiles(st, "eu"))
	require.Equal(t, len(done[1].Outputs), regionFiles(st, "us"))
	require.Equal(t, 3, regionFiles(st, "ap"))
	tt.tbl = broken
	tt.requireSameRows(t)
}
