package lake_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

var day0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// morTable creates a merge-on-read table of format version v, partitioned
// by Region when partitioned.
func morTable(t *testing.T, w *testlake.Warehouse, name string, v int, partitioned bool) *table.Table {
	t.Helper()
	var spec *iceberg.PartitionSpec
	if partitioned {
		s := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		spec = &s
	}
	return w.CreateTable(t, "db", name, schema, spec, iceberg.Properties{
		table.PropertyFormatVersion: fmt.Sprint(v), table.WriteDeleteModeKey: table.WriteModeMergeOnRead}, nil)
}

func deleteIDs(t *testing.T, tbl *table.Table, lo, hi int64) *table.Table {
	t.Helper()
	tbl, err := tbl.Delete(t.Context(), iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), lo),
		iceberg.LessThanEqual(iceberg.Reference("id"), hi)), nil)
	require.NoError(t, err)
	return tbl
}

// One merge-on-read delete on a v3 table writes one Puffin file with the
// deletion vector of every data file it touches, each vector its own
// manifest entry under the file's path. Every vector is a delete: counted by
// the state, its partitions and health, which flags the table for them.
func TestLoadStateKeepsEveryDeletionVectorOfAPuffinFile(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned=%v", partitioned), func(t *testing.T) {
			w := testlake.New(t)
			tbl := morTable(t, w, "dv", 3, partitioned)
			sc := testlake.ArrowSchema(t, tbl)
			for f := range int64(24) {
				tbl = testlake.Append(t, tbl, batch(t, sc, f*10, f*10+9, []string{"eu", "us"}[f%2], day0))
			}
			// One delete of the second row of every file.
			var ids []int64
			for f := range int64(24) {
				ids = append(ids, f*10+1)
			}
			tbl, err := tbl.Delete(t.Context(), iceberg.IsIn(iceberg.Reference("id"), ids...), nil)
			require.NoError(t, err)

			st := loadState(t, w, tbl)
			require.Len(t, st.DeleteFiles, 24, "one delete per vector")
			puffins, refs := map[string]bool{}, map[string]bool{}
			for _, d := range st.DeleteFiles {
				require.Equal(t, lake.DeletionVector, d.DeleteKind)
				require.GreaterOrEqual(t, d.ContentOffset, int64(0))
				require.Positive(t, d.ContentSizeBytes)
				puffins[d.Path] = true
				refs[d.ReferencedDataFile] = true
			}
			require.Len(t, puffins, 1, "iceberg-go writes the vectors of one delete into one Puffin file")
			require.Len(t, refs, 24)
			require.Empty(t, st.DeleteIssues)
			perPartition := 0
			for _, p := range st.Partitions {
				perPartition += p.DeleteFiles
			}
			require.Equal(t, 24, perPartition)

			h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: time.Now()})
			require.NoError(t, err)
			m := h.Metrics
			require.Equal(t, 24, m.DeletionVectors)
			require.Equal(t, 1, m.DeletionVectorFiles)
			require.Equal(t, 24, m.DeleteFiles)
			require.Equal(t, summaryInt(t, st, "total-delete-files"), m.DeleteFiles, "iceberg-go's summary counts vectors too")
			require.InDelta(t, 1.0, m.DeleteToDataRatio, 1e-9)
			require.Equal(t, lake.Critical, h.Status)
			require.Contains(t, strings.Join(h.Reasons, "\n"), "delete files: 24 for 24 data files")
		})
	}
}

