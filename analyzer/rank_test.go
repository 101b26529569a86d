package analyzer_test

import (
	"github.com/floe-project/floe/expr"
	"math"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
)

// Hand-computed selectivities of the events table (see the fixture).
const (
	selTenant150 = 1.0 / totalRows // one row among 400
	selFR        = 4.0 / totalRows // each file: 1/DefaultStringNDV of its ≤100 rows, capped at its rows
)

// selNoonToMidnight is ts in [2026-11-02 12:00, 2026-11-03 00:00]: the part
// of file 1's span after noon.
var selNoonToMidnight = float64(fileSpanSeconds-43200) / fileSpanSeconds * rowsPerFile / totalRows

func byColumn(t *testing.T, ranks []analyzer.ColumnRank) map[string]analyzer.ColumnRank {
	t.Helper()
	m := map[string]analyzer.ColumnRank{}
	for _, r := range ranks {
		m[r.Column] = r
		require.False(t, math.IsNaN(r.Score) || math.IsInf(r.Score, 0), r.Column)
		require.GreaterOrEqual(t, r.Score, 0.0, r.Column)
		require.NotEmpty(t, r.Reason)
	}
	return m
}

func columns(ranks []analyzer.ColumnRank) []string {
	out := make([]string, len(ranks))
	for i, r := range ranks {
		out[i] = r.Column
	}
	return out
}

func TestRankOrderAndScores(t *testing.T) {
	st := eventsTable(t, "events", nil)
	sql := collectors.EvidenceSQL
	events := []collectors.QueryEvent{
		event(st, "q1", pred("tenant_id", expr.OpEq, num("150")), sql),
		event(st, "q2", and(pred("tenant_id", expr.OpEq, num("150")),
			pred("ts", expr.OpBetween, ts("2026-11-02 12:00:00"), ts("2026-11-03 00:00:00"))), sql),
		event(st, "q3", pred("country", expr.OpEq, str("FR")), sql),
		event(st, "q4", pred("event_type", expr.OpLike, str("%ick")), sql),
		event(st, "q5", pred("country", expr.OpIsNotNull), sql),
	}
	ranks, err := analyzer.Rank(st.Ident, st, events, analyzer.RankOptions{Now: now})
	require.NoError(t, err)
	require.Equal(t, []string{"tenant_id", "country", "ts", "event_type"}, columns(ranks))
	m := byColumn(t, ranks)

	const e = 0.9 // sql-parse evidence
	require.InDelta(t, 2*e*(1-selTenant150), m["tenant_id"].Score, 1e-9)
	require.InDelta(t, e*(1-selFR), m["country"].Score, 1e-9)
	require.InDelta(t, e*analyzer.BenefitRange*(1-selNoonToMidnight), m["ts"].Score, 1e-9)
	require.Zero(t, m["event_type"].Score)
	require.InDelta(t, 2*(1-selTenant150)/(1-selFR), m["tenant_id"].Score/m["country"].Score, 1e-9)

	require.InDelta(t, 0.4, m["tenant_id"].Share, 1e-12)
	require.InDelta(t, 0.4, m["country"].Share, 1e-12)
	require.InDelta(t, 0.2, m["ts"].Share, 1e-12)
	require.InDelta(t, 0.2, m["event_type"].Share, 1e-12)
	require.Equal(t, 2, m["tenant_id"].Queries)
	require.Equal(t, 1, m["ts"].Queries)

	require.Equal(t, map[string]float64{"=": 0.5, "is not null": 0.5}, m["country"].OpMix)
	require.Equal(t, map[string]float64{"like": 1}, m["event_type"].OpMix)
	require.InDelta(t, selTenant150, m["tenant_id"].Selectivity, 1e-12)
	require.InDelta(t, selFR, m["country"].Selectivity, 1e-12)
	require.Equal(t, 1.0, m["event_type"].Selectivity)
	require.Contains(t, m["event_type"].Reason, "cannot skip files")
	require.Contains(t, m["tenant_id"].Reason, "40% of the workload (2 queries)")
	for _, r := range ranks {
		require.Equal(t, "local.web.events", r.Table)
		require.False(t, r.Partitioned)
		require.Equal(t, 1.0, r.PartitionDiscount)
	}
}

