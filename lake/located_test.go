package lake_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// TestListLocatedSQL: a SQL catalog lists every table with the metadata
// location LoadTable would read — nested and dotted namespaces included,
// views left out — and a commit moves the listed location, all without
// loading a table.
func TestListLocatedSQL(t *testing.T) {
	ctx := t.Context()
	w := testlake.NewLocal(t)
	w.CreateTable(t, "sales", "orders", schema, nil, nil, nil)
	w.CreateTable(t, "sales", "items", schema, nil, nil, nil)
	nested := table.Identifier{"web", "events"}
	require.NoError(t, w.Catalog.CreateNamespace(ctx, table.Identifier{"web"}, nil))
	require.NoError(t, w.Catalog.CreateNamespace(ctx, nested, nil))
	_, err := w.Catalog.CreateTable(ctx, append(nested, "clicks"), schema)
	require.NoError(t, err)
	dotted := table.Identifier{"v1.2"}
	require.NoError(t, w.Catalog.CreateNamespace(ctx, dotted, nil))
	_, err = w.Catalog.CreateTable(ctx, append(dotted, "t"), schema)
	require.NoError(t, err)
	// A view, in a catalog opened by iceberg-go itself (floe's wrapper
	// does not create views).
	raw, err := catalog.Load(ctx, w.Name, iceberg.Properties(w.Props))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, raw.(catalog.Closer).Close()) })
	require.NoError(t, raw.(interface {
		CreateView(context.Context, table.Identifier, *iceberg.Schema, string, iceberg.Properties) error
	}).CreateView(ctx, table.Identifier{"sales", "recent"}, schema, "SELECT * FROM sales.orders", nil))

	counted := testlake.Count(w.Catalog)
	located, err := lake.ListLocated(ctx, w.Name, counted)
	require.NoError(t, err)
	require.Zero(t, counted.MetadataReads(), "listing reads no metadata file")
	ids, err := lake.ListTables(ctx, w.Name, w.Catalog)
	require.NoError(t, err)
	require.Len(t, located, len(ids))
	require.Len(t, located, 4)
	for i, l := range located {
		require.Equal(t, ids[i].String(), l.String())
		tbl, err := lake.LoadTable(ctx, w.Catalog, l.Ident)
		require.NoError(t, err)
		require.Equal(t, tbl.MetadataLocation(), l.MetadataLocation, l.String())
	}

	orders := lake.Ident{Catalog: w.Name, Namespace: []string{"sales"}, Name: "orders"}
	tbl, err := lake.LoadTable(ctx, w.Catalog, orders)
	require.NoError(t, err)
	tbl = testlake.Append(t, tbl, batch(t, testlake.ArrowSchema(t, tbl), 1, 3, "eu", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)))
	again, err := lake.ListLocated(ctx, w.Name, w.Catalog)
	require.NoError(t, err)
	for i, l := range again {
		if l.String() == orders.String() {
			require.Equal(t, tbl.MetadataLocation(), l.MetadataLocation)
			require.NotEqual(t, located[i].MetadataLocation, l.MetadataLocation, "a commit moves the listed location")
			continue
		}
		require.Equal(t, located[i].MetadataLocation, l.MetadataLocation)
	}
}

// TestListLocatedFallback: a catalog that lists no locations is listed by
// namespace, each table without a location.
func TestListLocatedFallback(t *testing.T) {
	w := testlake.NewLocal(t)
	w.CreateTable(t, "sales", "orders", schema, nil, nil, nil)
	plain := struct{ catalog.Catalog }{w.Catalog} // hides ListLocations
	located, err := lake.ListLocated(t.Context(), w.Name, plain)
	require.NoError(t, err)
	require.Len(t, located, 1)
	require.Equal(t, "local.sales.orders", located[0].String())
	require.Empty(t, located[0].MetadataLocation)
}
