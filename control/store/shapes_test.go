package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// panelTables are the tables a dashboard panel's query reads, with the
// same filter every run: panel p filters tenant p; every third panel joins
// sales.orders on an IN list; every fourth reads a metadata table too.
func panelTables(p int) []collectors.TableAccess {
	num := func(n int) expr.Value { return expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(n)} }
	ts := []collectors.TableAccess{eventsAccess(&expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
		pred("local.web.events", "tenant_id", "", expr.OpEq, num(p)),
		pred("local.web.events", "ts", "day", expr.OpGtEq, expr.Value{Kind: expr.KindDate, Text: "2026-04-01"}),
	}})}
	if p%3 == 2 {
		ts = append(ts, collectors.TableAccess{Catalog: "local", Namespace: "sales", Name: "orders", Evidence: collectors.EvidenceSQL,
			Filter: pred("local.sales.orders", "o_orderkey", "", expr.OpIn, num(p), num(p+10), num(p+20)),
			Columns: []collectors.ColumnUse{
				{Name: "o_orderkey", Roles: []collectors.Role{collectors.RoleFilter, collectors.RoleJoin}, Evidence: collectors.EvidenceSQL},
				{Name: "o_comment", Roles: []collectors.Role{collectors.RoleProjection}},
			}})
	}
	if p%4 == 3 {
		ts = append(ts, collectors.TableAccess{Catalog: "local", Namespace: "web", Name: "events", Evidence: collectors.MetadataEvidence("snapshots")})
	}
	return ts
}

