package rewriter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// fillTwins appends ten small batches per region in descending id order,
// so arrival order is the opposite of sort order, then deletes a range.
func fillTwins(t *testing.T) *twinTables {
	t.Helper()
	tt := newTwinTables(t, nil)
	for i := 9; i >= 0; i-- {
		tt.appendBoth(t, i*2000, 2000, "eu")
		tt.appendBoth(t, 100000+i*1200, 1200, "us")
	}
	tt.deleteBoth(t, 1200, 1300)
	return tt
}

func TestCompactLayouts(t *testing.T) {
	for _, spec := range []string{"sort(id)", "sort(v desc nulls last, id)", "zorder(id, v)", "hilbert(id, v)", "binpack"} {
		t.Run(spec, func(t *testing.T) {
			ctx := context.Background()
			tt := fillTwins(t)
			l, err := layout.Parse(spec)
			require.NoError(t, err)
			st := tt.state(t, tt.tbl)
			opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 16 << 10,
				Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			require.Len(t, plan.Groups, 2, "both regions have ten small files")
			require.Equal(t, 20, plan.InputFiles)

			res, err := rewriter.Compact(ctx, st, plan, opts)
			require.NoError(t, err)
			require.Empty(t, res.Skipped)
			require.Len(t, res.Commits, 2)
			require.Equal(t, 20, res.FilesIn)
			tt.tbl = res.Table
			tt.requireSameRows(t)

			after := tt.state(t, tt.tbl)
			require.Empty(t, after.DeleteFiles, "the dead position deletes go in the same commit")
			for _, s := range after.Snapshots[len(after.Snapshots)-2:] {
				require.Equal(t, "replace", s.Operation)
				require.Equal(t, l.String(), s.Summary[rewriter.PropLayout])
			}
			if l.Strategy == layout.StrategySort {
				require.Equal(t, l.Columns[0].Name, sortColumn(t, after))
				for _, f := range after.DataFiles {
					require.NotNil(t, f.SortOrderID)
					require.Equal(t, after.Metadata.SortOrder().OrderID(), *f.SortOrderID)
				}
			}
			if spec == "sort(id)" {
				requireOrderedFiles(t, after, 1)
			}
			// The target size the files were written for is recorded with
			// them, and health judges the files against it.
			require.Equal(t, "16384", after.Metadata.Properties()[lake.PropRewriteTargetFileSize])
			h, err := lake.ComputeHealth(after, lake.HealthOptions{})
			require.NoError(t, err)
			require.Equal(t, int64(16<<10), h.Metrics.TargetFileSizeBytes)
			if l.Strategy == layout.StrategyZOrder || l.Strategy == layout.StrategyHilbert {
				require.Equal(t, l.String(), after.Metadata.Properties()[rewriter.PropLayout])
			}
			// Compacting again into the same layout has nothing to do.
			again, err := rewriter.PlanCompaction(after, opts)
			require.NoError(t, err)
			require.Empty(t, again.Groups, "%s", groupSummary(again))
		})
	}
}

func sortColumn(t *testing.T, st *lake.State) string {
	t.Helper()
	for _, f := range st.Metadata.SortOrder().Fields() {
		name, ok := st.Metadata.CurrentSchema().FindColumnName(f.SourceIDs[0])
		require.True(t, ok)
		return name
	}
	t.Fatal("table has no sort order")
	return ""
}

// requireOrderedFiles checks, from the manifests' bounds, that within each
// partition the files follow each other on the column: file i's max is below
// file i+1's min once files are ordered by min.
func requireOrderedFiles(t *testing.T, st *lake.State, fieldID int) {
	t.Helper()
	byPart := map[string][]lake.File{}
	for _, f := range st.DataFiles {
		byPart[f.PartitionKey] = append(byPart[f.PartitionKey], f)
	}
	require.Greater(t, len(st.DataFiles), len(byPart), "some partition should hold several files at this target size")
	for part, files := range byPart {
		c := lake.MeasureClustering("id", fieldID, files)
		require.InDelta(t, 1.0, c.AverageDepth, 1e-9, "partition %s files overlap on id", part)
	}
}

func TestCompactBudgetAndPriority(t *testing.T) {
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	l, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 16 << 10, MaxFilesFraction: 0.5}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	require.Len(t, plan.Deferred, 1)
	first := plan.Groups[0].Partition

	// The partition that lost last time goes first.
	opts.Priority = []string{plan.Deferred[0].Partition}
	plan2, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Equal(t, plan.Deferred[0].Partition, plan2.Groups[0].Partition)
	require.Equal(t, first, plan2.Deferred[0].Partition)

	// Bin-pack needs MinInputFiles small files per partition.
	bp, err := rewriter.PlanCompaction(st, rewriter.CompactOptions{TargetFileSizeBytes: 16 << 10, MinInputFiles: 11})
	require.NoError(t, err)
	require.Len(t, bp.Groups, 1, "only eu has delete files, which make a group regardless")
	require.Contains(t, bp.Groups[0].Partition, "eu")

	_, err = rewriter.PlanCompaction(st, rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyCurrent}})
	require.Error(t, err)
	_, err = rewriter.PlanCompaction(st, rewriter.CompactOptions{MaxFilesFraction: 2})
	require.Error(t, err)
}

