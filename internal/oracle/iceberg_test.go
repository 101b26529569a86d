package oracle_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" for the embedded catalog

	"github.com/floe-project/floe/internal/oracle"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var tblSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
)

func newTable(t *testing.T, cat *sqlcat.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"db", name}, tblSchema)
	require.NoError(t, err)
	return tbl
}

// appendIDs appends one row per id; name and score derive from the id.
func appendIDs(t *testing.T, tbl *table.Table, ids ...int64) *table.Table {
	t.Helper()
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(string(rune('a' + id%26)))
		if id%4 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(id) * 1.5)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()
	tbl, err = tbl.Append(t.Context(), rdr, nil)
	require.NoError(t, err)
	return tbl
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func newCatalog(t *testing.T) *sqlcat.Catalog {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "c.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	cat, err := sqlcat.NewCatalog("local", db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + filepath.Join(dir, "wh")})
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"db"}, nil))
	return cat
}

// deleteID turns on merge-on-read and deletes one id, which leaves a
// position delete file when the id shares its data file with other rows.
func deleteID(t *testing.T, tbl *table.Table, id int64) *table.Table {
	t.Helper()
	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{"write.delete.mode": "merge-on-read"}))
	tbl, err := tx.Commit(t.Context())
	require.NoError(t, err)
	tbl, err = tbl.Delete(t.Context(), iceberg.EqualTo(iceberg.Reference("id"), id), nil)
	require.NoError(t, err)
	return tbl
}

func TestChecksumIceberg(t *testing.T) {
	cat := newCatalog(t)
	ctx := t.Context()

	base := appendIDs(t, newTable(t, cat, "base"), seq(0, 500)...)
	want, err := oracle.ChecksumIceberg(ctx, base)
	require.NoError(t, err)
	require.Equal(t, int64(500), want.Rows)

	// The same rows in other commits and another order: same sum.
	other := newTable(t, cat, "other")
	other = appendIDs(t, other, seq(250, 500)...)
	rev := seq(0, 250)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	other = appendIDs(t, other, rev...)
	got, err := oracle.ChecksumIceberg(ctx, other)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// A merge-on-read delete is applied by the scan.
	var but7 []int64
	for _, id := range seq(0, 500) {
		if id != 7 {
			but7 = append(but7, id)
		}
	}
	wantBut7, err := oracle.ChecksumIceberg(ctx, appendIDs(t, newTable(t, cat, "but7"), but7...))
	require.NoError(t, err)
	require.NotEqual(t, want, wantBut7)
	other = deleteID(t, other, 7)
	got, err = oracle.ChecksumIceberg(ctx, other)
	require.NoError(t, err)
	require.Equal(t, wantBut7, got)

	_, dels, err := oracle.LiveFiles(ctx, other)
	require.NoError(t, err)
	require.NotEmpty(t, dels, "the delete should be a position delete file")
}