func TestRankLeafRules(t *testing.T) {
	st := eventsTable(t, "events", nil)
	selTenantGe50 := 350.0 / totalRows
	cases := []struct {
		name    string
		f       *expr.Node
		tenant  float64
		country float64
		tsScore float64
	}{
		{"or of two columns counts each half", or(pred("tenant_id", expr.OpEq, num("150")), pred("country", expr.OpEq, str("FR"))),
			0.5 * (1 - selTenant150), 0.5 * (1 - selFR), 0},
		{"or on one column adds up to an in", or(pred("tenant_id", expr.OpEq, num("150")), pred("tenant_id", expr.OpEq, num("250"))),
			2 * 0.5 * (1 - selTenant150), 0, 0},
		{"not of a range is the other range", not(pred("tenant_id", expr.OpLt, num("50"))),
			analyzer.BenefitRange * (1 - selTenantGe50), 0, 0},
		{"not of an equality helps nothing", not(pred("tenant_id", expr.OpEq, num("150"))), 0, 0, 0},
		{"not of or is an and of negations", not(or(pred("tenant_id", expr.OpNotEq, num("150")), pred("country", expr.OpNotEq, str("FR")))),
			1 - selTenant150, 1 - selFR, 0},
		{"double negation", not(not(pred("tenant_id", expr.OpEq, num("150")))), 1 - selTenant150, 0, 0},
		{"ranges under one and are intersected", and(pred("ts", expr.OpGtEq, ts("2026-11-02 12:00:00")), pred("ts", expr.OpLt, ts("2026-11-03 00:00:00"))),
			0, 0, analyzer.BenefitRange * (1 - selNoonToMidnight)},
		{"day(ts) = date is an equality on a day", trpred("day", "ts", expr.OpEq, date("2026-11-02")),
			0, 0, analyzer.BenefitEq * (1 - 100.0/totalRows)},
		{"in", pred("tenant_id", expr.OpIn, num("150"), num("250")), analyzer.BenefitIn * (1 - 2*selTenant150), 0, 0},
		{"is not null helps nothing", pred("tenant_id", expr.OpIsNotNull), 0, 0, 0},
		{"leading wildcard like helps nothing", pred("country", expr.OpLike, str("%R")), 0, 0, 0},
		{"rlike helps nothing", pred("country", expr.OpRLike, str("^F")), 0, 0, 0},
		{"lower(c) helps nothing", trpred("lower", "country", expr.OpEq, str("fr")), 0, 0, 0},
		{"is null", pred("country", expr.OpIsNull), 0, analyzer.BenefitIsNull * (1 - 20.0/totalRows), 0},
		{"opaque terms are skipped", and(&expr.Node{Kind: expr.NodeOpaque, Text: "a = b"}, pred("tenant_id", expr.OpEq, num("150"))),
			1 - selTenant150, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := event(st, "q", tc.f, collectors.EvidenceScanReport)
			ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{ev}, analyzer.RankOptions{Now: now})
			require.NoError(t, err)
			m := byColumn(t, ranks)
			require.InDelta(t, tc.tenant, m["tenant_id"].Score, 1e-9)
			require.InDelta(t, tc.country, m["country"].Score, 1e-9)
			require.InDelta(t, tc.tsScore, m["ts"].Score, 1e-9)
		})
	}
}

func TestRankRecency(t *testing.T) {
	st := eventsTable(t, "events", nil)
	cases := []struct {
		name     string
		age      time.Duration
		halfLife time.Duration
		want     float64
	}{
		{"now", 0, 0, 1},
		{"one default half-life", 7 * 24 * time.Hour, 0, 0.5},
		{"two half-lives", 14 * 24 * time.Hour, 0, 0.25},
		{"custom half-life", 48 * time.Hour, 24 * time.Hour, 0.25},
		{"future counts fully", -time.Hour, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := event(st, "q", pred("tenant_id", expr.OpEq, num("150")), collectors.EvidenceScanReport)
			ev.StartTime = now.Add(-tc.age)
			ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{ev}, analyzer.RankOptions{Now: now, HalfLife: tc.halfLife})
			require.NoError(t, err)
			require.Len(t, ranks, 1)
			require.InDelta(t, tc.want*(1-selTenant150), ranks[0].Score, 1e-9)
		})
	}
	t.Run("now defaults to the newest event", func(t *testing.T) {
		recent := event(st, "a", pred("tenant_id", expr.OpEq, num("150")), collectors.EvidenceScanReport)
		old := event(st, "b", pred("country", expr.OpEq, str("FR")), collectors.EvidenceScanReport)
		old.StartTime = now.Add(-7 * 24 * time.Hour)
		ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{recent, old}, analyzer.RankOptions{})
		require.NoError(t, err)
		m := byColumn(t, ranks)
		require.InDelta(t, 1-selTenant150, m["tenant_id"].Score, 1e-9)
		require.InDelta(t, 0.5*(1-selFR), m["country"].Score, 1e-9)
		require.InDelta(t, 1/1.5, m["tenant_id"].Share, 1e-9)
	})
}

