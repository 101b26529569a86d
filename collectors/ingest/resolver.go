package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/lake"
)

// Resolver finds a table in a floe catalog and returns its current
// schema. Lookups are case-insensitive: namespace and table name are
// matched against the catalog's spelling, which is returned as
// canonicalNamespace and canonicalName. ok is false (with a nil error) when
// the catalog has no such table — a temp table, a view the catalog does not
// know, a CTE name; err is for failures to ask (catalog unreachable).
type Resolver interface {
	Schema(ctx context.Context, floeCatalog string, namespace []string, table string) (schema *iceberg.Schema, canonicalNamespace []string, canonicalName string, ok bool, err error)
}

// Catalogs is what ingestion needs to know of floe's configuration: the
// floe catalogs, and which of them an engine's catalog name stands for.
// The control plane's configuration (control/config's Config) implements
// it; ingestion never reads the configuration file itself.
type Catalogs interface {
	// CatalogNames lists the floe catalogs, sorted.
	CatalogNames() []string
	// MapEngineCatalog returns the floe catalog that the catalog an
	// engine named (engine "trino", say) maps to; an empty engineCatalog
	// (a table name without a catalog part, in an event without a default
	// catalog) maps to the default floe catalog. ok is false when nothing
	// fits.
	MapEngineCatalog(engine, engineCatalog string) (floeCatalog string, ok bool)
}

// OpenCatalogFunc opens the floe catalog called name.
type OpenCatalogFunc func(ctx context.Context, name string) (catalog.Catalog, error)

// CatalogResolver is a [Resolver] over iceberg-go catalogs. Each catalog is
// opened once, each namespace's table list is read once, and each table's
// schema is loaded once; it is safe for concurrent use.
type CatalogResolver struct {
	cats Catalogs
	open OpenCatalogFunc

	mu       sync.Mutex
	catalogs map[string]catalog.Catalog
	// namespaces caches the child namespaces of a parent, by catalog and
	// the parent's canonical path.
	namespaces map[string][]table.Identifier
	// tables caches the tables of a namespace, by catalog and the
	// namespace's canonical path.
	tables  map[string][]table.Identifier
	schemas map[string]*iceberg.Schema
	// locations index every table's location, built on the first Locate.
	locations []tableLocation
}

// tableLocation is where one table of a floe catalog keeps its files.
type tableLocation struct {
	location string
	catalog  string
	ident    table.Identifier
}

// NewCatalogResolver returns a resolver over the catalogs cats names,
// opened on first use with open (typically a closure over
// [lake.OpenCatalog] and the configured catalog properties).
func NewCatalogResolver(cats Catalogs, open OpenCatalogFunc) *CatalogResolver {
	return &CatalogResolver{
		cats:       cats,
		open:       open,
		catalogs:   map[string]catalog.Catalog{},
		namespaces: map[string][]table.Identifier{},
		tables:     map[string][]table.Identifier{},
		schemas:    map[string]*iceberg.Schema{},
	}
}

// Schema implements [Resolver]. floeCatalog must be one of the configured
// catalogs (matched case-insensitively); an unknown catalog name is
// ok == false, not an error.
func (r *CatalogResolver) Schema(ctx context.Context, floeCatalog string, namespace []string, name string) (*iceberg.Schema, []string, string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	catName, ok := r.catalogName(floeCatalog)
	if !ok || len(namespace) == 0 || name == "" {
		return nil, nil, "", false, nil
	}
	cat, err := r.catalog(ctx, catName)
	if err != nil {
		return nil, nil, "", false, err
	}
	ns, ok, err := r.namespace(ctx, catName, cat, namespace)
	if err != nil || !ok {
		return nil, nil, "", false, err
	}
	tables, err := r.listTables(ctx, catName, cat, ns)
	if err != nil {
		return nil, nil, "", false, err
	}
	ident, ok := matchIdent(tables, name)
	if !ok {
		return nil, nil, "", false, nil
	}
	key := catName + "\x00" + strings.Join(ident, "\x00")
	schema := r.schemas[key]
	if schema == nil {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, nil, "", false, fmt.Errorf("load table %s.%s: %w", catName, lake.JoinParts(ident...), err)
		}
		schema = tbl.Schema()
		r.schemas[key] = schema
	}
	return schema, slices.Clone(ident[:len(ident)-1]), ident[len(ident)-1], true, nil
}

