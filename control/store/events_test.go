package store_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// mixedBatches are batches with what collection meets: duplicates within
// a batch and across batches, unfinished events replaced by their
// finished copies (stored in an earlier batch, and earlier in the same
// batch), events that started at the same nanosecond, events without
// tables, and accesses with many columns and predicates, a long IN list,
// a metadata table and a write.
func mixedBatches() [][]collectors.QueryEvent {
	tables := []string{"orders", "events", "sessions", "payments"}
	access := func(i, k int) collectors.TableAccess {
		name := tables[(i+k)%len(tables)]
		tbl := "lake.web." + name
		in := make([]expr.Value, 3+(i%3)*(store.MaxIndexedValues/2))
		for v := range in {
			in[v] = expr.Value{Kind: expr.KindNumber, Text: strconv.Itoa(v)}
		}
		var snap *int64
		if i%4 == 0 {
			s := int64(1000 + i)
			snap = &s
		}
		return collectors.TableAccess{Catalog: "lake", Namespace: "web", Name: name, Direct: k == 0, Write: k == 2, SnapshotID: snap,
			Evidence: collectors.EvidenceSQL, FilterText: []string{fmt.Sprintf("tenant_id = %d", i)},
			Filter: &expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
				pred(tbl, "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: strconv.Itoa(i % 5)}),
				{Kind: expr.NodeOr, Children: []*expr.Node{
					pred(tbl, "event_ts", "day", expr.OpGtEq, expr.Value{Kind: expr.KindDate, Text: "2026-10-01"}),
					pred(tbl, "id", "", expr.OpIn, in...),
				}},
				{Kind: expr.NodeNot, Children: []*expr.Node{pred(tbl, "region", "lower", expr.OpIsNull)}},
			}},
			Columns: []collectors.ColumnUse{
				{Name: "tenant_id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL},
				{Name: "id", Roles: []collectors.Role{collectors.RoleFilter, collectors.RoleProjection}, Evidence: collectors.EvidenceSQL},
				{Name: "amount", Roles: []collectors.Role{collectors.RoleProjection}},
			},
			Metrics: collectors.TableMetrics{BytesScanned: int64(i), RowsScanned: int64(k)}}
	}
	ev := func(i int) collectors.QueryEvent {
		var ts []collectors.TableAccess
		for k := range i % 4 {
			ts = append(ts, access(i, k))
		}
		if i%7 == 0 {
			ts = append(ts, collectors.TableAccess{Catalog: "lake", Namespace: "web", Name: "orders", Evidence: collectors.MetadataEvidence("snapshots")})
		}
		e := event(fmt.Sprintf("q%03d", i), fmt.Sprintf("user%d", i%3), t0.Add(time.Duration(i/2)*time.Second), ts...)
		if i%5 == 0 {
			e.State = collectors.StateFailed
		}
		return e
	}
	running := func(e collectors.QueryEvent) collectors.QueryEvent {
		e.State, e.EndTime, e.Tables = collectors.StateUnknown, time.Time{}, e.Tables[:min(1, len(e.Tables))]
		return e
	}
	var first, second []collectors.QueryEvent
	for i := range 60 {
		first = append(first, ev(i))
	}
	for i := 60; i < 70; i++ {
		first = append(first, running(ev(i)))
	}
	first = append(first, ev(3), ev(4)) // duplicates within the batch
	for i := 60; i < 65; i++ {
		second = append(second, ev(i)) // finished: replaces the stored running copy
	}
	for i := 65; i < 70; i++ {
		second = append(second, running(ev(i))) // running again: a duplicate
	}
	for i := 70; i < 80; i++ {
		// Running then finished in one batch: the finished one replaces it.
		second = append(second, running(ev(i)), ev(i))
	}
	for i := 80; i < 85; i++ {
		// Finished then running: the running one is a duplicate.
		second = append(second, ev(i), running(ev(i)))
	}
	second = append(second, ev(10), ev(20)) // stored in the first batch
	return [][]collectors.QueryEvent{first, second, second}
}

