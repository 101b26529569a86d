package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// analysisView is what ranking and projection read of an event: what
// folding must keep exactly.
func analysisView(ev collectors.QueryEvent) collectors.QueryEvent {
	v := collectors.QueryEvent{Source: ev.Source, QueryID: ev.QueryID, Engine: ev.Engine, EngineVersion: ev.EngineVersion,
		State: ev.State, StartTime: ev.StartTime, EndTime: ev.EndTime,
		Metrics: collectors.QueryMetrics{ElapsedMs: ev.Metrics.ElapsedMs, BytesScanned: ev.Metrics.BytesScanned}}
	for _, a := range ev.Tables {
		if _, meta := a.MetadataTable(); meta {
			continue
		}
		r := collectors.TableAccess{Catalog: a.Catalog, Namespace: a.Namespace, Name: a.Name, Write: a.Write, Filter: a.Filter,
			Evidence: a.Evidence, Metrics: collectors.TableMetrics{BytesScanned: a.Metrics.BytesScanned}}
		for _, c := range a.Columns {
			if slices.Contains(c.Roles, collectors.RoleFilter) {
				r.Columns = append(r.Columns, collectors.ColumnUse{Name: c.Name, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: c.Evidence})
			}
		}
		v.Tables = append(v.Tables, r)
	}
	return v
}

// analysisViews are the views of the events that an analysis of table
// ("ns.name", or "" for any) counts: those with a read or write of it that
// is no metadata-table read.
func analysisViews(table string, evs []collectors.QueryEvent) []collectors.QueryEvent {
	var out []collectors.QueryEvent
	for _, ev := range evs {
		v := analysisView(ev)
		if slices.ContainsFunc(v.Tables, func(a collectors.TableAccess) bool {
			return table == "" || strings.HasSuffix(a.Namespace+"."+a.Name, table)
		}) {
			out = append(out, v)
		}
	}
	return out
}

// statCounts are the parts of a TableStat that folded events keep.
func statCounts(sts []store.TableStat) []store.TableStat {
	out := make([]store.TableStat, len(sts))
	for i, s := range sts {
		out[i] = store.TableStat{Table: s.Table, Queries: s.Queries, Failed: s.Failed, FirstSeen: s.FirstSeen, LastSeen: s.LastSeen}
	}
	return out
}

// TestPruneEvents prunes the mixed batches at a cutoff inside them: no raw
// event older than the cutoff is left, the workload analysis reads and the
// per-table counts are unchanged, a second prune does nothing, and
// collecting the pruned events again stores nothing.
func TestPruneEvents(t *testing.T) {
	cutoff := t0.Add(20 * time.Second) // q000 … q039 started before it
	filters := []store.QueryFilter{{}, {Table: "web.orders"}, {Table: "web.events", Since: t0.Add(5 * time.Second)},
		{Since: t0.Add(10 * time.Second), Until: t0.Add(30 * time.Second)}, {Source: "trino-event"}}
	got := map[string][]collectors.QueryEvent{}
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		for _, batch := range mixedBatches() {
			_, _, err := s.InsertEvents(ctx, batch)
			require.NoError(t, err)
		}
		var (
			views [][]collectors.QueryEvent
			stats [][]store.TableStat
		)
		for _, f := range filters {
			evs, err := s.WorkloadEvents(ctx, f)
			require.NoError(t, err)
			raw, err := s.Queries(ctx, f)
			require.NoError(t, err)
			require.Equal(t, raw, evs, "nothing folded yet")
			views = append(views, analysisViews(f.Table, evs))
			st, err := s.TableStats(ctx, f, 10)
			require.NoError(t, err)
			stats = append(stats, statCounts(st))
		}
		before, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Size{Bytes: before.Bytes, Events: 85}, before)

		folded, deleted, err := s.PruneEvents(ctx, cutoff)
		require.NoError(t, err)
		require.Equal(t, 40, deleted)
		require.Equal(t, 40, folded)

		raw, err := s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Len(t, raw, 45)
		for _, ev := range raw {
			require.False(t, ev.StartTime.Before(cutoff), "%s started before the cutoff", ev.QueryID)
		}
		for i, f := range filters {
			evs, err := s.WorkloadEvents(ctx, f)
			require.NoError(t, err)
			require.Equal(t, views[i], analysisViews(f.Table, evs), "filter %+v", f)
			st, err := s.TableStats(ctx, f, 10)
			require.NoError(t, err)
			require.Equal(t, stats[i], statCounts(st), "filter %+v", f)
		}
		fq, err := s.FoldedQueries(ctx, store.QueryFilter{Table: "web.orders"})
		require.NoError(t, err)
		require.NotEmpty(t, fq)
		for _, ev := range fq {
			require.True(t, ev.StartTime.Before(cutoff))
			require.Empty(t, ev.SQL)
		}
		after, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(45), after.Events)
		require.Equal(t, int64(40), after.FoldedEvents)

		// Idempotent.
		folded, deleted, err = s.PruneEvents(ctx, cutoff)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, 0}, [2]int{folded, deleted})

		// The log read again: the pruned events are duplicates.
		ins, dup, err := s.InsertEvents(ctx, mixedBatches()[0])
		require.NoError(t, err)
		require.Equal(t, 0, ins)
		require.Equal(t, len(mixedBatches()[0]), dup)
		raw, err = s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Len(t, raw, 45)
		all, err := s.WorkloadEvents(ctx, store.QueryFilter{})
		require.NoError(t, err)
		got[db.Name] = all
	})
	require.Equal(t, got[store.DriverSQLite], got[store.DriverPostgres])
}

// TestPruneConcurrentInsert prunes several batches while another writer
// stores new events and collects pruned ones again: every event ends up
// raw or folded, never both, and none older than the cutoff stays raw.
func TestPruneConcurrentInsert(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		writer := db.Open(t) // another process's store
		old := make([]collectors.QueryEvent, 2500)
		for i := range old {
			old[i] = event(fmt.Sprintf("old%04d", i), "u", t0.Add(time.Duration(i)*time.Second),
				eventsAccess(pred("local.web.events", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(i % 7)})))
		}
		_, _, err := s.InsertEvents(ctx, old)
		require.NoError(t, err)
		cutoff := t0.Add(24 * time.Hour)

		done := make(chan error, 1)
		go func() {
			for i := range 20 {
				batch := []collectors.QueryEvent{
					event(fmt.Sprintf("new%02d", i), "u", cutoff.Add(time.Duration(i)*time.Second), eventsAccess(nil)),
					old[i*100], // collected again
				}
				if _, _, err := writer.InsertEvents(ctx, batch); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		folded, deleted, err := s.PruneEvents(ctx, cutoff)
		require.NoError(t, err)
		require.NoError(t, <-done)
		// An old event stored again after its batch was pruned is raw
		// again until the next prune, which folds nothing twice.
		f2, d2, err := s.PruneEvents(ctx, cutoff)
		require.NoError(t, err)
		require.Equal(t, 2500, folded+f2, "each old event folded once")
		require.GreaterOrEqual(t, deleted+d2, 2500)
		require.Equal(t, 0, f2, "a raw copy of a folded event is deleted, not folded again")

		raw, err := s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Len(t, raw, 20)
		for _, ev := range raw {
			require.False(t, ev.StartTime.Before(cutoff))
		}
		fq, err := s.FoldedQueries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Len(t, fq, 2500)
		all, err := s.WorkloadEvents(ctx, store.QueryFilter{Table: "web.events"})
		require.NoError(t, err)
		require.Len(t, all, 2520)
	})
}
