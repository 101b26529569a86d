package store_test

import (
	"database/sql"
	"fmt"
	"github.com/floe-project/floe/expr"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the raw database/sql driver, to tamper with a state file
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func pred(table, col, transform string, op expr.Op, vals ...expr.Value) *expr.Node {
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: table, Column: col, Op: op, Values: vals, Transform: transform}}
}

// event builds a query of web.events (and optionally sales.orders) by user.
func event(id, user string, at time.Time, tables ...collectors.TableAccess) collectors.QueryEvent {
	return collectors.QueryEvent{
		Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id, User: user,
		StartTime: at, EndTime: at.Add(1500 * time.Millisecond), State: collectors.StateSucceeded,
		StatementType: "SELECT", SQL: "SELECT 1", Tables: tables,
		Metrics: collectors.QueryMetrics{ElapsedMs: 1500, BytesScanned: 1 << 20},
	}
}

func eventsAccess(filter *expr.Node) collectors.TableAccess {
	return collectors.TableAccess{Catalog: "local", Namespace: "web", Name: "events", Direct: true,
		Filter: filter, Evidence: collectors.EvidenceSQL,
		Columns: []collectors.ColumnUse{{Name: "tenant_id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL}}}
}

func TestOpenMigrates(t *testing.T) {
	for _, name := range []string{"state.db", "dir with spaces/état.db"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), name)
			s, err := store.Open(ctx, path)
			require.NoError(t, err)
			v, err := s.Version(ctx)
			require.NoError(t, err)
			require.Equal(t, store.SchemaVersion(), v)
			require.GreaterOrEqual(t, v, 2)
			require.NoError(t, s.Close())
			require.FileExists(t, path)

			// Opening an up-to-date database changes nothing.
			s, err = store.Open(ctx, path)
			require.NoError(t, err)
			v, err = s.Version(ctx)
			require.NoError(t, err)
			require.Equal(t, store.SchemaVersion(), v)
			require.NoError(t, s.Close())
		})
	}
}

func TestOpenMemory(t *testing.T) {
	s, err := store.Open(t.Context(), ":memory:")
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	ins, _, err := s.InsertEvents(t.Context(), []collectors.QueryEvent{event("q", "u", t0)})
	require.NoError(t, err)
	require.Equal(t, 1, ins)
}

// TestOpenWAL: the store switches a SQLite file to WAL.
func TestOpenWAL(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := store.Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	var mode string
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
	require.NoError(t, db.Close())
	require.Equal(t, "wal", mode)
}

// TestReopen: opening an up-to-date database changes nothing.
func TestReopen(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		for range 2 {
			s := db.Open(t)
			v, err := s.Version(t.Context())
			require.NoError(t, err)
			require.Equal(t, store.SchemaVersion(), v)
			require.NoError(t, s.Ping(t.Context()))
		}
	})
}