// TestInsertSameOnBothDrivers stores the same batches on both drivers
// (PostgreSQL's by COPY, SQLite's by INSERTs) and reads back the same
// events and the same table statistics, with the same counts of inserted
// and duplicate events.
func TestInsertSameOnBothDrivers(t *testing.T) {
	type result struct {
		counts [][2]int
		evs    []collectors.QueryEvent
		stats  [][]store.TableStat
	}
	got := map[string]result{}
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		var r result
		for _, batch := range mixedBatches() {
			ins, dup, err := s.InsertEvents(ctx, batch)
			require.NoError(t, err)
			r.counts = append(r.counts, [2]int{ins, dup})
		}
		var err error
		r.evs, err = s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		for _, f := range []store.QueryFilter{{}, {Table: "web.orders"}, {Since: t0.Add(30 * time.Second)}} {
			st, err := s.TableStats(ctx, f, 10)
			require.NoError(t, err)
			r.stats = append(r.stats, st)
		}
		got[db.Name] = r
	})
	sq, pq := got[store.DriverSQLite], got[store.DriverPostgres]
	require.Equal(t, [][2]int{{70, 2}, {30, 12}, {0, 42}}, sq.counts)
	require.Len(t, sq.evs, 85)
	for _, e := range sq.evs {
		if n, _ := strconv.Atoi(e.QueryID[1:]); n >= 60 && n < 65 || n >= 70 {
			require.NotEqual(t, collectors.StateUnknown, e.State, "%s is finished", e.QueryID)
		}
	}
	require.Equal(t, sq.counts, pq.counts)
	require.Equal(t, sq.evs, pq.evs)
	require.Equal(t, sq.stats, pq.stats)
}

// TestInsertCopyConflict: a concurrent writer stores a key of the batch
// after PostgreSQL's COPY path looked the keys up, so the COPY breaks the
// unique constraint; the batch is stored again by INSERTs, the key
// counted as a duplicate and the rest stored once.
func TestInsertCopyConflict(t *testing.T) {
	db := store.NewTestDB(t, store.DriverPostgres)
	s := db.Open(t)
	ctx := t.Context()
	other, err := pgx.Connect(ctx, db.Cfg.DSN)
	require.NoError(t, err)
	defer func() { require.NoError(t, other.Close(context.WithoutCancel(ctx))) }()
	// Watches from outside other's transaction, in which pg_stat_activity
	// would stay as it first read it.
	watch, err := pgx.Connect(ctx, db.Cfg.DSN)
	require.NoError(t, err)
	defer func() { require.NoError(t, watch.Close(context.WithoutCancel(ctx))) }()

	// The other writer's event, not committed yet: the lookup does not
	// see it, and the COPY waits for it on the unique index.
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO query_events (source, query_id, engine, start_time, state) VALUES ('trino-event', 'q2', 'trino', 1, 'SUCCEEDED')`)
	require.NoError(t, err)

	batch := []collectors.QueryEvent{
		event("q1", "u", t0, eventsAccess(pred("local.web.events", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "1"}))),
		event("q2", "u", t0.Add(time.Second), eventsAccess(nil)),
		event("q3", "u", t0.Add(2*time.Second), eventsAccess(nil)),
	}
	type res struct {
		ins, dup int
		err      error
	}
	done := make(chan res, 1)
	go func() {
		ins, dup, err := s.InsertEvents(ctx, batch)
		done <- res{ins, dup, err}
	}()
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'copy%'`).Scan(&waiting))
		return waiting == 1
	}, 10*time.Second, 10*time.Millisecond, "the COPY waits for the other writer")
	require.NoError(t, tx.Commit(ctx))

	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, 2, r.ins)
	require.Equal(t, 1, r.dup)
	evs, err := s.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 3)
	require.Equal(t, "q2", evs[0].QueryID, "the other writer's, which started at 1ns")
	require.Empty(t, evs[0].Tables)
	require.Equal(t, batch[0], evs[1])
	require.Equal(t, batch[2], evs[2])
}
