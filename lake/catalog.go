package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-project/floe/internal/editdist"
)

// ErrNoSuchTable is returned (wrapped) when a table name resolves to no
// table. It wraps iceberg-go's catalog.ErrNoSuchTable when the catalog said so.
var ErrNoSuchTable = errors.New("no such table")

// OpenCatalog opens the catalog called name with iceberg-go properties.
// floe's own [PropCatalogTimeout] (default [DefaultCatalogTimeout]) bounds
// opening it and each later call (see [WithCallTimeout]), and
// [PropIOTimeout] (default [DefaultIOTimeout]) each object-store request of
// the catalog and of the tables it loads, and a REST catalog's requests the
// server turns away are retried up to [PropRetries] times (default
// [DefaultRetries]); none of the three is passed to iceberg-go.
func OpenCatalog(ctx context.Context, name string, props map[string]string) (catalog.Catalog, error) {
	timeout, err := durationProp(props, PropCatalogTimeout, DefaultCatalogTimeout)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", name, err)
	}
	ioTimeout, err := durationProp(props, PropIOTimeout, DefaultIOTimeout)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", name, err)
	}
	retries, err := retriesProp(props)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", name, err)
	}
	pass := IOProps(props)
	c := &timeoutCatalog{name: name, d: timeout, io: newStoreBounds(name, pass, ioTimeout), ioLocation: catalogIOLocation(pass)}
	err = c.call(ctx, "open", func(ctx context.Context) error {
		var err error
		if isREST(pass) {
			c.inner, err = openREST(ctx, name, pass, retries)
			return err
		}
		c.inner, err = catalog.Load(ctx, name, iceberg.Properties(pass))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", name, err)
	}
	c.locations = newSQLLocations(c.inner, pass)
	if c.d <= 0 && c.io == nil && c.locations == nil {
		return c.inner, nil
	}
	return c, nil
}

// durationProp is the duration property key of props (def when unset).
func durationProp(props map[string]string, key string, def time.Duration) (time.Duration, error) {
	v, ok := props[key]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q: want a duration such as 30s, or 0 for none", key, v)
	}
	return d, nil
}

// catalogIOLocation is where a catalog's own metadata reads and writes go,
// as far as its properties say: its warehouse when that is a location, or
// "s3://" when it has S3 properties (a REST catalog's warehouse is a name).
func catalogIOLocation(props map[string]string) string {
	if wh := props["warehouse"]; strings.Contains(wh, "://") {
		return wh
	}
	for k := range props {
		if strings.HasPrefix(k, "s3.") {
			return "s3://"
		}
	}
	return ""
}

// ListTables lists every table of a catalog, walking nested namespaces.
func ListTables(ctx context.Context, catName string, cat catalog.Catalog) ([]Ident, error) {
	var out []Ident
	seen := map[string]bool{}
	var walk func(parent table.Identifier) error
	walk = func(parent table.Identifier) error {
		nss, err := cat.ListNamespaces(ctx, parent)
		if err != nil {
			if len(parent) > 0 {
				// Catalogs without nested namespaces may refuse a parent.
				return nil
			}
			return fmt.Errorf("list namespaces of %s: %w", catName, err)
		}
		for _, ns := range nss {
			if len(parent) > 0 && !slices.Equal(ns[:min(len(parent), len(ns))], parent) {
				ns = append(slices.Clone(parent), ns...)
			}
			key := strings.Join(ns, "\x00")
			if len(ns) <= len(parent) || seen[key] {
				continue
			}
			seen[key] = true
			for tid, err := range cat.ListTables(ctx, ns) {
				if err != nil {
					return fmt.Errorf("list tables of %s.%s: %w", catName, JoinParts(ns...), err)
				}
				out = append(out, Ident{Catalog: catName, Namespace: tid[:len(tid)-1], Name: tid[len(tid)-1]})
			}
			if err := walk(ns); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nil); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Ident) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(out, func(a, b Ident) bool { return a.String() == b.String() }), nil
}

// LoadTable loads a table. A missing table, or a missing namespace of it, is
// a [NoSuchTableError].
func LoadTable(ctx context.Context, cat catalog.Catalog, id Ident) (*table.Table, error) {
	tbl, err := cat.LoadTable(ctx, id.TableIdent())
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, catalog.ErrNoSuchTable) && !errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, fmt.Errorf("load table %s: %w", id, err)
	}
	nf := &NoSuchTableError{Table: id, Cause: err}
	// Engines read identifiers without regard to case (Trino folds them,
	// Spark compares them so): a name that matches one table but for case
	// is that table; otherwise the error suggests the nearest names. The
	// listing is only on this path, and a catalog that cannot be listed
	// leaves the plain error.
	all, lerr := ListTables(ctx, id.Catalog, cat)
	if lerr != nil {
		return nil, nf
	}
	var same []Ident
	for _, t := range all {
		if strings.EqualFold(t.String(), id.String()) {
			same = append(same, t)
		}
	}
	if len(same) == 1 {
		if tbl, err := cat.LoadTable(ctx, same[0].TableIdent()); err == nil {
			return tbl, nil
		}
	}
	nf.Suggestions = suggestTables(id, all, same)
	return nil, nf
}

// suggestTables is what a name that names no table may have meant: the
// tables it matches but for case when there are several, else up to three
// within a few edits of it (case ignored), nearest first.
func suggestTables(id Ident, all, same []Ident) []Ident {
	if len(same) > 1 {
		return same
	}
	want := strings.ToLower(id.String())
	limit := max(2, len(want)/6)
	type near struct {
		id Ident
		d  int
	}
	var found []near
	for _, t := range all {
		if d := editdist.Distance(want, strings.ToLower(t.String())); d <= limit {
			found = append(found, near{t, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	var out []Ident
	for _, n := range found[:min(3, len(found))] {
		out = append(out, n.id)
	}
	return out
}

// NoSuchTableError is a table name that resolves to no table. It reads as
// one sentence ("no such table: local.web.nosuch") and matches both
// [ErrNoSuchTable] and the catalog's own error with errors.Is.
type NoSuchTableError struct {
	Table Ident
	// Cause is the catalog's error (iceberg-go's catalog.ErrNoSuchTable or
	// catalog.ErrNoSuchNamespace).
	Cause error
	// Suggestions are the tables the name may have meant (see LoadTable).
	Suggestions []Ident
}

func (e *NoSuchTableError) Error() string {
	msg := "no such table: " + e.Table.String()
	if len(e.Suggestions) == 0 {
		return msg
	}
	names := make([]string, len(e.Suggestions))
	for i, s := range e.Suggestions {
		names[i] = s.String()
	}
	return msg + "; did you mean " + strings.Join(names, " or ") + "?"
}

// Unwrap returns ErrNoSuchTable and the catalog's error.
func (e *NoSuchTableError) Unwrap() []error { return []error{ErrNoSuchTable, e.Cause} }
