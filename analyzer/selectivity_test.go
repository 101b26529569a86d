package analyzer_test

import (
	"github.com/floe-project/floe/expr"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer"
)

func TestSelectivityFromFileBounds(t *testing.T) {
	st := eventsTable(t, "events", nil)
	require.Len(t, st.DataFiles, files)
	stats := analyzer.NewStats(st)
	require.Equal(t, int64(totalRows), stats.Rows())

	// File 1 holds ts in [day1, day1 + 85,536 s]; noon cuts it at 43,200 s.
	afterNoonFile1 := float64(fileSpanSeconds-43200) / fileSpanSeconds * rowsPerFile
	cases := []struct {
		name      string
		n         *expr.Node
		want      float64
		fromStats bool
	}{
		// tenant_id: 400 distinct values, 100 per file, width 100.
		{"eq inside one file", pred("tenant_id", expr.OpEq, num("150")), 1.0 / totalRows, true},
		{"eq outside every file", pred("tenant_id", expr.OpEq, num("9999")), 0, true},
		{"in sums equalities", pred("tenant_id", expr.OpIn, num("5"), num("150"), num("9999")), 2.0 / totalRows, true},
		{"between spans two files", pred("tenant_id", expr.OpBetween, num("150"), num("249")), 100.0 / totalRows, true},
		{"open range", pred("tenant_id", expr.OpLt, num("50")), 50.0 / totalRows, true},
		{"strict bound on integers", pred("tenant_id", expr.OpGt, num("398")), 1.0 / totalRows, true},
		{"column name case-insensitive", pred("TENANT_ID", expr.OpEq, num("150")), 1.0 / totalRows, true},
		{"parameter takes typical equality 1/NDV", pred("tenant_id", expr.OpEq, param()), 1.0 / totalRows, false},
		{"parameter range takes 1/3", pred("tenant_id", expr.OpLt, param()), 1.0 / 3, false},
		{"not equal", pred("tenant_id", expr.OpNotEq, num("150")), 1 - 1.0/totalRows, true},
		// ts: continuous, piecewise uniform within each file.
		{"timestamp range cuts a file", pred("ts", expr.OpGtEq, ts("2026-11-02 12:00:00")), (afterNoonFile1 + 200) / totalRows, true},
		{"date string on a timestamp", pred("ts", expr.OpGtEq, str("2026-11-03")), 200.0 / totalRows, true},
		{"timestamp before all data", pred("ts", expr.OpLt, ts("2026-11-01 00:00:00")), 0, true},
		{"day(ts) = date is a one-day range", trpred("day", "ts", expr.OpEq, date("2026-11-02")), 100.0 / totalRows, true},
		{"year(ts) = number", trpred("year", "ts", expr.OpEq, num("2026")), 1, true},
		{"month(ts) > november starts in december", trpred("month", "ts", expr.OpGt, date("2026-11-01")), 0, true},
		// country: strings take DefaultStringNDV per file (capped by its rows).
		{"string equality", pred("country", expr.OpEq, str("FR")), 4.0 / totalRows, true},
		{"like without wildcard is equality", pred("country", expr.OpLike, str("FR")), 4.0 / totalRows, true},
		{"leading wildcard keeps everything", pred("country", expr.OpLike, str("%R")), 1, true},
		{"is null from null counts", pred("country", expr.OpIsNull), 20.0 / totalRows, true},
		{"is not null", pred("country", expr.OpIsNotNull), 380.0 / totalRows, true},
		// amount: decimal(10,2) 0.00…0.99 in every file.
		{"decimal range", pred("amount", expr.OpBetween, num("0.10"), num("0.19")), 0.09 / 0.99, true},
		// defaults
		{"unknown column", pred("nope", expr.OpEq, num("1")), 1.0 / analyzer.DefaultStringNDV, false},
		{"masked literal", pred("tenant_id", expr.OpGtEq, expr.Value{Kind: expr.KindUnknown, Text: "(hash-1234)"}), 1.0 / 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, fromStats := stats.Selectivity(*tc.n.Pred)
			require.InDelta(t, tc.want, got, 1e-9)
			require.Equal(t, tc.fromStats, fromStats)
		})
	}
}

func TestSelectivityWithoutState(t *testing.T) {
	stats := analyzer.NewStats(nil)
	got, fromStats := stats.Selectivity(expr.Pred{Column: "x", Op: expr.OpBetween, Values: []expr.Value{num("1"), num("2")}})
	require.False(t, fromStats)
	require.InDelta(t, analyzer.DefaultBetweenSelectivity, got, 1e-12)
	got, fromStats = stats.Selectivity(expr.Pred{Column: "x", Op: expr.OpIsNull})
	require.False(t, fromStats)
	require.InDelta(t, analyzer.DefaultNullSelectivity, got, 1e-12)
}

func TestSelectivityPluralTransforms(t *testing.T) {
	st := eventsTable(t, "events", nil)
	stats := analyzer.NewStats(st)
	for _, tr := range []string{"day", "days", "DAY"} {
		got, fromStats := stats.Selectivity(*trpred(tr, "ts", expr.OpEq, date("2026-11-02")).Pred)
		require.True(t, fromStats, tr)
		require.InDelta(t, 100.0/totalRows, got, 1e-9, tr)
	}
}
