package ingest_test

import (
	"context"
	"github.com/floe-project/floe/expr"
	"iter"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	l := newLake(t)
	n := ingest.NewNormalizer(l.cfg, l.resolver)
	duck := func(sql string) collectors.QueryEvent {
		return collectors.QueryEvent{Source: "duckdb-log", Engine: collectors.EngineDuckDB, QueryID: "q",
			StartTime: time.Date(2026, 5, 1, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600)), SQL: sql}
	}
	withTables := func(ev collectors.QueryEvent, tables ...collectors.TableAccess) collectors.QueryEvent {
		ev.Tables = tables
		return ev
	}
	pushed := func(table string, f *expr.Node) collectors.TableAccess {
		return collectors.TableAccess{Catalog: "spark_catalog", Namespace: "web", Name: table, Direct: true, Filter: f, Evidence: collectors.EvidencePushedFilter}
	}
	leaf := func(col string, op expr.Op, v ...expr.Value) *expr.Node {
		return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "spark_catalog.web.events", Column: col, Op: op, Values: v}}
	}
	spark := func(tables ...collectors.TableAccess) collectors.QueryEvent {
		return collectors.QueryEvent{Source: "spark-eventlog", Engine: collectors.EngineSpark, QueryID: "a/1", StartTime: time.Now(), Tables: tables}
	}
	for _, tc := range []struct {
		name       string
		ev         collectors.QueryEvent
		tables     []string // qualified names, in order
		filter     []string // leaves of the first table's filter
		columns    []string // name/role/evidence of the first table's columns that must be present
		meta       string   // metadata table of the first table
		unresolved []string
		warnings   []string
	}{
		{
			name:   "string literals typed by column",
			ev:     duck("SELECT * FROM lake.web.events WHERE event_ts >= '2026-04-01 06:00:00' AND event_date = '2026-04-02' AND Region = '2026-04-03'"),
			tables: []string{"local.web.events"},
			filter: []string{
				"local.web.events Region  = string:2026-04-03",
				"local.web.events event_date  = date:2026-04-02",
				"local.web.events event_ts  >= timestamp:2026-04-01 06:00:00",
			},
		},
		{
			name:       "unqualified column of the one resolved table",
			ev:         duck("SELECT * FROM lake.web.events a, lake.web.tmp_t b WHERE TENANT_ID = 1"),
			tables:     []string{"local.web.events"},
			columns:    []string{"tenant_id/filter/sql-parse"},
			unresolved: []string{"lake.web.tmp_t"},
		},
		{
			// Once dropped: the schemas tell which of the two tables has it.
			name:    "unqualified column of two tables resolved by their schemas",
			ev:      duck("SELECT * FROM lake.web.events a, lake.sales.orders b WHERE region = 'eu' AND order_id = customer_id"),
			tables:  []string{"local.web.events", "local.sales.orders"},
			columns: []string{"Region/filter/sql-parse"},
		},
		{
			name:     "unqualified column neither table has dropped",
			ev:       duck("SELECT * FROM lake.web.events a, lake.sales.orders b WHERE nope = 'eu'"),
			tables:   []string{"local.web.events", "local.sales.orders"},
			warnings: []string{"column nope of no single table dropped"},
		},
		{
			name:       "unqualified table without defaults",
			ev:         duck("SELECT * FROM events WHERE tenant_id = 1"),
			unresolved: []string{"events"},
		},
		{
			name: "pushed filter beats sql, unknown pushed column opaque",
			ev: func() collectors.QueryEvent {
				e := spark(pushed("EVENTS", leaf("nope", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "1"})))
				e.SQL = "SELECT * FROM web.events WHERE tenant_id = 5"
				return e
			}(),
			tables: []string{"local.web.events"},
			filter: []string{},
			columns: []string{
				"tenant_id/filter/sql-parse",
			},
			warnings: []string{"column local.web.events.nope not in schema"},
		},
		{
			name:   "spark day number and epoch micros",
			ev:     spark(pushed("events", &expr.Node{Kind: expr.NodeOr, Children: []*expr.Node{leaf("EVENT_DATE", expr.OpLt, expr.Value{Kind: expr.KindNumber, Text: "20544"}), leaf("event_ts", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "1775023200000000"})}})),
			tables: []string{"local.web.events"},
			filter: []string{
				"local.web.events event_date  < date:2026-04-01",
				"local.web.events event_ts  = timestamp:2026-04-01 06:00:00+00:00",
			},
		},
		{
			name:   "spark metadata table db.t.snapshots",
			ev:     spark(collectors.TableAccess{Catalog: "spark_catalog", Namespace: "web.events", Name: "snapshots", Direct: true}),
			tables: []string{"local.web.events"},
			meta:   "snapshots",
		},
		{
			name:   "trino metadata table t$files",
			ev:     collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: "t", StartTime: time.Now(), Tables: []collectors.TableAccess{{Catalog: "iceberg", Namespace: "Sales", Name: "orders$files"}}},
			tables: []string{"local.sales.orders"},
			meta:   "files",
		},
		{
			name:   "sql and source name the same table differently",
			ev:     withTables(duck("SELECT * FROM LAKE.Web.Events WHERE tenant_id = 2"), collectors.TableAccess{Catalog: "lake", Namespace: "web", Name: "events", Evidence: collectors.EvidencePushedFilter}),
			tables: []string{"local.web.events"},
			filter: []string{"local.web.events tenant_id  = number:2"},
		},
		{
			name: "scan report engine has no dialect",
			ev: collectors.QueryEvent{Source: "iceberg-scanreport", Engine: collectors.EngineIceberg, QueryID: "s", StartTime: time.Now(),
				SQL: "not sql at all", Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "WEB", Name: "EVENTS"}}},
			tables: []string{"local.web.events"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			notes, err := n.Normalize(t.Context(), &ev)
			require.NoError(t, err)
			require.Equal(t, time.UTC, ev.StartTime.Location())
			names := []string{}
			for _, ta := range ev.Tables {
				names = append(names, ta.QualifiedName())
			}
			if tc.tables == nil {
				tc.tables = []string{}
			}
			require.Equal(t, tc.tables, names, dump(t, ev))
			require.Equal(t, tc.unresolved, notes.Unresolved)
			require.Equal(t, tc.warnings, notes.Warnings)
			if len(ev.Tables) == 0 {
				return
			}
			first := ev.Tables[0]
			if tc.filter != nil {
				got := leaves(first.Filter)
				if got == nil {
					got = []string{}
				}
				require.Equal(t, tc.filter, got, dump(t, first.Filter))
			}
			cols := columns(first)
			for _, c := range tc.columns {
				require.True(t, cols[c], "%s in %s", c, dump(t, first.Columns))
			}
			meta, ok := first.MetadataTable()
			require.Equal(t, tc.meta != "", ok)
			require.Equal(t, tc.meta, meta)
		})
	}
}

