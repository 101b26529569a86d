package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// Catalogs are every catalog floe can see, opened on demand. Orphan removal
// and snapshot expiry walk them all for the other entries that share a
// table's location (see [PlanOrphans], [PlanExpire]).
type Catalogs struct {
	// Names are the catalogs' names.
	Names []string
	// Open opens the catalog called name; the caller caches.
	Open func(ctx context.Context, name string) (catalog.Catalog, error)
	// Located, when set, says where table id keeps its data (its
	// metadata's location) when its current metadata is at
	// metadataLocation and the caller knows that metadata without reading
	// it (the service's kept state of the table). A sibling search then
	// reads only the tables whose location it does not know or that could
	// overlap: the catalog's listing gives each table's metadata location
	// (see lake.ListLocated), and a table known there is decided from it.
	Located func(id lake.Ident, metadataLocation string) (string, bool)
}

// ConfiguredCatalogs are the catalogs of cfg, opened with open.
func ConfiguredCatalogs(cfg *config.Config, open func(ctx context.Context, name string) (catalog.Catalog, error)) Catalogs {
	return Catalogs{Names: cfg.CatalogNames(), Open: open}
}

// orDefault is c, or, when c names no catalog, the one catalog cat called
// name: what a caller that gives no catalogs lets floe see.
func (c Catalogs) orDefault(name string, cat catalog.Catalog) Catalogs {
	if len(c.Names) > 0 && c.Open != nil {
		return c
	}
	return Catalogs{Names: []string{name}, Open: func(context.Context, string) (catalog.Catalog, error) { return cat, nil }}
}

// PlanOrphans plans the removal of table id's orphan files
// ([rewriter.PlanOrphans]) with what only the control plane knows, so that
// it never deletes what another table can reference:
//
//   - every entry of every catalog of cats whose location overlaps tbl's
//     (equal, or one inside the other: a table registered twice, a copied
//     catalog, a restored catalog backup) is a sibling, and every file it
//     references is kept. A catalog that cannot be opened or listed, or an
//     entry that cannot be loaded, may share the location: the plan is then
//     refused with an [*UnreadableEntriesError] naming each, and nothing is
//     deleted;
//   - a file a floe run wrote is taken whatever its age only when the run
//     was on table id, as its lease or its run record in st says; a run on
//     another table, or one st does not know (st may be nil), leaves its
//     files to the age rule.
//
// The plan carries both checks to [rewriter.DeleteOrphans], which makes
// them again before deleting. Every path that removes orphans — the orphans
// verb, optimize and the daemon's runs — plans here.
func PlanOrphans(ctx context.Context, cats Catalogs, st *store.Store, id lake.Ident, tbl *table.Table, oo rewriter.OrphanOptions) (rewriter.OrphanPlan, error) {
	if err := cats.check(id); err != nil {
		return rewriter.OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", id, err)
	}
	return rewriter.PlanOrphans(ctx, tbl, orphanOptions(cats, st, id, tbl.Location(), oo))
}

// PlanExpire plans the expiry of table id's snapshots
// ([rewriter.PlanExpire]) so that it never deletes what another table can
// reference: every entry of every catalog of cats whose location overlaps
// tbl's is a sibling ([Catalogs.Siblings]), and a file any of them
// references is kept, though only tbl's expired snapshots reach it in
// tbl's metadata. A catalog or an entry that cannot be read refuses the
// plan with an [*UnreadableEntriesError] naming each, unless eo.KeepFiles
// (nothing is deleted, so nothing is asked).
//
// It returns the plan and eo with the siblings set: give both to
// [ExpireOn] (or [rewriter.Expire]), which reads the siblings again before
// it commits and before it deletes. Every path that expires snapshots —
// the expire verb, optimize and the daemon's runs — plans here.
func PlanExpire(ctx context.Context, cats Catalogs, id lake.Ident, tbl *table.Table, eo rewriter.ExpireOptions) (rewriter.ExpirePlan, rewriter.ExpireOptions, error) {
	if err := cats.check(id); err != nil {
		return rewriter.ExpirePlan{}, eo, fmt.Errorf("plan expire of %s: %w", id, err)
	}
	// Expiry compares paths under the default equivalences, as
	// rewriter.Expire does; so does the overlap of locations.
	eo.Siblings = cats.Siblings(id, tbl.Location(), rewriter.OrphanOptions{Concurrency: eo.MaxConcurrentDeletes})
	plan, err := rewriter.PlanExpire(ctx, tbl, eo)
	return plan, eo, err
}

// check reports whether c can say which entries share table id's
// location: without id's own catalog the check would silently see nothing.
func (c Catalogs) check(id lake.Ident) error {
	if c.Open == nil || !slices.Contains(c.Names, id.Catalog) {
		return fmt.Errorf("the catalogs to check (%s) do not include the table's own, %q", strings.Join(c.Names, ", "), id.Catalog)
	}
	return nil
}

// orphanOptions is oo with the table's name, its siblings and the run
// records of st (see [PlanOrphans]).
func orphanOptions(cats Catalogs, st *store.Store, id lake.Ident, location string, oo rewriter.OrphanOptions) rewriter.OrphanOptions {
	oo.Table = id.String()
	oo.Siblings = cats.Siblings(id, location, oo)
	if st != nil {
		oo.RunTable = func(ctx context.Context, runID string) (string, bool, error) {
			r, err := st.Run(ctx, runID)
			if errors.Is(err, store.ErrNotFound) {
				return "", false, nil
			}
			if err != nil {
				return "", false, err
			}
			return r.Table, true, nil
		}
	}
	return oo
}