// Locate implements [Locator]: the table whose location is path or a
// prefix of it (the longest such location wins). The first call lists every
// table of every configured catalog and reads its location; later calls
// use that index.
func (r *CatalogResolver) Locate(ctx context.Context, path string) (string, []string, string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.locations == nil {
		if err := r.indexLocations(ctx); err != nil {
			return "", nil, "", false, err
		}
	}
	p := normLocation(path)
	best := -1
	for i, l := range r.locations {
		if (p == l.location || strings.HasPrefix(p, l.location+"/")) && (best < 0 || len(l.location) > len(r.locations[best].location)) {
			best = i
		}
	}
	if best < 0 {
		return "", nil, "", false, nil
	}
	l := r.locations[best]
	return l.catalog, slices.Clone(l.ident[:len(l.ident)-1]), l.ident[len(l.ident)-1], true, nil
}

func (r *CatalogResolver) indexLocations(ctx context.Context) error {
	r.locations = []tableLocation{}
	for _, name := range r.cats.CatalogNames() {
		cat, err := r.catalog(ctx, name)
		if err != nil {
			return err
		}
		var walk func(parent table.Identifier, depth int) error
		walk = func(parent table.Identifier, depth int) error {
			children, err := cat.ListNamespaces(ctx, parent)
			if err != nil {
				if len(parent) > 0 {
					return nil // catalogs without nested namespaces may refuse a parent
				}
				return fmt.Errorf("list namespaces of %s: %w", name, err)
			}
			for _, ns := range children {
				if len(parent) > 0 && !(len(ns) > len(parent) && slices.Equal(ns[:len(parent)], parent)) {
					if slices.Equal(ns, parent) || slices.Equal(ns, parent[len(parent)-1:]) {
						continue // some catalogs list a namespace as its own child
					}
					ns = append(slices.Clone(parent), ns...)
				}
				tables, err := r.listTables(ctx, name, cat, ns)
				if err != nil {
					if depth > 0 {
						continue // a nested name the catalog does not really have
					}
					return err
				}
				for _, id := range tables {
					tbl, err := cat.LoadTable(ctx, id)
					if err != nil {
						return fmt.Errorf("load table %s.%s: %w", name, lake.JoinParts(id...), err)
					}
					r.schemas[name+"\x00"+strings.Join(id, "\x00")] = tbl.Schema()
					r.locations = append(r.locations, tableLocation{location: normLocation(tbl.Location()), catalog: name, ident: id})
				}
				if depth < 8 {
					if err := walk(ns, depth+1); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := walk(nil, 0); err != nil {
			return err
		}
	}
	return nil
}

// normLocation makes locations comparable: s3a:// and s3n:// are s3://,
// file:/ paths lose the scheme, trailing slashes go.
func normLocation(p string) string {
	p = strings.TrimSpace(p)
	for _, scheme := range []string{"s3a://", "s3n://"} {
		if rest, ok := strings.CutPrefix(p, scheme); ok {
			p = "s3://" + rest
		}
	}
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(p, "file:"); ok {
		p = rest
	}
	return strings.TrimRight(p, "/")
}

func (r *CatalogResolver) catalogName(name string) (string, bool) {
	names := r.cats.CatalogNames()
	if slices.Contains(names, name) {
		return name, true
	}
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}

func (r *CatalogResolver) catalog(ctx context.Context, name string) (catalog.Catalog, error) {
	if c, ok := r.catalogs[name]; ok {
		return c, nil
	}
	c, err := r.open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", name, err)
	}
	r.catalogs[name] = c
	return c, nil
}

// namespace finds the catalog's spelling of a (possibly nested) namespace,
// one level at a time.
func (r *CatalogResolver) namespace(ctx context.Context, catName string, cat catalog.Catalog, want []string) (table.Identifier, bool, error) {
	var cur table.Identifier
	for _, part := range want {
		key := catName + "\x00" + strings.Join(cur, "\x00")
		children, ok := r.namespaces[key]
		if !ok {
			list, err := cat.ListNamespaces(ctx, cur)
			if err != nil {
				if len(cur) > 0 {
					// Catalogs without nested namespaces may refuse a parent.
					list = nil
				} else {
					return nil, false, fmt.Errorf("list namespaces of %s: %w", catName, err)
				}
			}
			for _, ns := range list {
				// Some catalogs return full paths, others the last level.
				if len(cur) > 0 && !(len(ns) > len(cur) && slices.Equal(ns[:len(cur)], cur)) {
					ns = append(slices.Clone(cur), ns...)
				}
				if len(ns) == len(cur)+1 {
					children = append(children, ns)
				}
			}
			r.namespaces[key] = children
		}
		next, ok := matchIdent(children, part)
		if !ok {
			return nil, false, nil
		}
		cur = next
	}
	return cur, true, nil
}

func (r *CatalogResolver) listTables(ctx context.Context, catName string, cat catalog.Catalog, ns table.Identifier) ([]table.Identifier, error) {
	key := catName + "\x00" + strings.Join(ns, "\x00")
	if t, ok := r.tables[key]; ok {
		return t, nil
	}
	var out []table.Identifier
	for id, err := range cat.ListTables(ctx, ns) {
		if err != nil {
			return nil, fmt.Errorf("list tables of %s.%s: %w", catName, lake.JoinParts(ns...), err)
		}
		if len(id) == 1 {
			id = append(slices.Clone(ns), id...)
		}
		out = append(out, id)
	}
	r.tables[key] = out
	return out, nil
}

// matchIdent returns the identifier whose last part is name: an exact
// match first, else the first case-insensitive one (in the catalog's
// order; two tables differing only in case are ambiguous, and the exact
// spelling wins).
func matchIdent(ids []table.Identifier, name string) (table.Identifier, bool) {
	for _, id := range ids {
		if id[len(id)-1] == name {
			return id, true
		}
	}
	for _, id := range ids {
		if strings.EqualFold(id[len(id)-1], name) {
			return id, true
		}
	}
	return nil, false
}

// SQLSchemas gives the SQL extractor the tables of floe's catalogs
// directly, for tools that parse a statement without an event (floe
// predicates --catalog): a table's catalog is the floe catalog it names
// (default DefaultCatalog), its namespace DefaultNamespace when it names
// none. The first failure to ask a catalog is kept for Err.
type SQLSchemas struct {
	Ctx              context.Context
	Resolver         Resolver
	DefaultCatalog   string
	DefaultNamespace string
	err              error
}

// lookupSchema asks res for the table name of namespace ns as a query
// wrote them. ns is read in floe's identifier syntax (see
// [lake.NamespaceParts]); an engine writes a nested namespace and a
// namespace whose one level holds a dot alike (Trino's schema "x.y"), so
// when the levels name no table the whole of ns is tried as one level.
func lookupSchema(ctx context.Context, res Resolver, cat, ns, name string) (*iceberg.Schema, []string, string, bool, error) {
	parts := lake.NamespaceParts(ns)
	schema, cns, cname, ok, err := res.Schema(ctx, cat, parts, name)
	if err != nil || ok || len(parts) < 2 || !strings.Contains(ns, ".") || strings.Contains(ns, `"`) {
		return schema, cns, cname, ok, err
	}
	return res.Schema(ctx, cat, []string{ns}, name)
}

// Columns implements extract.Schemas.
func (s *SQLSchemas) Columns(ref extract.TableRef) ([]extract.Column, bool) {
	cat, ns := ref.Catalog, ref.Namespace
	if cat == "" {
		cat = s.DefaultCatalog
	}
	if ns == "" {
		ns = s.DefaultNamespace
	}
	if s.err != nil || cat == "" || ns == "" {
		return nil, false
	}
	schema, _, _, ok, err := lookupSchema(s.Ctx, s.Resolver, cat, ns, ref.Name)
	if err != nil {
		s.err = err
		return nil, false
	}
	if !ok {
		return nil, false
	}
	return schemaColumns(schema), true
}

// Locate is an extract.Options Locate over the resolver's table
// locations, when it is a [Locator].
func (s *SQLSchemas) Locate(path string) (extract.TableRef, bool) {
	l, ok := s.Resolver.(Locator)
	if !ok || s.err != nil {
		return extract.TableRef{}, false
	}
	cat, ns, name, ok, err := l.Locate(s.Ctx, path)
	if err != nil {
		s.err = err
		return extract.TableRef{}, false
	}
	return extract.TableRef{Catalog: cat, Namespace: lake.JoinParts(ns...), Name: name}, ok
}

// Err is the first failure to ask a catalog.
func (s *SQLSchemas) Err() error { return s.err }