func TestRankCostWeighting(t *testing.T) {
	st := eventsTable(t, "events", nil)
	sr := collectors.EvidenceScanReport
	q1 := event(st, "q1", pred("tenant_id", expr.OpEq, num("150")), sr)
	q1.Metrics.BytesScanned = 1 << 30
	q2 := event(st, "q2", pred("country", expr.OpEq, str("FR")), sr)
	q2.Metrics.BytesScanned = 1 << 40 // the table's own bytes win over the query's
	q2.Tables[0].Metrics.BytesScanned = 3 << 30
	q3 := event(st, "q3", pred("tenant_id", expr.OpEq, num("150")), sr)
	q3.Metrics.ElapsedMs = 2000 // no bytes: elapsed over the median elapsed
	ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{q1, q2, q3}, analyzer.RankOptions{Now: now})
	require.NoError(t, err)
	m := byColumn(t, ranks)
	// Median bytes 2 GiB: q1 weighs 0.5, q2 1.5; q3 is its own median: 1.
	require.InDelta(t, (0.5+1)*(1-selTenant150), m["tenant_id"].Score, 1e-9)
	require.InDelta(t, 1.5*(1-selFR), m["country"].Score, 1e-9)
	require.InDelta(t, 1.5/3, m["tenant_id"].Share, 1e-9)
	require.InDelta(t, 1.5/3, m["country"].Share, 1e-9)
}

func TestRankPartitionDiscount(t *testing.T) {
	flat := eventsTable(t, "flat", nil)
	byDay := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	daily := eventsTable(t, "daily", &byDay)
	require.Len(t, daily.DataFiles, files)

	oneHour := 1 - (1-analyzer.DefaultPartitionDiscount)*(3600.0/86400)
	cases := []struct {
		name     string
		f        *expr.Node
		column   string
		discount float64
	}{
		{"range wider than a day", pred("ts", expr.OpGtEq, ts("2026-11-02 00:00:00")), "ts", analyzer.DefaultPartitionDiscount},
		{"day(ts) equality is a whole partition", trpred("day", "ts", expr.OpEq, date("2026-11-02")), "ts", analyzer.DefaultPartitionDiscount},
		{"one hour inside a day still benefits", and(pred("ts", expr.OpGtEq, ts("2026-11-02 12:00:00")), pred("ts", expr.OpLt, ts("2026-11-02 13:00:00"))), "ts", oneHour},
		{"timestamp equality is finer than a day", pred("ts", expr.OpEq, ts("2026-11-02 12:00:00")), "ts", 1},
		{"other columns are not discounted", pred("tenant_id", expr.OpEq, num("150")), "tenant_id", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			score := func(st *lake.State) analyzer.ColumnRank {
				ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{event(st, "q", tc.f, collectors.EvidenceScanReport)}, analyzer.RankOptions{Now: now})
				require.NoError(t, err)
				r := byColumn(t, ranks)[tc.column]
				require.Positive(t, r.Score)
				return r
			}
			f, d := score(flat), score(daily)
			require.InDelta(t, tc.discount, d.Score/f.Score, 1e-9)
			require.InDelta(t, tc.discount, d.PartitionDiscount, 1e-9)
			require.Equal(t, tc.column == "ts", d.Partitioned)
		})
	}

	t.Run("identity partition", func(t *testing.T) {
		byCountry := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "country", Transform: iceberg.IdentityTransform{}})
		st := eventsTable(t, "by_country", &byCountry)
		p := pred("country", expr.OpEq, str("FR"))
		sel, fromStats := analyzer.NewStats(st).Selectivity(*p.Pred)
		require.True(t, fromStats)
		// One file per append and country, each with a single value: every
		// FR row is kept. FR is k%3 == 1: 33 rows in files 0-2, 26 in file 3
		// (k = 22…97, as k < 20 are null).
		require.InDelta(t, 125.0/totalRows, sel, 1e-9)
		for _, discount := range []float64{0, 0.5} {
			ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{event(st, "q", p, collectors.EvidenceScanReport)},
				analyzer.RankOptions{Now: now, PartitionDiscount: discount})
			require.NoError(t, err)
			want := discount
			if want == 0 {
				want = analyzer.DefaultPartitionDiscount
			}
			require.Len(t, ranks, 1)
			require.InDelta(t, want*(1-sel), ranks[0].Score, 1e-9)
			require.True(t, ranks[0].Partitioned)
			require.Contains(t, ranks[0].Reason, "partitioned by identity")
		}
	})
}

