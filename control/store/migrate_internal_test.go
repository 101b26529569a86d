package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
)

// TestMigrateFromVersion1 builds a version-1 database holding an event,
// then opens it with the current binary: the later migrations are applied
// and the data is kept.
func TestMigrateFromVersion1(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		ctx := t.Context()
		s, err := openTo(ctx, db.Cfg, 1)
		require.NoError(t, err)
		v, err := s.Version(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, v)
		require.False(t, s.hasTable(t, "plans"), "version 1 has no plans table")
		// Written as a version-1 binary wrote it: today's InsertEvents
		// reads tables of later versions.
		_, err = s.db.ExecContext(ctx, `INSERT INTO query_events (source, query_id, engine, start_time, state) VALUES (?, ?, ?, ?, ?)`,
			"trino-event", "q1", string(collectors.EngineTrino), time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano(), string(collectors.StateSucceeded))
		require.NoError(t, err)
		require.NoError(t, s.Close())

		s = db.Open(t)
		v, err = s.Version(ctx)
		require.NoError(t, err)
		require.Equal(t, SchemaVersion(), v)
		for _, tbl := range []string{"plans", "runs", "run_steps", "alerts", "table_leases", "table_holds", "folded_events", "folded_shapes", "folded_shape_tables"} {
			require.True(t, s.hasTable(t, tbl), tbl)
		}
		var n int
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n))
		require.Equal(t, len(migrations), n)
		evs, err := s.Queries(ctx, QueryFilter{})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, "q1", evs[0].QueryID)
	})
}

// A run stored before triggers (and runners) were recorded reads as
// manual, with no runner, once the database is migrated.
func TestMigrateRunTrigger(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		ctx := t.Context()
		s, err := openTo(ctx, db.Cfg, 3)
		require.NoError(t, err)
		_, err = s.db.ExecContext(ctx, `INSERT INTO runs (id, table_name, plan_id, status, error, started_at) VALUES ('r1', 'local.db.t', '', 'done', '', 1)`)
		require.NoError(t, err)
		require.NoError(t, s.Close())

		s = db.Open(t)
		r, err := s.Run(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, "manual", r.Trigger)
		require.Empty(t, r.Runner)
	})
}

// TestMigrateConcurrently opens a fresh database from several stores at
// once, as replicas starting together do: every open succeeds and the
// schema is migrated once.
func TestMigrateConcurrently(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		const n = 4
		errs := make(chan error, n)
		for range n {
			go func() {
				s, err := OpenConfig(t.Context(), db.Cfg)
				if err == nil {
					err = s.Close()
				}
				errs <- err
			}()
		}
		for range n {
			require.NoError(t, <-errs)
		}
		s := db.Open(t)
		var count int
		require.NoError(t, s.db.QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&count))
		require.Equal(t, len(migrations), count)
	})
}

// foldV10 is how schema version 10 folded an event: its shape_json.
func foldV10(ev *collectors.QueryEvent) foldShapeV10 {
	sh := foldShapeV10{Engine: ev.Engine, EngineVersion: ev.EngineVersion,
		Metrics: collectors.QueryMetrics{ElapsedMs: ev.Metrics.ElapsedMs, BytesScanned: ev.Metrics.BytesScanned}}
	for i := range ev.Tables {
		a := &ev.Tables[i]
		if _, meta := a.MetadataTable(); meta {
			continue
		}
		r := collectors.TableAccess{Catalog: a.Catalog, Namespace: a.Namespace, Name: a.Name, Write: a.Write,
			Filter: a.Filter, Evidence: a.Evidence, Metrics: collectors.TableMetrics{BytesScanned: a.Metrics.BytesScanned}}
		for _, c := range a.Columns {
			if slices.Contains(c.Roles, collectors.RoleFilter) {
				r.Columns = append(r.Columns, collectors.ColumnUse{Name: c.Name, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: c.Evidence})
			}
		}
		sh.Tables = append(sh.Tables, r)
	}
	return sh
}

