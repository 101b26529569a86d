package rewriter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// v3 makes newTwinTables' tables format version 3: merge-on-read deletes
// write deletion vectors.
var v3 = iceberg.Properties{table.PropertyFormatVersion: "3"}

// deleteIDsBoth deletes the rows with the given ids from both tables in one
// merge-on-read delete each: on a v3 table one Puffin file with a vector
// per data file the ids are in.
func (tt *twinTables) deleteIDsBoth(t testing.TB, ids ...int64) {
	t.Helper()
	tt.tbl = deleteIDsFresh(t, tt.tbl, ids...)
	tt.twin = deleteIDsFresh(t, tt.twin, ids...)
}

func deleteIDsFresh(t testing.TB, tbl *table.Table, ids ...int64) *table.Table {
	t.Helper()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(context.Background()))
	out, err := fresh.Delete(context.Background(), iceberg.IsIn(iceberg.Reference("id"), ids...), nil)
	require.NoError(t, err)
	return out
}

// requireSameRowsApplied checks that the table under test and its twin hold
// the same rows as read by the oracle that applies deletes itself by the
// spec's rules (ChecksumApplied), and by rowSum (DuckDB with the duckdb
// tag, else iceberg-go's scan).
func (tt *twinTables) requireSameRowsApplied(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	got, err := oracle.ChecksumApplied(ctx, tt.tbl)
	require.NoError(t, err)
	want, err := oracle.ChecksumApplied(ctx, tt.twin)
	require.NoError(t, err)
	require.Equal(t, want, got, "rows of the maintained table differ from its twin's, deletes applied by the oracle")
	tt.requireSameRows(t)
}

// fileSize is the size of the table's data files, all of one size: a target
// of that size makes them neither small nor oversized, so that only their
// deletes make bin-pack pick them.
func fileSize(t testing.TB, st *lake.State) int64 {
	t.Helper()
	var most int64
	for _, f := range st.DataFiles {
		most = max(most, f.SizeBytes)
	}
	return most
}

// One delete on a v3 table writes one Puffin file holding the deletion
// vectors of all 24 data files it touches, 12 in each of two partitions.
// Planning sees every vector: bin-pack picks the 12 files of a partition
// (they are neither small nor oversized, so only their vectors make them
// candidates); the compaction of one partition removes its 12 vectors and
// keeps the other partition's, whose rows stay deleted.
func TestCompactSeesEveryDeletionVectorOfAPuffinFile(t *testing.T) {
	ctx := t.Context()
	tt := newTwinTables(t, v3)
	var ids []int64
	for f := range 24 {
		tt.appendBoth(t, f*10, 10, []string{"eu", "us"}[f%2])
		ids = append(ids, int64(f*10+3))
	}
	tt.deleteIDsBoth(t, ids...)
	st := tt.state(t, tt.tbl)
	require.Len(t, st.DeleteFiles, 24)
	require.Equal(t, 1, func() int {
		paths := map[string]bool{}
		for _, d := range st.DeleteFiles {
			paths[d.Path] = true
		}
		return len(paths)
	}(), "one Puffin file")

	opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}, TargetFileSizeBytes: fileSize(t, st),
		Partitions: []string{"region=eu"}, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	require.Equal(t, 12, plan.Groups[0].Files, "every file with a vector is picked")
	require.Equal(t, 12, plan.Groups[0].Deletes)
	require.Contains(t, plan.Groups[0].Reasons, "12 deletion vectors")

	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.NoError(t, err)
	require.Empty(t, res.Skipped)
	require.Len(t, res.Commits, 1)
	require.Equal(t, 12, res.Commits[0].DeletesRemoved)
	tt.tbl = res.Table
	tt.requireSameRowsApplied(t)

	after := tt.state(t, tt.tbl)
	require.Len(t, after.DeleteFiles, 12, "the other partition's vectors stay")
	live := map[string]bool{}
	for _, f := range after.DataFiles {
		live[f.Path] = true
	}
	for _, d := range after.DeleteFiles {
		require.True(t, live[d.ReferencedDataFile], "vector %s points at a file that is not live", d.DeleteKey())
		require.Equal(t, st.DeleteFiles[0].Path, d.Path, "the Puffin file stays while it holds live vectors")
	}
	h, err := lake.ComputeHealth(after, lake.HealthOptions{})
	require.NoError(t, err)
	require.Equal(t, 12, h.Metrics.DeletionVectors)
}