// countingCatalog counts the listing and loading calls that reach a
// catalog.
type countingCatalog struct {
	catalog.Catalog
	namespaces, tables, loads int
}

func (c *countingCatalog) ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error) {
	c.namespaces++
	return c.Catalog.ListNamespaces(ctx, parent)
}

func (c *countingCatalog) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	c.tables++
	return c.Catalog.ListTables(ctx, ns)
}

func (c *countingCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	c.loads++
	return c.Catalog.LoadTable(ctx, id)
}

func TestCatalogResolver(t *testing.T) {
	l := newLake(t)
	cc := &countingCatalog{Catalog: l.w.Catalog}
	r := ingest.NewCatalogResolver(l.cfg, func(context.Context, string) (catalog.Catalog, error) { return cc, nil })
	for _, tc := range []struct {
		name      string
		cat       string
		ns        []string
		table     string
		ok        bool
		wantNS    []string
		wantTable string
	}{
		{"exact", "local", []string{"web"}, "events", true, []string{"web"}, "events"},
		{"upper case", "LOCAL", []string{"WEB"}, "EVENTS", true, []string{"web"}, "events"},
		{"mixed case again", "local", []string{"Web"}, "Events", true, []string{"web"}, "events"},
		{"other namespace", "local", []string{"SALES"}, "Orders", true, []string{"sales"}, "orders"},
		{"unknown table", "local", []string{"web"}, "clicks", false, nil, ""},
		{"unknown namespace", "local", []string{"crm"}, "events", false, nil, ""},
		{"unknown catalog", "prod", []string{"web"}, "events", false, nil, ""},
		{"nested namespace that is not there", "local", []string{"web", "events"}, "snapshots", false, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema, ns, name, ok, err := r.Schema(t.Context(), tc.cat, tc.ns, tc.table)
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			if !ok {
				require.Nil(t, schema)
				return
			}
			require.Equal(t, tc.wantNS, ns)
			require.Equal(t, tc.wantTable, name)
			_, found := schema.FindFieldByName("order_id")
			require.Equal(t, tc.wantTable == "orders", found)
		})
	}
	require.Equal(t, 2, cc.loads, "each table's schema is loaded once")
	require.Equal(t, 2, cc.tables, "each namespace's tables are listed once")
	require.LessOrEqual(t, cc.namespaces, 2, "top-level namespaces listed once, web's children once")

	_, _, _, _, err := ingest.NewCatalogResolver(l.cfg, func(context.Context, string) (catalog.Catalog, error) {
		return nil, iceberg.ErrNotImplemented
	}).Schema(t.Context(), "local", []string{"web"}, "events")
	require.ErrorIs(t, err, iceberg.ErrNotImplemented)
	require.ErrorContains(t, err, "open catalog local")
}

// SQL that reads a table's files by path (DuckDB read_parquet, Spark
// delta.`…`) is attributed to the table whose location holds the path.
func TestNormalizeLocatedPath(t *testing.T) {
	l := newLake(t)
	tbl, err := l.w.Catalog.LoadTable(t.Context(), table.Identifier{"web", "events"})
	require.NoError(t, err)
	n := ingest.NewNormalizer(l.cfg, l.resolver)
	for _, ev := range []collectors.QueryEvent{
		{Source: "duckdb-log", Engine: collectors.EngineDuckDB, QueryID: "d", StartTime: time.Now(),
			SQL: "SELECT * FROM read_parquet('" + tbl.Location() + "/data/**/*.parquet') WHERE tenant_id = 7"},
		{Source: "spark-eventlog", Engine: collectors.EngineSpark, QueryID: "s", StartTime: time.Now(),
			SQL: "SELECT * FROM parquet.`" + tbl.Location() + "/data` WHERE tenant_id = 7"},
	} {
		notes, err := n.Normalize(t.Context(), &ev)
		require.NoError(t, err)
		require.Empty(t, notes.Unresolved, ev.SQL)
		require.Len(t, ev.Tables, 1, ev.SQL)
		ta := ev.Tables[0]
		require.Equal(t, "local.web.events", ta.QualifiedName())
		require.Equal(t, "tenant_id", ta.Columns[0].Name)
		require.Equal(t, "(tenant_id = 7)", "("+ta.Filter.String()+")")
	}
	_, _, _, ok, err := l.resolver.Locate(t.Context(), "s3://elsewhere/t/data/x.parquet")
	require.NoError(t, err)
	require.False(t, ok)
}
