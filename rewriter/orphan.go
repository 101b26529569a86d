package rewriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"gocloud.dev/blob"
)

// MinOrphanAge is the safety floor of [OrphanOptions.OlderThan]: files
// younger than this may belong to a commit still in flight.
const MinOrphanAge = 24 * time.Hour

// DefaultOrphanAge is [OrphanOptions.OlderThan] when it is not given.
const DefaultOrphanAge = 72 * time.Hour

// OrphanOptions tune [PlanOrphans]. A zero value means "use the default".
type OrphanOptions struct {
	// OlderThan is the minimum age (by modification time) of a file to be
	// an orphan. Default: [DefaultOrphanAge], but only when OlderThan is
	// zero and OlderThanSet is false. Below [MinOrphanAge] only with Force.
	OlderThan time.Duration
	// OlderThanSet says OlderThan was given, so that a zero OlderThan means
	// zero (with Force: every unreferenced file, cut-off now) rather than
	// the default. A non-zero OlderThan counts as given either way. The CLI
	// sets it from whether --older-than was passed.
	OlderThanSet bool
	// Force allows OlderThan below [MinOrphanAge], zero included.
	Force bool
	// Now is the clock ages are measured against. Default: time.Now.
	Now func() time.Time
	// Location is the prefix listed. Default: the table location.
	Location string
	// ExcludePrefixes are never listed as orphans, whatever their age
	// (paths an operator wants kept). Files of floe runs in progress need
	// no prefix: their leases protect them (see [Lease]).
	ExcludePrefixes []string
	// EqualSchemes maps comma-separated schemes to the scheme they are
	// equal to. Default: {"s3,s3a,s3n": "s3"}.
	EqualSchemes map[string]string
	// EqualAuthorities maps comma-separated authorities (buckets, hosts) to
	// the authority they are equal to. Default: none.
	EqualAuthorities map[string]string
	// Concurrency bounds parallel manifest reads. Default: 8.
	Concurrency int
	// Table names the table cleaned as floe names it in leases and run
	// records (catalog.namespace.name, [lake.Ident.String]). A file a floe
	// run wrote is taken whatever its age only when that run was on this
	// table (see [PlanOrphans]). Default: none, so every file is judged by
	// its age.
	Table string
	// RunTable says which table the floe run id was on, from a record the
	// caller keeps (floe's run history); known is false when it has none.
	// The leases still under the locations are asked first. Default: the
	// leases only.
	RunTable func(ctx context.Context, runID string) (table string, known bool, err error)
	// Siblings supplies the other catalog entries whose locations overlap
	// the table's ([OrphanOptions.Overlap]): every file they reference is
	// kept, and their leases protect their runs' files. It is called when
	// planning and again before deleting; an error (an entry or a catalog
	// that could not be read) refuses the removal. Default: none, for a
	// caller that knows no other catalog entry.
	Siblings func(ctx context.Context) ([]Sibling, error)
}

// Validate reports every invalid option at once.
func (o OrphanOptions) Validate() error {
	var errs []error
	if o.OlderThan < 0 {
		errs = append(errs, fmt.Errorf("older-than must not be negative, got %s", o.OlderThan))
	} else if o.olderThanGiven() && o.OlderThan < MinOrphanAge && !o.Force {
		errs = append(errs, fmt.Errorf("older-than %s: %w (Force overrides it)", o.OlderThan, ErrUnsafeAge))
	}
	if o.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("concurrency must be >= 1, got %d", o.Concurrency))
	}
	return errors.Join(errs...)
}

// olderThanGiven reports whether OlderThan is to be used as is.
func (o OrphanOptions) olderThanGiven() bool { return o.OlderThanSet || o.OlderThan != 0 }

// defaultEqualSchemes is [OrphanOptions.EqualSchemes] when not given: the
// schemes of S3's clients name one store.
func defaultEqualSchemes() map[string]string { return map[string]string{"s3,s3a,s3n": "s3"} }