// DeadDeletes judges each vector of a Puffin file on its own: rewriting
// some of the files a Puffin file's vectors reference makes exactly their
// vectors dead.
func TestDeadDeletesPerVector(t *testing.T) {
	tt := newTwinTables(t, v3)
	var ids []int64
	for f := range 6 {
		tt.appendBoth(t, f*10, 10, "eu")
		ids = append(ids, int64(f*10+1))
	}
	tt.deleteIDsBoth(t, ids...)
	st := tt.state(t, tt.tbl)
	require.Len(t, st.DeleteFiles, 6)
	for n := range 7 {
		rewritten := map[string]bool{}
		for _, f := range st.DataFiles[:n] {
			rewritten[f.Path] = true
		}
		var got []string
		for _, d := range rewriter.DeadDeletes(st, rewritten) {
			got = append(got, d.ReferencedDataFile)
		}
		require.ElementsMatch(t, slices.Collect(func(yield func(string) bool) {
			for p := range rewritten {
				if !yield(p) {
					return
				}
			}
		}), got, "%d files rewritten", n)
	}
}

// A merge-on-read delete on a v3 table, committed while floe compacts a
// partition, deletes rows of files floe is replacing: one Puffin file with
// the vectors of files in both partitions. floe must skip the group (or
// keep the delete), never commit over it and bring the rows back. Run many
// times, with the delete's ids, the moment it lands (before the first
// commit attempt, or before a retry after a lost race) and the base (with
// vectors already, or none) drawn from seeds; judged by readers that apply
// the deletes themselves. Each race starts from a copy of its seed's base
// table: a catalog entry registered on the base's metadata file, which
// shares its files and commits on its own.
func TestCompactRacingDeletionVectorsNeverResurrectRows(t *testing.T) {
	const seeds, runs = 4, 26 // 104 races
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			base := newTwinTables(t, v3)
			files := 4 + rng.IntN(4)
			for f := range files {
				base.appendBoth(t, f*20, 20, "eu")
				base.appendBoth(t, 10_000+f*20, 20, "us")
			}
			if seed%2 == 1 {
				// Vectors at the base, which the racer's delete merges.
				base.deleteIDsBoth(t, 1, 10_001, 21)
			}
			var skipped, committed int
			for run := range runs {
				tt := &twinTables{w: base.w, ident: lake.Ident{Catalog: base.w.Name, Namespace: []string{"db"}, Name: fmt.Sprintf("race%d", run)}}
				tt.tbl = base.w.Register(t, "db", tt.ident.Name, base.tbl.MetadataLocation())
				tt.twin = base.w.Register(t, "db", tt.ident.Name+"twin", base.tbl.MetadataLocation())
				if raceOnce(t, rng, tt, files, run) {
					skipped++
				} else {
					committed++
				}
			}
			t.Logf("seed %d: %d groups skipped for a racing delete, %d committed", seed, skipped, committed)
			require.Positive(t, skipped, "no run had the delete hit the group: the race was not tested")
			require.Positive(t, committed, "no run committed: the race was not tested")
		})
	}
}

// raceOnce runs one race on tt, whose tables hold files files of 20 rows in
// each of regions eu and us, and reports whether the group was skipped.
func raceOnce(t *testing.T, rng *rand.Rand, tt *twinTables, files, run int) (skipped bool) {
	t.Helper()
	ctx := t.Context()
	st := tt.state(t, tt.tbl)
	// The racer deletes rows of a few files of each partition in one
	// delete; in a quarter of the runs only of the other partition, which
	// floe must commit next to.
	var ids []int64
	hitEU := rng.IntN(4) != 0
	for f := range files {
		if hitEU && rng.IntN(2) == 0 {
			ids = append(ids, int64(f*20+2+rng.IntN(18)))
		}
		if rng.IntN(2) == 0 {
			ids = append(ids, int64(10_000+f*20+2+rng.IntN(18)))
		}
	}
	if hitEU && !slices.ContainsFunc(ids, func(id int64) bool { return id < 10_000 }) {
		ids = append(ids, 5)
	}
	ids = append(ids, 10_007)
	attempt := 1 + rng.IntN(2) // the delete lands before this attempt's commit
	fired := false
	opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}, Partitions: []string{"region=eu"},
		TargetFileSizeBytes: 1 << 20, MinInputFiles: 2, Group: rewriter.GroupOptions{TempDir: t.TempDir()},
		Commit: rewriter.CommitOptions{Sleep: instantSleep, BeforeCommit: func(_ context.Context, _, a int) error {
			if a == 1 && attempt == 2 {
				// Lose the first attempt to an append of the other
				// partition, so that the delete races the retry.
				tt.appendBoth(t, 50_000+run*10, 10, "us")
			}
			if a == attempt && !fired {
				fired = true
				tt.tbl = deleteIDsFresh(t, tt.tbl, ids...)
			}
			return nil
		}}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.True(t, fired)
	tt.twin = deleteIDsFresh(t, tt.twin, ids...)
	tt.tbl = res.Table
	if hitEU {
		// The one group skipped: the compaction committed nothing, which
		// fails the step (to be retried), never resurrects a row.
		require.ErrorIs(t, err, rewriter.ErrNothingCommitted)
		require.Len(t, res.Skipped, 1, "a delete of the group's rows landed: the group must be skipped")
		require.ErrorIs(t, res.Skipped[0].Err, rewriter.ErrStaleGroup)
	} else {
		require.NoError(t, err)
		require.Empty(t, res.Skipped)
		require.Len(t, res.Commits, 1)
	}
	tt.requireSameRowsApplied(t)
	return hitEU
}

