package control_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

var measureDay0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// measureTable is a day(ts)-partitioned table of 10 commits over 5 days,
// with nullable columns, and a copy-on-write delete on top.
func measureTable(t *testing.T) (lake.Ident, *table.Table) {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 4, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl := w.CreateTable(t, "db", "m", schema, &spec, iceberg.Properties{"format-version": "2"}, nil)
	regions := []string{"eu", "us", "apac"}
	for c := range 10 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
		for j := range 200 {
			id := int64(c*200 + j)
			b.Field(0).(*array.Int64Builder).Append(id)
			if c%3 == 0 && j%5 == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(regions[(c+j/70)%3])
			}
			ts, err := arrow.TimestampFromTime(measureDay0.Add(time.Duration((c+j/100)%5)*24*time.Hour+time.Duration(j)*time.Minute), arrow.Microsecond)
			require.NoError(t, err)
			b.Field(2).(*array.TimestampBuilder).Append(ts)
			if c%2 == 1 {
				b.Field(3).AppendNull()
			} else {
				b.Field(3).(*array.Int64Builder).Append(id % 37)
			}
		}
		rec := b.NewRecordBatch()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
		b.Release()
	}
	tbl, err := tbl.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("id"), int64(150)), nil)
	require.NoError(t, err)
	return lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "m"}, tbl
}

// randWhere draws a WHERE clause: comparisons, BETWEEN, IN, NOT IN, IS
// [NOT] NULL and LIKE prefixes on partition (ts) and other columns, under
// AND, OR and NOT.
func randWhere(r *rand.Rand, depth int) string {
	if depth > 0 && r.IntN(3) > 0 {
		switch r.IntN(5) {
		case 0, 1:
			return "(" + randWhere(r, depth-1) + " AND " + randWhere(r, depth-1) + ")"
		case 2, 3:
			return "(" + randWhere(r, depth-1) + " OR " + randWhere(r, depth-1) + ")"
		default:
			return "NOT (" + randWhere(r, depth-1) + ")"
		}
	}
	cmp := []string{"=", "<>", "<", "<=", ">", ">="}[r.IntN(6)]
	switch r.IntN(4) {
	case 0:
		n := r.IntN(2100)
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf("id BETWEEN %d AND %d", n, n+r.IntN(300))
		case 1:
			return fmt.Sprintf("id IN (%d, %d, %d)", n, r.IntN(2100), r.IntN(2100))
		}
		return fmt.Sprintf("id %s %d", cmp, n)
	case 1:
		switch r.IntN(5) {
		case 0:
			return "region IS NULL"
		case 1:
			return "region IS NOT NULL"
		case 2:
			return fmt.Sprintf("region LIKE '%s%%'", []string{"e", "u", "ap", "x"}[r.IntN(4)])
		case 3:
			return "region NOT IN ('eu', 'apac')"
		}
		return fmt.Sprintf("region %s '%s'", cmp, []string{"eu", "us", "apac", "b"}[r.IntN(4)])
	case 2:
		ts := measureDay0.Add(time.Duration(r.IntN(7*24*60)-24*60) * time.Minute).Format("2006-01-02 15:04:05")
		return fmt.Sprintf("ts %s TIMESTAMP '%s'", cmp, ts)
	}
	if r.IntN(4) == 0 {
		return "v IS NULL"
	}
	return fmt.Sprintf("v %s %d", cmp, r.IntN(40))
}

func TestMeasureAgreesWithPlanFiles(t *testing.T) {
	ctx := context.Background()
	id, tbl := measureTable(t)
	r := rand.New(rand.NewPCG(7, 13))
	var sql strings.Builder
	for range 300 {
		fmt.Fprintf(&sql, "SELECT count(*) FROM db.m WHERE %s;\n", randWhere(r, 3))
	}
	d, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	got, w, err := control.Measure(ctx, nil, id, tbl, control.WorkloadOptions{SQL: strings.NewReader(sql.String()), SQLName: "random.sql", Dialect: d})
	require.NoError(t, err)
	require.Greater(t, len(w.Queries), 250, "warnings: %v", w.Warnings)

	want, err := simulator.Measure(ctx, tbl, w.Queries)
	require.NoError(t, err)
	require.Equal(t, want.FilesTotal, got.FilesTotal)
	require.Equal(t, want.Queries, got.Queries)
	require.InDelta(t, want.SkippedPct, got.SkippedPct, 1e-9)
	require.Equal(t, id.String(), got.Table)

	pruned := 0
	for _, q := range got.Queries {
		if q.Pushed && q.FilesScanned < got.FilesTotal {
			pruned++
		}
	}
	require.Greater(t, pruned, len(got.Queries)/3, "the workload exercises pruning")
}

func TestMeasureQueriesWithoutSnapshot(t *testing.T) {
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl := w.CreateTable(t, "db", "empty", schema, nil, nil, nil)
	res, err := control.MeasureQueries(context.Background(), tbl, []simulator.Query{{ID: "q1"}})
	require.NoError(t, err)
	require.Equal(t, []simulator.MeasuredQuery{{ID: "q1"}}, res.Queries)
	require.Zero(t, res.FilesTotal)
}
