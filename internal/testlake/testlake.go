// Package testlake builds real Iceberg tables in a temporary local warehouse
// (iceberg-go's SQL catalog on SQLite, file:// IO) for tests.
package testlake

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// Warehouse is a local catalog in a temporary directory.
type Warehouse struct {
	Dir     string
	Name    string
	Props   map[string]string
	Catalog catalog.Catalog
}

// New opens a fresh warehouse in t.TempDir().
func New(t testing.TB) *Warehouse {
	t.Helper()
	dir := t.TempDir()
	props := lake.LocalCatalogProps(dir)
	cat, err := lake.OpenCatalog(context.Background(), "local", props)
	require.NoError(t, err)
	return &Warehouse{Dir: dir, Name: "local", Props: props, Catalog: cat}
}

// CreateTable creates namespace ns (if needed) and table name.
func (w *Warehouse) CreateTable(t testing.TB, ns, name string, schema *iceberg.Schema, spec *iceberg.PartitionSpec, props iceberg.Properties, order *table.SortOrder) *table.Table {
	t.Helper()
	ctx := context.Background()
	if ok, err := w.Catalog.CheckNamespaceExists(ctx, table.Identifier{ns}); err == nil && !ok {
		require.NoError(t, w.Catalog.CreateNamespace(ctx, table.Identifier{ns}, nil))
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if spec != nil {
		opts = append(opts, catalog.WithPartitionSpec(spec))
	}
	if order != nil {
		opts = append(opts, catalog.WithSortOrder(*order))
	}
	tbl, err := w.Catalog.CreateTable(ctx, table.Identifier{ns, name}, schema, opts...)
	require.NoError(t, err)
	return tbl
}

// Append appends one record batch as one commit and returns the new table.
func Append(t testing.TB, tbl *table.Table, rec arrow.RecordBatch) *table.Table {
	t.Helper()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()
	out, err := tbl.Append(context.Background(), rdr, nil)
	require.NoError(t, err)
	return out
}

// ArrowSchema is the table's current schema as Arrow, with field ids.
func ArrowSchema(t testing.TB, tbl *table.Table) *arrow.Schema {
	t.Helper()
	s, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	return s
}
