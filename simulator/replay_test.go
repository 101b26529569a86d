package simulator_test

import (
	"context"
	"github.com/floe-project/floe/expr"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/floe-project/floe/simulator"
	"github.com/stretchr/testify/require"
)

// plannedPaths is iceberg-go's answer: the distinct data files PlanFiles keeps.
func plannedPaths(t *testing.T, tbl *table.Table, q *expr.Node) []string {
	t.Helper()
	e, _ := simulator.ToIcebergExpr(q, tbl.Schema())
	tasks, err := tbl.Scan(table.WithRowFilter(e)).PlanFiles(context.Background())
	require.NoError(t, err)
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestReplayAgreesWithIcebergPlanning draws random predicate trees over a real table
// and requires replay's files to be exactly the files iceberg-go's scan planning keeps.
func TestReplayAgreesWithIcebergPlanning(t *testing.T) {
	start := time.Now()
	tbl, st := buildEventsTable(t, 40, 150, 11)
	t.Logf("built table in %s", time.Since(start))
	rng := rand.New(rand.NewPCG(3, 4))
	pruned := 0
	for i := range 400 {
		q := randomTree(rng, 3)
		got := simulator.FilesRead(st, simulator.Query{ID: "q", Filter: q})
		slices.Sort(got)
		want := plannedPaths(t, tbl, q)
		require.Equal(t, want, got, "query %d: %s", i, describe(q))
		if len(got) < len(st.DataFiles) {
			pruned++
		}
	}
	// The comparison is only meaningful if many queries prune something.
	require.Greater(t, pruned, 150)
}

// TestReplayAgreesOnPartitionedTable checks the identity partition rule: planning decides
// !=, NOT IN and IS NULL exactly on an identity partition's value.
func TestReplayAgreesOnPartitionedTable(t *testing.T) {
	tbl, st := buildPartitionedEventsTable(t, 6, 200, 17)
	require.Greater(t, len(st.DataFiles), 30)
	rng := rand.New(rand.NewPCG(5, 6))
	queries := []*expr.Node{
		pred("region", "!=", str("eu-west")),
		pred("region", "not in", str("eu-west"), str("us-east")),
		pred("region", "not like", str("eu-%")),
		pred("region", "is null"),
		pred("region", "is not null"),
		not(pred("region", "=", str("a-very-long-region-name-beyond-16"))),
	}
	for range 150 {
		queries = append(queries, randomTree(rng, 3))
	}
	for i, q := range queries {
		got := simulator.FilesRead(st, simulator.Query{Filter: q})
		slices.Sort(got)
		require.Equal(t, plannedPaths(t, tbl, q), got, "query %d: %s", i, describe(q))
	}
	require.Less(t, len(simulator.FilesRead(st, simulator.Query{Filter: queries[0]})), len(st.DataFiles))
}

func TestReplayCases(t *testing.T) {
	tbl, st := buildEventsTable(t, 30, 100, 5)
	all := len(st.DataFiles)
	day := func(n int) time.Time { return baseTime.AddDate(0, 0, n) }
	cases := []struct {
		name   string
		filter *expr.Node
		// check runs on the number of files replay reads.
		check func(t *testing.T, n int)
	}{
		{"no filter reads all", nil, func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"opaque reads all", opaque(), func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"not opaque reads all", not(opaque()), func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"unknown column reads all", pred("nope", "=", num(1)), func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"narrow ts range prunes", and(pred("ts", ">=", ts(day(3))), pred("ts", "<", ts(day(4)))), func(t *testing.T, n int) { require.Less(t, n, all/2) }},
		{"day transform prunes", tpred("day", "ts", "=", date(day(3))), func(t *testing.T, n int) { require.Less(t, n, all/2) }},
		{"year of other year prunes all", tpred("year", "ts", "=", num(2020)), func(t *testing.T, n int) { require.Equal(t, 0, n) }},
		// The replay's unit list once knew only year, month, day and hour.
		{"quarter of other quarter prunes all", tpred("quarter", "ts", "=", date(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))), func(t *testing.T, n int) { require.Equal(t, 0, n) }},
		{"week transform prunes", tpred("week", "ts", "=", date(day(1))), func(t *testing.T, n int) { require.Less(t, n, all/2) }},
		{"plural days transform prunes", tpred("days", "ts", "=", date(day(3))), func(t *testing.T, n int) { require.Less(t, n, all/2) }},
		{"not-equal never prunes", pred("n", "!=", num(-1)), func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"n = 5 skips all-null files", pred("n", "=", num(5)), func(t *testing.T, n int) { require.Less(t, n, all) }},
		{"n is null reads only files with nulls", pred("n", "is null"), func(t *testing.T, n int) { require.Less(t, n, all) }},
		{"fraction on int column may match", pred("n", "=", fnum(5.5)), func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"or with opaque reads all", or(pred("ts", "<", ts(day(-5))), opaque()), func(t *testing.T, n int) { require.Equal(t, all, n) }},
		{"and with opaque keeps the other side", and(pred("ts", "<", ts(day(-5))), opaque()), func(t *testing.T, n int) { require.Equal(t, 0, n) }},
		{"not of a range", not(pred("ts", ">=", ts(day(-5)))), func(t *testing.T, n int) { require.Equal(t, 0, n) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := simulator.FilesRead(st, simulator.Query{Filter: tc.filter})
			tc.check(t, len(got))
			slices.Sort(got)
			require.Equal(t, plannedPaths(t, tbl, tc.filter), got)
		})
	}
}

func TestToIcebergExpr(t *testing.T) {
	schema := eventsSchema()
	cases := []struct {
		name   string
		filter *expr.Node
		want   string
		ok     bool
	}{
		{"nil", nil, "AlwaysTrue()", false},
		{"opaque", opaque(), "AlwaysTrue()", false},
		{"day transform", tpred("day", "ts", "=", date(baseTime)), "And(left=GreaterThanEqual(term=Reference(name='ts'), literal=2026-11-01 00:00:00.000000), right=LessThan(term=Reference(name='ts'), literal=2026-11-02 00:00:00.000000))", true},
		{"not pushed down", not(or(pred("N", "<", num(3)), opaque())), "GreaterThanEqual(term=Reference(name='n'), literal=3)", true},
		{"not of and with opaque is unknown", not(and(pred("n", "<", num(3)), opaque())), "AlwaysTrue()", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := simulator.ToIcebergExpr(tc.filter, schema)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, e.String())
		})
	}
}
