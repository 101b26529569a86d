// Package telemetry benchmarks telemetry through the state store: the
// ingestion rate of each of the six sources floe reads (Trino, Spark,
// Athena, Snowflake, DuckDB, Iceberg scan reports) from real-format logs
// internal/demo writes; the store's size per million events before and
// after the raw events older than the retention are folded
// (control.PruneTelemetry), for an ad-hoc workload and for repeated
// dashboards, whose folded events share their shapes; and the store's
// size as the clock moves past the telemetry history. The peer of a
// source's rate is Trino's, the peer of a folded event's size is the raw
// event's, the peer of the store's size after four histories is its size
// after two.
package telemetry_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the raw driver, to VACUUM a closed store

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/demo"
)

// demoResolver knows the demo tables in the floe catalog "local".
type demoResolver map[string]*iceberg.Schema

func (r demoResolver) Schema(_ context.Context, cat string, ns []string, name string) (*iceberg.Schema, []string, string, bool, error) {
	if cat != "local" || len(ns) != 1 {
		return nil, nil, "", false, nil
	}
	key := strings.ToLower(ns[0] + "." + name)
	s, ok := r[key]
	if !ok {
		return nil, nil, "", false, nil
	}
	n, t, _ := strings.Cut(key, ".")
	return s, []string{n}, t, true, nil
}

func demoTables() demoResolver {
	return demoResolver{
		"web.events":     demo.EventsSchema(),
		"sales.orders":   demo.OrdersSchema(),
		"sales.lineitem": demo.LineitemSchema(),
		"crm.accounts": iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "account_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
			iceberg.NestedField{ID: 3, Name: "country", Type: iceberg.PrimitiveTypes.String},
			iceberg.NestedField{ID: 4, Name: "plan", Type: iceberg.PrimitiveTypes.String},
			iceberg.NestedField{ID: 5, Name: "signup_date", Type: iceberg.PrimitiveTypes.Date},
			iceberg.NestedField{ID: 6, Name: "mrr", Type: iceberg.PrimitiveTypes.Float64},
		),
	}
}

// collect ingests paths into the SQLite store at path and returns the
// events stored and the seconds it took.
func collect(ctx context.Context, b *testing.B, cfg *config.Config, path string, paths []string) (int, float64) {
	st, err := store.Open(ctx, path)
	require.NoError(b, err)
	defer func() { require.NoError(b, st.Close()) }()
	start := time.Now()
	n := ingestInto(ctx, b, cfg, st, paths)
	return n, time.Since(start).Seconds()
}

// ingestInto ingests paths into st, as floe collect does, and returns the
// events stored.
func ingestInto(ctx context.Context, b *testing.B, cfg *config.Config, st *store.Store, paths []string) int {
	rep, err := ingest.Run(ctx, ingest.Options{Paths: paths, Parsers: control.Parsers(), Resolver: demoTables(), Catalogs: cfg, Force: true}, st)
	require.NoError(b, err)
	require.Zero(b, rep.Bad)
	return rep.Inserted
}

