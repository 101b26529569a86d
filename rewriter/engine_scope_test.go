package rewriter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// scopeSchema has a column of each source type the scope tests partition by.
var scopeSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Date},
	iceberg.NestedField{ID: 4, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 5, Name: "local_ts", Type: iceberg.PrimitiveTypes.Timestamp},
)

// scopeTime is the instant of every row but the null-region one: 2026-11-01
// 13:45:10 UTC.
var scopeTime = time.Date(2026, 11, 1, 13, 45, 10, 0, time.UTC)

// scopeTable creates a table partitioned by fields and appends three rows:
// two in region "eu" and one with a null region, all at scopeTime.
func scopeTable(t *testing.T, cat *sqlcat.Catalog, name string, fields ...iceberg.PartitionField) *lake.State {
	t.Helper()
	tbl := createScopeTable(t, cat, name, fields...)
	tbl = testlake.Append(t, tbl, scopeRows(t, tbl, 0))
	return loadScopeState(t, name, tbl)
}

// createScopeTable creates db.<name> in cat (the rewriter tests' catalog,
// closed with the test) partitioned by fields.
func createScopeTable(t *testing.T, cat *sqlcat.Catalog, name string, fields ...iceberg.PartitionField) *table.Table {
	t.Helper()
	spec := iceberg.NewPartitionSpec(fields...)
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"db", name}, scopeSchema, catalog.WithPartitionSpec(&spec))
	require.NoError(t, err)
	return tbl
}

func scopeRows(t *testing.T, tbl *table.Table, start int64) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for i, region := range []string{"eu", "eu", ""} {
		b.Field(0).(*array.Int64Builder).Append(start + int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(scopeTime.UnixMicro()))
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32FromTime(scopeTime))
		if region == "" {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(region)
		}
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(scopeTime.UnixMicro()))
	}
	return b.NewRecordBatch()
}

