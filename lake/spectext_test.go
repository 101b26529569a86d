package lake_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

func TestSpecAndSortOrderText(t *testing.T) {
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "region", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 16}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1002, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1003, Name: "region_trunc", Transform: iceberg.TruncateTransform{Width: 2}},
	)
	require.Equal(t, "day(ts), bucket(16, id), region, truncate(2, region)", lake.SpecText(spec, schema))
	require.Equal(t, "unpartitioned", lake.SpecText(*iceberg.UnpartitionedSpec, schema))

	order, err := table.NewSortOrder(1, []table.SortField{
		{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast},
		{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
		{SourceIDs: []int{3}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsLast},
	})
	require.NoError(t, err)
	require.Equal(t, "ts desc, id, region nulls last", lake.SortOrderText(order, schema))
	require.Equal(t, "unsorted", lake.SortOrderText(table.UnsortedSortOrder, schema))
}