func (o OrphanOptions) withDefaults() OrphanOptions {
	if !o.olderThanGiven() {
		o.OlderThan = DefaultOrphanAge
		o.OlderThanSet = true
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EqualSchemes == nil {
		o.EqualSchemes = defaultEqualSchemes()
	}
	if o.Concurrency == 0 {
		o.Concurrency = 8
	}
	return o
}

// OrphanFile is one file under the table location that nothing references.
type OrphanFile struct {
	Path    string
	Size    int64
	ModTime time.Time
	// RunID is the floe run on this table that wrote the file and ended
	// without committing it, from its name (see [RunOfFile]): the file is
	// taken whatever its age. Empty for any other file, a file of a run
	// on another table (or on a table nobody recorded) included: that one
	// is judged by its age.
	RunID string `json:"run_id,omitempty"`
}

// OrphanPlan is what [PlanOrphans] found.
type OrphanPlan struct {
	// Files are the orphans, sorted by path; Bytes their total size.
	Files []OrphanFile
	Bytes int64
	// Scanned counts the files listed.
	Scanned int
	// Young counts unreferenced files kept for being younger than Cutoff.
	Young int
	// Excluded counts files kept for being under an exclude prefix.
	Excluded int
	// Evidence counts files kept as the evidence of a rewrite that failed
	// its content check: the records under [EvidenceDir] and the output
	// files they name.
	Evidence int
	// Mismatched are unreferenced files kept because metadata references
	// the same path under a scheme or authority not declared equal.
	Mismatched []string
	// InFlight counts unreferenced files kept because a live run may still
	// need them (see [Lease]): every file modified since the run started,
	// and the run's lease file. Leases are the live leases found, on the
	// table's location and on its siblings'.
	InFlight int
	Leases   []LeaseRecord
	// Siblings names the other catalog entries whose locations overlap the
	// table's ([OrphanOptions.Siblings]); Shared counts the files the table
	// does not reference and they do, all kept.
	Siblings []string
	Shared   int
	// Cutoff is the modification time orphans are older than.
	Cutoff time.Time
	// clock is the plan's clock, for DeleteOrphans' second look at leases.
	clock func() time.Time
	// equal* carry the plan's equivalences to DeleteOrphans.
	equalSchemes, equalAuthorities map[string]string
	// siblings is the plan's [OrphanOptions.Siblings], asked again by
	// DeleteOrphans; concurrency bounds manifest reads.
	siblings    func(ctx context.Context) ([]Sibling, error)
	concurrency int
}

// OrphanResult is what [DeleteOrphans] did.
type OrphanResult struct {
	// Deleted are the files deleted; Bytes their size.
	Deleted []string
	Bytes   int64
	// Referenced are planned files that metadata references by now; they
	// were kept.
	Referenced []string
	// InFlight are planned files that a run started since the plan may
	// need; they were kept.
	InFlight []string
	// Shared are planned files that a sibling ([OrphanOptions.Siblings])
	// references by now; they were kept.
	Shared []string
	// Evidence are planned files that an evidence record names by now (a
	// rewrite failed its content check since the plan); they were kept.
	Evidence []string
	// Plan is the plan the deletion carried out: what was listed, and
	// what was kept and why.
	Plan OrphanPlan
}

// PlanOrphans lists the files under the table location that no snapshot,
// manifest list, manifest, metadata file (current or logged), version hint
// or statistics file of the table or of any of its siblings references,
// that are older than opts.OlderThan and not under an exclude prefix. It
// deletes nothing.
//
// Siblings are the other catalog entries whose locations overlap the
// table's ([OrphanOptions.Siblings]): a table registered twice, an entry of
// a copied catalog or of a restored catalog backup, a table whose location
// lies inside another's. A file one of them references is never an orphan
// of this one, whatever its age; a sibling that cannot be read refuses the
// plan ([ErrSiblingUnknown]), since nothing proves its files unreferenced.
//
// The age does not protect what floe itself left behind: a data file whose
// name says which floe run wrote it (see [RunOfFile]), of a run that was on
// this very table ([OrphanOptions.Table]: its lease or, through
// [OrphanOptions.RunTable], its run record says so), that no commit took,
// is an orphan whatever its age once that run is over — its lease released,
// or lapsed one [DefaultLeaseTTL] ago — as is the lease file of such a run.
// Such files carry the run's id in [OrphanFile.RunID]. A file of a run on
// another table sharing the location, or of a run nobody recorded, is judged
// by its age like any other file: only the run's own table can say it never
// committed the file. Files of live runs (on the table or on a sibling) are
// kept whatever the options say. Paths are compared after
// [NormalizeLocation], so s3a://b/k and s3://b/k are one file; a file whose
// path matches a reference only up to an undeclared scheme or authority
// difference is kept and reported.
func PlanOrphans(ctx context.Context, tbl *table.Table, opts OrphanOptions) (OrphanPlan, error) {
	if err := opts.Validate(); err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", tbl.Location(), err)
	}
	opts = opts.withDefaults()
	schemes, auths := flattenEquivalences(opts.EqualSchemes), flattenEquivalences(opts.EqualAuthorities)
	plan := OrphanPlan{Cutoff: opts.Now().Add(-opts.OlderThan), equalSchemes: schemes, equalAuthorities: auths, clock: opts.Now,
		siblings: opts.Siblings, concurrency: opts.Concurrency}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: open table io: %w", tbl.Location(), err)
	}
	lister, ok := fio.(iceio.ListableIO)
	if !ok {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: io %T cannot list files", tbl.Location(), fio)
	}
	sibs, err := siblingsOf(ctx, opts.Siblings)
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", tbl.Location(), err)
	}
	for _, sib := range sibs {
		plan.Siblings = append(plan.Siblings, sib.Name)
	}
	// Leases first, references second: a run writes its lease before any
	// file and releases it only after its commit, so a file of a run is
	// either under a lease read here or referenced by the metadata read
	// after it. The siblings' runs write under the shared location too.
	now := opts.Now()
	allLeases, err := leasesOf(ctx, fio, tbl, sibs, schemes, auths)
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", tbl.Location(), err)
	}
	leases := live(allLeases, now)
	plan.Leases = leases
	refs, tails, err := referencedKeys(ctx, fio, tbl, schemes, auths, opts.Concurrency)
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", tbl.Location(), err)
	}
	shared, err := siblingKeys(ctx, sibs, tails, schemes, auths, opts.Concurrency)
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", tbl.Location(), err)
	}
	evidence, err := evidenceKeys(ctx, fio, tbl.Location(), schemes, auths)
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: %w", tbl.Location(), err)
	}
	runs := runTables{leases: allLeases, lookup: opts.RunTable, known: map[string]string{}}
	leaseRoot := NormalizeLocation(leaseDir(tbl.Location()), schemes, auths) + "/"
	var excludes []string
	for _, p := range opts.ExcludePrefixes {
		excludes = append(excludes, NormalizeLocation(p, schemes, auths))
	}
	root := cmp.Or(opts.Location, tbl.Location())
	// Only files strictly under root: an object store lister given the
	// prefix "…/events" must not reach into "…/events_v2/".
	rootKey := strings.TrimSuffix(NormalizeLocation(root, schemes, auths), "/") + "/"
	err = lister.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || isDirMarker(d) {
			return nil
		}
		key := NormalizeLocation(p, schemes, auths)
		if !strings.HasPrefix(key, rootKey) {
			return nil
		}
		plan.Scanned++
		if refs[key] {
			return nil
		}
		if shared[key] {
			plan.Shared++
			return nil
		}
		if evidence[key] {
			// A failed content check's record and the files it names.
			plan.Evidence++
			return nil
		}
		for _, ex := range excludes {
			if strings.HasPrefix(key, ex) {
				plan.Excluded++
				return nil
			}
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if inFlight(leases, info.ModTime()) || leaseHeld(leases, key, schemes, auths) {
			plan.InFlight++
			return nil
		}
		if strings.HasPrefix(key, leaseRoot) {
			// The lease of a run that is no longer live: floe's own
			// leftover, removed whatever its age once the run is over (kept
			// until then: it still says which table the run was on).
			if rec, ok := leaseAt(allLeases, key, schemes, auths); ok && !runOver(allLeases, rec.RunID, now) {
				plan.InFlight++
				return nil
			}
			plan.Files = append(plan.Files, OrphanFile{Path: p, Size: info.Size(), ModTime: info.ModTime()})
			plan.Bytes += info.Size()
			return nil
		}
		run := RunOfFile(p)
		if run != "" && !runOver(allLeases, run, now) {
			run = ""
		}
		if run != "" {
			// Only the run's own table can say it never committed the
			// file: a run on a sibling sharing the location committed to
			// the sibling, which this table's metadata cannot show.
			own, err := runs.on(ctx, run, opts.Table)
			if err != nil {
				return err
			}
			if !own {
				run = ""
			}
		}
		if !info.ModTime().Before(plan.Cutoff) && run == "" {
			plan.Young++
			return nil
		}
		// Past here a young file is one a floe run on this table wrote and
		// never committed, the run being over: floe's own leftover,
		// whatever its age, as a lapsed lease is.
		if tails[locationTail(key)] {
			plan.Mismatched = append(plan.Mismatched, p)
			return nil
		}
		plan.Files = append(plan.Files, OrphanFile{Path: p, Size: info.Size(), ModTime: info.ModTime(), RunID: run})
		plan.Bytes += info.Size()
		return nil
	})
	if err != nil {
		return OrphanPlan{}, fmt.Errorf("plan orphans of %s: list %s: %w", tbl.Location(), root, err)
	}
	slices.SortFunc(plan.Files, func(a, b OrphanFile) int { return strings.Compare(a.Path, b.Path) })
	return plan, nil
}

