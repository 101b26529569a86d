package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/lake"
)

// TestDottedNamesKeptApart: a table access is keyed by its table's name in
// floe's identifier syntax (the lower-cased lake.Ident.String), so the
// table "a.b" of namespace db and the table b of the nested namespace db.a
// — both db.a.b once joined with dots — keep their own queries, runs,
// plans and leases.
func TestDottedNamesKeptApart(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) { testDottedNamesKeptApart(t, db.Open(t)) })
}

func testDottedNamesKeptApart(t *testing.T, s *Store) {
	ctx := t.Context()
	dotted := lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "A.b"}
	nested := lake.Ident{Catalog: "local", Namespace: []string{"db", "a"}, Name: "b"}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ev := func(q string, id lake.Ident) collectors.QueryEvent {
		return collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: q, StartTime: at, State: collectors.StateSucceeded,
			Tables: []collectors.TableAccess{{Catalog: id.Catalog, Namespace: id.NamespaceString(), Name: id.Name,
				Filter: &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: id.String(), Column: "id", Op: expr.OpIsNull}}}}}
	}
	_, _, err := s.InsertEvents(ctx, []collectors.QueryEvent{ev("q1", dotted), ev("q2", dotted), ev("q3", nested)})
	require.NoError(t, err)

	keys := func(q string) map[string]int {
		rows, err := s.db.QueryContext(ctx, q)
		require.NoError(t, err)
		out := map[string]int{}
		for rows.Next() {
			var k string
			require.NoError(t, rows.Scan(&k))
			out[k]++
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		return out
	}
	want := map[string]int{`local.db."a.b"`: 2, "local.db.a.b": 1}
	require.Equal(t, want, keys(`SELECT table_key FROM table_accesses`))
	require.Equal(t, want, keys(`SELECT table_key FROM predicates`))

	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{dotted.String(), []string{"q1", "q2"}},
		{`db."a.b"`, []string{"q1", "q2"}},
		{`"local"."db"."A.B"`, []string{"q1", "q2"}},
		{nested.String(), []string{"q3"}},
		{"db.a.b", []string{"q3"}},
		{"a.b", []string{"q3"}},
	} {
		evs, err := s.Queries(ctx, QueryFilter{Table: tc.filter})
		require.NoError(t, err)
		var got []string
		for _, e := range evs {
			got = append(got, e.QueryID)
		}
		require.Equal(t, tc.want, got, tc.filter)
	}
	stats, err := s.TableStats(ctx, QueryFilter{}, 5)
	require.NoError(t, err)
	names := map[string]int{}
	for _, st := range stats {
		names[st.Table] = st.Queries
	}
	require.Equal(t, map[string]int{`local.db."A.b"`: 2, "local.db.a.b": 1}, names)

	// Runs, plans and leases are stored under Ident.String.
	require.NoError(t, s.StartRun(ctx, RunRecord{ID: "r1", Table: dotted.String(), Status: "running", StartedAt: at}))
	for table, n := range map[string]int{dotted.String(): 1, nested.String(): 0} {
		runs, err := s.Runs(ctx, table, 0)
		require.NoError(t, err)
		require.Len(t, runs, n, table)
	}
	_, err = s.InsertPlan(ctx, PlanRecord{ID: "p1", Table: nested.String(), Layout: "sort(id)", State: "proposed", CreatedAt: at})
	require.NoError(t, err)
	for table, n := range map[string]int{dotted.String(): 0, nested.String(): 1} {
		plans, err := s.Plans(ctx, PlanFilter{Table: table})
		require.NoError(t, err)
		require.Len(t, plans, n, table)
	}
	got, err := s.ClaimTables(ctx, "h1", []string{dotted.String()}, 1, at.Add(time.Minute), at)
	require.NoError(t, err)
	require.Equal(t, []string{dotted.String()}, got)
	got, err = s.ClaimTables(ctx, "h2", []string{nested.String()}, 1, at.Add(time.Minute), at)
	require.NoError(t, err)
	require.Equal(t, []string{nested.String()}, got, "a lease of one is no lease of the other")
}
