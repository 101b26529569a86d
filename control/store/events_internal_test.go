package store

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
)

// TestLongValueListStoredOnce keeps a long IN list in the filter tree only:
// its predicates row names column and op without repeating the values.
func TestLongValueListStoredOnce(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) { testLongValueListStoredOnce(t, db.Open(t)) })
}

func testLongValueListStoredOnce(t *testing.T, s *Store) {
	ctx := t.Context()
	in := func(n int) *expr.Node {
		vals := make([]expr.Value, n)
		for i := range vals {
			vals[i] = expr.Value{Kind: expr.KindNumber, Text: strconv.Itoa(i)}
		}
		return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "c.db.t", Column: "id", Op: expr.OpIn, Values: vals}}
	}
	ev := func(id string, n int) collectors.QueryEvent {
		return collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id,
			StartTime: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), State: collectors.StateSucceeded,
			Tables: []collectors.TableAccess{{Catalog: "c", Namespace: "db", Name: "t", Filter: in(n)}}}
	}
	_, _, err := s.InsertEvents(ctx, []collectors.QueryEvent{ev("short", MaxIndexedValues), ev("long", 5000)})
	require.NoError(t, err)
	rows, err := s.db.QueryContext(ctx, `SELECT e.query_id, p.op, length(p.values_json) FROM predicates p JOIN query_events e ON e.id = p.event_id ORDER BY 1`)
	require.NoError(t, err)
	got := map[string]int{}
	for rows.Next() {
		var id, op string
		var n int
		require.NoError(t, rows.Scan(&id, &op, &n))
		require.Equal(t, "in", op)
		got[id] = n
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Equal(t, 2, got["long"], "no values repeated")
	require.Greater(t, got["short"], 2)

	evs, err := s.Queries(ctx, QueryFilter{})
	require.NoError(t, err)
	for _, e := range evs {
		if e.QueryID == "long" {
			require.Len(t, e.Tables[0].Filter.Pred.Values, 5000, "the tree keeps them all")
		}
	}
}