// shapedEvents are n queries a minute apart from at, of four shapes
// (tenant i%4 of web.events, sales.orders joined in odd ones), some with
// bytes scanned per table, a metadata-table read, a failure.
func shapedEvents(at time.Time, n int) []collectors.QueryEvent {
	evs := make([]collectors.QueryEvent, n)
	for i := range evs {
		tenant := expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(i % 4)}
		ts := []collectors.TableAccess{{Catalog: "local", Namespace: "web", Name: "events", Direct: true, Evidence: collectors.EvidenceSQL,
			Filter:     &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "local.web.events", Column: "tenant_id", Op: expr.OpEq, Values: []expr.Value{tenant}}},
			FilterText: []string{"tenant_id = " + tenant.Text},
			Columns: []collectors.ColumnUse{{Name: "tenant_id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL},
				{Name: "url", Roles: []collectors.Role{collectors.RoleProjection}}}}}
		if i%4%2 == 1 {
			ts = append(ts, collectors.TableAccess{Catalog: "local", Namespace: "sales", Name: "orders", Evidence: collectors.EvidenceSQL})
		}
		if i%3 == 0 {
			ts[0].Metrics.BytesScanned = int64(1000 * (i + 1))
		}
		if i%7 == 0 {
			ts = append(ts, collectors.TableAccess{Catalog: "local", Namespace: "web", Name: "events", Evidence: collectors.MetadataEvidence("snapshots")})
		}
		start := at.Add(time.Duration(i) * time.Minute)
		evs[i] = collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, EngineVersion: "470", QueryID: fmt.Sprintf("q%03d", i),
			User: "u", StartTime: start, EndTime: start.Add(time.Duration(100+i) * time.Millisecond), State: collectors.StateSucceeded,
			SQL: "SELECT …", Tables: ts, Metrics: collectors.QueryMetrics{ElapsedMs: int64(100 + i), CPUMs: 7, BytesScanned: int64(i) << 20}}
		if i%5 == 0 {
			evs[i].State = collectors.StateFailed
		}
	}
	return evs
}

