package control_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// evolvedTable is a table of format version version, partitioned by
// identity(region) for six small files per region, then by
// identity(region), bucket(4, id) for two more: iceberg-go writes every
// file.
func evolvedTable(t *testing.T, version int) (*testlake.Warehouse, lake.Ident, *store.Store) {
	t.Helper()
	ctx := t.Context()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl := w.CreateTable(t, "db", "t", schema, &spec, iceberg.Properties{table.PropertyFormatVersion: fmt.Sprint(version)}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	add := func(from int) {
		for _, region := range []string{"eu", "us"} {
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for j := range 50 {
				b.Field(0).(*array.Int64Builder).Append(int64(from + j))
				b.Field(1).(*array.StringBuilder).Append(region)
			}
			rec := b.NewRecordBatch()
			b.Release()
			tbl = testlake.Append(t, tbl, rec)
			rec.Release()
		}
	}
	for i := range 6 {
		add(i * 100)
	}
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpdateSpec(true).AddField("id", iceberg.BucketTransform{NumBuckets: 4}, "id_bucket").Commit())
	tbl, err := tx.Commit(ctx)
	require.NoError(t, err)
	add(1000)
	add(1100)
	st, err := store.Open(ctx, ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return w, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, st
}

// TestOptimizeEvolvedPartitionSpec: on a table whose partition spec
// evolved, the dry run plans the old spec's partitions, the run compacts
// exactly those groups into the current spec and goes on to its manifest
// step, and an independent read finds every row; on v1, v2 and v3, with
// the format version unchanged.
func TestOptimizeEvolvedPartitionSpec(t *testing.T) {
	for _, version := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			ctx := t.Context()
			w, id, st := evolvedTable(t, version)
			tbl, err := lake.LoadTable(ctx, w.Catalog, id)
			require.NoError(t, err)
			want, err := oracle.ChecksumIceberg(ctx, tbl)
			require.NoError(t, err)
			svc := serviceOf(t, w, st, "default:\n  triggers:\n    small_file_ratio: 0.1\n    manifests_per_1k_files: 1\n")

			dry, err := svc.DryRun(ctx, control.Request{Table: id})
			require.NoError(t, err)
			var planned []string
			for _, s := range dry.Steps {
				if s.Compact != nil {
					for _, g := range s.Compact.Groups {
						planned = append(planned, g.Partition)
					}
				}
			}
			require.Contains(t, planned, "region=eu", "the old spec's partitions are planned: %q", planned)
			require.Contains(t, planned, "region=us")

			res, err := svc.Run(ctx, control.Request{Table: id})
			require.NoError(t, err)
			require.Equal(t, control.StatusDone, res.Run.Status)
			steps := stepsOf(res.Run)
			compact := steps[control.StepCompact]
			require.Equal(t, control.StatusDone, compact.Status, compact.Error)
			require.NotNil(t, compact.Report.Compact)
			var ran []string
			for _, c := range compact.Report.Compact.Commits {
				ran = append(ran, c.Groups...)
			}
			require.ElementsMatch(t, planned, ran, "the run commits the groups its dry run planned")
			require.Equal(t, control.StatusDone, steps[control.StepManifests].Status, "the run reaches its manifest step")

			tbl, err = lake.LoadTable(ctx, w.Catalog, id)
			require.NoError(t, err)
			got, err := oracle.ChecksumIceberg(ctx, tbl)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, version, tbl.Metadata().Version())
			cur := int32(tbl.Metadata().DefaultPartitionSpec())
			for _, f := range dataFiles(t, tbl) {
				require.Equal(t, cur, f.SpecID, "%s is of an old spec", f.Path)
			}
		})
	}
}