func TestOpenNewerSchema(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		store.Exec(t, s, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)`, store.SchemaVersion()+7)

		_, err := store.OpenConfig(ctx, db.Cfg)
		require.ErrorIs(t, err, store.ErrSchemaTooNew)
		require.ErrorContains(t, err, fmt.Sprintf("version %d", store.SchemaVersion()+7))
	})
}

func TestInsertIdempotent(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		batch := []collectors.QueryEvent{
			event("q1", "alice", t0, eventsAccess(pred("local.web.events", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "7"}))),
			event("q2", "bob", t0.Add(time.Minute)),
			event("q1", "alice", t0), // the same event twice in one batch
		}
		ins, dup, err := s.InsertEvents(ctx, batch)
		require.NoError(t, err)
		require.Equal(t, 2, ins)
		require.Equal(t, 1, dup)

		ins, dup, err = s.InsertEvents(ctx, batch)
		require.NoError(t, err)
		require.Equal(t, 0, ins)
		require.Equal(t, 3, dup)

		evs, err := s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.Len(t, evs[0].Tables, 1, "a duplicate adds no accesses")
		require.Len(t, evs[0].Tables[0].Columns, 1)

		stats, err := s.TableStats(ctx, store.QueryFilter{}, 0)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.Equal(t, 1, stats[0].Queries)
	})
}

// TestInsertReplacesUnfinished stores a query read from a log still being
// written, then the same query finished.
func TestInsertReplacesUnfinished(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		running := event("app/7", "u", t0, eventsAccess(nil))
		running.State, running.EndTime = collectors.StateUnknown, time.Time{}
		done := event("app/7", "u", t0, eventsAccess(pred("local.web.events", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "1"})),
			collectors.TableAccess{Catalog: "local", Namespace: "sales", Name: "orders", Write: true})

		for _, step := range []struct {
			name     string
			ev       collectors.QueryEvent
			ins, dup int
			state    collectors.State
			tables   int
		}{
			{"running", running, 1, 0, collectors.StateUnknown, 1},
			{"running again", running, 0, 1, collectors.StateUnknown, 1},
			{"finished replaces running", done, 1, 0, collectors.StateSucceeded, 2},
			{"finished again", done, 0, 1, collectors.StateSucceeded, 2},
			{"running after finished", running, 0, 1, collectors.StateSucceeded, 2},
		} {
			ins, dup, err := s.InsertEvents(ctx, []collectors.QueryEvent{step.ev})
			require.NoError(t, err, step.name)
			require.Equal(t, step.ins, ins, step.name)
			require.Equal(t, step.dup, dup, step.name)
			evs, err := s.Queries(ctx, store.QueryFilter{})
			require.NoError(t, err)
			require.Len(t, evs, 1, step.name)
			require.Equal(t, step.state, evs[0].State, step.name)
			require.Len(t, evs[0].Tables, step.tables, step.name)
		}
		stats, err := s.TableStats(ctx, store.QueryFilter{Table: "web.events"}, 0)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.Equal(t, []store.ColumnCount{{Column: "tenant_id", Queries: 1, Ops: []string{"="}}}, stats[0].TopColumns,
			"the replaced event's predicates are gone with it")
	})
}

func TestInsertRejectsIncompleteBatch(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		_, _, err := s.InsertEvents(ctx, []collectors.QueryEvent{event("ok", "u", t0), event("", "u", t0)})
		require.ErrorContains(t, err, "no source or query id")
		evs, err := s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Empty(t, evs)
	})
}

// TestRoundTrip stores an event with every field set and a filter tree
// with AND / OR / NOT, opaque terms and typed literals, and reads back the
// same event.
func TestRoundTrip(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		snap := int64(3053316373432432132)
		tbl := "local.web.events"
		filter := &expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
			pred(tbl, "event_ts", "day", expr.OpBetween, expr.Value{Kind: expr.KindDate, Text: "2026-04-01"}, expr.Value{Kind: expr.KindDate, Text: "2026-04-30"}),
			{Kind: expr.NodeOr, Children: []*expr.Node{
				pred(tbl, "tenant_id", "", expr.OpIn, expr.Value{Kind: expr.KindNumber, Text: "1"}, expr.Value{Kind: expr.KindParam, Text: "?"}),
				{Kind: expr.NodeNot, Children: []*expr.Node{pred(tbl, "country", "lower", expr.OpIsNull)}},
			}},
			{Kind: expr.NodeOpaque, Text: "my_udf(payload)"},
		}}
		in := collectors.QueryEvent{
			Source: "spark-eventlog", Engine: collectors.EngineSpark, EngineVersion: "3.5.3",
			QueryID: "app-1/4", RootQueryID: "app-1/3", User: "etl",
			StartTime: time.Date(2026, 4, 30, 23, 59, 59, 123456789, time.UTC), EndTime: time.Date(2026, 5, 1, 0, 0, 2, 0, time.UTC),
			State: collectors.StateFailed, StatementType: "INSERT",
			SQL: "INSERT INTO x SELECT * FROM web.events WHERE tenant_id IN (1, ?)", SQLTruncated: true, SQLTemplate: true,
			Params: []string{"42"}, DefaultCatalog: "spark_catalog", DefaultSchema: "web", Error: "boom",
			Metrics: collectors.QueryMetrics{ElapsedMs: 1, CPUMs: 2, QueuedMs: 3, BytesScanned: 4, RowsScanned: 5, PartitionsScanned: 6, PartitionsTotal: 7},
			Tables: []collectors.TableAccess{
				{Catalog: "local", Namespace: "web", Name: "events", Direct: true, SnapshotID: &snap, Filter: filter,
					FilterText: []string{"tenant_id IN (1)"}, Evidence: collectors.EvidencePushedFilter,
					Columns: []collectors.ColumnUse{
						{Name: "tenant_id", Roles: []collectors.Role{collectors.RoleFilter, collectors.RoleProjection}, Evidence: collectors.EvidencePushedFilter},
						{Name: "event_ts", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL},
					},
					Metrics: collectors.TableMetrics{BytesScanned: 10, RowsScanned: 11, ResultDataFiles: 12, SkippedDataFiles: 13, ScannedManifests: 14, SkippedManifests: 15, PlanningNanos: 16}},
				{Catalog: "local", Namespace: "sales", Name: "orders", Write: true},
				{Catalog: "local", Namespace: "web", Name: "events", Evidence: collectors.MetadataEvidence("snapshots")},
			},
		}
		ins, _, err := s.InsertEvents(ctx, []collectors.QueryEvent{in})
		require.NoError(t, err)
		require.Equal(t, 1, ins)
		out, err := s.Queries(ctx, store.QueryFilter{})
		require.NoError(t, err)
		require.Len(t, out, 1)
		require.Equal(t, in, out[0])
		meta, ok := out[0].Tables[2].MetadataTable()
		require.True(t, ok)
		require.Equal(t, "snapshots", meta)
		_, ok = out[0].Tables[0].MetadataTable()
		require.False(t, ok)
		require.Equal(t, time.UTC, out[0].StartTime.Location())

		stats, err := s.TableStats(ctx, store.QueryFilter{}, 2)
		require.NoError(t, err)
		require.Len(t, stats, 2)
		require.Equal(t, "local.sales.orders", stats[0].Table, "equal counts sort by name")
		require.Equal(t, "local.web.events", stats[1].Table)
		require.Equal(t, 1, stats[1].Failed)
		require.Equal(t, []store.ColumnCount{
			{Column: "country", Queries: 1, Ops: []string{"is null"}},
			{Column: "event_ts", Queries: 1, Ops: []string{"between"}},
		}, stats[1].TopColumns, "top 2 of three columns, ties by name")
	})
}

func TestQueriesFilter(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		orders := collectors.TableAccess{Catalog: "local", Namespace: "sales", Name: "orders", Direct: true}
		var batch []collectors.QueryEvent
		for i := range 10 {
			tables := []collectors.TableAccess{eventsAccess(nil)}
			if i%2 == 0 {
				tables = append(tables, orders)
			}
			batch = append(batch, event(fmt.Sprintf("q%d", i), fmt.Sprintf("user%d", i%3), t0.Add(time.Duration(i)*time.Hour), tables...))
		}
		batch[9].Source = "duckdb-log"
		_, _, err := s.InsertEvents(ctx, batch)
		require.NoError(t, err)

		ids := func(evs []collectors.QueryEvent) []string {
			out := []string{}
			for _, e := range evs {
				out = append(out, e.QueryID)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			f    store.QueryFilter
			want []string
		}{
			{"all", store.QueryFilter{}, []string{"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"}},
			{"table upper case", store.QueryFilter{Table: "LOCAL.Sales.ORDERS"}, []string{"q0", "q2", "q4", "q6", "q8"}},
			{"table without catalog", store.QueryFilter{Table: "sales.orders"}, []string{"q0", "q2", "q4", "q6", "q8"}},
			{"partial name does not match", store.QueryFilter{Table: "les.orders"}, []string{}},
			{"unknown table", store.QueryFilter{Table: "local.web.clicks"}, []string{}},
			{"since", store.QueryFilter{Since: t0.Add(7 * time.Hour)}, []string{"q7", "q8", "q9"}},
			{"since until", store.QueryFilter{Since: t0.Add(2 * time.Hour), Until: t0.Add(4 * time.Hour)}, []string{"q2", "q3"}},
			{"limit keeps the latest", store.QueryFilter{Limit: 3}, []string{"q7", "q8", "q9"}},
			{"table and limit", store.QueryFilter{Table: "sales.orders", Limit: 2}, []string{"q6", "q8"}},
			{"source", store.QueryFilter{Source: "duckdb-log"}, []string{"q9"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				evs, err := s.Queries(ctx, tc.f)
				require.NoError(t, err)
				require.Equal(t, tc.want, ids(evs))
			})
		}

		stats, err := s.TableStats(ctx, store.QueryFilter{Since: t0.Add(5 * time.Hour)}, 0)
		require.NoError(t, err)
		require.Len(t, stats, 2)
		require.Equal(t, "local.web.events", stats[0].Table)
		require.Equal(t, 5, stats[0].Queries)
		require.Equal(t, 3, stats[0].Users)
		require.Equal(t, t0.Add(5*time.Hour), stats[0].FirstSeen)
		require.Equal(t, t0.Add(9*time.Hour), stats[0].LastSeen)
		require.Equal(t, 2, stats[1].Queries)

		stats, err = s.TableStats(ctx, store.QueryFilter{Table: "SALES.ORDERS"}, 0)
		require.NoError(t, err)
		require.Len(t, stats, 1, "only the table asked for, not the tables its queries joined")
		require.Equal(t, "local.sales.orders", stats[0].Table)
		require.Equal(t, 5, stats[0].Queries)
	})
}

// TestConcurrentWriters inserts from two goroutines on two Store handles
// of one file, with overlapping events: every event is stored once and the
// counts add up.
func TestConcurrentWriters(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) { testConcurrentWriters(t, db.Open(t), db.Open(t)) })
}

func testConcurrentWriters(t *testing.T, a, b *store.Store) {
	ctx := t.Context()
	const batches, size = 20, 25
	var wg sync.WaitGroup
	ins := make([]int, 2)
	dup := make([]int, 2)
	errs := make([]error, 2)
	for w, s := range []*store.Store{a, b} {
		wg.Go(func() {
			for i := range batches {
				var batch []collectors.QueryEvent
				for k := range size {
					// Writer 0 writes ids 0..499, writer 1 ids 250..749.
					id := w*batches*size/2 + i*size + k
					batch = append(batch, event(fmt.Sprintf("q%04d", id), "u", t0.Add(time.Duration(id)*time.Second), eventsAccess(
						pred("local.web.events", "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(id)}))))
				}
				n, d, err := s.InsertEvents(ctx, batch)
				if err != nil {
					errs[w] = err
					return
				}
				ins[w] += n
				dup[w] += d
			}
		})
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, 750, ins[0]+ins[1])
	require.Equal(t, 250, dup[0]+dup[1])
	evs, err := a.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 750)
	for _, e := range evs {
		require.Len(t, e.Tables, 1, e.QueryID)
	}
}

func TestFiles(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		_, ok, err := s.File(ctx, "/logs/a.ndjson")
		require.NoError(t, err)
		require.False(t, ok)
		mt := time.Date(2026, 5, 1, 1, 2, 3, 456789, time.FixedZone("x", 3600))
		rec := collectors.FileRecord{Path: "/logs/a.ndjson", Source: "trino-event", Size: 100, ModTime: mt, Events: 4, Bad: 1}
		require.NoError(t, s.RecordFile(ctx, rec))
		got, ok, err := s.File(ctx, rec.Path)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, got.Unchanged(100, mt))
		require.False(t, got.Unchanged(101, mt))
		require.False(t, got.CollectedAt.IsZero())
		require.Equal(t, 4, got.Events)

		rec.Size, rec.Events = 200, 9
		require.NoError(t, s.RecordFile(ctx, rec))
		all, err := s.Files(ctx)
		require.NoError(t, err)
		require.Len(t, all, 1)
		require.Equal(t, int64(200), all[0].Size)
		require.Equal(t, 9, all[0].Events)
	})
}

// An events mark changes with every event stored that its filter selects —
// new, or an unfinished one replaced by its end — and with nothing else.
func TestEventsMark(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		f := store.QueryFilter{Table: "web.events"}
		mark := func() store.EventsMark {
			t.Helper()
			m, err := s.EventsMark(ctx, f)
			require.NoError(t, err)
			return m
		}
		require.Equal(t, store.EventsMark{}, mark(), "no events")

		_, _, err := s.InsertEvents(ctx, []collectors.QueryEvent{event("q1", "u", t0, eventsAccess(nil))})
		require.NoError(t, err)
		m1 := mark()
		require.Equal(t, int64(1), m1.Events)
		require.Equal(t, int64(1), m1.Ended)

		_, dup, err := s.InsertEvents(ctx, []collectors.QueryEvent{event("q1", "u", t0, eventsAccess(nil))})
		require.NoError(t, err)
		require.Equal(t, 1, dup)
		require.Equal(t, m1, mark(), "a duplicate changes nothing")

		orders := collectors.TableAccess{Catalog: "local", Namespace: "sales", Name: "orders", Direct: true}
		_, _, err = s.InsertEvents(ctx, []collectors.QueryEvent{event("o1", "u", t0, orders)})
		require.NoError(t, err)
		require.Equal(t, m1, mark(), "another table's event is not this table's")

		running := event("q2", "u", t0.Add(time.Hour), eventsAccess(nil))
		running.State, running.EndTime = collectors.StateUnknown, time.Time{}
		_, _, err = s.InsertEvents(ctx, []collectors.QueryEvent{running})
		require.NoError(t, err)
		m2 := mark()
		require.NotEqual(t, m1, m2)
		require.Equal(t, int64(2), m2.Events)
		require.Equal(t, int64(1), m2.Ended)

		_, _, err = s.InsertEvents(ctx, []collectors.QueryEvent{event("q2", "u", t0.Add(time.Hour), eventsAccess(nil))})
		require.NoError(t, err)
		m3 := mark()
		require.NotEqual(t, m2, m3, "the running query ended: the same count, but ended")
		require.Equal(t, int64(2), m3.Events)
		require.Equal(t, int64(2), m3.Ended)
	})
}