func TestRankWhichEventsCount(t *testing.T) {
	st := eventsTable(t, "events", nil)
	f := pred("tenant_id", expr.OpEq, num("150"))
	sr := collectors.EvidenceScanReport
	with := func(id string, mut func(*collectors.QueryEvent)) collectors.QueryEvent {
		ev := event(st, id, f, sr)
		mut(&ev)
		return ev
	}
	cases := []struct {
		name    string
		events  []collectors.QueryEvent
		opts    analyzer.RankOptions
		queries int
		share   float64
	}{
		{"failed and cancelled are dropped", []collectors.QueryEvent{
			with("a", func(*collectors.QueryEvent) {}),
			with("b", func(e *collectors.QueryEvent) { e.State = collectors.StateFailed }),
			with("c", func(e *collectors.QueryEvent) { e.State = collectors.StateCancelled }),
		}, analyzer.RankOptions{}, 1, 1},
		{"unknown state counts by default", []collectors.QueryEvent{
			with("a", func(e *collectors.QueryEvent) { e.State = collectors.StateUnknown }),
			with("b", func(*collectors.QueryEvent) {}),
		}, analyzer.RankOptions{}, 2, 1},
		{"only succeeded", []collectors.QueryEvent{
			with("a", func(e *collectors.QueryEvent) { e.State = collectors.StateUnknown }),
			with("b", func(*collectors.QueryEvent) {}),
		}, analyzer.RankOptions{OnlySucceeded: true}, 1, 1},
		{"same engine and query id is one query", []collectors.QueryEvent{
			with("x", func(e *collectors.QueryEvent) { e.Engine, e.Source = collectors.EngineAthena, "athena-api" }),
			with("x", func(e *collectors.QueryEvent) {
				e.Engine, e.Source, e.State = collectors.EngineAthena, "cloudtrail", collectors.StateUnknown
			}),
		}, analyzer.RankOptions{}, 1, 1},
		{"full scans count in the workload", []collectors.QueryEvent{
			with("a", func(*collectors.QueryEvent) {}),
			with("b", func(e *collectors.QueryEvent) { e.Tables[0].Filter = nil }),
		}, analyzer.RankOptions{}, 1, 0.5},
		{"insert targets, metadata tables and other tables do not", []collectors.QueryEvent{
			with("a", func(*collectors.QueryEvent) {}),
			with("b", func(e *collectors.QueryEvent) { e.Tables[0].Filter, e.Tables[0].Write = nil, true }),
			with("c", func(e *collectors.QueryEvent) { e.Tables[0].Evidence = "metadata-table:snapshots" }),
			with("d", func(e *collectors.QueryEvent) { e.Tables[0].Name = "events$files" }),
			with("e", func(e *collectors.QueryEvent) { e.Tables[0].Name = "other" }),
			with("f", func(e *collectors.QueryEvent) { e.Tables[0].Catalog = "elsewhere" }),
		}, analyzer.RankOptions{}, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ranks, err := analyzer.Rank(st.Ident, st, tc.events, tc.opts)
			require.NoError(t, err)
			require.Len(t, ranks, 1)
			require.Equal(t, tc.queries, ranks[0].Queries)
			require.InDelta(t, tc.share, ranks[0].Share, 1e-12)
		})
	}
}

