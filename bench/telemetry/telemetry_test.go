// Package telemetry benchmarks telemetry through the state store: the
// ingestion rate of each of the six sources floe reads (Trino, Spark,
// Athena, Snowflake, DuckDB, Iceberg scan reports) from real-format logs
// internal/demo writes, and the store's size per million events before and
// after the raw events older than the retention are folded
// (control.PruneTelemetry). The peer of a source's rate is Trino's, the
// peer of a folded event's size is the raw event's.
package telemetry_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

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
	rep, err := ingest.Run(ctx, ingest.Options{Paths: paths, Parsers: control.Parsers(), Resolver: demoTables(), Catalogs: cfg, Force: true}, st)
	require.NoError(b, err)
	require.Zero(b, rep.Bad)
	return rep.Inserted, time.Since(start).Seconds()
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

// BenchmarkTelemetry writes FLOE_BENCH_QUERIES queries (default 20,000)
// over 60 days as the six sources log them, ingests each source's files
// alone into a fresh SQLite store (events/s per source), then all of them
// into one store, and measures that store's bytes per million events raw,
// after pruning at a 30-day retention, and with every event folded. It
// writes bench/results/telemetry-store.json.
func BenchmarkTelemetry(b *testing.B) {
	n := envInt("FLOE_BENCH_QUERIES", 20000)
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

		path := filepath.Join(dir, "all.db")
		events, secs := collect(ctx, b, cfg, path, []string{sum.Dir})
		require.Equal(b, sum.Events(), events)
		res.Figures["all_sources_events_per_s"] = float64(events) / secs
		rawBytes := vacuumedBytes(ctx, b, path)
		perM := func(bytes int64, events int64) float64 { return float64(bytes) / float64(events) * 1e6 }
		res.Figures["raw_bytes_per_million_events"] = perM(rawBytes, int64(events))

		st, err := store.Open(ctx, path)
		require.NoError(b, err)
		start := time.Now()
		pr, err := control.PruneTelemetry(ctx, st, control.PruneOptions{Retention: 30 * 24 * time.Hour, Now: func() time.Time { return now }})
		require.NoError(b, err)
		res.Figures["prune_events_per_s"] = float64(pr.Deleted) / time.Since(start).Seconds()
		require.NoError(b, st.Close())
		prunedBytes := vacuumedBytes(ctx, b, path)
		res.Params["pruned_at_30d"] = pr.Deleted
		res.Figures["pruned_30d_bytes_per_million_events"] = perM(prunedBytes, int64(events))
		res.Figures["pruned_30d_over_raw_ratio"] = float64(prunedBytes) / float64(rawBytes)

		st, err = store.Open(ctx, path)
		require.NoError(b, err)
		_, _, err = st.PruneEvents(ctx, now.Add(time.Hour))
		require.NoError(b, err)
		size, err := st.Size(ctx)
		require.NoError(b, err)
		require.NoError(b, st.Close())
		require.Equal(b, int64(events), size.FoldedEvents)
		foldedBytes := vacuumedBytes(ctx, b, path)
		res.Figures["folded_bytes_per_million_events"] = perM(foldedBytes, int64(events))
		res.Figures["folded_over_raw_ratio"] = float64(foldedBytes) / float64(rawBytes)
		b.ReportMetric(res.Figures["raw_bytes_per_million_events"], "raw_bytes/Mevents")
		b.ReportMetric(res.Figures["folded_bytes_per_million_events"], "folded_bytes/Mevents")
		res.Params["queries"] = n
		res.Params["events"] = events
		res.Params["window_days"] = 60
		res.Params["retention_days"] = 30
	}
	res.Notes = []string{
		"logs: internal/demo.WriteLogs, seed 1, the six sources' own formats; each source ingested alone into a fresh SQLite store (WAL, synchronous=NORMAL) by the ingestion pipeline with every parser, tables resolved against the demo schemas",
		"sizes are the SQLite file after a WAL checkpoint and VACUUM (the daemon's store reuses freed pages instead of shrinking); bytes per million events count every event the logs yielded, raw or folded",
		"pruned_30d: raw events older than 30 days folded (control.PruneTelemetry); folded: every event folded",
		"one run; both cores shared with other work (see machine.load_*)",
	}
	path, err := res.Write()
	require.NoError(b, err)
	b.Logf("wrote %s", path)
}
