package testlake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

// Warehouse is a catalog whose database lives in a temporary directory and
// whose files live there too ([NewLocal]), in an in-process S3 server
// ([NewS3]), in a versitygw server ([NewVersitygw]) or in another [Store]
// ([Open]; gcslake's in-process GCS server).
type Warehouse struct {
	// Dir holds the catalog database (and, for a local warehouse, the
	// files under Dir/warehouse).
	Dir     string
	Name    string
	Props   map[string]string
	Catalog catalog.Catalog
	// S3 is the in-process server of an [NewS3] warehouse; nil otherwise.
	S3 *S3
	// Gateway is the versitygw server of a [NewVersitygw] warehouse; nil
	// otherwise.
	Gateway *Versitygw
	// Store is the store of a warehouse opened with [Open] on one; nil
	// otherwise.
	Store Store
}

// Store is an object store a warehouse's files can live in, besides those
// of this package: what the warehouse's helpers need of it.
type Store interface {
	// Put stores data at loc (a URI in the warehouse) as if written at
	// modTime, asking the store's backend itself.
	Put(t testing.TB, loc string, data []byte, modTime time.Time)
	// Has reports whether an object is stored at loc, asking the store's
	// backend itself.
	Has(t testing.TB, loc string) bool
}

// New opens a fresh warehouse on the store [EnvStore] names: local unless
// FLOE_TEST_STORE is s3 (in-process gofakes3) or versitygw (a versitygw
// server). Tests that reach files only through the helpers of this package
// ([Warehouse.Location], [Warehouse.Plant], [Warehouse.Exists],
// [Warehouse.Age]) run unchanged on each.
func New(t testing.TB) *Warehouse {
	t.Helper()
	switch store := os.Getenv(EnvStore); store {
	case "", "local":
		return NewLocal(t)
	case "s3":
		return NewS3(t)
	case "versitygw":
		return NewVersitygw(t)
	default:
		t.Fatalf("%s=%q: want local, s3 or versitygw", EnvStore, store)
		return nil
	}
}

// NewLocal opens a fresh warehouse in t.TempDir() with file:// IO. Its
// catalog is closed when t ends: the SQL catalog holds a database/sql pool,
// whose connection opener goroutine would outlive the test.
func NewLocal(t testing.TB) *Warehouse {
	t.Helper()
	dir := t.TempDir()
	return Open(t, dir, lake.LocalCatalogProps(dir), nil)
}

// Open opens the warehouse whose catalog (SQL, in dir) has props, on store
// (nil: local disk, or a store of this package, which sets its own field).
// Its catalog is closed when t ends.
func Open(t testing.TB, dir string, props map[string]string, store Store) *Warehouse {
	t.Helper()
	cat, err := lake.OpenCatalog(context.Background(), "local", props)
	require.NoError(t, err)
	t.Cleanup(func() {
		if c, ok := cat.(catalog.Closer); ok {
			require.NoError(t, c.Close())
		}
	})
	return &Warehouse{Dir: dir, Name: "local", Props: props, Catalog: cat, Store: store}
}

// Reopen opens another catalog on the warehouse's database and store, with
// its properties overridden by props (floe's own, such as
// lake.PropIOTimeout, included), under the warehouse's name; it is closed
// when t ends.
func (w *Warehouse) Reopen(t testing.TB, props map[string]string) catalog.Catalog {
	t.Helper()
	all := maps.Clone(w.Props)
	maps.Copy(all, props)
	// The SQL catalog keys its tables by the catalog's name.
	cat, err := lake.OpenCatalog(context.Background(), w.Name, all)
	require.NoError(t, err)
	t.Cleanup(func() {
		if c, ok := cat.(catalog.Closer); ok {
			require.NoError(t, c.Close())
		}
	})
	return cat
}

// ConfigYAML is a floe.yaml reaching the warehouse: data_dir its Dir (so
// the state store goes there too) and catalog "local", the default, with
// the warehouse's properties, followed by extra (more catalogs as YAML
// lines under catalogs:, or top-level keys).
func (w *Warehouse) ConfigYAML(extra string) string {
	return fmt.Sprintf("data_dir: %s\ndefault_catalog: %s\ncatalogs:\n", w.Dir, w.Name) + w.CatalogYAML(w.Name, nil) + extra
}

// CatalogYAML is the entry of a catalog called name under catalogs: in a
// floe.yaml, with the warehouse's properties overridden by override: a
// second catalog on the same store (a restored backup of the catalog
// database, say).
func (w *Warehouse) CatalogYAML(name string, override map[string]string) string {
	props := maps.Clone(w.Props)
	maps.Copy(props, override)
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n", name)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "    %s: %q\n", k, props[k])
	}
	return b.String()
}

// Location is the URI of rel (a slash-separated path) under the warehouse
// root: file:///…/warehouse/rel, s3://floe/warehouse/rel or
// gs://floe/warehouse/rel.
func (w *Warehouse) Location(rel string) string {
	return strings.TrimSuffix(w.Props["warehouse"], "/") + "/" + strings.TrimPrefix(rel, "/")
}