func TestRankFilterColumnsWithoutPredicates(t *testing.T) {
	st := eventsTable(t, "events", nil)
	ev := event(st, "q", nil, collectors.EvidenceAccessHistory)
	ev.Tables[0].Columns = []collectors.ColumnUse{
		{Name: "TENANT_ID", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceAccessHistory},
		{Name: "country", Roles: []collectors.Role{collectors.RoleProjection}, Evidence: collectors.EvidenceAccessHistory},
	}
	ranks, err := analyzer.Rank(st.Ident, st, []collectors.QueryEvent{ev}, analyzer.RankOptions{Now: now})
	require.NoError(t, err)
	require.Len(t, ranks, 1)
	require.Equal(t, "tenant_id", ranks[0].Column)
	// access history 0.5 × unknown operator 0.5 × (1 − typical 1/NDV).
	require.InDelta(t, 0.5*analyzer.BenefitUnknownOp*(1-1.0/totalRows), ranks[0].Score, 1e-9)
	require.Equal(t, map[string]float64{"unknown": 1}, ranks[0].OpMix)
}

func TestRankRobustToOddInput(t *testing.T) {
	st := eventsTable(t, "events", nil)
	odd := []*expr.Node{
		nil,
		{Kind: expr.NodePred},
		{Kind: expr.NodeOr},
		{Kind: expr.NodeNot},
		{Kind: expr.NodeAnd, Children: []*expr.Node{nil, {Kind: expr.NodeOr, Children: []*expr.Node{nil}}}},
		pred("nope", expr.OpEq, num("1")),
		pred("tenant_id", expr.OpBetween, num("5")),
		pred("tenant_id", expr.OpEq, num("NaN")),
		pred("tenant_id", expr.OpLt, num("1e400")),
		pred("tenant_id", expr.OpEq, str("not a number")),
		pred("ts", expr.OpGt, ts("yesterday")),
		pred("ts", expr.OpEq, num("1714567890")),
		pred("country", expr.OpLike),
		pred("country", expr.OpIn),
		trpred("year", "ts", expr.OpEq, num("-5")),
		trpred("day", "tenant_id", expr.OpEq, date("2026-11-02")),
		trpred("hour", "ts", expr.OpBetween, ts("2026-11-02 10:30:00"), ts("2026-11-02 09:00:00")),
		pred("amount", expr.OpGt, expr.Value{Kind: expr.KindInterval, Text: "1 day"}),
	}
	var events []collectors.QueryEvent
	for i, n := range odd {
		events = append(events, event(st, string(rune('a'+i)), n, collectors.Evidence("made-up")))
	}
	events = append(events, collectors.QueryEvent{QueryID: "empty"})
	for _, s := range []*lake.State{st, nil, {}} {
		ranks, err := analyzer.Rank(st.Ident, s, events, analyzer.RankOptions{})
		require.NoError(t, err)
		m := byColumn(t, ranks)
		if s == st {
			require.NotContains(t, m, "nope")
		}
		require.NotEmpty(t, analyzer.Candidates(ranks, s, analyzer.CandidateOptions{}))
		for _, r := range ranks {
			require.GreaterOrEqual(t, r.Selectivity, 0.0)
			require.LessOrEqual(t, r.Selectivity, 1.0)
			require.LessOrEqual(t, r.Share, 1.0)
		}
	}
	ranks, err := analyzer.Rank(st.Ident, st, nil, analyzer.RankOptions{})
	require.NoError(t, err)
	require.Empty(t, ranks)
}

func TestRankOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		opts analyzer.RankOptions
		want []string
	}{
		{"negative half-life", analyzer.RankOptions{HalfLife: -time.Hour}, []string{"half-life -1h0m0s is negative"}},
		{"all problems at once", analyzer.RankOptions{
			EvidenceWeights:   map[collectors.Evidence]float64{collectors.EvidenceSQL: 2},
			PartitionDiscount: -1,
		}, []string{`evidence weight of "sql-parse" is 2`, "partition discount -1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			_, err = analyzer.Rank(lake.Ident{Name: "t"}, nil, nil, tc.opts)
			require.ErrorContains(t, err, "rank columns of t")
		})
	}
	require.NoError(t, analyzer.RankOptions{}.Validate())
}