// vacuumedBytes compacts the SQLite file at path (freed pages returned)
// and returns its size: what the store holds, not its high-water mark.
func vacuumedBytes(ctx context.Context, b *testing.B, path string) int64 {
	db, err := sql.Open("sqlite", path)
	require.NoError(b, err)
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE); VACUUM`)
	require.NoError(b, errors.Join(err, db.Close()))
	fi, err := os.Stat(path)
	require.NoError(b, err)
	return fi.Size()
}

// compactedBytes is vacuumedBytes of a copy (VACUUM INTO), leaving the
// store at path as it is, open or not.
func compactedBytes(ctx context.Context, b *testing.B, path string) int64 {
	out := filepath.Join(b.TempDir(), "compacted.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(b, err)
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, out)
	require.NoError(b, errors.Join(err, db.Close()))
	fi, err := os.Stat(out)
	require.NoError(b, err)
	return fi.Size()
}

// perM is bytes per million events.
func perM(bytes, events int64) float64 { return float64(bytes) / float64(events) * 1e6 }

// foldedBytes folds every event of the SQLite store at path (all started
// before now) and returns its vacuumed size and its shapes.
func foldedBytes(ctx context.Context, b *testing.B, path string, now time.Time, events int) (int64, int64) {
	st, err := store.Open(ctx, path)
	require.NoError(b, err)
	_, _, err = st.PruneEvents(ctx, now.Add(time.Hour))
	require.NoError(b, err)
	size, err := st.Size(ctx)
	require.NoError(b, err)
	require.NoError(b, st.Close())
	require.Equal(b, int64(events), size.FoldedEvents)
	return vacuumedBytes(ctx, b, path), size.FoldedShapes
}

// flatRun collects days of dashboards one day at a time into a fresh
// store, pruning after each day as the daemon does with the retention and
// history given, and returns the store's size (page count × page size,
// what floe_state_store_bytes shows) and its compacted size after each
// measured day, with the store's counts then.
func flatRun(ctx context.Context, b *testing.B, cfg *config.Config, dir string, start time.Time, days int, measure []int,
	retention, history time.Duration) (pages, compacted []int64, sizes []store.Size) {
	path := filepath.Join(dir, "state.db")
	st, err := store.Open(ctx, path)
	require.NoError(b, err)
	defer func() { require.NoError(b, st.Close()) }()
	for d := 1; d <= days; d++ {
		day := start.AddDate(0, 0, d-1)
		p, err := writeDashboardDay(dir, day)
		require.NoError(b, err)
		require.Equal(b, dashboardEventsPerDay, ingestInto(ctx, b, cfg, st, []string{p}))
		require.NoError(b, os.Remove(p))
		r, err := control.PruneTelemetry(ctx, st, control.PruneOptions{Retention: retention, History: history,
			Now: func() time.Time { return day.AddDate(0, 0, 1) }})
		require.NoError(b, err)
		if slices.Contains(measure, d) {
			pages = append(pages, r.Size.Bytes)
			compacted = append(compacted, compactedBytes(ctx, b, path))
			sizes = append(sizes, r.Size)
		}
	}
	return pages, compacted, sizes
}

// BenchmarkTelemetry measures telemetry through the state store.
//
// Ingestion: it writes FLOE_BENCH_QUERIES queries (default 20,000) over 60
// days as the six sources log them (an ad-hoc workload: the literals of
// every query its own), ingests each source's files alone into a fresh
// SQLite store (events/s per source), then all of them into one store.
//
// Size: bytes per million events of that ad-hoc store raw, after pruning
// at a 30-day retention, and with every event folded; and the same, raw
// and folded, of 60 days of repeated dashboards (24 panels refreshed 14
// times a day, half of them filtering a window that moves once a day).
//
// Bound: 120 days of dashboards collected a day at a time, pruned daily
// at a 7-day retention and a 30-day history: the store's size after 60,
// 90 and 120 days (two, three and four histories) is the same; kept for
// years instead, it grows with the days. It writes bench/results/telemetry-store.json.
func BenchmarkTelemetry(b *testing.B) {
	n := bench.EnvInt(b, "FLOE_BENCH_QUERIES", 20000)
	ctx := b.Context()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cfg, err := config.Parse("default.yaml", config.DefaultYAML())
	require.NoError(b, err)
	cfg.DefaultCatalog = "local"
	res := bench.NewResult("telemetry-store")
	for b.Loop() {
		dir := b.TempDir()
		sum, err := demo.WriteLogs(filepath.Join(dir, "logs"), demo.LogOptions{Now: now, Window: 60 * 24 * time.Hour, Queries: n, Seed: 1, Orders: 25000})
		require.NoError(b, err)
		rates := map[string]float64{}
		for _, src := range sum.Sources {
			var paths []string
			for _, f := range src.Files {
				if !filepath.IsAbs(f) {
					f = filepath.Join(sum.Dir, f)
				}
				paths = append(paths, f)
			}
			events, secs := collect(ctx, b, cfg, filepath.Join(dir, src.Source+".db"), paths)
			require.Equal(b, src.Events, events, src.Source)
			rates[src.Source] = float64(events) / secs
			res.Figures[src.Source+"_events_per_s"] = rates[src.Source]
			res.Params[src.Source+"_events"] = events
			b.ReportMetric(rates[src.Source], src.Source+"_events/s")
			b.Logf("%s: %d events, %.0f events/s", src.Source, events, rates[src.Source])
		}
		for src, r := range rates {
			res.Figures[src+"_over_trino_ratio"] = r / rates["trino-event"]
		}

		// The ad-hoc workload: raw, pruned at 30 days, all folded.
		path := filepath.Join(dir, "adhoc.db")
		events, secs := collect(ctx, b, cfg, path, []string{sum.Dir})
		require.Equal(b, sum.Events(), events)
		res.Figures["all_sources_events_per_s"] = float64(events) / secs
		rawBytes := vacuumedBytes(ctx, b, path)
		res.Figures["adhoc_raw_bytes_per_million_events"] = perM(rawBytes, int64(events))

		st, err := store.Open(ctx, path)
		require.NoError(b, err)
		start := time.Now()
		pr, err := control.PruneTelemetry(ctx, st, control.PruneOptions{Retention: 30 * 24 * time.Hour, Now: func() time.Time { return now }})
		require.NoError(b, err)
		res.Figures["prune_events_per_s"] = float64(pr.Deleted) / time.Since(start).Seconds()
		require.NoError(b, st.Close())
		prunedBytes := vacuumedBytes(ctx, b, path)
		res.Params["adhoc_pruned_at_30d"] = pr.Deleted
		res.Figures["adhoc_pruned_30d_bytes_per_million_events"] = perM(prunedBytes, int64(events))
		res.Figures["adhoc_pruned_30d_over_raw_ratio"] = float64(prunedBytes) / float64(rawBytes)

		folded, shapes := foldedBytes(ctx, b, path, now, events)
		res.Params["adhoc_events"] = events
		res.Params["adhoc_shapes"] = shapes
		res.Figures["adhoc_folded_bytes_per_million_events"] = perM(folded, int64(events))
		res.Figures["adhoc_folded_over_raw_ratio"] = float64(folded) / float64(rawBytes)
		res.Figures["adhoc_events_per_shape"] = float64(events) / float64(shapes)

		// Repeated dashboards over the same 60 days: raw, all folded.
		paths, err := writeDashboardDays(filepath.Join(dir, "dashboards"), now, 60)
		require.NoError(b, err)
		path = filepath.Join(dir, "dashboards.db")
		events, _ = collect(ctx, b, cfg, path, paths)
		require.Equal(b, 60*dashboardEventsPerDay, events)
		rawBytes = vacuumedBytes(ctx, b, path)
		folded, shapes = foldedBytes(ctx, b, path, now, events)
		res.Params["dashboard_events"] = events
		res.Params["dashboard_shapes"] = shapes
		res.Figures["dashboard_raw_bytes_per_million_events"] = perM(rawBytes, int64(events))
		res.Figures["dashboard_folded_bytes_per_million_events"] = perM(folded, int64(events))
		res.Figures["dashboard_folded_over_raw_ratio"] = float64(folded) / float64(rawBytes)
		res.Figures["dashboard_events_per_shape"] = float64(events) / float64(shapes)
		b.ReportMetric(res.Figures["adhoc_raw_bytes_per_million_events"], "adhoc_raw_bytes/Mevents")
		b.ReportMetric(res.Figures["adhoc_folded_bytes_per_million_events"], "adhoc_folded_bytes/Mevents")
		b.ReportMetric(res.Figures["dashboard_folded_bytes_per_million_events"], "dashboard_folded_bytes/Mevents")

		// The bound: two histories of dashboards, then two more.
		const days, retention, history = 120, 7, 30
		day := 24 * time.Hour
		begin := now.AddDate(0, 0, -days)
		for _, run := range []struct {
			name    string
			history time.Duration
		}{{"bounded", history * day}, {"kept", 3650 * day}} {
			measured := []int{2 * history, 3 * history, 4 * history}
			pages, compacted, sizes := flatRun(ctx, b, cfg, filepath.Join(dir, run.name), begin, days, measured, retention*day, run.history)
			for i, d := range measured {
				res.Figures[fmt.Sprintf("%s_day%d_store_bytes", run.name, d)] = float64(pages[i])
				res.Figures[fmt.Sprintf("%s_day%d_compacted_bytes", run.name, d)] = float64(compacted[i])
				res.Params[fmt.Sprintf("%s_day%d_events", run.name, d)] = sizes[i].Events
				res.Params[fmt.Sprintf("%s_day%d_folded_events", run.name, d)] = sizes[i].FoldedEvents
				res.Params[fmt.Sprintf("%s_day%d_shapes", run.name, d)] = sizes[i].FoldedShapes
			}
			res.Figures[run.name+"_day120_over_day60_store_ratio"] = float64(pages[2]) / float64(pages[0])
			res.Figures[run.name+"_day120_over_day90_store_ratio"] = float64(pages[2]) / float64(pages[1])
			res.Figures[run.name+"_day120_over_day60_compacted_ratio"] = float64(compacted[2]) / float64(compacted[0])
			res.Figures[run.name+"_day120_over_day90_compacted_ratio"] = float64(compacted[2]) / float64(compacted[1])
			b.Logf("%s: store %v bytes, compacted %v at days %v", run.name, pages, compacted, measured)
		}
		res.Params["queries"] = n
		res.Params["window_days"] = 60
		res.Params["retention_days"] = 30
		res.Params["dashboard_events_per_day"] = dashboardEventsPerDay
		res.Params["bound_days"] = days
		res.Params["bound_retention_days"] = retention
		res.Params["bound_history_days"] = history
	}
	res.Notes = []string{
		"adhoc: internal/demo.WriteLogs, seed 1, the six sources' own formats, every query with literals of its own; each source ingested alone into a fresh SQLite store (WAL, synchronous=NORMAL) by the ingestion pipeline with every parser, tables resolved against the demo schemas",
		"dashboard: 12 panel queries over the demo tables for 2 tenants (24 panels), refreshed hourly 14 times a day, as DuckDB's QueryLog (denormalized CSV); 6 of the 12 filter a window that moves once a day (a literal date), so their shapes change daily, the others never; DuckDB logs no costs, so its per-query rows are a little smaller than those of engines that log elapsed time and bytes",
		"sizes are the SQLite file after a WAL checkpoint and VACUUM (the daemon's store reuses freed pages instead of shrinking); bytes per million events count every event the logs yielded, raw or folded",
		"adhoc_pruned_30d: raw events older than 30 days folded (control.PruneTelemetry); *_folded: every event folded, its shape (tables, filter trees) stored once per distinct content",
		"bounded / kept: 120 days of dashboards collected one day at a time into one store, control.PruneTelemetry after each day at a 7-day retention and a 30-day history (bounded) or 3650 days (kept), measured after 60, 90 and 120 days; *_store_bytes is page count × page size of the live store (floe_state_store_bytes, freed pages reused, not returned), *_compacted_bytes a VACUUM INTO copy",
		"one run; both cores shared with other work (see machine.load_*)",
	}
	path, err := res.Write()
	require.NoError(b, err)
	b.Logf("wrote %s", path)
}
