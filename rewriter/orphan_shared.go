package rewriter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Sibling is another catalog entry whose location overlaps the location of
// the table cleaned (its orphans removed, its expired snapshots' files
// deleted): the same table registered under a second name (Iceberg's
// register_table), its entry in a copied catalog or a restored catalog
// backup, or a table whose location lies inside the other's. Each entry
// commits on its own, so files one of them references are unknown to the
// other's metadata, and one's expired snapshot may be another's current.
// The control plane finds them in every catalog it can see; this package
// only reads them ([OrphanOptions.Siblings], [ExpireOptions.Siblings]).
type Sibling struct {
	// Name names the entry for people: catalog.namespace.name.
	Name string
	// Table is the entry, loaded from its catalog.
	Table *table.Table
}

// Overlap reports whether locations a and b overlap under o's equivalences
// (see [OrphanOptions.EqualSchemes]): after [NormalizeLocation] they are
// equal, or one is a directory the other lies in. s3a://b/wh/t and
// s3://b/wh/t/ overlap, and so do s3://b/wh and s3://b/wh/t; s3://b/wh/t
// and s3://b/wh/t2 do not.
func (o OrphanOptions) Overlap(a, b string) bool {
	o = o.withDefaults()
	schemes, auths := flattenEquivalences(o.EqualSchemes), flattenEquivalences(o.EqualAuthorities)
	return locationsOverlap(NormalizeLocation(a, schemes, auths), NormalizeLocation(b, schemes, auths))
}

// locationsOverlap is [OrphanOptions.Overlap] on normalized locations.
func locationsOverlap(a, b string) bool {
	a, b = strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/")
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// siblingsOf asks find, if any, for the siblings.
func siblingsOf(ctx context.Context, find func(context.Context) ([]Sibling, error)) ([]Sibling, error) {
	if find == nil {
		return nil, nil
	}
	sibs, err := find(ctx)
	if err != nil {
		return nil, fmt.Errorf("find the catalog entries sharing the location: %w", err)
	}
	for _, s := range sibs {
		if s.Table == nil {
			return nil, fmt.Errorf("catalog entry %s, which shares the location: %w: not loaded", s.Name, ErrSiblingUnknown)
		}
	}
	return sibs, nil
}

// leasesOf lists the leases, live or not, under tbl's location and under
// each sibling's (once each), sorted by start time.
func leasesOf(ctx context.Context, fio iceio.IO, tbl *table.Table, sibs []Sibling, schemes, auths map[string]string) ([]LeaseRecord, error) {
	out, err := listLeases(ctx, fio, tbl.Location())
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{NormalizeLocation(leaseDir(tbl.Location()), schemes, auths): true}
	for _, s := range sibs {
		dir := NormalizeLocation(leaseDir(s.Table.Location()), schemes, auths)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		sfio, err := s.Table.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("open the io of catalog entry %s, which shares the location: %w: %w", s.Name, ErrSiblingUnknown, err)
		}
		ls, err := listLeases(ctx, sfio, s.Table.Location())
		if err != nil {
			return nil, fmt.Errorf("list the leases of catalog entry %s, which shares the location: %w: %w", s.Name, ErrSiblingUnknown, err)
		}
		out = append(out, ls...)
	}
	sortLeases(out)
	return out, nil
}

// siblingKeys is every location the siblings reference, normalized; their
// tails are added to tails (see [referencedKeys]). Each sibling is read
// from its newest metadata: the caller listed the leases before, so a run
// on a sibling that has ended since committed first (see [PlanOrphans]).
func siblingKeys(ctx context.Context, sibs []Sibling, tails map[string]bool, schemes, auths map[string]string, concurrency int) (map[string]bool, error) {
	out := map[string]bool{}
	for _, s := range sibs {
		fresh := *s.Table
		if err := fresh.Refresh(ctx); err != nil {
			return nil, fmt.Errorf("reload catalog entry %s, which shares the location: %w: %w", s.Name, ErrSiblingUnknown, err)
		}
		sfio, err := fresh.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("open the io of catalog entry %s, which shares the location: %w: %w", s.Name, ErrSiblingUnknown, err)
		}
		keys, ts, err := referencedKeys(ctx, sfio, &fresh, schemes, auths, concurrency)
		if err != nil {
			return nil, fmt.Errorf("read what catalog entry %s, which shares the location, references: %w: %w", s.Name, ErrSiblingUnknown, err)
		}
		for k := range keys {
			out[k] = true
		}
		for t := range ts {
			tails[t] = true
		}
	}
	return out, nil
}

// siblingRefs is what the siblings of a table reference, for [Expire]:
// their names, and every location they reference, normalized under the
// default equivalences ([OrphanOptions.EqualSchemes]).
type siblingRefs struct {
	names          []string
	keys           map[string]bool
	schemes, auths map[string]string
}

// readSiblings asks find, if any, for the siblings and reads what each
// references from its newest metadata ([siblingKeys]). It fails when find
// does, or when a sibling cannot be read ([ErrSiblingUnknown]).
func readSiblings(ctx context.Context, find func(context.Context) ([]Sibling, error), concurrency int) (siblingRefs, error) {
	r := siblingRefs{schemes: flattenEquivalences(defaultEqualSchemes()), auths: map[string]string{}}
	sibs, err := siblingsOf(ctx, find)
	if err != nil || len(sibs) == 0 {
		return r, err
	}
	for _, s := range sibs {
		r.names = append(r.names, s.Name)
	}
	if r.keys, err = siblingKeys(ctx, sibs, map[string]bool{}, r.schemes, r.auths, concurrency); err != nil {
		return siblingRefs{}, err
	}
	return r, nil
}

// keep removes from files every file a sibling references and returns
// them, sorted.
func (r siblingRefs) keep(files fileSet) []string {
	var kept []string
	for p := range files {
		if r.keys[NormalizeLocation(p, r.schemes, r.auths)] {
			kept = append(kept, p)
			delete(files, p)
		}
	}
	slices.Sort(kept)
	return kept
}

// runTables tells which table each floe run was on: from the leases found
// (a lapsed lease stays until its run's files are removed), then from
// lookup ([OrphanOptions.RunTable]), asked once per run.
type runTables struct {
	leases []LeaseRecord
	lookup func(ctx context.Context, runID string) (string, bool, error)
	known  map[string]string // run id → table, "" when unknown
}

// on reports whether run id is known to have been on table self.
func (r *runTables) on(ctx context.Context, id, self string) (bool, error) {
	if self == "" {
		return false, nil
	}
	t, ok := r.known[id]
	if !ok {
		var err error
		if t, err = r.tableOf(ctx, id); err != nil {
			return false, err
		}
		r.known[id] = t
	}
	return t != "" && t == self, nil
}

func (r *runTables) tableOf(ctx context.Context, id string) (string, error) {
	for _, l := range r.leases {
		if l.RunID == id && l.Table != "" {
			return l.Table, nil
		}
	}
	if r.lookup == nil {
		return "", nil
	}
	t, known, err := r.lookup(ctx, id)
	if err != nil {
		return "", fmt.Errorf("look up the table of run %s: %w", id, err)
	}
	if !known {
		return "", nil
	}
	return t, nil
}