// Siblings finds the siblings of table id, at location: the one place
// floe looks for them, for orphan removal ([rewriter.OrphanOptions.Siblings])
// and snapshot expiry ([rewriter.ExpireOptions.Siblings]) alike. Each call
// loads every table of every catalog of c but id (at most oo.Concurrency at
// a time, 8 by default) and returns those whose location overlaps location
// under oo's equivalences ([rewriter.OrphanOptions.Overlap]): a table
// registered twice, an entry of a copied catalog or of a restored catalog
// backup, a table inside another's location. They are sorted by name. A
// catalog it cannot open or list, or a table it cannot load, is an
// [*UnreadableEntriesError]: its location is unknown.
func (c Catalogs) Siblings(id lake.Ident, location string, oo rewriter.OrphanOptions) func(ctx context.Context) ([]rewriter.Sibling, error) {
	return func(ctx context.Context) ([]rewriter.Sibling, error) {
		return findSiblings(ctx, c, id, location, oo)
	}
}

// findSiblings is the finder of [Catalogs.Siblings].
func findSiblings(ctx context.Context, cats Catalogs, id lake.Ident, location string, oo rewriter.OrphanOptions) ([]rewriter.Sibling, error) {
	var (
		mu   sync.Mutex
		sibs []rewriter.Sibling
		bad  = &UnreadableEntriesError{Table: id.String()}
	)
	workers := oo.Concurrency
	if workers <= 0 {
		workers = 8
	}
	for _, name := range cats.Names {
		cat, err := cats.Open(ctx, name)
		if err == nil {
			var listed []lake.Located
			if listed, err = lake.ListLocated(ctx, name, cat); err == nil {
				g, gctx := errgroup.WithContext(ctx)
				g.SetLimit(workers)
				for _, t := range listed {
					other := t.Ident
					if other.String() == id.String() {
						continue
					}
					if t.MetadataLocation != "" && cats.Located != nil {
						// Known at its current metadata: read it only when
						// its data could be among this table's files.
						if where, ok := cats.Located(other, t.MetadataLocation); ok && !oo.Overlap(location, where) {
							continue
						}
					}
					g.Go(func() error {
						tbl, err := lake.LoadTable(gctx, cat, other)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case errors.Is(err, lake.ErrNoSuchTable):
							// Dropped since the listing: it references nothing.
						case err != nil:
							bad.Entries = append(bad.Entries, Unreadable{Name: other.String(), Err: err})
						case oo.Overlap(location, tbl.Location()):
							sibs = append(sibs, rewriter.Sibling{Name: other.String(), Table: tbl})
						}
						return nil
					})
				}
				err = g.Wait()
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err != nil {
			bad.Catalogs = append(bad.Catalogs, Unreadable{Name: name, Err: err})
		}
	}
	if len(bad.Catalogs) > 0 || len(bad.Entries) > 0 {
		slices.SortFunc(bad.Entries, func(a, b Unreadable) int { return strings.Compare(a.Name, b.Name) })
		return nil, bad
	}
	slices.SortFunc(sibs, func(a, b rewriter.Sibling) int { return strings.Compare(a.Name, b.Name) })
	return sibs, nil
}

// Unreadable is a catalog or a catalog entry that could not be read, and why.
type Unreadable struct {
	Name string
	Err  error
}

// UnreadableEntriesError is returned (wrapped) by orphan removal
// ([PlanOrphans] and the deletion after it) and snapshot expiry
// ([PlanExpire], [ExpireOn]) when a catalog floe is configured with could
// not be opened or listed, or one of its entries could not be loaded. Any
// such entry may share the table's location, and the files it references
// are unknown, so nothing is deleted. Make them readable (or drop the entry,
// or the catalog from the configuration) and run again; snapshots can also
// be expired without deleting files ([rewriter.ExpireOptions.KeepFiles]).
// It matches [rewriter.ErrSiblingUnknown].
type UnreadableEntriesError struct {
	// Table is the table whose files were to be deleted.
	Table string
	// Catalogs could not be opened or listed; Entries could not be loaded.
	Catalogs []Unreadable
	Entries  []Unreadable
}

func (e *UnreadableEntriesError) Error() string {
	var parts []string
	for _, c := range e.Catalogs {
		parts = append(parts, fmt.Sprintf("catalog %s could not be opened or listed (%v)", c.Name, c.Err))
	}
	for _, c := range e.Entries {
		parts = append(parts, fmt.Sprintf("entry %s could not be loaded (%v)", c.Name, c.Err))
	}
	return fmt.Sprintf("nothing deleted from the location of %s, since these may share it and what they reference is unknown: %s",
		e.Table, strings.Join(parts, "; "))
}

// Is reports whether target is [rewriter.ErrSiblingUnknown].
func (e *UnreadableEntriesError) Is(target error) bool { return target == rewriter.ErrSiblingUnknown }

// Unwrap returns the causes.
func (e *UnreadableEntriesError) Unwrap() []error {
	var out []error
	for _, u := range append(slices.Clone(e.Catalogs), e.Entries...) {
		out = append(out, u.Err)
	}
	return out
}