func TestRankUnknownRangeTakesTheColumnsTypicalRange(t *testing.T) {
	st := eventsTable(t, "events", nil)
	masked := expr.Value{Kind: expr.KindUnknown, Text: "(timestamp-9f2c)"}
	known := event(st, "known", pred("ts", expr.OpGtEq, ts("2026-11-03 00:00:00")), collectors.EvidenceScanReport) // keeps 200 of 400
	hidden := event(st, "hidden", pred("ts", expr.OpGtEq, masked), collectors.EvidenceScanReport)
	cases := []struct {
		name   string
		events []collectors.QueryEvent
		want   float64
	}{
		{"alone: the default 1/3", []collectors.QueryEvent{hidden}, analyzer.BenefitRange * (1 - analyzer.DefaultRangeSelectivity)},
		{"with a known range on the column: its selectivity", []collectors.QueryEvent{known, hidden}, 2 * analyzer.BenefitRange * (1 - 0.5)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ranks, err := analyzer.Rank(st.Ident, st, tc.events, analyzer.RankOptions{Now: now})
			require.NoError(t, err)
			require.Len(t, ranks, 1)
			require.InDelta(t, tc.want, ranks[0].Score, 1e-9)
		})
	}
}

func TestRankFoldsScanReportsIntoTheirQuery(t *testing.T) {
	st := eventsTable(t, "events", nil)
	engineQuery := func(id string, start time.Time) collectors.QueryEvent {
		ev := event(st, id, pred("country", expr.OpEq, str("FR")), collectors.EvidenceSQL)
		ev.StartTime, ev.EndTime = start, start.Add(20*time.Second)
		return ev
	}
	report := func(at time.Time, engine string, f *expr.Node) collectors.QueryEvent {
		ev := event(st, "report-"+at.String(), f, collectors.EvidenceScanReport)
		ev.Source, ev.Engine, ev.EngineVersion, ev.State = "iceberg-scanreport", collectors.EngineIceberg, engine, collectors.StateUnknown
		ev.StartTime = at
		return ev
	}
	tenant := pred("tenant_id", expr.OpEq, num("150"))
	fr := pred("country", expr.OpEq, str("FR"))
	cases := []struct {
		name           string
		events         []collectors.QueryEvent
		tenantShare    float64
		countryQueries int
		countryScore   float64
	}{
		{"report during the query joins it", []collectors.QueryEvent{
			engineQuery("q1", now.Add(-10*time.Second)), report(now, "trino 467", tenant),
		}, 1, 1, 0.9 * (1 - selFR)},
		{"the stronger evidence credits a column once", []collectors.QueryEvent{
			engineQuery("q1", now.Add(-10*time.Second)), report(now, "", fr),
		}, 0, 1, 1 - selFR},
		{"two queries running: ambiguous, counted apart", []collectors.QueryEvent{
			engineQuery("q1", now.Add(-10*time.Second)), engineQuery("q2", now.Add(-5*time.Second)), report(now, "trino 467", tenant),
		}, 1.0 / 3, 2, 2 * 0.9 * (1 - selFR)},
		{"report after the query ended", []collectors.QueryEvent{
			engineQuery("q1", now.Add(-time.Minute)), report(now, "trino 467", tenant),
		}, 0.5, 1, 0.9 * (1 - selFR)},
		{"report from another engine", []collectors.QueryEvent{
			engineQuery("q1", now.Add(-10*time.Second)), report(now, "spark 3.5.1", tenant),
		}, 0.5, 1, 0.9 * (1 - selFR)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A half-life of centuries: a minute of age changes the weight by < 1e-8.
			ranks, err := analyzer.Rank(st.Ident, st, tc.events, analyzer.RankOptions{Now: now, HalfLife: math.MaxInt64})
			require.NoError(t, err)
			m := byColumn(t, ranks)
			require.InDelta(t, tc.tenantShare, m["tenant_id"].Share, 1e-7)
			require.Equal(t, tc.countryQueries, m["country"].Queries)
			require.InDelta(t, tc.countryScore, m["country"].Score, 1e-7)
		})
	}
}