// Deletes readers do not apply as their writer meant are found and
// reported, with the data files they name; deletes that are fine are not.
// iceberg-go v0.7.0 writes both kinds (see docs/iceberg-go-pitfalls.md).
func TestDeleteIssues(t *testing.T) {
	cases := []struct {
		name string
		// build returns the table; it starts as three files of ten rows
		// in region eu (ids 0-29) of format version 2.
		build      func(t *testing.T, tbl *table.Table) *table.Table
		wantKind   lake.DeleteIssueKind
		wantReason string
	}{
		{
			name: "v2-position-delete-after-partition-evolution-is-misfiled",
			build: func(t *testing.T, tbl *table.Table) *table.Table {
				tbl = addIDBucket(t, tbl)
				return deleteIDs(t, tbl, 5, 5) // a row of a file of the old spec
			},
			wantKind:   lake.DeleteMisfiled,
			wantReason: "is filed under partition spec=1/region=eu/id_bucket=null, but deletes rows of 1 data files of other partitions",
		},
		{
			name: "v3-vector-after-upgrade-omits-the-position-delete",
			build: func(t *testing.T, tbl *table.Table) *table.Table {
				tbl = upgradeTo3(t, deleteIDs(t, tbl, 5, 5))
				return deleteIDs(t, tbl, 6, 6) // the same file: a vector without row 5
			},
			wantKind:   lake.DeleteShadowed,
			wantReason: "deletes 1 rows of",
		},
		{
			name: "v3-vector-that-holds-the-position-delete",
			build: func(t *testing.T, tbl *table.Table) *table.Table {
				tbl = upgradeTo3(t, deleteIDs(t, tbl, 5, 5))
				tbl = deleteIDs(t, tbl, 6, 6)
				// Deleting row 5 again puts it into the vector: the
				// position delete is no longer shadowed.
				return deleteIDs(t, tbl, 5, 5)
			},
		},
		{
			name: "v2-position-delete-in-its-partition",
			build: func(t *testing.T, tbl *table.Table) *table.Table {
				return deleteIDs(t, tbl, 5, 5)
			},
		},
		{
			name: "v3-vector-after-partition-evolution",
			build: func(t *testing.T, tbl *table.Table) *table.Table {
				tbl = upgradeTo3(t, tbl)
				tbl = addIDBucket(t, tbl)
				return deleteIDs(t, tbl, 5, 5)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := testlake.New(t)
			tbl := morTable(t, w, "t", 2, true)
			sc := testlake.ArrowSchema(t, tbl)
			for f := range int64(3) {
				tbl = testlake.Append(t, tbl, batch(t, sc, f*10, f*10+9, "eu", day0))
			}
			tbl = tc.build(t, tbl)
			st := loadState(t, w, tbl)
			h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: time.Now()})
			require.NoError(t, err)
			if tc.wantKind == "" {
				require.Empty(t, st.DeleteIssues)
				require.Empty(t, st.HeldBack())
				require.Zero(t, h.Metrics.MisfiledDeletes+h.Metrics.ShadowedDeletes)
				return
			}
			require.Len(t, st.DeleteIssues, 1)
			is := st.DeleteIssues[0]
			require.Equal(t, tc.wantKind, is.Kind)
			require.Contains(t, is.Reason, tc.wantReason)
			// The file holding row 5, of the table's first append.
			require.Len(t, is.Targets, 1)
			var target lake.File
			for _, f := range st.DataFiles {
				if f.Path == is.Targets[0] {
					target = f
				}
			}
			require.Equal(t, int64(10), target.Records)
			require.Equal(t, "region=eu", target.PartitionKey)
			require.Contains(t, st.HeldBack(), target.Path)
			require.NotNil(t, st.DeleteIssue(is.Delete))

			require.Equal(t, lake.Critical, h.Status)
			require.Equal(t, 1, h.Metrics.HeldBackDataFiles)
			require.Equal(t, 1, h.Metrics.MisfiledDeletes+h.Metrics.ShadowedDeletes)
			require.Contains(t, strings.Join(h.Reasons, "\n"), "critical: "+string(tc.wantKind)+" deletes: 1 ")
		})
	}
}

// addIDBucket evolves the partition spec: bucket(4, id) is added.
func addIDBucket(t *testing.T, tbl *table.Table) *table.Table {
	t.Helper()
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpdateSpec(true).AddField("id", iceberg.BucketTransform{NumBuckets: 4}, "id_bucket").Commit())
	out, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return out
}

func upgradeTo3(t *testing.T, tbl *table.Table) *table.Table {
	t.Helper()
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpgradeFormatVersion(3))
	out, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return out
}
