package simulator_test

import (
	"context"
	"fmt"
	"github.com/floe-project/floe/expr"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/stretchr/testify/require"
)

// eventsSchema is the test table: every column type replay bounds, plus nullable ones.
func eventsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 4, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 6, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 7, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
	)
}

var regions = []string{"af-south", "ap-east", "eu-central", "eu-west", "sa-east", "us-east", "us-west", "a-very-long-region-name-beyond-16"}

var baseTime = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// eventRow is one row of the test table; nil pointers are nulls.
type eventRow struct {
	id     int64
	ts     *time.Time
	d      *int32
	region *string
	amount *float64
	n      *int32
	flag   *bool
}

// randomRows draws rows; file-level structure (narrow ranges per file, all-null files)
// comes from the caller's choice of parameters.
func randomRows(rng *rand.Rand, n int, idBase int64, dayLo, dayHi int, nullN bool, regionSet []string) []eventRow {
	rows := make([]eventRow, n)
	for i := range rows {
		r := &rows[i]
		r.id = idBase + int64(i)
		if rng.IntN(20) != 0 {
			t := baseTime.Add(time.Duration(dayLo)*24*time.Hour + time.Duration(rng.Int64N(int64(dayHi-dayLo+1)*int64(24*time.Hour)))).Truncate(time.Microsecond)
			r.ts = &t
			d := int32(t.Unix() / 86400)
			r.d = &d
		}
		if rng.IntN(10) != 0 {
			s := regionSet[rng.IntN(len(regionSet))]
			r.region = &s
		}
		a := float64(rng.IntN(10000))/10 - 100
		r.amount = &a
		if !nullN {
			v := int32(rng.IntN(100))
			r.n = &v
		}
		if rng.IntN(3) != 0 {
			f := rng.IntN(2) == 0
			r.flag = &f
		}
	}
	return rows
}

func eventRecord(t testing.TB, sc *arrow.Schema, rows []eventRow) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		if r.ts != nil {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMicro()))
		} else {
			b.Field(1).AppendNull()
		}
		if r.d != nil {
			b.Field(2).(*array.Date32Builder).Append(arrow.Date32(*r.d))
		} else {
			b.Field(2).AppendNull()
		}
		if r.region != nil {
			b.Field(3).(*array.StringBuilder).Append(*r.region)
		} else {
			b.Field(3).AppendNull()
		}
		if r.amount != nil {
			b.Field(4).(*array.Float64Builder).Append(*r.amount)
		} else {
			b.Field(4).AppendNull()
		}
		if r.n != nil {
			b.Field(5).(*array.Int32Builder).Append(*r.n)
		} else {
			b.Field(5).AppendNull()
		}
		if r.flag != nil {
			b.Field(6).(*array.BooleanBuilder).Append(*r.flag)
		} else {
			b.Field(6).AppendNull()
		}
	}
	return b.NewRecordBatch()
}

// buildEventsTable writes files appends of varied shape: narrow and wide time ranges,
// region subsets, a file whose n is all null.
func buildEventsTable(t testing.TB, files, rowsPerFile int, seed uint64) (*table.Table, *lake.State) {
	t.Helper()
	tbl, st := buildTable(t, files, rowsPerFile, seed, nil)
	require.Len(t, st.DataFiles, files)
	return tbl, st
}

// buildPartitionedEventsTable is buildEventsTable partitioned by identity(region) and
// day(ts): appends write one file per partition they touch.
func buildPartitionedEventsTable(t testing.TB, appends, rowsPerAppend int, seed uint64) (*table.Table, *lake.State) {
	t.Helper()
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "ts_day", Transform: iceberg.DayTransform{}},
	)
	return buildTable(t, appends, rowsPerAppend, seed, &spec)
}

func buildTable(t testing.TB, files, rowsPerFile int, seed uint64, spec *iceberg.PartitionSpec) (*table.Table, *lake.State) {
	t.Helper()
	w := testlake.New(t)
	t.Cleanup(func() {
		if c, ok := w.Catalog.(io.Closer); ok {
			require.NoError(t, c.Close())
		}
	})
	// Merged manifests keep planning fast: one manifest instead of one per append.
	props := iceberg.Properties{"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}
	tbl := w.CreateTable(t, "db", "events", eventsSchema(), spec, props, nil)
	sc := testlake.ArrowSchema(t, tbl)
	rng := rand.New(rand.NewPCG(seed, 7))
	for f := range files {
		lo := rng.IntN(28)
		hi := lo + rng.IntN(3)
		if f%7 == 0 {
			hi = lo + 20
		}
		k := 1 + rng.IntN(3)
		start := rng.IntN(len(regions) - k + 1)
		rows := randomRows(rng, rowsPerFile, int64(f*rowsPerFile), lo, hi, f%5 == 3, regions[start:start+k])
		rec := eventRecord(t, sc, rows)
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	st, err := lake.LoadState(context.Background(), lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "events"}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return tbl, st
}

func pred(col, op string, vals ...expr.Value) *expr.Node {
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "db.events", Column: col, Op: expr.Op(op), Values: vals}}
}