// Plant writes data at loc (a URI in the warehouse) as if written at
// modTime: the local file's modification time is set, the in-process S3
// server stamps the object with modTime, versitygw's backend file gets
// modTime, or a [Store] stores it with modTime.
// Orphan tests plant old files this way.
func (w *Warehouse) Plant(t testing.TB, loc string, data []byte, modTime time.Time) {
	t.Helper()
	switch {
	case w.S3 != nil:
		fio, ok := w.fileIO(t, loc).(iceio.WriteFileIO)
		require.True(t, ok, "the IO of %s cannot write", loc)
		w.S3.at(modTime, func() { require.NoError(t, fio.WriteFile(loc, data)) })
	case w.Store != nil:
		w.Store.Put(t, loc, data, modTime)
	case w.Gateway != nil:
		fio, ok := w.fileIO(t, loc).(iceio.WriteFileIO)
		require.True(t, ok, "the IO of %s cannot write", loc)
		require.NoError(t, fio.WriteFile(loc, data))
		w.Age(t, loc, modTime)
	default:
		p := localFile(t, loc)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
		w.Age(t, loc, modTime)
	}
}

// Age sets the modification time of the file already at loc (a URI in the
// warehouse) to modTime, as if it had been written then: what tests of
// orphan removal and lease ageing need of files floe itself wrote. The
// in-process S3 server cannot restamp a stored object, so there the file
// (nor can a [Store]) is read and planted again.
func (w *Warehouse) Age(t testing.TB, loc string, modTime time.Time) {
	t.Helper()
	switch {
	case w.S3 != nil, w.Store != nil:
		w.Plant(t, loc, w.Read(t, loc), modTime)
	case w.Gateway != nil:
		require.NoError(t, os.Chtimes(w.Gateway.path(t, loc), modTime, modTime))
	default:
		p := localFile(t, loc)
		require.NoError(t, os.Chtimes(p, modTime, modTime))
	}
}

// localFile is the path of loc in a local warehouse: a file:// URI or an
// absolute path. Anything else (an s3:// location handed to a local
// warehouse) fails t rather than become a relative directory named "s3:".
func localFile(t testing.TB, loc string) string {
	t.Helper()
	p := strings.TrimPrefix(loc, "file://")
	require.True(t, filepath.IsAbs(p), "%s is not a local file location", loc)
	return p
}

// AgeTree sets the modification time of every file under the location
// root (a URI in the warehouse) to modTime, as [Warehouse.Age] does one.
func (w *Warehouse) AgeTree(t testing.TB, root string, modTime time.Time) {
	t.Helper()
	fio, ok := w.fileIO(t, root).(iceio.ListableIO)
	require.True(t, ok, "the IO of %s cannot list", root)
	var locs []string
	require.NoError(t, fio.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		// LocalFS walks plain paths, blobfs full URIs.
		if !strings.Contains(p, "://") {
			p = "file://" + p
		}
		locs = append(locs, p)
		return nil
	}))
	for _, loc := range locs {
		w.Age(t, loc, modTime)
	}
}

// Read returns the content of the file at loc (a URI in the warehouse).
func (w *Warehouse) Read(t testing.TB, loc string) []byte {
	t.Helper()
	f, err := w.fileIO(t, loc).Open(loc)
	require.NoError(t, err)
	data, err := io.ReadAll(f)
	require.NoError(t, errors.Join(err, f.Close()))
	return data
}

// Remove deletes the file at loc (a URI in the warehouse), as a file lost
// from storage is.
func (w *Warehouse) Remove(t testing.TB, loc string) {
	t.Helper()
	require.NoError(t, w.fileIO(t, loc).Remove(loc))
	require.False(t, w.Exists(t, loc), "%s still stored", loc)
}

// Hide removes the file at loc (a URI in the warehouse) until the returned
// function puts it back with the same content: a file briefly lost.
func (w *Warehouse) Hide(t testing.TB, loc string) (restore func()) {
	t.Helper()
	data := w.Read(t, loc)
	w.Remove(t, loc)
	return func() {
		t.Helper()
		w.Plant(t, loc, data, time.Now())
	}
}

// SkipUnlessLocal skips t when the warehouse's files are not on local
// disk, saying why the test is about local files.
func (w *Warehouse) SkipUnlessLocal(t testing.TB, why string) {
	t.Helper()
	if w.S3 != nil || w.Gateway != nil || w.Store != nil {
		t.Skipf("about a local warehouse (%s); this one is in an object store (%s)", why, EnvStore)
	}
}