func TestCompactRestrictedToPartitions(t *testing.T) {
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	var us string
	for _, p := range st.Partitions {
		if p.Key != "" && p.Key[len(p.Key)-2:] == "us" {
			us = p.Key
		}
	}
	require.NotEmpty(t, us)
	opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}, Partitions: []string{us}, TargetFileSizeBytes: 1 << 20}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	res, err := rewriter.Compact(context.Background(), st, plan, opts)
	require.NoError(t, err)
	tt.tbl = res.Table
	tt.requireSameRows(t)
	after := tt.state(t, tt.tbl)
	require.Equal(t, 11, len(after.DataFiles), "us: 10 → 1 file; eu untouched")
}

func groupSummary(p rewriter.CompactPlan) string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, g.Partition+": "+strings.Join(g.Reasons, ", "))
	}
	return strings.Join(out, "; ")
}

// expireAllButCurrent expires every snapshot of tt.tbl but the current one,
// with a clock an hour after the newest snapshot (no wall clock involved).
func expireAllButCurrent(t *testing.T, tt *twinTables) {
	t.Helper()
	ctx := context.Background()
	fresh := *tt.tbl
	require.NoError(t, fresh.Refresh(ctx))
	newest := time.UnixMilli(fresh.CurrentSnapshot().TimestampMs)
	opts := rewriter.ExpireOptions{OlderThan: time.Millisecond, RetainLast: 1, Now: func() time.Time { return newest.Add(time.Hour) }}
	plan, err := rewriter.PlanExpire(ctx, &fresh, opts)
	require.NoError(t, err)
	require.NotEmpty(t, plan.Snapshots)
	_, err = rewriter.Expire(ctx, tt.w.Catalog, &fresh, plan, opts)
	require.NoError(t, err)
	require.NoError(t, tt.tbl.Refresh(ctx))
}

// A layout rewrite must not leave a partition alone because nothing records
// its lone file's layout any more: an expired adding snapshot means
// "unknown", and unknown is not "in the layout". Files floe itself wrote in
// the layout stay known after expiry through their names.
func TestCompactFileOfExpiredSnapshot(t *testing.T) {
	for _, spec := range []string{"sort(id)", "zorder(id, v)", "hilbert(id, v)"} {
		t.Run(spec, func(t *testing.T) {
			ctx := context.Background()
			tt := newTwinTables(t, nil)
			tt.appendBoth(t, 0, 3000, "eu") // one file, never compacted
			for i := range 4 {
				tt.appendBoth(t, 100000+i*500, 500, "us")
			}
			expireAllButCurrent(t, tt)
			layout, err := layout.Parse(spec)
			require.NoError(t, err)
			opts := rewriter.CompactOptions{Layout: layout, TargetFileSizeBytes: 1 << 20,
				Commit: rewriter.CommitOptions{Sleep: instantSleep}}

			st := tt.state(t, tt.tbl)
			require.Len(t, st.Snapshots, 1)
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			byPart := map[string]rewriter.PlannedGroup{}
			for _, g := range plan.Groups {
				byPart[g.Partition] = g
			}
			eu, ok := byPart["region=eu"]
			require.True(t, ok, "the single-file partition of an expired snapshot is planned: %s", groupSummary(plan))
			require.Equal(t, 1, eu.Files)
			require.Contains(t, strings.Join(eu.Reasons, "; "), "1 files of unknown layout")

			res, err := rewriter.Compact(ctx, st, plan, opts)
			require.NoError(t, err)
			tt.tbl = res.Table
			tt.requireSameRows(t)
			after := tt.state(t, tt.tbl)
			for _, f := range after.DataFiles {
				require.True(t, strings.HasSuffix(f.Path, "-"+rewriter.LayoutTag(layout)+".parquet"), f.Path)
			}

			// Once the rewrite's own snapshot is expired too, its files are
			// still known to be in the layout: nothing to do.
			tt.appendBoth(t, 200000, 10, "apac")
			expireAllButCurrent(t, tt)
			st = tt.state(t, tt.tbl)
			again, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			for _, g := range again.Groups {
				require.Equal(t, "region=apac", g.Partition, "%s", groupSummary(again))
			}
		})
	}
}