// TestMigrateFoldedToShapes builds a version-10 store whose old events
// were folded as version 10 folded them (the whole event in shape_json,
// its tables in folded_tables), then opens it with this binary: the
// folded events are converted into shapes, and the store reads as one
// this binary pruned itself — the same workload, per-table stats, folded
// events and shapes — and collecting the events again stores nothing.
func TestMigrateFoldedToShapes(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cutoff := t0.Add(40 * time.Minute)
	evs := shapedEvents(t0, 60)
	filters := []QueryFilter{{}, {Table: "sales.orders"}, {Table: "web.events", Since: t0.Add(10 * time.Minute)}, {Source: "trino-event", Until: cutoff}}
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		ctx := t.Context()
		s, err := openTo(ctx, db.Cfg, 10)
		require.NoError(t, err)
		_, _, err = s.InsertEvents(ctx, evs)
		require.NoError(t, err)
		for i := range evs {
			ev := &evs[i]
			if !ev.StartTime.Before(cutoff) {
				continue
			}
			var rawID, foldID int64
			require.NoError(t, s.db.QueryRowContext(ctx, `SELECT id FROM query_events WHERE source = ? AND query_id = ?`, ev.Source, ev.QueryID).Scan(&rawID))
			b, err := json.Marshal(foldV10(ev))
			require.NoError(t, err)
			require.NoError(t, s.db.QueryRowContext(ctx, `INSERT INTO folded_events (event_id, source, query_id, start_time, end_time, state, shape_json)
VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, rawID, ev.Source, ev.QueryID, nanos(ev.StartTime).Int64, nanos(ev.EndTime), string(ev.State), string(b)).Scan(&foldID))
			seen := map[string]bool{}
			for _, a := range foldV10(ev).Tables {
				if key := tableKey(a.Catalog, a.Namespace, a.Name); !seen[key] {
					seen[key] = true
					_, err := s.db.ExecContext(ctx, `INSERT INTO folded_tables (fold_id, table_key, catalog, namespace, name) VALUES (?, ?, ?, ?, ?)`,
						foldID, key, a.Catalog, a.Namespace, a.Name)
					require.NoError(t, err)
				}
			}
			_, err = s.db.ExecContext(ctx, `DELETE FROM query_events WHERE id = ?`, rawID)
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())

		// The same events, pruned by this binary.
		w := NewTestDB(t, db.Name).Open(t)
		_, _, err = w.InsertEvents(ctx, evs)
		require.NoError(t, err)
		folded, _, err := w.PruneEvents(ctx, cutoff)
		require.NoError(t, err)
		require.Equal(t, 40, folded)

		s = db.Open(t)
		v, err := s.Version(ctx)
		require.NoError(t, err)
		require.Equal(t, SchemaVersion(), v)
		require.False(t, s.hasTable(t, "folded_events_v10"))
		require.False(t, s.hasTable(t, "folded_tables"))
		for _, f := range filters {
			want, err := w.WorkloadEvents(ctx, f)
			require.NoError(t, err)
			got, err := s.WorkloadEvents(ctx, f)
			require.NoError(t, err)
			require.Equal(t, want, got, "filter %+v", f)
			wantStats, err := w.TableStats(ctx, f, 5)
			require.NoError(t, err)
			gotStats, err := s.TableStats(ctx, f, 5)
			require.NoError(t, err)
			require.Equal(t, wantStats, gotStats, "filter %+v", f)
		}
		wantSize, err := w.Size(ctx)
		require.NoError(t, err)
		gotSize, err := s.Size(ctx)
		require.NoError(t, err)
		require.Equal(t, Size{Events: 20, FoldedEvents: 40, FoldedShapes: 4}, Size{Events: gotSize.Events, FoldedEvents: gotSize.FoldedEvents, FoldedShapes: gotSize.FoldedShapes})
		require.Equal(t, wantSize.FoldedShapes, gotSize.FoldedShapes)
		require.Equal(t, CountRows(t, w, "folded_shape_tables"), CountRows(t, s, "folded_shape_tables"))

		ins, dup, err := s.InsertEvents(ctx, evs)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, 60}, [2]int{ins, dup})

		if db.Name == DriverPostgres {
			// The new table has the names the old one had.
			var names []string
			rows, err := s.db.QueryContext(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = 'folded_events'::regclass AND contype IN ('p', 'u') ORDER BY conname`)
			require.NoError(t, err)
			for rows.Next() {
				var n string
				require.NoError(t, rows.Scan(&n))
				names = append(names, n)
			}
			require.NoError(t, rows.Close())
			require.Equal(t, []string{"folded_events_pkey", "folded_events_source_query_id_key"}, names)
			var seq string
			require.NoError(t, s.db.QueryRowContext(ctx, `SELECT string_agg(relname, ',') FROM pg_class
WHERE relkind = 'S' AND relname LIKE 'folded_events%' AND relnamespace = current_schema()::regnamespace`).Scan(&seq))
			require.Equal(t, "folded_events_id_seq", seq, "the old table's sequence went with it")
		}
	})
}

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?`, `a = $1 AND b = $2`},
		{`x = '?' AND y = ? AND "we?rd" = ?`, `x = '?' AND y = $1 AND "we?rd" = $2`},
		{"-- it's ?\nz = ?", "-- it's ?\nz = $1"},
		{`'it''s' || ?`, `'it''s' || $1`},
	} {
		require.Equal(t, tc.want, postgresDialect.rebind(tc.in), tc.in)
		require.Equal(t, tc.in, sqliteDialect.rebind(tc.in), tc.in)
	}
}

func TestPostgresDDL(t *testing.T) {
	require.Equal(t, "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,\n\tn BIGINT NOT NULL, INTEGERS TEXT",
		postgresDDL("id INTEGER PRIMARY KEY,\n\tn INTEGER NOT NULL, INTEGERS TEXT"))
}
