package ingest_test

import (
	"path/filepath"
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
	"github.com/floe-project/floe/control/store"
)

func allParsers() []collectors.Parser {
	return []collectors.Parser{
		trino.EventParser{}, trino.RuntimeParser{}, spark.EventLogParser{},
		athena.APIParser{}, athena.CloudTrailParser{}, snowflake.NewJoiner(), icebergscan.NewParser(),
		duckdb.LogParser{}, duckdb.ProfileParser{}, duckdb.HistoryParser{}, duckdb.DBParser{},
	}
}

// TestRunAllEngineFixtures collects every engine fixture of the repository
// (testdata/logs, written from real engine output) into a warehouse that
// holds the tables they query. Every event is stored once, their tables
// resolve to the catalog's spelling, and a second run stores nothing.
func TestRunAllEngineFixtures(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	for _, ns := range []string{"db", "demo"} {
		l.w.CreateTable(t, ns, "orders", iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "customer_id", Type: iceberg.PrimitiveTypes.Int64},
			iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
			iceberg.NestedField{ID: 4, Name: "order_date", Type: iceberg.PrimitiveTypes.Date},
			iceberg.NestedField{ID: 5, Name: "region", Type: iceberg.PrimitiveTypes.String},
		), nil, nil, nil)
	}
	st := openStore(t)
	logs := filepath.Join("..", "..", "testdata", "logs")
	opts := l.options(logs)
	opts.Parsers = allParsers()
	rep, err := ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	t.Logf("files %d, events %d, inserted %d, duplicates %d, bad %d, unresolved %v, warnings %v",
		len(rep.Files), rep.Events, rep.Inserted, rep.Duplicates, rep.Bad, rep.Unresolved, rep.Warnings)
	require.Positive(t, rep.Inserted)
	require.Positive(t, rep.Bad, "testdata/logs holds damaged files on purpose")
	for _, b := range rep.BadRecords {
		require.NotEmpty(t, b.File)
		require.NotEmpty(t, b.Reason)
	}

	evs, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, rep.Inserted)
	resolved := 0
	for _, ev := range evs {
		for _, ta := range ev.Tables {
			require.Equal(t, "local", ta.Catalog, ev.QueryID)
			require.Contains(t, []string{"web.events", "sales.orders", "db.orders", "demo.orders"}, ta.Namespace+"."+ta.Name)
			resolved++
		}
	}
	require.Positive(t, resolved)

	opts.Parsers = allParsers() // a fresh Snowflake joiner
	again, err := ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	require.Equal(t, 0, again.Inserted, "second run: %+v", again.Files)
}