// DeleteOrphans deletes the files of plan, at most concurrency at a time
// (default 8). The references of the table, from its newest metadata, and
// of its siblings, asked for again ([OrphanOptions.Siblings]), are read
// first, and any planned file referenced by now is kept; so is any file a
// run started since the plan may need, on the table or on a sibling.
func DeleteOrphans(ctx context.Context, tbl *table.Table, plan OrphanPlan, concurrency int) (OrphanResult, error) {
	res := OrphanResult{Plan: plan}
	if len(plan.Files) == 0 {
		return res, nil
	}
	if concurrency <= 0 {
		concurrency = 8
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: open table io: %w", tbl.Location(), err)
	}
	sibs, err := siblingsOf(ctx, plan.siblings)
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: %w", tbl.Location(), err)
	}
	// As in planning, leases before references (see PlanOrphans): a run
	// that started since the plan protects its files, and one that ended
	// since committed them first.
	all, err := leasesOf(ctx, fio, tbl, sibs, plan.equalSchemes, plan.equalAuthorities)
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: %w", tbl.Location(), err)
	}
	leases := live(all, plan.now())
	fresh := *tbl
	if err := fresh.Refresh(ctx); err != nil {
		return res, fmt.Errorf("delete orphans of %s: reload table: %w", tbl.Location(), err)
	}
	refs, tails, err := referencedKeys(ctx, fio, &fresh, plan.equalSchemes, plan.equalAuthorities, concurrency)
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: %w", tbl.Location(), err)
	}
	shared, err := siblingKeys(ctx, sibs, tails, plan.equalSchemes, plan.equalAuthorities, cmp.Or(plan.concurrency, concurrency))
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: %w", tbl.Location(), err)
	}
	evidence, err := evidenceKeys(ctx, fio, tbl.Location(), plan.equalSchemes, plan.equalAuthorities)
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: %w", tbl.Location(), err)
	}
	files := fileSet{}
	for _, f := range plan.Files {
		key := NormalizeLocation(f.Path, plan.equalSchemes, plan.equalAuthorities)
		if refs[key] {
			res.Referenced = append(res.Referenced, f.Path)
			continue
		}
		if shared[key] {
			res.Shared = append(res.Shared, f.Path)
			continue
		}
		if evidence[key] {
			res.Evidence = append(res.Evidence, f.Path)
			continue
		}
		if inFlight(leases, f.ModTime) || leaseHeld(leases, key, plan.equalSchemes, plan.equalAuthorities) {
			res.InFlight = append(res.InFlight, f.Path)
			continue
		}
		files[f.Path] = f.Size
	}
	res.Deleted, res.Bytes, err = deleteFiles(ctx, fio, files, concurrency)
	if err != nil {
		return res, fmt.Errorf("delete orphans of %s: %w", tbl.Location(), err)
	}
	return res, nil
}

