package simulator_test

import (
	"context"
	"github.com/floe-project/floe/expr"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "select 1; select 2;", []string{"select 1", "select 2"}},
		{"blank statements dropped", " ; ;select 1;\n;", []string{"select 1"}},
		{"semicolon in string", "select ';' from t; select 2", []string{"select ';' from t", "select 2"}},
		{"doubled quote", "select 'it''s;' from t;x", []string{"select 'it''s;' from t", "x"}},
		{"quoted identifier", `select "a;b" from t; y`, []string{`select "a;b" from t`, "y"}},
		{"line comment", "select 1 -- not; here\n; z", []string{"select 1 -- not; here", "z"}},
		{"block comment", "select /* ; */ 1; w", []string{"select /* ; */ 1", "w"}},
		{"unterminated comment", "select 1 /* ;", []string{"select 1 /* ;"}},
		{"no terminator", "select 1", []string{"select 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, simulator.SplitStatements(tc.in))
		})
	}
}

func TestMatchIdent(t *testing.T) {
	m := simulator.MatchIdent(lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "events"})
	cases := []struct {
		catalog, ns, name string
		want              bool
	}{
		{"", "", "EVENTS", true},
		{"", "DB", "events", true},
		{"LOCAL", "db", "events", true},
		{"other", "db", "events", false},
		{"", "db2", "events", false},
		{"", "", "events2", false},
	}
	for _, tc := range cases {
		t.Run(tc.catalog+"."+tc.ns+"."+tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, m(tc.catalog, tc.ns, tc.name))
		})
	}
}

const workloadSQL = `
-- a day of events
SELECT count(*) FROM db.events WHERE ts >= TIMESTAMP '2026-11-03 00:00:00' AND ts < TIMESTAMP '2026-11-04 00:00:00';
SELECT * FROM other WHERE x = 1;
SELECT * FROM Events e WHERE e.region = 'eu-west'
UNION ALL SELECT * FROM db.events WHERE date_trunc('day', ts) = DATE '2026-11-20';
SELECT region, sum(amount) FROM events GROUP BY region;
SELECT * FROM db.events WHERE NOT (n IS NULL OR amount > 500) AND d BETWEEN DATE '2026-11-05' AND DATE '2026-11-07';
INSERT INTO db.events SELECT * FROM staging;
`

func TestWorkloadFromSQL(t *testing.T) {
	tbl, st := buildEventsTable(t, 25, 80, 31)
	qs, warns, err := simulator.WorkloadFromSQL(strings.NewReader(workloadSQL), extract.Trino, simulator.MatchIdent(st.Ident))
	require.NoError(t, err)
	require.Empty(t, warns)
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
		require.InDelta(t, 1.0, q.Weight, 0)
	}
	// Statement 2 reads another table and statement 6 only writes events.
	require.Equal(t, []string{"stmt-1", "stmt-3", "stmt-4", "stmt-5"}, ids)
	require.Equal(t, expr.NodeOr, qs[1].Filter.Kind, "two scans of the table are OR-combined")
	require.Nil(t, qs[2].Filter, "an unfiltered scan reads the whole table")

	m, err := simulator.Measure(context.Background(), tbl, qs)
	require.NoError(t, err)
	proj := simulator.ProjectCurrent(st, qs)
	for i, q := range qs {
		got := simulator.FilesRead(st, q)
		slices.Sort(got)
		require.Equal(t, plannedPaths(t, tbl, q.Filter), got, q.ID)
		require.Equal(t, m.Queries[i].FilesScanned, proj.PerQuery[i].FilesRead)
	}
	require.Less(t, m.Queries[0].FilesScanned, len(st.DataFiles), "a one-day range prunes")
	require.Equal(t, len(st.DataFiles), m.Queries[2].FilesScanned)
}

func TestWorkloadFromSQLWarnings(t *testing.T) {
	qs, warns, err := simulator.WorkloadFromSQL(strings.NewReader("SELECT * FROM events WHERE ((;\nSELECT * FROM events WHERE x = 1"), extract.Trino, simulator.MatchIdent(lake.Ident{Name: "events"}))
	require.NoError(t, err)
	require.NotEmpty(t, warns)
	require.True(t, strings.HasPrefix(warns[0], "statement 1: "))
	require.NotEmpty(t, qs)
}

func TestWorkloadFromEvents(t *testing.T) {
	f1 := pred("ts", ">", ts(baseTime))
	f2 := pred("region", "=", str("eu-west"))
	events := []collectors.QueryEvent{
		{QueryID: "a", StartTime: baseTime, Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "db", Name: "events", Filter: f1}}},
		{QueryID: "b", Tables: []collectors.TableAccess{{Namespace: "db", Name: "events", Filter: f1}, {Namespace: "db", Name: "events", Filter: f2}}},
		{QueryID: "c", Tables: []collectors.TableAccess{{Namespace: "db", Name: "other", Filter: f1}}},
		{QueryID: "d", Tables: []collectors.TableAccess{{Namespace: "db", Name: "events", Write: true}}},
		{QueryID: "e", Tables: []collectors.TableAccess{{Namespace: "db", Name: "events", Filter: f1}, {Namespace: "db", Name: "events"}}},
		{Tables: []collectors.TableAccess{{Name: "events", Filter: f2}}},
	}
	weight := func(ev *collectors.QueryEvent) float64 {
		if ev.StartTime.IsZero() {
			return 1
		}
		return float64(ev.StartTime.Sub(baseTime.Add(-time.Hour)).Hours())
	}
	qs := simulator.WorkloadFromEvents(events, simulator.MatchIdent(lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "events"}), weight)
	require.Len(t, qs, 4)
	require.Equal(t, "a", qs[0].ID)
	require.Same(t, f1, qs[0].Filter)
	require.InDelta(t, 1.0, qs[0].Weight, 1e-9)
	require.Equal(t, expr.NodeOr, qs[1].Filter.Kind)
	require.Len(t, qs[1].Filter.Children, 2)
	require.Equal(t, "e", qs[2].ID)
	require.Nil(t, qs[2].Filter)
	require.Equal(t, "event-6", qs[3].ID)
}