func loadScopeState(t *testing.T, name string, tbl *table.Table) *lake.State {
	t.Helper()
	st, err := lake.LoadState(t.Context(), lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: name}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

func field(src, id int, name string, tr iceberg.Transform) iceberg.PartitionField {
	return iceberg.PartitionField{SourceIDs: []int{src}, FieldID: id, Name: name, Transform: tr}
}

func keys(st *lake.State) []string {
	var out []string
	for _, p := range st.Partitions {
		out = append(out, p.Key)
	}
	return out
}

func TestPartitionScopesStatesEachTransformOnItsSourceColumn(t *testing.T) {
	cat := newCatalog(t)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	hour := time.Date(2026, 11, 1, 13, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		fields []iceberg.PartitionField
		key    string
		want   []rewriter.PartitionValue
	}{
		{"identity", []iceberg.PartitionField{field(4, 1000, "region", iceberg.IdentityTransform{})}, "region=eu",
			[]rewriter.PartitionValue{{Column: "region", SourceType: "string", Transform: "identity", Value: "eu"}}},
		{"identity_null", []iceberg.PartitionField{field(4, 1000, "region", iceberg.IdentityTransform{})}, "region=null",
			[]rewriter.PartitionValue{{Column: "region", SourceType: "string", Transform: "identity", Null: true}}},
		{"day_timestamptz", []iceberg.PartitionField{field(2, 1000, "ts_day", iceberg.DayTransform{})}, "ts_day=2026-11-01",
			[]rewriter.PartitionValue{{Column: "ts", SourceType: "timestamptz", Transform: "day", Lower: day, Upper: day.AddDate(0, 0, 1)}}},
		{"hour_timestamptz", []iceberg.PartitionField{field(2, 1000, "ts_hour", iceberg.HourTransform{})}, "ts_hour=2026-11-01-13",
			[]rewriter.PartitionValue{{Column: "ts", SourceType: "timestamptz", Transform: "hour", Lower: hour, Upper: hour.Add(time.Hour)}}},
		{"month_timestamp", []iceberg.PartitionField{field(5, 1000, "local_ts_month", iceberg.MonthTransform{})}, "local_ts_month=2026-11",
			[]rewriter.PartitionValue{{Column: "local_ts", SourceType: "timestamp", Transform: "month", Lower: day, Upper: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}},
		{"year_date", []iceberg.PartitionField{field(3, 1000, "d_year", iceberg.YearTransform{})}, "d_year=2026",
			[]rewriter.PartitionValue{{Column: "d", SourceType: "date", Transform: "year", Lower: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Upper: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{"day_date", []iceberg.PartitionField{field(3, 1000, "d_day", iceberg.DayTransform{})}, "d_day=2026-11-01",
			[]rewriter.PartitionValue{{Column: "d", SourceType: "date", Transform: "day", Lower: day, Upper: day.AddDate(0, 0, 1)}}},
		{"truncate_long", []iceberg.PartitionField{field(1, 1000, "id_trunc", iceberg.TruncateTransform{Width: 10})}, "id_trunc=0",
			[]rewriter.PartitionValue{{Column: "id", SourceType: "long", Transform: "truncate[10]", Value: int64(0)}}},
		{"day_and_identity_void_left_out", []iceberg.PartitionField{
			field(2, 1000, "ts_day", iceberg.DayTransform{}),
			field(4, 1001, "region", iceberg.IdentityTransform{}),
			field(1, 1002, "id_void", iceberg.VoidTransform{}),
		}, "ts_day=2026-11-01/region=eu/id_void=null", []rewriter.PartitionValue{
			{Column: "ts", SourceType: "timestamptz", Transform: "day", Lower: day, Upper: day.AddDate(0, 0, 1)},
			{Column: "region", SourceType: "string", Transform: "identity", Value: "eu"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := scopeTable(t, cat, tc.name, tc.fields...)
			require.Contains(t, keys(st), tc.key)
			got, err := rewriter.PartitionScopes(st, []string{tc.key, tc.key})
			require.NoError(t, err)
			require.Equal(t, []rewriter.PartitionScope{{Key: tc.key, Fields: tc.want}}, got)
		})
	}
}

func TestPartitionScopesRefusesWhatNoPredicateSelects(t *testing.T) {
	cat := newCatalog(t)
	cases := []struct {
		name   string
		fields []iceberg.PartitionField
		want   string
	}{
		{"bucket", []iceberg.PartitionField{field(4, 1000, "region_bucket", iceberg.BucketTransform{NumBuckets: 4})}, "bucket[4]"},
		{"truncate_string", []iceberg.PartitionField{field(4, 1000, "region_trunc", iceberg.TruncateTransform{Width: 1})}, "truncate[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := scopeTable(t, cat, tc.name, tc.fields...)
			ks := keys(st)
			require.NotEmpty(t, ks)
			_, err := rewriter.PartitionScopes(st, ks)
			require.ErrorIs(t, err, rewriter.ErrScopeUnsupported)
			require.ErrorContains(t, err, ks[0])
			require.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("no_such_partition", func(t *testing.T) {
		st := scopeTable(t, cat, "missing", field(4, 1000, "region", iceberg.IdentityTransform{}))
		_, err := rewriter.PartitionScopes(st, []string{"region=nowhere", "region=eu"})
		require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
		require.ErrorContains(t, err, "region=nowhere")
	})
}

func TestPartitionScopesRefusesAnOlderSpecWhoseFieldsDiffer(t *testing.T) {
	cat := newCatalog(t)
	tbl := createScopeTable(t, cat, "evolved", field(4, 1000, "region", iceberg.IdentityTransform{}))
	tbl = testlake.Append(t, tbl, scopeRows(t, tbl, 0))
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpdateSpec(false).AddField("ts", iceberg.DayTransform{}, "ts_day").Commit())
	tbl, err := tx.Commit(t.Context())
	require.NoError(t, err)
	tbl = testlake.Append(t, tbl, scopeRows(t, tbl, 10))
	st := loadScopeState(t, "evolved", tbl)

	ks := keys(st)
	var old, cur string
	for _, k := range ks {
		if k == "region=eu" {
			old = k
		}
		if k == "spec=1/region=eu/ts_day=2026-11-01" {
			cur = k
		}
	}
	require.NotEmpty(t, old, "keys: %v", ks)
	require.NotEmpty(t, cur, "keys: %v", ks)

	got, err := rewriter.PartitionScopes(st, []string{cur})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Len(t, got[0].Fields, 2)

	_, err = rewriter.PartitionScopes(st, []string{old, cur})
	require.ErrorIs(t, err, rewriter.ErrScopeUnsupported)
	require.ErrorContains(t, err, `"region=eu"`)
	require.ErrorContains(t, err, "spec 0")
	require.False(t, errors.Is(err, rewriter.ErrInvalidOptions))
}
