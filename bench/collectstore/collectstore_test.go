// Package collectstore benchmarks the state store's side of collection:
// batches of query events, as ingestion stores them (500 per
// transaction), into SQLite and into PostgreSQL, side by side in the same
// run. The PostgreSQL server is a throwaway cluster on loopback
// (internal/pgtest: fsync and synchronous commit off, as SQLite's WAL with
// synchronous=NORMAL does not sync each commit either).
package collectstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/internal/pgtest"
)

// events builds n events like a Trino log's: eight tables, every other
// query joining a second one, a three-leaf filter and two column uses per
// table read.
func events(n int) []collectors.QueryEvent {
	tables := []string{"orders", "events", "sessions", "payments", "customers", "inventory", "clicks", "shipments"}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	access := func(name string, i int) collectors.TableAccess {
		tbl := "lake.web." + name
		p := func(col, transform string, op expr.Op, vals ...expr.Value) *expr.Node {
			return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: tbl, Column: col, Transform: transform, Op: op, Values: vals}}
		}
		return collectors.TableAccess{Catalog: "lake", Namespace: "web", Name: name, Direct: true, Evidence: collectors.EvidenceSQL,
			Filter: &expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
				p("tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: strconv.Itoa(i % 50)}),
				p("event_ts", "day", expr.OpGtEq, expr.Value{Kind: expr.KindDate, Text: "2026-10-01"}),
				p("region", "", expr.OpIn, expr.Value{Kind: expr.KindString, Text: "eu"}, expr.Value{Kind: expr.KindString, Text: "us"}),
			}},
			Columns: []collectors.ColumnUse{
				{Name: "tenant_id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL},
				{Name: "amount", Roles: []collectors.Role{collectors.RoleProjection}, Evidence: collectors.EvidenceSQL},
			}}
	}
	out := make([]collectors.QueryEvent, n)
	for i := range out {
		start := base.Add(time.Duration(i) * 250 * time.Millisecond)
		ts := []collectors.TableAccess{access(tables[i%len(tables)], i)}
		if i%2 == 1 {
			ts = append(ts, access(tables[(i+3)%len(tables)], i))
		}
		out[i] = collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: fmt.Sprintf("20261101_%07d_q7k3m", i),
			User: fmt.Sprintf("user%d", i%7), StartTime: start, EndTime: start.Add(1250 * time.Millisecond), State: collectors.StateSucceeded,
			StatementType: "SELECT", SQL: fmt.Sprintf("SELECT amount FROM lake.web.%s WHERE tenant_id = %d AND region IN ('eu', 'us')", tables[i%len(tables)], i%50),
			Metrics: collectors.QueryMetrics{ElapsedMs: 1250, CPUMs: 500, BytesScanned: 1 << 20, RowsScanned: 1000}, Tables: ts}
	}
	return out
}

// insertAll stores evs in batches into a fresh store and returns events/s.
func insertAll(ctx context.Context, b *testing.B, cfg store.Config, evs []collectors.QueryEvent, batch int) float64 {
	s, err := store.OpenConfig(ctx, cfg)
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Close()) }()
	start := time.Now()
	for i := 0; i < len(evs); i += batch {
		ins, _, err := s.InsertEvents(ctx, evs[i:min(i+batch, len(evs))])
		require.NoError(b, err)
		require.Equal(b, min(batch, len(evs)-i), ins)
	}
	return float64(len(evs)) / time.Since(start).Seconds()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// BenchmarkCollectStore inserts FLOE_BENCH_EVENTS events (default 20,000)
// in batches of ingest.DefaultBatchSize into SQLite and PostgreSQL,
// FLOE_BENCH_REPS times each (default 5, the drivers taking turns), and
// writes the medians and their ratio to bench/results/collect-store.json.
func BenchmarkCollectStore(b *testing.B) {
	n, reps, batch := bench.EnvInt(b, "FLOE_BENCH_EVENTS", 20000), bench.EnvInt(b, "FLOE_BENCH_REPS", 5), ingest.DefaultBatchSize
	ctx := b.Context()
	pg := pgtest.Start(b)
	evs := events(n)
	var version string
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	require.NoError(b, err)
	require.NoError(b, conn.QueryRow(ctx, "SHOW server_version").Scan(&version))
	require.NoError(b, conn.Close(ctx))

	rates := map[string][]float64{}
	for b.Loop() {
		for rep := range reps {
			for _, driver := range []string{store.DriverSQLite, store.DriverPostgres} {
				cfg := store.Config{Driver: driver}
				if driver == store.DriverPostgres {
					cfg.DSN = pg.NewDatabase(b)
				} else {
					cfg.Path = filepath.Join(b.TempDir(), "state.db")
				}
				r := insertAll(ctx, b, cfg, evs, batch)
				rates[driver] = append(rates[driver], r)
				b.Logf("rep %d %s: %.0f events/s", rep+1, driver, r)
			}
		}
	}
	sq, pq := median(rates[store.DriverSQLite]), median(rates[store.DriverPostgres])
	b.ReportMetric(sq, "sqlite_events/s")
	b.ReportMetric(pq, "postgres_events/s")
	b.ReportMetric(pq/sq, "postgres/sqlite")

	res := bench.NewResult("collect-store")
	res.Params["events"] = n
	res.Params["batch"] = batch
	res.Params["reps"] = len(rates[store.DriverSQLite])
	res.Params["postgres_version"] = version
	res.Params["tables_per_event"] = 1.5
	res.Figures["sqlite_events_per_s_median"] = sq
	res.Figures["postgres_events_per_s_median"] = pq
	res.Figures["postgres_over_sqlite_ratio"] = pq / sq
	res.Notes = []string{
		"each rep stores all events into a fresh database, batch after batch (one transaction each), the drivers taking turns",
		"postgres: a throwaway cluster on 127.0.0.1 with fsync, synchronous_commit and full_page_writes off; per batch one key lookup, one id reservation and one COPY per table, foreign keys checked row by row",
		"sqlite: a file in WAL mode, synchronous=NORMAL; multi-row INSERTs",
		"both the client and the server run on this machine's shared cores",
	}
	path, err := res.Write()
	require.NoError(b, err)
	b.Logf("wrote %s", path)
}
