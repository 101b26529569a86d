package demo_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/floe-project/floe/collectors/icebergscan"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/collectors/snowflake"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/collectors/trino"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/demo"
)

// demoResolver knows the demo tables in the floe catalog "local", by
// their schemas.
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

// TestWriteLogsIngest runs floe's ingestion over the logs with the
// default configuration: every event is stored, and every table name the
// engines wrote resolves to a demo table, except the misspelled one of the
// failing queries.
func TestWriteLogsIngest(t *testing.T) {
	dir := t.TempDir()
	sum, err := demo.WriteLogs(filepath.Join(dir, "logs"), demo.LogOptions{Now: logNow, Queries: 1500, Seed: 5})
	require.NoError(t, err)
	cfg, err := config.Parse("default.yaml", config.DefaultYAML())
	require.NoError(t, err)
	cfg.DefaultCatalog = "local"
	st, err := store.Open(t.Context(), filepath.Join(dir, "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	rep, err := ingest.Run(t.Context(), ingest.Options{
		Paths: []string{filepath.Join(dir, "logs")},
		Parsers: []collectors.Parser{
			trino.EventParser{}, trino.RuntimeParser{}, spark.EventLogParser{},
			athena.APIParser{}, athena.CloudTrailParser{}, snowflake.NewJoiner(), icebergscan.NewParser(),
			duckdb.LogParser{}, duckdb.ProfileParser{}, duckdb.HistoryParser{},
		},
		Resolver: demoTables(),
		Catalogs: cfg,
	}, st)
	require.NoError(t, err)
	require.Zero(t, rep.Bad, "%v", rep.BadRecords)
	require.Equal(t, sum.Events(), rep.Events)
	require.Equal(t, sum.Events(), rep.Inserted)
	for name := range rep.Unresolved {
		require.Contains(t, strings.ToLower(name), "web.event", "unresolved table %s", name)
		require.NotContains(t, strings.ToLower(name), "web.events", "unresolved table %s", name)
	}
	for msg, n := range rep.Warnings {
		t.Logf("warning ×%d: %s", n, msg)
		require.Contains(t, msg, "tenant ", "only the misspelled column is unknown")
	}
}
