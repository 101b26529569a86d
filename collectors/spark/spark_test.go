package spark_test

import (
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/expr"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var dir = filepath.Join("..", "..", "testdata", "logs", "spark")

func fx(name string) string { return filepath.Join(dir, name) }

var fixtures = []string{
	fx("application_1714560000000_0042"),
	fx("eventlog_v2_app-20240502093000-0007"),
	fx("local-1714650000000.inprogress"),
	fx("eventlog-2024-05-03--12-00.gz"),
}

func TestConformance(t *testing.T) {
	collectortest.Run(t, spark.EventLogParser{}, fixtures...)
}

func pred(table, col, transform string, op expr.Op, vals ...expr.Value) *expr.Node {
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: table, Column: col, Transform: transform, Op: op, Values: vals}}
}

func num(s string) expr.Value { return expr.Value{Kind: expr.KindNumber, Text: s} }
func str(s string) expr.Value { return expr.Value{Kind: expr.KindString, Text: s} }

func and(ch ...*expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeAnd, Children: ch}
}
func or(ch ...*expr.Node) *expr.Node { return &expr.Node{Kind: expr.NodeOr, Children: ch} }
func not(ch *expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{ch}}
}

func TestParseFilters(t *testing.T) {
	const tb = "demo.db.t"
	tests := []struct {
		name string
		in   string
		want *expr.Node
		err  bool
	}{
		{"empty", "", nil, false},
		{"reference", "order_date IS NOT NULL, customer_id IS NOT NULL, order_date >= 19814, customer_id = 42",
			and(pred(tb, "order_date", "", expr.OpIsNotNull), pred(tb, "customer_id", "", expr.OpIsNotNull),
				pred(tb, "order_date", "", expr.OpGtEq, num("19814")), pred(tb, "customer_id", "", expr.OpEq, num("42"))), false},
		{"timestamp micros", "ts < 1625018400000000", pred(tb, "ts", "", expr.OpLt, num("1625018400000000")), false},
		{"in with comma in string", "region IN ('a', 'b,c')", pred(tb, "region", "", expr.OpIn, str("a"), str("b,c")), false},
		{"not in", "x NOT IN (1, -2, 3.5)", pred(tb, "x", "", expr.OpNotIn, num("1"), num("-2"), num("3.5")), false},
		{"not", "NOT (x = 1)", not(pred(tb, "x", "", expr.OpEq, num("1"))), false},
		{"or", "(a = 1 OR b = 2)", or(pred(tb, "a", "", expr.OpEq, num("1")), pred(tb, "b", "", expr.OpEq, num("2"))), false},
		{"nested and/or", "((a = 1 AND b != 'x') OR c <= 3)", or(and(pred(tb, "a", "", expr.OpEq, num("1")), pred(tb, "b", "", expr.OpNotEq, str("x"))), pred(tb, "c", "", expr.OpLtEq, num("3"))), false},
		{"like", "name LIKE 'acme%', name NOT LIKE 'x%'", and(pred(tb, "name", "", expr.OpLike, str("acme%")), pred(tb, "name", "", expr.OpNotLike, str("x%"))), false},
		{"transforms", "day(ts) = 19844, bucket[16](id) = 3", and(pred(tb, "ts", "day", expr.OpEq, num("19844")), pred(tb, "id", "bucket[16]", expr.OpEq, num("3"))), false},
		{"nested field and quote", "a.b = 'it''s'", pred(tb, "a.b", "", expr.OpEq, str("it's")), false},
		{"nan", "is_nan(f)", &expr.Node{Kind: expr.NodeOpaque, Text: "is_nan(f)"}, false},
		{"true vanishes", "true, x > 1", pred(tb, "x", "", expr.OpGt, num("1")), false},
		{"is null", "y IS NULL", pred(tb, "y", "", expr.OpIsNull), false},
		{"catalyst", "isnotnull(order_date#3) AND (order_date#3 >= 19814), isnull(id#1L)", and(pred(tb, "order_date", "", expr.OpIsNotNull), pred(tb, "order_date", "", expr.OpGtEq, num("19814")), pred(tb, "id", "", expr.OpIsNull)), false},
		{"hash in a name", "a#b = 1", pred(tb, "a#b", "", expr.OpEq, num("1")), false},
		{"bad operator", "x ~ 1", nil, true},
		{"unterminated", "x = 'abc", nil, true},
		{"dangling", "x =", nil, true},
		{"unbalanced", "(x = 1", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := spark.ParseFilters(tb, tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRetype(t *testing.T) {
	tests := []struct {
		typ  string
		in   expr.Value
		want expr.Value
	}{
		{"date", num("19814"), expr.Value{Kind: expr.KindDate, Text: "2024-04-01"}},
		{"date", num("-1"), expr.Value{Kind: expr.KindDate, Text: "1969-12-31"}},
		{"timestamp", num("1625018400000000"), expr.Value{Kind: expr.KindTimestamp, Text: "2021-06-30 02:00:00"}},
		{"timestamptz", num("1625018400123456"), expr.Value{Kind: expr.KindTimestamp, Text: "2021-06-30 02:00:00.123456+00:00"}},
		{"timestamp_ns", num("1625018400000000001"), expr.Value{Kind: expr.KindTimestamp, Text: "2021-06-30 02:00:00.000000001"}},
		{"long", num("42"), num("42")},
		{"date", str("19814"), str("19814")},
		{"date", num("1.5"), num("1.5")},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.in.Text, func(t *testing.T) {
			require.Equal(t, tc.want, spark.Retype(tc.typ, tc.in))
		})
	}
	f, err := spark.ParseFilters("t", "d >= 19814, day(ts) = 19844, n = 5")
	require.NoError(t, err)
	got := spark.RetypeFilter(f, func(_, col string) string {
		return map[string]string{"d": "date", "ts": "timestamptz", "n": "int"}[col]
	})
	require.Equal(t, and(
		pred("t", "d", "", expr.OpGtEq, expr.Value{Kind: expr.KindDate, Text: "2024-04-01"}),
		pred("t", "ts", "day", expr.OpEq, expr.Value{Kind: expr.KindDate, Text: "2024-05-01"}),
		pred("t", "n", "", expr.OpEq, num("5"))), got)
	require.Equal(t, num("19814"), f.Children[0].Pred.Values[0], "input tree unchanged")
}

func byID(evs []collectors.QueryEvent) map[string]collectors.QueryEvent {
	m := map[string]collectors.QueryEvent{}
	for _, e := range evs {
		m[e.QueryID] = e
	}
	return m
}

func TestEventLog(t *testing.T) {
	evs, bad := collectortest.Parse(t, spark.EventLogParser{}, fx("application_1714560000000_0042"))
	require.Empty(t, bad)
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.QueryID
	}
	const app = "application_1714560000000_0042"
	require.Equal(t, []string{app + "/7", app + "/8", app + "/9", app + "/12", app + "/10"}, ids, "nested execution 11 has no scans and is skipped")
	m := byID(evs)

	e := m[app+"/7"]
	require.Equal(t, "alice", e.User)
	require.Equal(t, "3.5.3", e.EngineVersion)
	require.Equal(t, time.UnixMilli(1714567890123).UTC(), e.StartTime)
	require.Equal(t, time.UnixMilli(1714567893512).UTC(), e.EndTime)
	require.Equal(t, collectors.StateSucceeded, e.State)
	require.Equal(t, "SELECT", e.StatementType)
	require.Equal(t, "SELECT order_id, amount FROM demo.db.orders WHERE order_date >= DATE'2024-04-01' AND customer_id = 42", e.SQL)
	require.Equal(t, collectors.QueryMetrics{ElapsedMs: 3389, CPUMs: 460, BytesScanned: 73400320, RowsScanned: 1250000}, e.Metrics)
	require.Len(t, e.Tables, 1)
	tb := e.Tables[0]
	require.Equal(t, "demo.db.orders", tb.QualifiedName())
	require.Equal(t, collectors.TableMetrics{ResultDataFiles: 3, SkippedDataFiles: 41, ScannedManifests: 2, SkippedManifests: 10}, tb.Metrics)
	require.Equal(t, collectors.EvidencePushedFilter, tb.Evidence)
	require.Equal(t, []string{"order_date IS NOT NULL, customer_id IS NOT NULL, order_date >= 19814, customer_id = 42"}, tb.FilterText)
	const q = "demo.db.orders"
	require.Equal(t, and(pred(q, "order_date", "", expr.OpIsNotNull), pred(q, "customer_id", "", expr.OpIsNotNull),
		pred(q, "order_date", "", expr.OpGtEq, num("19814")), pred(q, "customer_id", "", expr.OpEq, num("42"))), tb.Filter)
	require.Equal(t, []collectors.ColumnUse{
		{Name: "order_date", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidencePushedFilter},
		{Name: "customer_id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidencePushedFilter},
	}, tb.Columns)

	t.Run("aqe", func(t *testing.T) {
		e := m[app+"/8"]
		require.Len(t, e.Tables, 1, "two AQE re-plans fold into one event with one table")
		tb := e.Tables[0]
		require.Equal(t, "glue_catalog", tb.Catalog)
		require.Equal(t, collectors.TableMetrics{ResultDataFiles: 12, SkippedDataFiles: 88}, tb.Metrics, "metrics of the re-planned scan")
		require.Equal(t, expr.NodeAnd, tb.Filter.Kind)
		require.Len(t, tb.Filter.Children, 7)
		require.Equal(t, or(pred("glue_catalog.web.events", "region", "", expr.OpEq, str("eu")),
			pred("glue_catalog.web.events", "region", "", expr.OpIn, str("us-east"), str("a,b"))), tb.Filter.Children[2])
	})
	t.Run("dataframe failed self-join", func(t *testing.T) {
		e := m[app+"/9"]
		require.Empty(t, e.SQL, "call-site descriptions are not SQL")
		require.Equal(t, "SELECT", e.StatementType)
		require.Equal(t, collectors.StateFailed, e.State)
		require.Equal(t, "org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 8.0 failed 4 times", e.Error)
		require.Len(t, e.Tables, 2)
		require.Equal(t, or(pred("demo.db.orders", "amount", "", expr.OpGt, num("100.5")),
			pred("demo.db.orders", "customer_id", "", expr.OpIn, num("1"), num("2"), num("3"))), e.Tables[0].Filter, "two scans of one table OR together")
		require.Equal(t, "customers", e.Tables[1].Name)
		require.Nil(t, e.Tables[1].Filter, "whole-table scan")
	})
	t.Run("ctas and nested", func(t *testing.T) {
		e := m[app+"/10"]
		require.Equal(t, "CTAS", e.StatementType)
		require.Len(t, e.Tables, 2)
		require.True(t, e.Tables[1].Write)
		require.Equal(t, "big_orders", e.Tables[1].Name)
		n := m[app+"/12"]
		require.Equal(t, app+"/10", n.RootQueryID)
	})
}

func TestEventLogForms(t *testing.T) {
	tests := []struct {
		path  string
		ids   []string
		check func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord)
	}{
		{"eventlog_v2_app-20240502093000-0007", []string{"app-20240502093000-0007/0", "app-20240502093000-0007/1", "app-20240502093000-0007/2"},
			func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord) {
				require.Len(t, bad, 1, "the cut last line; Collect forgives it because the log is in progress")
				require.Equal(t, "SELECT * FROM lake.sales.orders WHERE order_date = DATE '2024-05-01'", evs[0].SQL, "sqlText")
				require.Equal(t, "4.0.1", evs[0].EngineVersion)
				require.Equal(t, collectors.StateSucceeded, evs[0].State, "end is in part 2")
				require.Equal(t, collectors.StateUnknown, evs[2].State, "still running")
				require.True(t, evs[2].EndTime.IsZero())
			}},
		{"local-1714650000000.inprogress", []string{"local-1714650000000/0"}, func(t *testing.T, _ []collectors.QueryEvent, bad []collectors.BadRecord) {
			require.Len(t, bad, 1)
			require.Equal(t, 6, bad[0].Line)
		}},
		{"eventlog-2024-05-03--12-00.gz", []string{"app-20240503120000-0001/0"}, func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord) {
			require.Len(t, bad, 1)
			require.Equal(t, 4, bad[0].Line)
			require.Equal(t, and(not(pred("spark_catalog.db.t", "x", "", expr.OpEq, num("1"))), pred("spark_catalog.db.t", "y", "", expr.OpIsNull)), evs[0].Tables[0].Filter)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			evs, bad := collectortest.Parse(t, spark.EventLogParser{}, fx(tc.path))
			ids := make([]string, len(evs))
			for i, e := range evs {
				ids[i] = e.QueryID
			}
			require.Equal(t, tc.ids, ids)
			tc.check(t, evs, bad)
		})
	}
}