// referencedKeys is every location tbl's metadata references, normalized,
// and the set of their tails (paths without scheme and authority).
func referencedKeys(ctx context.Context, fio iceio.IO, tbl *table.Table, schemes, auths map[string]string, concurrency int) (keys, tails map[string]bool, err error) {
	md := tbl.Metadata()
	files, err := reachable(ctx, fio, md, allSnapshotIDs(md), true, concurrency)
	if err != nil {
		return nil, nil, err
	}
	files[tbl.MetadataLocation()] = 0
	for e := range md.PreviousFiles() {
		files[e.MetadataFile] = 0
	}
	files[strings.TrimSuffix(md.Location(), "/")+"/metadata/version-hint.text"] = 0
	for sf := range md.Statistics() {
		files[sf.StatisticsPath] = 0
	}
	for sf := range md.PartitionStatistics() {
		files[sf.StatisticsPath] = 0
	}
	keys = make(map[string]bool, len(files))
	tails = make(map[string]bool, len(files))
	for p := range files {
		if p == "" {
			continue
		}
		k := NormalizeLocation(p, schemes, auths)
		keys[k] = true
		tails[locationTail(k)] = true
	}
	return keys, tails, nil
}

// NormalizeLocation is the comparison key of a file location: local paths
// and file: URIs become a cleaned absolute path; other URIs become
// scheme://authority/path with the scheme lower-cased and both mapped
// through the equivalences (already flattened: one scheme or authority per
// key, see [OrphanOptions.EqualSchemes]). The object key is kept as is.
func NormalizeLocation(loc string, equalSchemes, equalAuthorities map[string]string) string {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		if after, found := strings.CutPrefix(loc, "file:"); found {
			return path.Clean("/" + strings.TrimLeft(after, "/"))
		}
		return path.Clean(loc)
	}
	scheme = strings.ToLower(scheme)
	if scheme == "file" {
		// file:///p and file://localhost/p
		rest = strings.TrimPrefix(rest, "localhost")
		return path.Clean("/" + strings.TrimLeft(rest, "/"))
	}
	if s, ok := equalSchemes[scheme]; ok {
		scheme = s
	}
	auth, key, _ := strings.Cut(rest, "/")
	if a, ok := equalAuthorities[strings.ToLower(auth)]; ok {
		auth = a
	}
	return scheme + "://" + auth + "/" + key
}