// dashboardEvents are runs refreshes, five minutes apart from start, of
// the panels first…first+panels-1 of a dashboard: the same tables and
// filters each run, with per-query fields of their own (query id, times,
// elapsed time, bytes scanned in all and per table, state, user, SQL).
func dashboardEvents(prefix string, start time.Time, runs, first, panels int) []collectors.QueryEvent {
	var evs []collectors.QueryEvent
	for r := range runs {
		at := start.Add(time.Duration(r) * 5 * time.Minute)
		for p := first; p < first+panels; p++ {
			ev := event(fmt.Sprintf("%s-r%04d-p%d", prefix, r, p), fmt.Sprintf("viewer%d", r%3), at.Add(time.Duration(p)*time.Second), panelTables(p)...)
			ev.SQL = fmt.Sprintf("SELECT count(*) FROM web.events WHERE tenant_id = %d /* run %d */", p, r)
			ev.Metrics.ElapsedMs = int64(100 + (r*7+p)%50)
			ev.Metrics.BytesScanned = int64(1<<20 + r*4096 + p)
			ev.EndTime = ev.StartTime.Add(time.Duration(ev.Metrics.ElapsedMs) * time.Millisecond)
			ev.Tables[0].Metrics.BytesScanned = int64(r*1000 + p) // as scan reports give per table
			if r%11 == 5 {
				ev.State = collectors.StateFailed
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// TestFoldedShapesShared folds the refreshes of a dashboard: each panel's
// shape is stored once, however many runs and prunes fold it, and every
// folded event reads back as analysis read it raw. Deleting folded events
// removes a shape with its last event only.
func TestFoldedShapesShared(t *testing.T) {
	monday := t0
	tuesday := t0.Add(24 * time.Hour)
	filters := []store.QueryFilter{{}, {Table: "sales.orders"}, {Table: "web.events", Since: monday.Add(time.Hour)}}
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		views := func() [][]collectors.QueryEvent {
			var out [][]collectors.QueryEvent
			for _, f := range filters {
				evs, err := s.WorkloadEvents(ctx, f)
				require.NoError(t, err)
				out = append(out, analysisViews(f.Table, evs))
			}
			return out
		}
		stats := func() [][]store.TableStat {
			var out [][]store.TableStat
			for _, f := range filters {
				st, err := s.TableStats(ctx, f, 10)
				require.NoError(t, err)
				out = append(out, statCounts(st))
			}
			return out
		}
		// Monday's dashboard has seven panels, Tuesday's the first six.
		_, _, err := s.InsertEvents(ctx, dashboardEvents("mon", monday, 40, 0, 7))
		require.NoError(t, err)
		_, _, err = s.InsertEvents(ctx, dashboardEvents("tue", tuesday, 40, 0, 6))
		require.NoError(t, err)
		wantViews, wantStats := views(), stats()
		require.Len(t, wantViews[0], 520)

		for _, step := range []struct {
			name           string
			before         time.Time
			folded, shapes int
		}{
			{"monday", tuesday, 280, 7},
			{"tuesday, sharing monday's shapes", tuesday.Add(24 * time.Hour), 240, 0},
		} {
			shapesBefore := store.CountRows(t, s, "folded_shapes")
			folded, deleted, err := s.PruneEvents(ctx, step.before)
			require.NoError(t, err, step.name)
			require.Equal(t, [2]int{step.folded, step.folded}, [2]int{folded, deleted}, step.name)
			require.Equal(t, step.shapes, store.CountRows(t, s, "folded_shapes")-shapesBefore, step.name)
			require.Equal(t, wantViews, views(), step.name)
			require.Equal(t, wantStats, stats(), step.name)
		}
		sz, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Size{Bytes: sz.Bytes, FoldedEvents: 520, FoldedShapes: 7}, sz)
		// events in every shape, orders in panels 2 and 5 of 7.
		require.Equal(t, 7+2, store.CountRows(t, s, "folded_shape_tables"))

		for _, step := range []struct {
			name           string
			before         time.Time
			events, shapes int
			left           int64
		}{
			// Panel 6 ran on Monday only: its shape goes with Monday.
			{"monday", tuesday, 280, 1, 6},
			{"again", tuesday, 0, 0, 6},
			{"tuesday", tuesday.Add(24 * time.Hour), 240, 6, 0},
		} {
			events, shapes, err := s.DeleteFolded(ctx, step.before)
			require.NoError(t, err, step.name)
			require.Equal(t, [2]int{step.events, step.shapes}, [2]int{events, shapes}, step.name)
			sz, err := s.Size(ctx)
			require.NoError(t, err)
			require.Equal(t, step.left, sz.FoldedShapes, step.name)
			left, err := s.WorkloadEvents(ctx, store.QueryFilter{})
			require.NoError(t, err)
			for _, ev := range left {
				require.False(t, ev.StartTime.Before(step.before), step.name)
			}
		}
		require.Zero(t, store.CountRows(t, s, "folded_shape_tables"), "a shape's tables go with it")
		require.Zero(t, store.CountRows(t, s, "folded_events"))
	})
}

// TestRecollectFoldedStoresNothing collects again a log whose events were
// all folded — more of them than one lookup statement of SQLite could
// hold as conditions: each is a duplicate, and nothing is stored.
func TestRecollectFoldedStoresNothing(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		evs := dashboardEvents("d", t0, 500, 0, 5)
		ins, _, err := s.InsertEvents(ctx, evs)
		require.NoError(t, err)
		require.Equal(t, 2500, ins)
		folded, _, err := s.PruneEvents(ctx, t0.Add(7*24*time.Hour))
		require.NoError(t, err)
		require.Equal(t, 2500, folded)
		before, err := s.Size(ctx)
		require.NoError(t, err)

		ins, dup, err := s.InsertEvents(ctx, evs)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, 2500}, [2]int{ins, dup})
		after, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Size{Bytes: after.Bytes, FoldedEvents: 2500, FoldedShapes: 5}, after)
		require.Equal(t, before.FoldedShapes, after.FoldedShapes)
	})
}

// TestPruneWhileDeletingFolded folds a week of a dashboard while another
// store (another daemon) deletes the folded events of the week before,
// which share every shape: the shapes the new folded events reference
// survive, and every folded event reads back.
func TestPruneWhileDeletingFolded(t *testing.T) {
	week := 7 * 24 * time.Hour
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s, other := db.Open(t), db.Open(t)
		old := dashboardEvents("old", t0, 600, 0, 5)
		_, _, err := s.InsertEvents(ctx, old)
		require.NoError(t, err)
		_, _, err = s.PruneEvents(ctx, t0.Add(week))
		require.NoError(t, err)
		recent := dashboardEvents("new", t0.Add(week), 600, 0, 5)
		_, _, err = s.InsertEvents(ctx, recent)
		require.NoError(t, err)

		done := make(chan error, 1)
		go func() {
			_, _, err := other.DeleteFolded(ctx, t0.Add(week))
			done <- err
		}()
		folded, _, err := s.PruneEvents(ctx, t0.Add(2*week))
		require.NoError(t, err)
		require.NoError(t, <-done)
		require.Equal(t, len(recent), folded)

		sz, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Size{Bytes: sz.Bytes, FoldedEvents: int64(len(recent)), FoldedShapes: 5}, sz)
		got, err := s.WorkloadEvents(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Equal(t, analysisViews("", recent), analysisViews("", got))
	})
}
