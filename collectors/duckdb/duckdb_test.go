package duckdb_test

import (
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/floe-project/floe/expr"
	"github.com/stretchr/testify/require"
	"path/filepath"
	"testing"
)

var dir = filepath.Join("..", "..", "testdata", "logs", "duckdb")

func fx(name string) string { return filepath.Join(dir, name) }

var (
	logFixtures = []string{fx("log-normalized"), fx("querylog-denormalized.csv"), fx("querylog-stdout.tsv"),
		fx("querylog-2.0-doubled.csv"), fx("bad/querylog-bad.csv")}
	profileFixtures = []string{fx("profile-1x-a.json"), fx("profile-1x-b.json"), fx("profile-1x-c.json"), fx("profile-2x.json")}
	historyFixtures = []string{fx(".duckdb_history"), fx("bad/.duckdb_history")}
)

func TestConformance(t *testing.T) {
	t.Run("duckdb-log", func(t *testing.T) { collectortest.Run(t, duckdb.LogParser{}, logFixtures...) })
	t.Run("duckdb-profile", func(t *testing.T) { collectortest.Run(t, duckdb.ProfileParser{}, profileFixtures...) })
	t.Run("duckdb-history", func(t *testing.T) { collectortest.Run(t, duckdb.HistoryParser{}, historyFixtures...) })
}

var workload = []string{
	"SELECT order_id, amount FROM orders WHERE order_date >= TIMESTAMP '2024-02-01' AND customer_id = 42",
	"SELECT region, count(*) AS n FROM orders WHERE region IN ('eu', 'us') GROUP BY region",
	"SELECT order_id\nFROM orders\nWHERE region = 'a,b'\n  AND amount > 50",
	"SELECT count(*) FROM orders WHERE customer_id = ?",
	"CALL disable_logging()",
}

func TestLogStorages(t *testing.T) {
	for _, f := range []string{"log-normalized", "querylog-denormalized.csv", "querylog-stdout.tsv"} {
		t.Run(f, func(t *testing.T) {
			evs, bad := collectortest.Parse(t, duckdb.LogParser{}, fx(f))
			require.Empty(t, bad)
			var sqls []string
			ids := map[string]bool{}
			for _, e := range evs {
				sqls = append(sqls, e.SQL)
				ids[e.QueryID] = true
				require.Equal(t, collectors.EngineDuckDB, e.Engine)
			}
			require.Equal(t, workload, sqls, "real DuckDB 1.5.6 output: one entry per statement; the failing statement is not logged")
			require.Len(t, ids, len(workload))
			require.True(t, evs[3].SQLTemplate, "prepared statements are logged with placeholders")
			require.False(t, evs[0].SQLTemplate)
			require.Equal(t, "SELECT", evs[0].StatementType)
			require.Equal(t, "OTHER", evs[4].StatementType)
			require.True(t, evs[0].StartTime.Before(evs[1].StartTime))
		})
	}
}

func TestLogDoubled(t *testing.T) {
	evs, bad := collectortest.Parse(t, duckdb.LogParser{}, fx("querylog-2.0-doubled.csv"))
	require.Empty(t, bad)
	require.Len(t, evs, 7, "HTTP entries are skipped")
	require.Equal(t, evs[0].QueryID, evs[1].QueryID)
	require.Equal(t, evs[2].QueryID, evs[3].QueryID)
	require.Equal(t, evs[4].QueryID, evs[5].QueryID)
	require.NotEqual(t, evs[5].QueryID, evs[6].QueryID, "the same statement 5 s later is another query")
	require.NotEqual(t, evs[0].QueryID, evs[2].QueryID)

	st, err := collectors.Collect(t.Context(), []collectors.Parser{duckdb.LogParser{}}, collectors.CollectOptions{}, []string{fx("querylog-2.0-doubled.csv")}, func(collectors.QueryEvent) error { return nil })
	require.NoError(t, err)
	require.Equal(t, 4, st.Events)
	require.Equal(t, 3, st.Duplicates)
}

func TestLogBad(t *testing.T) {
	evs, bad := collectortest.Parse(t, duckdb.LogParser{}, fx("bad/querylog-bad.csv"))
	require.Len(t, evs, 2, "an unterminated quote at the end is read leniently")
	require.Equal(t, "SELECT 3\n", evs[1].SQL)
	var lines []int
	for _, b := range bad {
		lines = append(lines, b.Line)
		require.NotEmpty(t, b.Reason)
	}
	require.Equal(t, []int{3, 4}, lines)
}

