package ingest_test

import (
	"context"
	"github.com/floe-project/floe/expr"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/config"
	"github.com/stretchr/testify/require"
)

// memResolver is an in-memory [ingest.Resolver]: table "ns.name" (lower
// case) → schema; the catalog spelling is the key's.
type memResolver map[string]*iceberg.Schema

func (m memResolver) Schema(_ context.Context, cat string, ns []string, name string) (*iceberg.Schema, []string, string, bool, error) {
	if cat != "local" {
		return nil, nil, "", false, nil
	}
	key := strings.ToLower(strings.Join(ns, ".") + "." + name)
	s, ok := m[key]
	if !ok {
		return nil, nil, "", false, nil
	}
	parts := strings.Split(key, ".")
	return s, parts[:len(parts)-1], parts[len(parts)-1], true, nil
}

// FuzzNormalize runs arbitrary SQL of every dialect through normalization:
// it never fails or panics, keeps only tables the catalog knows, and
// leaves every filter leaf and column on the table's canonical name and a
// column of its schema.
func FuzzNormalize(f *testing.F) {
	events := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "tenant_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "event_date", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 3, Name: "Region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	orders := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "customer_id", Type: iceberg.PrimitiveTypes.Int64},
	)
	res := memResolver{"web.events": events, "sales.orders": orders}
	cfg := &config.Config{DefaultCatalog: "local", Catalogs: map[string]config.Props{"local": {"type": "sql"}}}
	schemas := map[string]*iceberg.Schema{"local.web.events": events, "local.sales.orders": orders}

	for _, s := range []string{
		"SELECT * FROM web.events WHERE TENANT_ID = 1 AND region IN ('eu', ?)",
		"WITH x AS (SELECT * FROM sales.orders WHERE customer_id > 3) SELECT * FROM x JOIN web.events e ON x.order_id = e.tenant_id",
		"SELECT * FROM \"events$snapshots\"",
		"SELECT * FROM web.events.snapshots WHERE ts > '2026-01-01 00:00:00'",
		"INSERT INTO sales.orders SELECT * FROM web.events WHERE event_date BETWEEN '2026-01-01' AND '2026-02-01' OR nope = 1",
		"SELECT * FROM a, b WHERE c = 1",
	} {
		for d := range 5 {
			f.Add(s, uint8(d))
		}
	}
	engines := []collectors.Engine{collectors.EngineTrino, collectors.EngineAthena, collectors.EngineSpark, collectors.EngineSnowflake, collectors.EngineDuckDB}
	f.Fuzz(func(t *testing.T, sql string, engine uint8) {
		n := ingest.NewNormalizer(cfg, res)
		ev := collectors.QueryEvent{Source: "fuzz", QueryID: "q", Engine: engines[int(engine)%len(engines)],
			StartTime: time.Unix(1, 0), SQL: sql, DefaultCatalog: "local", DefaultSchema: "web"}
		_, err := n.Normalize(context.Background(), &ev)
		require.NoError(t, err)
		for _, ta := range ev.Tables {
			schema, ok := schemas[ta.QualifiedName()]
			require.True(t, ok, ta.QualifiedName())
			if _, meta := ta.MetadataTable(); meta {
				require.Nil(t, ta.Filter)
				continue
			}
			for _, c := range ta.Columns {
				fld, ok := schema.FindFieldByName(c.Name)
				require.True(t, ok, "column %q of %s", c.Name, ta.QualifiedName())
				require.Equal(t, fld.Name, c.Name)
			}
			var walk func(*expr.Node)
			walk = func(nd *expr.Node) {
				if nd == nil {
					return
				}
				if nd.Pred != nil {
					require.Equal(t, ta.QualifiedName(), nd.Pred.Table)
					_, ok := schema.FindFieldByName(nd.Pred.Column)
					require.True(t, ok, "leaf column %q of %s", nd.Pred.Column, ta.QualifiedName())
				}
				for _, c := range nd.Children {
					walk(c)
				}
			}
			walk(ta.Filter)
		}
	})
}
