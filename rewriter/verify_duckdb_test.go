//go:build duckdb

package rewriter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// A merge-on-read table written by iceberg-go, whose position deletes apply
// to the inputs, compacted into every layout and judged by DuckDB reading
// the Parquet files itself: the live rows before and after are the same
// multiset. The string and binary values grow towards the end of each file,
// so that arrow-go's Take kernel (iceberg-go applies position deletes with
// it) underestimates its output and writes past its first reservation: the
// case that came out as NUL bytes on a partitioned table (and panicked on an
// unpartitioned one) while buffers had spare capacity.
func TestCompactWithPositionDeletesKeepsContent(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		for _, spec := range []string{"binpack", "sort(id)", "zorder(id, n)", "hilbert(id, n)"} {
			t.Run(fmt.Sprintf("partitioned=%v/%s", partitioned, spec), func(t *testing.T) {
				tbl, ident := deletesFixture(t, partitioned)
				before := rowSum(t, tbl)
				st, err := lake.LoadState(t.Context(), ident, tbl, lake.LoadOptions{})
				require.NoError(t, err)
				require.NotEmpty(t, st.DeleteFiles, "the fixture has live position deletes")
				res := compact(t, st, spec)
				after := rowSum(t, res.Table)
				require.Equal(t, before, after, "DuckDB reads other rows after the compaction")
				require.Equal(t, int64(29_987), after.Rows)
			})
		}
	}
}

// deletesFixture is a merge-on-read table of 6 appends of 5,000 rows (one
// data file each) with 13 rows deleted across the first two files: string
// and binary columns whose values grow within each file.
func deletesFixture(t *testing.T, partitioned bool) (*table.Table, lake.Ident) {
	t.Helper()
	w := testlake.New(t)
	closeCatalog(t, w)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
	)
	var spec *iceberg.PartitionSpec
	if partitioned {
		s := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		spec = &s
	}
	tbl := w.CreateTable(t, "db", "t", sc, spec, iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}, nil)
	asc := testlake.ArrowSchema(t, tbl)
	for f := range 6 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		for i := f * 5000; i < (f+1)*5000; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("eu")
			if i%97 == 5 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("value-%08d-%s", i, strings.Repeat("z", (i%5000)/100)))
			}
			b.Field(3).(*array.BinaryBuilder).Append([]byte(strings.Repeat("\x00\xff", 1+(i%5000)/250)))
			b.Field(4).(*array.Int32Builder).Append(int32(i * 7 % 1009))
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	tbl, err := tbl.Delete(t.Context(), iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(4990)),
		iceberg.LessThan(iceberg.Reference("id"), int64(5003))), nil)
	require.NoError(t, err)
	return tbl, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}
}

// Column names as Iceberg allows them — a dash, a space, a dot, a quote,
// non-ASCII, and the same in a struct's fields — compact into every layout:
// iceberg-go writes such a column to Parquet under a Parquet-safe name
// (order-id as order_x2Did), the rewriter matches columns by field id, not
// by name, and writes them as iceberg-go does. DuckDB reads the same rows.
func TestCompactColumnNamesAsIcebergAllowsThem(t *testing.T) {
	for _, spec := range []string{"binpack", `sort("order-id")`, `zorder("order-id", "a.b")`, `hilbert("first name", "order-id")`} {
		t.Run(spec, func(t *testing.T) {
			w := testlake.New(t)
			closeCatalog(t, w)
			sc := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "order-id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "first name", Type: iceberg.PrimitiveTypes.String},
				iceberg.NestedField{ID: 3, Name: "a.b", Type: iceberg.PrimitiveTypes.Int32},
				iceberg.NestedField{ID: 4, Name: `say "hi"`, Type: iceberg.PrimitiveTypes.String},
				iceberg.NestedField{ID: 5, Name: "prénom", Type: iceberg.PrimitiveTypes.String},
				iceberg.NestedField{ID: 6, Name: "meta.data", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
					{ID: 7, Name: "x-y", Type: iceberg.PrimitiveTypes.Int64},
					{ID: 8, Name: "z z", Type: iceberg.PrimitiveTypes.String},
				}}},
			)
			tbl := w.CreateTable(t, "db", "t", sc, nil, nil, nil)
			asc := testlake.ArrowSchema(t, tbl)
			for f := range 6 {
				b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
				for i := f * 500; i < (f+1)*500; i++ {
					b.Field(0).(*array.Int64Builder).Append(int64(i * 7919 % 3000))
					b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name %d", i%41))
					b.Field(2).(*array.Int32Builder).Append(int32(i % 13))
					b.Field(3).(*array.StringBuilder).Append(`"` + strings.Repeat("q", i%5) + `"`)
					b.Field(4).(*array.StringBuilder).Append("é" + fmt.Sprint(i))
					sb := b.Field(5).(*array.StructBuilder)
					sb.Append(true)
					sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
					sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprint(i % 3))
				}
				rec := b.NewRecordBatch()
				b.Release()
				tbl = testlake.Append(t, tbl, rec)
				rec.Release()
			}
			before := rowSum(t, tbl)
			st, err := lake.LoadState(t.Context(), lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, tbl, lake.LoadOptions{})
			require.NoError(t, err)
			res := compact(t, st, spec)
			require.Len(t, res.Commits, 1)
			require.Equal(t, before, rowSum(t, res.Table), "DuckDB reads other rows after the compaction")
			after, err := lake.LoadState(t.Context(), st.Ident, res.Table, lake.LoadOptions{})
			require.NoError(t, err)
			require.Len(t, after.DataFiles, 1)
			// Column statistics are kept by field id: the bounds of
			// "order-id" are those of its values.
			f := after.DataFiles[0]
			require.Equal(t, int64(0), f.Lower[1].(iceberg.TypedLiteral[int64]).Value())
			require.Equal(t, int64(2999), f.Upper[1].(iceberg.TypedLiteral[int64]).Value())
			if strings.HasPrefix(spec, "sort(") {
				fio, err := res.Table.FS(t.Context())
				require.NoError(t, err)
				n, err := oracle.OrderViolations(t.Context(), fio, []string{f.Path}, "order_x2Did")
				require.NoError(t, err)
				require.Zero(t, n, "rows out of order")
			}
		})
	}
}
