package rewriter_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// deleteKinds counts st's deletes by kind.
func deleteKinds(st *lake.State) map[lake.DeleteKind]int {
	out := map[lake.DeleteKind]int{}
	for _, d := range st.DeleteFiles {
		out[d.DeleteKind]++
	}
	return out
}

// requireSameRowsAllDeletes compares the maintained table with its twin by
// the oracle that applies every kind of delete itself, and by iceberg-go's
// scan.
func (tt *twinTables) requireSameRowsAllDeletes(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	got, err := oracle.ChecksumApplied(ctx, tt.tbl)
	require.NoError(t, err)
	want, err := oracle.ChecksumApplied(ctx, tt.twin)
	require.NoError(t, err)
	require.Equal(t, want, got, "rows differ from the twin's, deletes applied by the oracle")
	tt.requireSameRowsIceberg(t)
}

// Delete maintenance on tables iceberg-go wrote, of every shape: each case
// builds the deletes on both twins, plans and runs the step on one, and
// checks the actions planned, the deletes left, that the run did what the
// plan said, the format version, and the live rows by the oracle.
func TestRewriteDeletes(t *testing.T) {
	cases := []struct {
		name    string
		version string
		build   func(t *testing.T, tt *twinTables)
		kinds   []string // the actions planned, in order
		after   map[lake.DeleteKind]int
		kept    int
	}{
		{
			name: "v1-nothing-to-do", version: "1",
			build: func(t *testing.T, tt *twinTables) {},
			after: map[lake.DeleteKind]int{},
		},
		{
			name: "v2-merge-position-deletes", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 3)
				tt.deleteIDsBoth(t, 104)
				tt.deleteIDsBoth(t, 7, 205)
				tt.deleteIDsBoth(t, 1003) // us: one file, not merged
			},
			kinds: []string{rewriter.DeleteActionMerge},
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 2},
		},
		{
			name: "v2-drop-dangling", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 3)
				// A copy-on-write delete of all of the first file's rows
				// removes the file; its position delete names nothing live.
				for _, tb := range []**table.Table{&tt.tbl, &tt.twin} {
					fresh := **tb
					require.NoError(t, fresh.Refresh(context.Background()))
					out, err := fresh.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("id"), int64(100)),
						iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeCopyOnWrite})
					require.NoError(t, err)
					*tb = out
				}
			},
			kinds: []string{rewriter.DeleteActionDrop},
			after: map[lake.DeleteKind]int{},
		},
		{
			name: "v2-apply-equality-deletes", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				var ids []int64
				for i := range int64(120) {
					ids = append(ids, i*2)
				}
				tt.tbl = eqDeleteFresh(t, tt.tbl, "eu", ids...)
				tt.twin = eqDeleteFresh(t, tt.twin, "eu", ids...)
				tt.tbl = eqDeleteFresh(t, tt.tbl, "us", 1001)
				tt.twin = eqDeleteFresh(t, tt.twin, "us", 1001)
			},
			kinds: []string{rewriter.DeleteActionApply},
			after: map[lake.DeleteKind]int{lake.EqualityDeletes: 1}, // us: under the ratio
		},
		{
			name: "v2-upgraded-to-v3-convert-to-vectors", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 3, 104)
				tt.deleteIDsBoth(t, 1003)
				tt.upgradeBoth(t)
				tt.deleteIDsBoth(t, 207) // a vector of another file
			},
			kinds: []string{rewriter.DeleteActionConvert, rewriter.DeleteActionConvert},
			after: map[lake.DeleteKind]int{lake.DeletionVector: 4},
		},
		{
			name: "v2-upgraded-to-v3-merged-with-a-vector", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 3)
				tt.upgradeBoth(t)
				tt.deleteIDsBoth(t, 3, 4) // the vector holds row 3 again: nothing shadowed
			},
			kinds: []string{rewriter.DeleteActionConvert},
			after: map[lake.DeleteKind]int{lake.DeletionVector: 1},
		},
		{
			name: "v3-vectors-only", version: "3",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 3, 104, 1003)
			},
			after: map[lake.DeleteKind]int{lake.DeletionVector: 3},
		},
		{
			name: "v2-misfiled-after-spec-evolution-kept", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				tt.evolveBoth(t, addIDBucket)
				tt.deleteIDsBoth(t, 5)
				tt.deleteIDsBoth(t, 1005)
			},
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 2},
			kept:  2,
		},
		{
			name: "v2-upgraded-shadowed-kept", version: "2",
			build: func(t *testing.T, tt *twinTables) {
				tt.deleteIDsBoth(t, 5)
				tt.upgradeBoth(t)
				tt.deleteIDsBoth(t, 6)
			},
			after: map[lake.DeleteKind]int{lake.PositionDeletes: 1, lake.DeletionVector: 1},
			kept:  1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			props := iceberg.Properties{table.PropertyFormatVersion: tc.version}
			if tc.version == "1" {
				props[table.WriteDeleteModeKey] = table.WriteModeCopyOnWrite
			}
			tt := newTwinTables(t, props)
			for i := range 3 {
				tt.appendBoth(t, i*100, 100, "eu")
				tt.appendBoth(t, 1000+i*100, 100, "us")
			}
			tc.build(t, tt)
			st := tt.state(t, tt.tbl)
			version := st.Metadata.Version()
			opts := rewriter.DeleteRewriteOptions{Compact: rewriter.CompactOptions{
				Group: rewriter.GroupOptions{TempDir: t.TempDir()}, Commit: rewriter.CommitOptions{Sleep: instantSleep}}}
			plan, err := rewriter.PlanDeleteRewrite(ctx, st, opts)
			require.NoError(t, err)
			var kinds []string
			for _, a := range plan.Actions {
				kinds = append(kinds, a.Kind)
			}
			require.Equal(t, tc.kinds, kinds, "%+v", plan.Actions)
			require.Len(t, plan.Kept, tc.kept)

			res, err := rewriter.RewriteDeletes(ctx, st, plan, opts)
			require.NoError(t, err)
			require.Empty(t, res.Skipped)
			require.Equal(t, plan.DeletesRemoved, res.DeletesRemoved, "the run removes what the plan said")
			if len(plan.Actions) == 0 {
				require.Zero(t, res.SnapshotID, "nothing to do commits nothing")
			}
			tt.tbl = res.Table
			after := tt.state(t, tt.tbl)
			require.Equal(t, tc.after, deleteKinds(after))
			require.Equal(t, version, after.Metadata.Version(), "the format version is kept")
			require.Len(t, after.DeleteIssues, tc.kept, "deletes readers skip are kept")
			tt.requireSameRowsAllDeletes(t)
		})
	}
}