func TestCollectInProgress(t *testing.T) {
	st, err := collectors.Collect(t.Context(), []collectors.Parser{spark.EventLogParser{}}, collectors.CollectOptions{Strict: true},
		[]string{fx("eventlog_v2_app-20240502093000-0007"), fx("local-1714650000000.inprogress")}, func(collectors.QueryEvent) error { return nil })
	require.NoError(t, err, "cut last lines of in-progress logs are not bad records")
	require.Equal(t, 4, st.Events)
	require.Equal(t, 2, st.TruncatedTails)
	require.Zero(t, st.BadRecords)
}

func FuzzParse(f *testing.F) { collectortest.Fuzz(f, spark.EventLogParser{}, fixtures...) }

func FuzzParseFilters(f *testing.F) {
	for _, s := range []string{"a = 1, b IN ('x', 'y,z')", "NOT ((a = 1 OR b != 2) AND c IS NULL)", "day(ts) >= 19814, bucket[16](id) = 3", "x LIKE 'p%'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := spark.ParseFilters("t", s)
		if err == nil && n != nil {
			require.NotEmpty(t, n.Kind)
		}
	})
}

// TestFormattedPlanFallback reads the filters from physicalPlanDescription
// when sparkPlanInfo has no BatchScan (a log written with plan info
// stripped).
func TestFormattedPlanFallback(t *testing.T) {
	log := `{"Event":"SparkListenerApplicationStart","App Name":"x","App ID":"app-1","Timestamp":1714567800000,"User":"eve"}
{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":3,"description":"SELECT * FROM demo.db.orders WHERE region IN ('a, b', 'c')","physicalPlanDescription":"== Physical Plan ==\n* Project (2)\n+- BatchScan demo.db.orders (1)\n\n\n(1) BatchScan demo.db.orders\nOutput [2]: [id#1L, region#2]\ndemo.db.orders (branch=null) [filters=region IN ('a, b', 'c'), groupedBy=]\nRuntimeFilters: []\n","sparkPlanInfo":null,"time":1714567890000}
{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd","executionId":3,"time":1714567891000,"errorMessage":"java.lang.RuntimeException: boom\n\tat x.y"}
`
	path := filepath.Join(t.TempDir(), "app-1")
	require.NoError(t, os.WriteFile(path, []byte(log), 0o644))
	evs, bad := collectortest.Parse(t, spark.EventLogParser{}, path)
	require.Empty(t, bad)
	require.Len(t, evs, 1)
	e := evs[0]
	require.Equal(t, "app-1/3", e.QueryID)
	require.Equal(t, collectors.StateFailed, e.State)
	require.Equal(t, "java.lang.RuntimeException: boom", e.Error)
	require.Len(t, e.Tables, 1)
	require.Equal(t, pred("demo.db.orders", "region", "", expr.OpIn, str("a, b"), str("c")), e.Tables[0].Filter)
}