// locationTail is a normalized location without scheme and authority.
func locationTail(key string) string {
	_, rest, ok := strings.Cut(key, "://")
	if !ok {
		return key
	}
	_, tail, _ := strings.Cut(rest, "/")
	return "/" + tail
}

// flattenEquivalences expands {"s3,s3a,s3n": "s3"} to one entry per name.
func flattenEquivalences(eq map[string]string) map[string]string {
	out := make(map[string]string, len(eq))
	for _, k := range slices.Sorted(maps.Keys(eq)) {
		for _, name := range strings.Split(k, ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
				out[name] = eq[k]
			}
		}
	}
	return out
}

func (p OrphanPlan) now() time.Time {
	if p.clock == nil {
		return time.Now()
	}
	return p.clock()
}

// live is the leases of all that are live at now.
func live(all []LeaseRecord, now time.Time) []LeaseRecord {
	var out []LeaseRecord
	for _, l := range all {
		if l.Live(now) {
			out = append(out, l)
		}
	}
	return out
}

// runOver reports whether the floe run id can no longer commit: its lease
// is gone (released when the run ended) or lapsed at least one
// [DefaultLeaseTTL] ago. The margin covers a run whose renewals failed and
// that checked its lease (see [Lease.Check]) just before it lapsed.
func runOver(all []LeaseRecord, id string, now time.Time) bool {
	for _, l := range all {
		if l.RunID == id && now.Before(l.ExpiresAt.Add(DefaultLeaseTTL)) {
			return false
		}
	}
	return true
}

// inFlight reports whether a file modified at mod may belong to one of the
// live runs.
func inFlight(leases []LeaseRecord, mod time.Time) bool {
	for _, l := range leases {
		if l.Protects(mod) {
			return true
		}
	}
	return false
}

// leaseHeld reports whether the file at key (normalized) is the file of one
// of the live leases.
func leaseHeld(leases []LeaseRecord, key string, schemes, auths map[string]string) bool {
	_, ok := leaseAt(leases, key, schemes, auths)
	return ok
}

// leaseAt is the lease of leases whose file is at key (normalized).
func leaseAt(leases []LeaseRecord, key string, schemes, auths map[string]string) (LeaseRecord, bool) {
	for _, l := range leases {
		if NormalizeLocation(l.Path, schemes, auths) == key {
			return l, true
		}
	}
	return LeaseRecord{}, false
}

// OrphanCutoff is the modification time before which an engine that cannot
// see floe's leases (Trino's remove_orphan_files, Spark's) may delete
// unreferenced files of tbl: now minus opts.OlderThan (validated and
// defaulted as [PlanOrphans] does), moved before the start of every live
// floe lease on the table less [LeaseClockSkew], so that no file a run in
// flight may still commit is old enough. It also returns the live leases.
func OrphanCutoff(ctx context.Context, tbl *table.Table, opts OrphanOptions) (time.Time, []LeaseRecord, error) {
	if err := opts.Validate(); err != nil {
		return time.Time{}, nil, err
	}
	opts = opts.withDefaults()
	now := opts.Now()
	cutoff := now.Add(-opts.OlderThan)
	all, err := Leases(ctx, tbl)
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("orphan cutoff: %w", err)
	}
	var live []LeaseRecord
	for _, l := range all {
		if !l.Live(now) {
			continue
		}
		live = append(live, l)
		if start := l.StartedAt.Add(-LeaseClockSkew); start.Before(cutoff) {
			cutoff = start
		}
	}
	return cutoff, live, nil
}

// isDirMarker reports whether d is an object store's directory marker: an
// empty object whose key ends in "/", as consoles and Hadoop create for
// folders. It is a directory, as on local disk, not a file: the blob
// lister names it under a doubled path (…/x/x) that no delete can reach.
func isDirMarker(d iofs.DirEntry) bool {
	if d.Type()&iofs.ModeIrregular == 0 {
		return false // local files are regular; blob objects irregular
	}
	info, err := d.Info()
	if err != nil {
		return false
	}
	obj, ok := info.Sys().(*blob.ListObject)
	return ok && strings.HasSuffix(obj.Key, "/")
}