func pred(table, col string, op expr.Op, vals ...expr.Value) *expr.Node {
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: table, Column: col, Op: op, Values: vals}}
}

func v(k expr.Kind, s string) expr.Value { return expr.Value{Kind: k, Text: s} }

func and(ch ...*expr.Node) *expr.Node {
	return &expr.Node{Kind: expr.NodeAnd, Children: ch}
}

func or(ch ...*expr.Node) *expr.Node { return &expr.Node{Kind: expr.NodeOr, Children: ch} }

func TestParseFilter(t *testing.T) {
	const tb = "memory.main.t"
	tests := []struct {
		name, in string
		want     *expr.Node
		err      bool
	}{
		{"1.x cast", "order_date>='2024-02-01 00:00:00'::TIMESTAMP", pred(tb, "order_date", expr.OpGtEq, v(expr.KindTimestamp, "2024-02-01 00:00:00")), false},
		{"1.x number", "customer_id=42", pred(tb, "customer_id", expr.OpEq, v(expr.KindNumber, "42")), false},
		{"1.x optional in", "optional: customer_id IN (1, 3)", pred(tb, "customer_id", expr.OpIn, v(expr.KindNumber, "1"), v(expr.KindNumber, "3")), false},
		{"1.x range", "a>=1 AND a<=5", and(pred(tb, "a", expr.OpGtEq, v(expr.KindNumber, "1")), pred(tb, "a", expr.OpLtEq, v(expr.KindNumber, "5"))), false},
		{"2.x parens", "(customer_id = 3)", pred(tb, "customer_id", expr.OpEq, v(expr.KindNumber, "3")), false},
		{"2.x nested", "((d >= '2024-02-01'::DATE) AND (d <= '2024-02-10'::DATE))", and(pred(tb, "d", expr.OpGtEq, v(expr.KindDate, "2024-02-01")), pred(tb, "d", expr.OpLtEq, v(expr.KindDate, "2024-02-10"))), false},
		{"or", "(r = 'eu' OR r = 'it''s')", or(pred(tb, "r", expr.OpEq, v(expr.KindString, "eu")), pred(tb, "r", expr.OpEq, v(expr.KindString, "it's"))), false},
		{"quoted column, null", `"Order Id" IS NOT NULL`, pred(tb, "Order Id", expr.OpIsNotNull), false},
		{"tz and decimal", "ts<'2024-01-01 00:00:00+00'::TIMESTAMP WITH TIME ZONE AND x>1.50::DECIMAL(18,2)", and(pred(tb, "ts", expr.OpLt, v(expr.KindTimestamp, "2024-01-01 00:00:00+00")), pred(tb, "x", expr.OpGt, v(expr.KindNumber, "1.50"))), false},
		{"not in", "x NOT IN ('a', 'b')", pred(tb, "x", expr.OpNotIn, v(expr.KindString, "a"), v(expr.KindString, "b")), false},
		{"bad", "x ~ 1", nil, true},
		{"unterminated", "x = 'a", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := duckdb.ParseFilter(tb, tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestProfiles(t *testing.T) {
	ts := func(s string) expr.Value { return v(expr.KindTimestamp, s) }
	num := func(s string) expr.Value { return v(expr.KindNumber, s) }
	tests := []struct {
		file   string
		rows   int64
		table  string
		filter func(tb string) *expr.Node
		sql    string
	}{
		{"profile-1x-a.json", 20000, "gen.main.orders", func(tb string) *expr.Node {
			return and(pred(tb, "order_date", expr.OpGtEq, ts("2024-02-01 00:00:00")), pred(tb, "customer_id", expr.OpEq, num("42")))
		}, workload[0]},
		{"profile-1x-b.json", 20000, "gen.main.orders", func(tb string) *expr.Node {
			return and(pred(tb, "customer_id", expr.OpIn, num("1"), num("3")),
				pred(tb, "order_date", expr.OpGtEq, ts("2024-02-01 00:00:00")), pred(tb, "order_date", expr.OpLtEq, ts("2024-02-10 00:00:00")))
		}, ""},
		{"profile-1x-c.json", 40000, "gen.main.orders", func(tb string) *expr.Node {
			return or(and(pred(tb, "region", expr.OpGtEq, v(expr.KindString, "e")), pred(tb, "region", expr.OpLt, v(expr.KindString, "f"))),
				pred(tb, "amount", expr.OpLt, num("10.0")))
		}, ""},
		{"profile-2x.json", 20000, "lake.sales.orders", func(tb string) *expr.Node {
			return and(pred(tb, "customer_id", expr.OpEq, num("3")),
				pred(tb, "order_date", expr.OpGtEq, ts("2024-02-01 00:00:00")), pred(tb, "order_date", expr.OpLtEq, ts("2024-02-10 00:00:00")))
		}, "SELECT * FROM lake.sales.orders WHERE customer_id = 3 AND order_date BETWEEN TIMESTAMP '2024-02-01' AND TIMESTAMP '2024-02-10'"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			evs, bad := collectortest.Parse(t, duckdb.ProfileParser{}, fx(tc.file))
			require.Empty(t, bad)
			require.Len(t, evs, 1)
			e := evs[0]
			if tc.sql != "" {
				require.Equal(t, tc.sql, e.SQL)
			}
			require.Equal(t, collectors.StateSucceeded, e.State)
			require.Equal(t, tc.rows, e.Metrics.RowsScanned)
			require.Equal(t, e.Metrics.ElapsedMs, e.Duration().Milliseconds())
			require.Len(t, e.Tables, 1)
			require.Equal(t, tc.table, e.Tables[0].QualifiedName())
			require.Equal(t, tc.filter(tc.table), e.Tables[0].Filter)
			require.NotEmpty(t, e.Tables[0].FilterText)
			require.Equal(t, collectors.EvidencePushedFilter, e.Tables[0].Columns[0].Evidence)
		})
	}
}

func TestHistory(t *testing.T) {
	evs, bad := collectortest.Parse(t, duckdb.HistoryParser{}, fx(".duckdb_history"))
	require.Empty(t, bad)
	var sqls []string
	for _, e := range evs {
		sqls = append(sqls, e.SQL)
		require.Equal(t, collectors.StateUnknown, e.State)
	}
	require.Equal(t, []string{
		"SELECT * FROM read_parquet('s3://bucket/orders/*.parquet') WHERE order_date >= DATE '2024-04-01' LIMIT 10;",
		"ATTACH 'lake.duckdb' AS lake;",
		"SELECT region, sum(amount)\nFROM lake.sales.orders\nWHERE customer_id = 42\n  AND note = 'a;b'\nGROUP BY region;",
		"SELECT 1;",
		"SELECT 2;",
		"CREATE TABLE lake.sales.big AS SELECT * FROM lake.sales.orders WHERE amount > 100;",
		"-- a comment; not a statement end\nSELECT count(*) FROM lake.sales.orders;",
	}, sqls)
	require.Equal(t, "CTAS", evs[5].StatementType)
	require.NotEqual(t, evs[3].QueryID, evs[4].QueryID, "two statements on one line")

	_, bad = collectortest.Parse(t, duckdb.HistoryParser{}, fx("bad/.duckdb_history"))
	require.Len(t, bad, 1)
	require.Equal(t, 2, bad[0].Line)
}

func FuzzParse(f *testing.F) { collectortest.Fuzz(f, duckdb.LogParser{}, logFixtures...) }

func FuzzParseProfile(f *testing.F) {
	// Two appended profiles, a cut-off one, and a 2.x one of one line.
	f.Add([]byte("{\n\"query_name\": \"SELECT 1\", \"latency\": 0.1, \"children\": []\n}\n{\n\"query\": {\"sql\": \"SELECT 2\", \"total_time\": 0.2}, \"operator\": []\n}\n"))
	f.Add([]byte("{\n\"query_name\": \"SELECT * FROM t WHERE a IN (1, 2, "))
	f.Add([]byte(`{"query":{"sql":"SELECT 3","total_time":0.1},"io":{},"operator":{"type":"TABLE_SCAN","extra_info":{"Table":"t","Filters":"a=1"}}}`))
	collectortest.Fuzz(f, duckdb.ProfileParser{}, profileFixtures...)
}

func FuzzParseHistory(f *testing.F) {
	collectortest.Fuzz(f, duckdb.HistoryParser{}, historyFixtures...)
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"optional: a IN (1, 3)", "((d >= '2024-02-01'::DATE) AND (d <= '2024-02-10'::DATE))", "x>1.5::DECIMAL(18,2) OR y IS NULL"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := duckdb.ParseFilter("t", s)
		if err == nil && n != nil {
			require.NotEmpty(t, n.Kind)
		}
	})
}
