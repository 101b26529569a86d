package collectors

import (
	"github.com/floe-project/floe/expr"
	"strings"
)

// Resolver maps an engine's table name to the floe catalog table it is.
// engineCatalog has already been mapped through ResolveOptions.CatalogMap.
// Lookups must be case-insensitive (engines fold case differently from
// Iceberg). ok is false for a table floe does not manage (not Iceberg, unknown
// catalog); the returned names are spelled as the catalog spells them.
type Resolver interface {
	Resolve(engineCatalog, namespace, name string) (catalog, ns, table string, ok bool)
}

// ResolveOptions configure [ResolveTables].
type ResolveOptions struct {
	// CatalogMap maps engine catalog names (Trino catalog, Spark catalog,
	// DuckDB database alias) to floe catalog names; keys are matched
	// case-insensitively. An engine catalog absent from the map is passed
	// to the Resolver unchanged.
	CatalogMap map[string]string
	// DefaultCatalog and DefaultNamespace apply when neither the table nor
	// the event names one.
	DefaultCatalog   string
	DefaultNamespace string
}

// ResolveTables rewrites ev.Tables in place to floe catalog names: an
// unqualified table takes the event's DefaultCatalog / DefaultSchema (then
// opts' defaults), the engine catalog is mapped through opts.CatalogMap, and
// r decides the final spelling. Tables r does not know are dropped and
// returned. Predicate leaves of a table's Filter that named the table's old
// qualified name (or "*") are renamed with it. It does no I/O of its own.
func ResolveTables(ev *QueryEvent, r Resolver, opts ResolveOptions) (dropped []TableAccess) {
	kept := ev.Tables[:0]
	for _, t := range ev.Tables {
		old := t.QualifiedName()
		cat, ns := t.Catalog, t.Namespace
		if ns == "" {
			ns = firstNonEmpty(ev.DefaultSchema, opts.DefaultNamespace)
			if cat == "" {
				cat = firstNonEmpty(ev.DefaultCatalog, opts.DefaultCatalog)
			}
		}
		if cat == "" {
			cat = firstNonEmpty(ev.DefaultCatalog, opts.DefaultCatalog)
		}
		cat = mapCatalog(opts.CatalogMap, cat)
		rc, rns, rname, ok := r.Resolve(cat, ns, t.Name)
		if !ok {
			dropped = append(dropped, t)
			continue
		}
		t.Catalog, t.Namespace, t.Name = rc, rns, rname
		if t.Filter != nil {
			t.Filter = renameTable(t.Filter, old, t.QualifiedName())
		}
		kept = append(kept, t)
	}
	ev.Tables = kept
	return dropped
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func mapCatalog(m map[string]string, cat string) string {
	if v, ok := m[cat]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, cat) {
			return v
		}
	}
	return cat
}

// renameTable returns a copy of n whose leaves on table old (or "*") name
// table new; the input tree is not modified, since events may share it.
func renameTable(n *expr.Node, old, new string) *expr.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Pred != nil {
		p := *n.Pred
		if p.Table == "*" || strings.EqualFold(p.Table, old) {
			p.Table = new
		}
		c.Pred = &p
	}
	if len(n.Children) > 0 {
		c.Children = make([]*expr.Node, len(n.Children))
		for i, ch := range n.Children {
			c.Children[i] = renameTable(ch, old, new)
		}
	}
	return &c
}
