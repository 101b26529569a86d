package rewriter_test

import (
	"context"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/rewriter"
)

// eqDeleteFresh commits an equality delete on id of the given ids, all in
// region, to the newest version of tbl.
func eqDeleteFresh(t testing.TB, tbl *table.Table, region string, ids ...int64) *table.Table {
	t.Helper()
	ctx := context.Background()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(ctx))
	full := testlake.ArrowSchema(t, &fresh)
	sc := arrow.NewSchema(full.Fields()[:2], nil) // id, region
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(region)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var records iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	tx := fresh.NewTransaction()
	require.NoError(t, tx.CommitEqualityDeletes(ctx, []int{1}, records, nil))
	out, err := tx.Commit(ctx)
	require.NoError(t, err)
	return out
}

// icebergSums compares the table under test with its twin through
// iceberg-go's scan, which applies equality deletes (the DuckDB path does
// not).
func (tt *twinTables) requireSameRowsIceberg(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	got, err := oracle.ChecksumIceberg(ctx, tt.tbl)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(ctx, tt.twin)
	require.NoError(t, err)
	require.Equal(t, want, got, "rows of the maintained table differ from its twin")
}

func TestCommitGroupsEqualityDeletes(t *testing.T) {
	cases := []struct {
		name string
		// atBase is committed before the groups are read, concurrent
		// before the first catalog commit.
		atBase, concurrent func(t *testing.T, tt *twinTables)
		wantSkipped        bool
		wantRemoved        int
	}{
		{
			name: "existing-equality-delete-becomes-dead",
			atBase: func(t *testing.T, tt *twinTables) {
				tt.tbl = eqDeleteFresh(t, tt.tbl, "eu", 3, 4, 250)
				tt.twin = eqDeleteFresh(t, tt.twin, "eu", 3, 4, 250)
			},
			wantRemoved: 1,
		},
		{
			name: "concurrent-equality-delete-in-the-partition",
			concurrent: func(t *testing.T, tt *twinTables) {
				tt.tbl = eqDeleteFresh(t, tt.tbl, "eu", 7)
				tt.twin = eqDeleteFresh(t, tt.twin, "eu", 7)
			},
			wantSkipped: true,
		},
		{
			name: "concurrent-equality-delete-elsewhere",
			concurrent: func(t *testing.T, tt *twinTables) {
				tt.tbl = eqDeleteFresh(t, tt.tbl, "ap", 1007)
				tt.twin = eqDeleteFresh(t, tt.twin, "ap", 1007)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tt := newTwinTables(t, nil)
			for i := range 3 {
				tt.appendBoth(t, i*100, 100, "eu")
				tt.appendBoth(t, 1000+i*100, 100, "ap")
			}
			if tc.atBase != nil {
				tc.atBase(t, tt)
			}
			base := tt.state(t, tt.tbl)
			groups := rewriteGroups(t, base, "eu")
			fired := false
			rep, err := rewriter.CommitGroups(ctx, base, groups, rewriter.CommitOptions{
				Sleep: instantSleep,
				BeforeCommit: func(context.Context, int, int) error {
					if !fired && tc.concurrent != nil {
						tc.concurrent(t, tt)
					}
					fired = true
					return nil
				},
			})
			require.NoError(t, err)
			tt.tbl = rep.Table
			if tc.wantSkipped {
				require.Empty(t, rep.Commits)
				require.Len(t, rep.Skipped, 1)
				require.ErrorIs(t, rep.Skipped[0].Err, rewriter.ErrStaleGroup)
			} else {
				require.Len(t, rep.Commits, 1)
				require.Equal(t, tc.wantRemoved, rep.Commits[0].DeletesRemoved)
			}
			after := tt.state(t, tt.tbl)
			if tc.wantRemoved > 0 {
				require.Empty(t, after.DeleteFiles, "the dead equality delete went with the rewrite")
			}
			tt.requireSameRowsIceberg(t)
		})
	}
}
