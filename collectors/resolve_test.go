package collectors_test

import (
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

// fakeCatalog knows tables by lower-cased catalog.namespace.name and
// returns them spelled as stored.
type fakeCatalog map[string][3]string

func (f fakeCatalog) Resolve(cat, ns, name string) (string, string, string, bool) {
	v, ok := f[strings.ToLower(cat+"."+ns+"."+name)]
	return v[0], v[1], v[2], ok
}

func TestResolveTables(t *testing.T) {
	cat := fakeCatalog{
		"prod.sales.orders":  {"prod", "sales", "orders"},
		"prod.web.events":    {"prod", "web", "Events"},
		"local.main.answers": {"local", "main", "answers"},
	}
	opts := collectors.ResolveOptions{CatalogMap: map[string]string{"lake": "prod", "glue_catalog": "prod"}, DefaultCatalog: "local", DefaultNamespace: "main"}
	tests := []struct {
		name        string
		ev          collectors.QueryEvent
		want        []string
		wantDropped []string
	}{
		{"qualified, mapped catalog, any case", collectors.QueryEvent{Tables: []collectors.TableAccess{{Catalog: "LAKE", Namespace: "Sales", Name: "ORDERS"}}},
			[]string{"prod.sales.orders"}, nil},
		{"unqualified takes the event defaults", collectors.QueryEvent{DefaultCatalog: "lake", DefaultSchema: "sales", Tables: []collectors.TableAccess{{Name: "orders"}}},
			[]string{"prod.sales.orders"}, nil},
		{"namespace only takes the event catalog", collectors.QueryEvent{DefaultCatalog: "glue_catalog", Tables: []collectors.TableAccess{{Namespace: "web", Name: "events"}}},
			[]string{"prod.web.Events"}, nil},
		{"no event defaults: option defaults", collectors.QueryEvent{Tables: []collectors.TableAccess{{Name: "answers"}}},
			[]string{"local.main.answers"}, nil},
		{"unknown tables are dropped", collectors.QueryEvent{Tables: []collectors.TableAccess{{Catalog: "hive", Namespace: "x", Name: "y"}, {Catalog: "lake", Namespace: "sales", Name: "orders"}}},
			[]string{"prod.sales.orders"}, []string{"hive.x.y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			dropped := collectors.ResolveTables(&ev, cat, opts)
			var got, gotDropped []string
			for _, tb := range ev.Tables {
				got = append(got, tb.QualifiedName())
			}
			for _, tb := range dropped {
				gotDropped = append(gotDropped, tb.QualifiedName())
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantDropped, gotDropped)
		})
	}

	t.Run("filter leaves follow the table", func(t *testing.T) {
		leaf := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "glue_catalog.web.events", Column: "day", Op: expr.OpEq}}
		ev := collectors.QueryEvent{Tables: []collectors.TableAccess{{Catalog: "glue_catalog", Namespace: "web", Name: "events", Filter: leaf}}}
		collectors.ResolveTables(&ev, cat, opts)
		require.Equal(t, "prod.web.Events", ev.Tables[0].Filter.Pred.Table)
		require.Equal(t, "glue_catalog.web.events", leaf.Pred.Table, "the input tree is not modified")
	})
}