// A layout's files are in it whatever target they were written at: a plan
// writes "sort(id) target 1MiB", and the policy's "sort(id)" at the same
// 1 MiB must find nothing to rewrite — before, every file was "not in"
// the layout and the table was rewritten again. Through the adding
// snapshot's summary, and once it is expired through the files' names.
func TestCompactLayoutWrittenWithItsOwnTarget(t *testing.T) {
	for _, spec := range []string{"sort(id)", "zorder(id, v)"} {
		t.Run(spec, func(t *testing.T) {
			ctx := context.Background()
			tt := newTwinTables(t, nil)
			for i := range 4 {
				tt.appendBoth(t, i*500, 500, "eu")
				tt.appendBoth(t, 100000+i*500, 500, "us")
			}
			bare, err := layout.Parse(spec)
			require.NoError(t, err)
			written := bare
			written.TargetFileSizeBytes = 1 << 20
			opts := rewriter.CompactOptions{Layout: written, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			plan, err := rewriter.PlanCompaction(tt.state(t, tt.tbl), opts)
			require.NoError(t, err)
			require.Len(t, plan.Groups, 2, "%s", groupSummary(plan))
			res, err := rewriter.Compact(ctx, tt.state(t, tt.tbl), plan, opts)
			require.NoError(t, err)
			tt.tbl = res.Table
			tt.requireSameRows(t)

			again := rewriter.CompactOptions{Layout: bare, TargetFileSizeBytes: 1 << 20, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			p, err := rewriter.PlanCompaction(tt.state(t, tt.tbl), again)
			require.NoError(t, err)
			require.Empty(t, p.Groups, "the files are in %s already: %s", spec, groupSummary(p))
			expireAllButCurrent(t, tt)
			p, err = rewriter.PlanCompaction(tt.state(t, tt.tbl), again)
			require.NoError(t, err)
			require.Empty(t, p.Groups, "their names say so once the snapshot is expired: %s", groupSummary(p))
		})
	}
}

// A compaction whose every group loses its commit race (a writer commits
// before each attempt) committed nothing: Compact says so with
// ErrNothingCommitted (an ErrConflict, retried later), never as a
// compaction done, and the table keeps its rows.
func TestCompactThatCommitsNothingFails(t *testing.T) {
	tt := newTwinTables(t, nil)
	for i := range 6 {
		tt.appendBoth(t, i*100, 100, "eu")
	}
	st := tt.state(t, tt.tbl)
	n := 0
	opts := rewriter.CompactOptions{TargetFileSizeBytes: 4 << 20, Commit: rewriter.CommitOptions{MaxAttempts: 2, Sleep: instantSleep,
		BeforeCommit: func(context.Context, int, int) error {
			n++
			tt.appendBoth(t, 10_000+n*10, 10, "us") // the table moves before every attempt
			return nil
		}}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	res, err := rewriter.Compact(t.Context(), st, plan, opts)
	require.ErrorIs(t, err, rewriter.ErrNothingCommitted)
	require.ErrorIs(t, err, rewriter.ErrConflict)
	require.ErrorContains(t, err, "nothing committed: all 1 groups were skipped (region=eu)")
	require.Empty(t, res.Commits)
	require.Len(t, res.Skipped, 1)
	require.Equal(t, 2, n)
	tt.tbl = res.Table
	tt.requireSameRows(t)
}

// TestCompactPausePoints checks where [rewriter.CompactOptions.Pause] stops
// a compaction, which the crash tests of cmd/floe rely on to kill a real
// process at a known point: before each batch's commit with the batches
// before it committed and its own outputs written, and after the last
// commit with the lease still held.
func TestCompactPausePoints(t *testing.T) {
	ctx := context.Background()
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	l, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	type seen struct {
		point            string
		replaces, leases int
	}
	var got []seen
	opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 16 << 10,
		Commit: rewriter.CommitOptions{Sleep: instantSleep},
		Pause: func(ctx context.Context, point string) {
			fresh := *tt.tbl
			require.NoError(t, fresh.Refresh(ctx))
			now := tt.state(t, &fresh)
			replaces := 0
			for _, s := range now.Snapshots {
				if s.Operation == "replace" {
					replaces++
				}
			}
			leases, err := rewriter.Leases(ctx, &fresh)
			require.NoError(t, err)
			got = append(got, seen{point, replaces, len(leases)})
		}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.NoError(t, err)
	require.Len(t, res.Commits, 2)
	require.Equal(t, []seen{
		{rewriter.PauseBeforeCommit(1), 0, 1},
		{rewriter.PauseBeforeCommit(2), 1, 1},
		{rewriter.PauseCommitted, 2, 1},
	}, got)

	// Nothing to commit: no pause.
	got = nil
	tt.tbl = res.Table
	again, err := rewriter.PlanCompaction(tt.state(t, tt.tbl), opts)
	require.NoError(t, err)
	require.Empty(t, again.Groups)
	_, err = rewriter.Compact(ctx, tt.state(t, tt.tbl), again, opts)
	require.NoError(t, err)
	require.Empty(t, got)
}
