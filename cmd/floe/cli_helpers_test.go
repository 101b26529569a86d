package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
)

// flatWarehouse is a config dir whose default catalog holds db.flat, an
// unpartitioned table of files small files of rows rows each (columns id
// and tenant), without the cost of the demo.
func flatWarehouse(t *testing.T, files, rows int) string {
	t.Helper()
	w := testlake.New(t)
	writeFlatTable(t, w, "flat", files, rows)
	return warehouseConfig(t, w)
}

// warehouseConfig is a config dir whose default catalog is w.
func warehouseConfig(t *testing.T, w *testlake.Warehouse) string {
	t.Helper()
	dir := t.TempDir()
	writeWarehouseConfig(t, dir, w, "")
	return dir
}

// writeWarehouseConfig writes dir/floe.yaml with w's catalog, "local",
// the default (on whichever store w is), and the catalogs in extra (YAML
// lines under catalogs:).
func writeWarehouseConfig(t *testing.T, dir string, w *testlake.Warehouse, extra string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(w.ConfigYAML(extra)), 0o644))
}

// writeFlatTable creates db.<name> (id long, tenant string) in w with
// files appends of rows rows each, ids descending from file to file.
func writeFlatTable(t *testing.T, w *testlake.Warehouse, name string, files, rows int) {
	t.Helper()
	writeFlatTableAt(t, w, table.Identifier{"db", name}, files, rows)
}

// writeFlatTableAt is writeFlatTable for any identifier (namespace
// levels…, name), creating the namespace when missing.
func writeFlatTableAt(t *testing.T, w *testlake.Warehouse, ident table.Identifier, files, rows int) {
	t.Helper()
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "tenant", Type: iceberg.PrimitiveTypes.String},
	)
	ctx := context.Background()
	ns := ident[:len(ident)-1]
	ok, err := w.Catalog.CheckNamespaceExists(ctx, ns)
	require.NoError(t, err)
	if !ok {
		require.NoError(t, w.Catalog.CreateNamespace(ctx, ns, nil))
	}
	tbl, err := w.Catalog.CreateTable(ctx, ident, schema)
	require.NoError(t, err)
	for i := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
		for j := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64((files-i)*rows + j))
			b.Field(1).(*array.StringBuilder).Append([]string{"acme", "globex", "initech"}[j%3])
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
}

// runWith executes floe with args against the config in dir on the given
// streams and returns the exit code, as Main would.
func runWith(t *testing.T, io *IOStreams, dir string, args ...string) int {
	t.Helper()
	f := newFactory(io)
	root := newRootCmd(f)
	root.SetArgs(append([]string{"--config", filepath.Join(dir, "floe.yaml")}, args...))
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetIn(io.In)
	err := root.ExecuteContext(context.Background())
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return exitCode(io, err)
}

// ttyIO are streams whose ErrOut counts as a terminal, Out and ErrOut
// writing to one buffer so that their order can be checked.
func ttyIO() (*IOStreams, *bytes.Buffer) {
	var buf bytes.Buffer
	return &IOStreams{In: &bytes.Buffer{}, Out: &buf, ErrOut: &buf, ErrTTY: true}, &buf
}
