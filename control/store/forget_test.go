package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/lake"
)

// TestForget deletes the telemetry of two tables and of one log
// directory, as floe demo --reset does: the raw and folded events that
// name either table go (a join with another table included), with the
// shapes only they used and the file records under the directory; events
// of other tables and of no table, a shape another event still uses, and
// files of a sibling directory stay. A second call deletes nothing, and
// the forgotten events can be collected again. Events named by their keys
// go whatever tables they read.
func TestForget(t *testing.T) {
	ordersAccess := func(tenant int) collectors.TableAccess {
		return collectors.TableAccess{Catalog: "lake", Namespace: "web", Name: "orders", Direct: true, Evidence: collectors.EvidenceSQL,
			Filter: pred("lake.web.orders", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(tenant)})}
	}
	eventsOn := func(tenant int) collectors.TableAccess {
		return eventsAccess(pred("local.web.events", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(tenant)}))
	}
	salesAccess := collectors.TableAccess{Catalog: "local", Namespace: "sales", Name: "orders", Direct: true, Evidence: collectors.EvidenceSQL}
	old := []collectors.QueryEvent{ // folded below
		event("old-events-1", "u", t0, eventsOn(1)),
		event("old-events-2", "u", t0.Add(time.Second), eventsOn(1)), // the same shape as old-events-1
		event("old-orders", "u", t0.Add(2*time.Second), ordersAccess(1)),
		event("old-sales", "u", t0.Add(3*time.Second), salesAccess),
	}
	recent := []collectors.QueryEvent{
		event("events", "u", t0.Add(time.Hour), eventsOn(2)),
		event("join", "u", t0.Add(time.Hour+time.Second), eventsOn(3), ordersAccess(3)),
		event("orders", "u", t0.Add(time.Hour+2*time.Second), ordersAccess(2)),
		event("no-table", "u", t0.Add(time.Hour+3*time.Second)),
		event("sales", "u", t0.Add(time.Hour+4*time.Second), salesAccess),
	}
	logs := "/var/floe-data/logs"
	files := []string{logs, logs + "/trino/a.ndjson", logs + "/spark/app_1/events_1", logs + "2/b.ndjson", "/var/floe-data/other.csv"}
	forget := store.Forget{
		Tables:     []lake.Ident{{Catalog: "local", Namespace: []string{"web"}, Name: "events"}, {Catalog: "LOCAL", Namespace: []string{"sales"}, Name: "Orders"}},
		FilesUnder: logs + "/",
	}
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		_, _, err := s.InsertEvents(ctx, old)
		require.NoError(t, err)
		folded, _, err := s.PruneEvents(ctx, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, len(old), folded)
		_, _, err = s.InsertEvents(ctx, recent)
		require.NoError(t, err)
		for _, p := range files {
			require.NoError(t, s.RecordFile(ctx, collectors.FileRecord{Path: p, Size: 1, ModTime: t0}))
		}
		before, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, [3]int64{5, 4, 3}, [3]int64{before.Events, before.FoldedEvents, before.FoldedShapes})

		got, err := s.Forget(ctx, forget)
		require.NoError(t, err)
		require.Equal(t, store.Forgotten{Events: 3, FoldedEvents: 3, Shapes: 2, Files: 3}, got)

		raw, err := s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Equal(t, []string{"orders", "no-table"}, queryIDs(raw))
		fq, err := s.FoldedQueries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Equal(t, []string{"old-orders"}, queryIDs(fq))
		after, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), after.FoldedShapes, "the shape of lake.web.orders stays")
		left, err := s.Files(ctx)
		require.NoError(t, err)
		var paths []string
		for _, f := range left {
			paths = append(paths, f.Path)
		}
		require.Equal(t, []string{"/var/floe-data/logs2/b.ndjson", "/var/floe-data/other.csv"}, paths)

		got, err = s.Forget(ctx, forget)
		require.NoError(t, err)
		require.Equal(t, store.Forgotten{}, got, "nothing is left to forget")

		// By key: an event of no table and a folded one go, with the
		// shape only it used; a key nothing has is no error.
		keys := []store.EventKey{{Source: "trino-event", QueryID: "no-table"}, {Source: "trino-event", QueryID: "old-orders"},
			{Source: "spark-eventlog", QueryID: "orders"}, {Source: "trino-event", QueryID: "never-stored"}}
		got, err = s.Forget(ctx, store.Forget{Events: keys})
		require.NoError(t, err)
		require.Equal(t, store.Forgotten{Events: 1, FoldedEvents: 1, Shapes: 1}, got)
		raw, err = s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Equal(t, []string{"orders"}, queryIDs(raw), "another source's query id is another event")
		sz, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, [2]int64{0, 0}, [2]int64{sz.FoldedEvents, sz.FoldedShapes})

		// Collected again, the forgotten events are new, not duplicates
		// of a folded copy.
		ins, dup, err := s.InsertEvents(ctx, append(old[:3:3], recent...))
		require.NoError(t, err)
		require.Equal(t, [2]int{7, 1}, [2]int{ins, dup})
	})
}

func queryIDs(evs []collectors.QueryEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.QueryID
	}
	return out
}
