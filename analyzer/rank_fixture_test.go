package analyzer_test

import (
	"context"
	"github.com/floe-project/floe/expr"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/stretchr/testify/require"
)

// The events tables hold 4 files of 100 rows, one per append. In file i
// (0…3):
//
//	tenant_id  i*100 … i*100+99, one row each      bounds [100i, 100i+99]
//	ts         day i + k*864 s, k = 0…99            bounds [day i, day i + 85,536 s]
//	country    DE, FR, US by k%3; file 3: k < 20 null  bounds [DE, US]
//	event_type click / view by k%2
//	amount     decimal(10,2) k/100 (0.00 … 0.99)
//
// with day 0 = 2026-11-01 UTC.
var eventsSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "tenant_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	iceberg.NestedField{ID: 3, Name: "country", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "event_type", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 5, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
)

var day0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

const (
	rowsPerFile = 100
	files       = 4
	totalRows   = rowsPerFile * files
	// fileSpanSeconds is the span of one file's ts bounds: 99 × 864 s.
	fileSpanSeconds = 99 * 864
)

func eventsBatch(t testing.TB, sc *arrow.Schema, file int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	countries := []string{"DE", "FR", "US"}
	for k := range rowsPerFile {
		b.Field(0).(*array.Int64Builder).Append(int64(file*rowsPerFile + k))
		ts, err := arrow.TimestampFromTime(day0.AddDate(0, 0, file).Add(time.Duration(k)*864*time.Second), arrow.Microsecond)
		require.NoError(t, err)
		b.Field(1).(*array.TimestampBuilder).Append(ts)
		if file == 3 && k < 20 {
			b.Field(2).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(countries[k%3])
		}
		b.Field(3).(*array.StringBuilder).Append([]string{"click", "view"}[k%2])
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(k)))
	}
	return b.NewRecordBatch()
}

// eventsTable builds the events table with the given partition spec (nil:
// unpartitioned) and loads its state.
func eventsTable(t testing.TB, name string, spec *iceberg.PartitionSpec) *lake.State {
	t.Helper()
	w := testlake.New(t)
	tbl := w.CreateTable(t, "web", name, eventsSchema, spec, iceberg.Properties{}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for i := range files {
		tbl = testlake.Append(t, tbl, eventsBatch(t, sc, i))
	}
	return loadState(t, w, tbl)
}

func loadState(t testing.TB, w *testlake.Warehouse, tbl *table.Table) *lake.State {
	t.Helper()
	id := lake.Ident{Catalog: w.Name, Namespace: tbl.Identifier()[:1], Name: tbl.Identifier()[1]}
	loaded, err := lake.LoadTable(context.Background(), w.Catalog, id)
	require.NoError(t, err)
	st, err := lake.LoadState(context.Background(), id, loaded, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

// Predicate-tree builders.

func pred(col string, op expr.Op, vals ...expr.Value) *expr.Node {
	if vals == nil {
		vals = []expr.Value{}
	}
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Column: col, Op: op, Values: vals}}
}

func trpred(tr, col string, op expr.Op, vals ...expr.Value) *expr.Node {
	n := pred(col, op, vals...)
	n.Pred.Transform = tr
	return n
}

func and(ns ...*expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeAnd, Children: ns}
}

func or(ns ...*expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeOr, Children: ns}
}

func not(n *expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{n}}
}

func num(s string) expr.Value { return expr.Value{Kind: expr.KindNumber, Text: s} }
func str(s string) expr.Value { return expr.Value{Kind: expr.KindString, Text: s} }
func ts(s string) expr.Value  { return expr.Value{Kind: expr.KindTimestamp, Text: s} }
func date(s string) expr.Value {
	return expr.Value{Kind: expr.KindDate, Text: s}
}
func param() expr.Value { return expr.Value{Kind: expr.KindParam, Text: "?"} }

// event is one successful query on st's table at now with filter f.
func event(st *lake.State, id string, f *expr.Node, ev collectors.Evidence) collectors.QueryEvent {
	return collectors.QueryEvent{
		Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id,
		StartTime: now, State: collectors.StateSucceeded, StatementType: "SELECT",
		Tables: []collectors.TableAccess{{
			Catalog: st.Ident.Catalog, Namespace: st.Ident.Namespace[0], Name: st.Ident.Name,
			Direct: true, Filter: f, Evidence: ev,
		}},
	}
}

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