// Exists reports whether a file is at loc (a URI in the warehouse; on S3, a
// location ending in "/" names a directory marker).
func (w *Warehouse) Exists(t testing.TB, loc string) bool {
	t.Helper()
	switch {
	case w.S3 != nil:
		return w.S3.exists(t, loc)
	case w.Store != nil:
		return w.Store.Has(t, loc)
	case w.Gateway != nil:
		// The POSIX backend keeps object k as file k, and a directory
		// marker k/ as directory k.
		_, err := os.Stat(w.Gateway.path(t, loc))
		if errors.Is(err, fs.ErrNotExist) {
			return false
		}
		require.NoError(t, err)
		return true
	default:
		return exists(t, w.fileIO(t, loc), loc)
	}
}

func exists(t testing.TB, fio iceio.IO, loc string) bool {
	t.Helper()
	f, err := fio.Open(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return true
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
	out, err := TryAppend(t, tbl, rec)
	require.NoError(t, err)
	return out
}

// TryAppend is [Append] for a commit that may fail: it returns the
// commit's error.
func TryAppend(t testing.TB, tbl *table.Table, rec arrow.RecordBatch) (*table.Table, error) {
	t.Helper()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()
	return tbl.Append(context.Background(), rdr, nil)
}

// ArrowSchema is the table's current schema as Arrow, with field ids.
func ArrowSchema(t testing.TB, tbl *table.Table) *arrow.Schema {
	t.Helper()
	s, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	return s
}

// CopyCatalog writes a consistent copy of the warehouse's catalog database
// to path, with its entries renamed to catalog name: what a copied catalog,
// or a catalog backup restored beside the original, is. The copy's entries
// point at the same metadata files, so each shares its location with the
// original entry. Open it with the properties of the warehouse and uri
// "file:"+path, under name.
func (w *Warehouse) CopyCatalog(t testing.TB, name, path string) {
	t.Helper()
	ctx := context.Background()
	db := w.db(t)
	defer func() { require.NoError(t, db.Close()) }()
	_, err := db.ExecContext(ctx, `VACUUM INTO ?`, path)
	require.NoError(t, err)
	cp, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer func() { require.NoError(t, cp.Close()) }()
	for _, tbl := range []string{"iceberg_tables", "iceberg_namespace_properties"} {
		_, err := cp.ExecContext(ctx, `UPDATE `+tbl+` SET catalog_name = ? WHERE catalog_name = ?`, name, w.Name)
		require.NoError(t, err)
	}
}

// db opens the warehouse's catalog database.
func (w *Warehouse) db(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", strings.TrimPrefix(w.Props["uri"], "file:"))
	require.NoError(t, err)
	return db
}

// Register adds the table name in namespace ns to the warehouse's catalog
// with the metadata file at metadataLocation, as Iceberg's register_table
// does (the SQL catalog of iceberg-go v0.7 has no RegisterTable: the row is
// inserted into its iceberg_tables table). The new entry and the one that
// wrote the metadata file then share a location and commit on their own.
func (w *Warehouse) Register(t testing.TB, ns, name, metadataLocation string) *table.Table {
	t.Helper()
	ctx := context.Background()
	db := w.db(t)
	defer func() { require.NoError(t, db.Close()) }()
	var typed int
	var err error
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('iceberg_tables') WHERE name = 'iceberg_type'`).Scan(&typed))
	if typed > 0 {
		_, err = db.ExecContext(ctx, `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type) VALUES (?, ?, ?, ?, 'TABLE')`,
			w.Name, ns, name, metadataLocation)
	} else {
		_, err = db.ExecContext(ctx, `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location) VALUES (?, ?, ?, ?)`,
			w.Name, ns, name, metadataLocation)
	}
	require.NoError(t, err)
	tbl, err := w.Catalog.LoadTable(ctx, table.Identifier{ns, name})
	require.NoError(t, err)
	return tbl
}

// RequireReachableExist checks that every file tbl's snapshots reach — each
// manifest list, manifest, data and delete file — is still in its store.
func RequireReachableExist(t testing.TB, tbl *table.Table) {
	t.Helper()
	fio, err := tbl.FS(context.Background())
	require.NoError(t, err)
	exists := func(loc string) bool { return exists(t, fio, loc) }
	for _, s := range tbl.Metadata().Snapshots() {
		require.True(t, exists(s.ManifestList), "manifest list of retained snapshot %d deleted", s.SnapshotID)
		ms, err := s.Manifests(fio)
		require.NoError(t, err)
		for _, m := range ms {
			require.True(t, exists(m.FilePath()), "manifest %s deleted", m.FilePath())
			for e, err := range m.Entries(fio, true) {
				require.NoError(t, err)
				require.True(t, exists(e.DataFile().FilePath()), "file %s of retained snapshot %d deleted", e.DataFile().FilePath(), s.SnapshotID)
			}
		}
	}
}

// RequireIntact checks that every file tbl's snapshots reach is in its store
// ([RequireReachableExist]) and that its live rows read back as want.
func RequireIntact(t testing.TB, tbl *table.Table, want oracle.Sum) {
	t.Helper()
	RequireReachableExist(t, tbl)
	got, err := oracle.ChecksumIceberg(context.Background(), tbl)
	require.NoError(t, err)
	require.Equal(t, want, got, "the rows of %s changed", tbl.Location())
}