func tpred(transform, col, op string, vals ...expr.Value) *expr.Node {
	n := pred(col, op, vals...)
	n.Pred.Transform = transform
	return n
}

func num(v int64) expr.Value {
	return expr.Value{Kind: expr.KindNumber, Text: strconv.FormatInt(v, 10)}
}
func fnum(v float64) expr.Value {
	return expr.Value{Kind: expr.KindNumber, Text: strconv.FormatFloat(v, 'f', -1, 64)}
}
func str(v string) expr.Value { return expr.Value{Kind: expr.KindString, Text: v} }
func date(t time.Time) expr.Value {
	return expr.Value{Kind: expr.KindDate, Text: t.Format(time.DateOnly)}
}
func ts(t time.Time) expr.Value {
	return expr.Value{Kind: expr.KindTimestamp, Text: t.Format("2006-01-02 15:04:05.999999")}
}

func and(ns ...*expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeAnd, Children: ns}
}
func or(ns ...*expr.Node) *expr.Node { return &expr.Node{Kind: expr.NodeOr, Children: ns} }
func not(n *expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{n}}
}
func opaque() *expr.Node { return &expr.Node{Kind: expr.NodeOpaque, Text: "udf(x)"} }

var cmpOps = []string{"=", "!=", "<", "<=", ">", ">="}

// randomLeaf draws one predicate leaf over the test table's columns.
func randomLeaf(rng *rand.Rand) *expr.Node {
	day := func() time.Time { return baseTime.AddDate(0, 0, rng.IntN(32)-1) }
	switch rng.IntN(14) {
	case 0:
		return pred("ts", cmpOps[rng.IntN(6)], ts(day().Add(time.Duration(rng.IntN(86400))*time.Second)))
	case 1:
		return pred("D", cmpOps[rng.IntN(6)], date(day()))
	case 2:
		return pred("region", cmpOps[rng.IntN(6)], str(regions[rng.IntN(len(regions))]))
	case 3:
		return pred("amount", cmpOps[rng.IntN(6)], fnum(float64(rng.IntN(1200))/10-110))
	case 4:
		return pred("n", cmpOps[rng.IntN(6)], num(int64(rng.IntN(110)-5)))
	case 5:
		return pred("id", "between", num(int64(rng.IntN(8000))), num(int64(rng.IntN(8000))))
	case 6:
		k := 1 + rng.IntN(4)
		var vs []expr.Value
		for range k {
			vs = append(vs, str(regions[rng.IntN(len(regions))]))
		}
		op := "in"
		if rng.IntN(3) == 0 {
			op = "not in"
		}
		return pred("region", op, vs...)
	case 7:
		cols := []string{"n", "region", "ts", "flag", "amount"}
		op := "is null"
		if rng.IntN(2) == 0 {
			op = "is not null"
		}
		return pred(cols[rng.IntN(len(cols))], op)
	case 8:
		p := regions[rng.IntN(len(regions))]
		p = p[:1+rng.IntN(len(p)-1)]
		op := "like"
		if rng.IntN(3) == 0 {
			op = "not like"
		}
		return pred("region", op, str(p+"%"))
	case 9:
		return tpred("day", "ts", cmpOps[rng.IntN(6)], date(day()))
	case 10:
		return tpred("month", "ts", "=", date(time.Date(2026, time.Month(10+rng.IntN(3)), 1, 0, 0, 0, 0, time.UTC)))
	case 11:
		return pred("flag", "=", expr.Value{Kind: expr.KindBool, Text: strconv.FormatBool(rng.IntN(2) == 0)})
	case 12:
		return pred("d", "not between", date(day()), date(day()))
	default:
		// Spark-style pushed filter: epoch micros against a timestamp column.
		return pred("ts", cmpOps[2+rng.IntN(4)], num(day().UnixMicro()))
	}
}

// randomTree draws a predicate tree of AND/OR/NOT over random leaves, sometimes with an
// opaque term or an unknown column.
func randomTree(rng *rand.Rand, depth int) *expr.Node {
	if depth == 0 || rng.IntN(3) == 0 {
		switch rng.IntN(20) {
		case 0:
			return opaque()
		case 1:
			return pred("no_such_column", "=", num(1))
		}
		return randomLeaf(rng)
	}
	k := 2 + rng.IntN(2)
	kids := make([]*expr.Node, k)
	for i := range kids {
		kids[i] = randomTree(rng, depth-1)
	}
	var n *expr.Node
	if rng.IntN(2) == 0 {
		n = and(kids...)
	} else {
		n = or(kids...)
	}
	if rng.IntN(4) == 0 {
		n = not(n)
	}
	return n
}

func describe(n *expr.Node) string { return fmt.Sprint(n) }
