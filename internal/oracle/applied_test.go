package oracle_test

import (
	"fmt"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// versionedTable creates a merge-on-read table of format version v.
func versionedTable(t *testing.T, cat *sqlcat.Catalog, name string, v int) *table.Table {
	t.Helper()
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"db", name}, tblSchema, catalog.WithProperties(iceberg.Properties{
		table.PropertyFormatVersion: fmt.Sprint(v), table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
	require.NoError(t, err)
	return tbl
}

func deleteRange(t *testing.T, tbl *table.Table, lo, hi int64) *table.Table {
	t.Helper()
	tbl, err := tbl.Delete(t.Context(), iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), lo),
		iceberg.LessThan(iceberg.Reference("id"), hi)), nil)
	require.NoError(t, err)
	return tbl
}

// eqDelete commits an equality delete on id of ids.
func eqDelete(t *testing.T, tbl *table.Table, ids ...int64) *table.Table {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var records iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	tx := tbl.NewTransaction()
	require.NoError(t, tx.CommitEqualityDeletes(t.Context(), []int{1}, records, nil))
	out, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return out
}

// upgrade moves tbl to format version 3.
func upgrade(t *testing.T, tbl *table.Table) *table.Table {
	t.Helper()
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpgradeFormatVersion(3))
	out, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return out
}

// without is ids less drop.
func without(ids []int64, drop ...int64) []int64 {
	gone := map[int64]bool{}
	for _, d := range drop {
		gone[d] = true
	}
	var out []int64
	for _, id := range ids {
		if !gone[id] {
			out = append(out, id)
		}
	}
	return out
}

// ChecksumApplied applies every kind of delete itself, by the spec's rules:
// its sum of a table with deletes is the sum of a table that never had the
// deleted rows, and iceberg-go's scan's sum of the same table.
func TestChecksumAppliedAppliesDeletes(t *testing.T) {
	all := seq(0, 300)
	cases := []struct {
		name    string
		version int
		// change deletes rows from a table of all, three files of 100 rows
		// each, and returns the ids that must be left.
		change func(t *testing.T, tbl *table.Table) (*table.Table, []int64)
	}{
		{name: "v2-position-deletes", version: 2, change: func(t *testing.T, tbl *table.Table) (*table.Table, []int64) {
			return deleteRange(t, deleteRange(t, tbl, 7, 8), 150, 260), without(all, append([]int64{7}, seq(150, 260)...)...)
		}},
		{name: "v3-deletion-vectors-of-three-files-in-one-puffin-file", version: 3, change: func(t *testing.T, tbl *table.Table) (*table.Table, []int64) {
			// One delete, three files: one Puffin file, three vectors.
			tbl = deleteRange(t, tbl, 90, 210)
			// A second delete in a file with a vector: merged into it.
			return deleteRange(t, tbl, 30, 31), without(all, append([]int64{30}, seq(90, 210)...)...)
		}},
		{name: "v2-equality-deletes", version: 2, change: func(t *testing.T, tbl *table.Table) (*table.Table, []int64) {
			return eqDelete(t, tbl, 3, 4, 250), without(all, 3, 4, 250)
		}},
		{name: "v2-position-delete-then-v3-vector-that-omits-it", version: 2, change: func(t *testing.T, tbl *table.Table) (*table.Table, []int64) {
			// iceberg-go v0.7.0 writes the vector of file 0 without the
			// earlier position delete of id 7; by the spec a reader then
			// skips that position delete, so id 7 is visible again.
			tbl = upgrade(t, deleteRange(t, tbl, 7, 8))
			return deleteRange(t, tbl, 8, 9), without(all, 8)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat := newCatalog(t)
			ctx := t.Context()
			tbl := versionedTable(t, cat, "t", tc.version)
			for f := range int64(3) {
				tbl = appendIDs(t, tbl, seq(f*100, f*100+100)...)
			}
			tbl, left := tc.change(t, tbl)
			twin := appendIDs(t, versionedTable(t, cat, "twin", tc.version), left...)

			want, err := oracle.ChecksumApplied(ctx, twin)
			require.NoError(t, err)
			require.Equal(t, int64(len(left)), want.Rows)
			got, err := oracle.ChecksumApplied(ctx, tbl)
			require.NoError(t, err)
			require.Equal(t, want, got, "the deletes applied by the oracle")
			scanned, err := oracle.ChecksumIceberg(ctx, tbl)
			require.NoError(t, err)
			require.Equal(t, scanned, got, "the oracle and iceberg-go's scan read other rows")
			requireDuckDBApplies(t, tbl, twin)
		})
	}
}