// upgradeBoth moves both tables to format version 3.
func (tt *twinTables) upgradeBoth(t testing.TB) {
	t.Helper()
	up := func(tbl *table.Table) *table.Table {
		fresh := *tbl
		require.NoError(t, fresh.Refresh(context.Background()))
		tx := fresh.NewTransaction()
		require.NoError(t, tx.UpgradeFormatVersion(3))
		out, err := tx.Commit(context.Background())
		require.NoError(t, err)
		return out
	}
	tt.tbl, tt.twin = up(tt.tbl), up(tt.twin)
}

// A delete readers do not apply (a misfiled one, or position deletes a
// deletion vector lacks; iceberg-go v0.7.0 writes both) is the only record
// of rows someone meant to delete. Compaction keeps it and leaves the data
// file it names alone, so that the intent can still be carried out; every
// other file is compacted, and the rows stay those readers see.
func TestCompactKeepsDeletesReadersSkip(t *testing.T) {
	cases := []struct {
		name  string
		build func(t *testing.T, tt *twinTables)
		kind  lake.DeleteIssueKind
	}{
		{
			name: "misfiled-after-partition-evolution",
			build: func(t *testing.T, tt *twinTables) {
				tt.evolveBoth(t, addIDBucket)
				tt.appendBoth(t, 5000, 100, "eu")
				tt.appendBoth(t, 5100, 100, "eu")
				tt.deleteIDsBoth(t, 5) // a row of the first file, of spec 0
			},
			kind: lake.DeleteMisfiled,
		},
		{
			name: "shadowed-by-a-vector-after-upgrade",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 5)
				tt.upgradeBoth(t)
				tt.deleteIDsBoth(t, 6) // the same file: a vector without row 5
			},
			kind: lake.DeleteShadowed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tt := newTwinTables(t, iceberg.Properties{table.PropertyFormatVersion: "2"})
			for i := range 3 {
				tt.appendBoth(t, i*100, 100, "eu")
				tt.appendBoth(t, 1000+i*100, 100, "us")
			}
			tc.build(t, tt)
			st := tt.state(t, tt.tbl)
			require.Len(t, st.DeleteIssues, 1)
			issue := st.DeleteIssues[0]
			require.Equal(t, tc.kind, issue.Kind)
			require.Len(t, issue.Targets, 1)
			held := issue.Targets[0]

			opts := rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategyBinpack}, MinInputFiles: 2, TargetFileSizeBytes: 1 << 20,
				Group: rewriter.GroupOptions{TempDir: t.TempDir()}, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			require.Len(t, plan.HeldBack, 1)
			require.Equal(t, held, plan.HeldBack[0].Path)
			require.Contains(t, plan.HeldBack[0].Reason, string(tc.kind))
			for _, g := range plan.Groups {
				require.NotContains(t, g.Paths, held)
			}
			require.NotEmpty(t, plan.Groups)
			res, err := rewriter.Compact(ctx, st, plan, opts)
			require.NoError(t, err)
			require.Empty(t, res.Skipped)
			tt.tbl = res.Table
			tt.requireSameRowsApplied(t)
			tt.requireSameRowsIceberg(t)

			after := tt.state(t, tt.tbl)
			require.Len(t, after.DeleteIssues, 1, "the delete is kept")
			require.Equal(t, issue.Delete, after.DeleteIssues[0].Delete)
			require.Equal(t, []string{held}, after.DeleteIssues[0].Targets, "the file it names is left alone")
			require.Less(t, len(after.DataFiles), len(st.DataFiles), "the rest is compacted")
		})
	}
}
