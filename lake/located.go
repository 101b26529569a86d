package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
)

// Located is a listed table and its current metadata location, as the
// catalog's listing gave it: "" when the catalog gives none cheaply (see
// [ListLocated]).
type Located struct {
	Ident
	MetadataLocation string
}

// TableLocation is one table of a [LocationLister]'s listing.
type TableLocation struct {
	Table            table.Identifier
	MetadataLocation string
}

// LocationLister is a catalog that lists all its tables together with each
// one's current metadata location in one cheap call, reading no metadata
// file. A catalog that cannot (this time) returns an error wrapping
// errors.ErrUnsupported, and [ListLocated] lists it as any other. A
// catalog wrapper forwards it to the catalog it wraps.
type LocationLister interface {
	ListLocations(ctx context.Context) ([]TableLocation, error)
}

// ListLocated lists every table of a catalog as [ListTables] does, with
// each table's current metadata location where the catalog gives it
// without reading a metadata file: a [LocationLister] — the SQL catalog
// (floe's embedded default is one), one query of its iceberg_tables table —
// lists them all at once. Other catalogs (REST, Glue, Hive, Hadoop) are
// listed by namespace, with no locations: a caller loads such a table
// ([LoadTable]) to learn where its metadata is.
func ListLocated(ctx context.Context, catName string, cat catalog.Catalog) ([]Located, error) {
	if ll, ok := cat.(LocationLister); ok {
		tls, err := ll.ListLocations(ctx)
		switch {
		case err == nil:
			out := make([]Located, 0, len(tls))
			for _, tl := range tls {
				n := len(tl.Table)
				if n < 2 {
					continue
				}
				out = append(out, Located{Ident: Ident{Catalog: catName, Namespace: slices.Clone(tl.Table[:n-1]), Name: tl.Table[n-1]},
					MetadataLocation: tl.MetadataLocation})
			}
			slices.SortFunc(out, func(a, b Located) int { return strings.Compare(a.String(), b.String()) })
			return slices.CompactFunc(out, func(a, b Located) bool { return a.String() == b.String() }), nil
		case !errors.Is(err, errors.ErrUnsupported):
			return nil, fmt.Errorf("list tables of %s: %w", catName, err)
		}
	}
	ids, err := ListTables(ctx, catName, cat)
	if err != nil {
		return nil, err
	}
	out := make([]Located, len(ids))
	for i, id := range ids {
		out[i] = Located{Ident: id}
	}
	return out, nil
}

// sqlLocations lists a SQL catalog's tables with their metadata locations
// from its iceberg_tables table, on a database/sql pool of its own (opened
// on first use with the catalog's sql.driver and uri, as iceberg-go opens
// its own, whose pool it does not expose). The columns are iceberg-go's
// (catalog/sql: sqlIcebergTable): catalog_name, table_namespace,
// table_name, metadata_location and, on its V1 schema only, iceberg_type,
// whose VIEW rows are views, not tables.
type sqlLocations struct {
	catalog string // the catalog_name of its rows
	driver  string
	uri     string
	dialect string

	mu sync.Mutex
	db *sql.DB
}

// newSQLLocations is the location lister of SQL catalog cat opened with
// props, or nil when cat is not a SQL catalog or its database cannot be
// shared with a second pool (an in-memory SQLite database is one per
// connection pool).
func newSQLLocations(cat catalog.Catalog, props map[string]string) *sqlLocations {
	sc, ok := cat.(*sqlcat.Catalog)
	if !ok {
		return nil
	}
	uri := strings.TrimPrefix(props["uri"], "sql://")
	if uri == "" || strings.Contains(uri, ":memory:") || strings.Contains(uri, "mode=memory") {
		return nil
	}
	return &sqlLocations{catalog: sc.Name(), driver: props[sqlcat.DriverKey], uri: uri, dialect: strings.ToLower(props[sqlcat.DialectKey])}
}

// placeholder is the dialect's first bind parameter.
func (l *sqlLocations) placeholder() string {
	switch sqlcat.SupportedDialect(l.dialect) {
	case sqlcat.Postgres:
		return "$1"
	case sqlcat.MSSQL:
		return "@p1"
	case sqlcat.Oracle:
		return ":1"
	}
	return "?"
}

// ListLocations implements [LocationLister]: one query per call.
func (l *sqlLocations) ListLocations(ctx context.Context) ([]TableLocation, error) {
	l.mu.Lock()
	if l.db == nil {
		db, err := sql.Open(l.driver, l.uri)
		if err != nil {
			l.mu.Unlock()
			return nil, fmt.Errorf("open the catalog database: %w", err)
		}
		l.db = db
	}
	db := l.db
	l.mu.Unlock()
	// SELECT *: iceberg_type exists on iceberg-go's V1 schema only.
	rows, err := db.QueryContext(ctx, "SELECT * FROM iceberg_tables WHERE catalog_name = "+l.placeholder(), l.catalog)
	if err != nil {
		return nil, fmt.Errorf("read the table locations in iceberg_tables: %w", err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read the table locations in iceberg_tables: %w", err)
	}
	idx := map[string]int{}
	for i, c := range cols {
		idx[strings.ToLower(c)] = i
	}
	for _, c := range []string{"table_namespace", "table_name", "metadata_location"} {
		if _, ok := idx[c]; !ok {
			return nil, fmt.Errorf("iceberg_tables has no %s column: %w", c, errors.ErrUnsupported)
		}
	}
	typ, typed := idx["iceberg_type"]
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []TableLocation
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read the table locations in iceberg_tables: %w", err)
		}
		if typed && vals[typ].Valid && vals[typ].String != sqlcat.TableType {
			continue
		}
		id := append(sqlNamespace(vals[idx["table_namespace"]].String), vals[idx["table_name"]].String)
		out = append(out, TableLocation{Table: id, MetadataLocation: vals[idx["metadata_location"]].String})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the table locations in iceberg_tables: %w", err)
	}
	return out, nil
}

// Close closes the pool, if it was opened.
func (l *sqlLocations) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db == nil {
		return nil
	}
	err := l.db.Close()
	l.db = nil
	return err
}

// sqlNamespacePrefix marks a namespace iceberg-go's SQL catalog stores as
// JSON: one with a part that holds a dot.
const sqlNamespacePrefix = "__iceberg_namespace_v1__:"

// sqlNamespace reads a table_namespace as iceberg-go's SQL catalog writes
// it: the parts joined with dots, or sqlNamespacePrefix and the parts as a
// JSON array when one holds a dot. What does not decode as such is dotted
// text, as iceberg-go reads it.
func sqlNamespace(s string) []string {
	if enc, ok := strings.CutPrefix(s, sqlNamespacePrefix); ok {
		var parts []string
		// Only the canonical encoding claims the marker, as iceberg-go
		// reads it: parts one of which holds a dot (or whose dotted text
		// would hold the marker), encoded as json.Marshal does.
		if err := json.Unmarshal([]byte(enc), &parts); err == nil && len(parts) > 0 {
			b, _ := json.Marshal(parts)
			dotted := slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, ".") })
			if string(b) == enc && (dotted || strings.Contains(strings.Join(parts, "."), sqlNamespacePrefix)) {
				return parts
			}
		}
	}
	return strings.Split(s, ".")
}
