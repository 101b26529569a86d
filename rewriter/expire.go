package rewriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// ExpireOptions tune [PlanExpire] and [Expire]. A zero value means "use the
// default".
type ExpireOptions struct {
	// OlderThan is the age beyond which a snapshot may expire. Default: the
	// table's history.expire.max-snapshot-age-ms (5 days unless set), but
	// only when OlderThan is zero and OlderThanSet is false. A branch's own
	// max-snapshot-age-ms still wins along that branch.
	OlderThan time.Duration
	// OlderThanSet says OlderThan was given, so that a zero OlderThan means
	// zero (every snapshot older than now may expire; RetainLast and refs
	// still keep theirs) rather than the default. A non-zero OlderThan
	// counts as given either way. The CLI sets it from whether
	// --older-than was passed.
	OlderThanSet bool
	// RetainLast is how many of each branch's newest snapshots are kept
	// whatever their age. Default: the table's
	// history.expire.min-snapshots-to-keep (1 unless set).
	RetainLast int
	// MaxConcurrentDeletes bounds parallel file deletes (and manifest
	// reads). Default: 8.
	MaxConcurrentDeletes int
	// Now is the clock ages are measured against. Default: time.Now.
	Now func() time.Time
	// Siblings supplies the other catalog entries whose locations overlap
	// the table's ([Sibling]; the control plane finds them, as for
	// [OrphanOptions.Siblings]). A file any of them references — from any
	// of its snapshots, metadata files or statistics files — is never
	// deleted, though the table's own expired snapshots alone reached it.
	// It is asked when planning, before the commit and again before
	// deleting; an error, or a sibling that cannot be read, refuses the
	// expiry ([ErrSiblingUnknown]). Default: none, for a caller that knows
	// no other catalog entry.
	Siblings func(ctx context.Context) ([]Sibling, error)
	// KeepFiles expires the snapshots from the table metadata and deletes
	// no file, as Iceberg's cleanExpiredFiles(false): the files they alone
	// reached are left for orphan removal, which judges them against every
	// entry sharing the location. Siblings are then not asked, so an entry
	// that cannot be read does not stop it.
	KeepFiles bool
}

// Validate reports every invalid option at once.
func (o ExpireOptions) Validate() error {
	var errs []error
	if o.OlderThan < 0 {
		errs = append(errs, fmt.Errorf("older-than must not be negative, got %s", o.OlderThan))
	}
	if o.RetainLast < 0 {
		errs = append(errs, fmt.Errorf("retain-last must be >= 1, got %d", o.RetainLast))
	}
	if o.MaxConcurrentDeletes < 0 {
		errs = append(errs, fmt.Errorf("max concurrent deletes must be >= 1, got %d", o.MaxConcurrentDeletes))
	}
	return errors.Join(errs...)
}

// olderThanGiven reports whether OlderThan is to be used as is.
func (o ExpireOptions) olderThanGiven() bool { return o.OlderThanSet || o.OlderThan != 0 }

// MaxSnapshotAge is the age beyond which a snapshot no ref's own setting
// keeps may expire: OlderThan when given, else the table's
// history.expire.max-snapshot-age-ms.
func (o ExpireOptions) MaxSnapshotAge(md table.Metadata) time.Duration {
	if o.olderThanGiven() {
		return o.OlderThan
	}
	return time.Duration(md.Properties().GetInt64(table.MaxSnapshotAgeMsKey, table.MaxSnapshotAgeMsDefault)) * time.Millisecond
}

func (o ExpireOptions) withDefaults() ExpireOptions {
	if o.MaxConcurrentDeletes == 0 {
		o.MaxConcurrentDeletes = 8
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// ExpirePlan is what [Expire] would do.
type ExpirePlan struct {
	// MetadataLocation is the table metadata the plan was made from.
	MetadataLocation string
	// Snapshots are the snapshot ids to expire, oldest first.
	Snapshots []int64
	// RemoveRefs are branches and tags older than their max-ref-age-ms
	// (never main); they are removed with the snapshots.
	RemoveRefs []string
	// Retained counts the snapshots kept.
	Retained int
	// Files are the files only expired snapshots reach (manifest lists,
	// manifests, data and delete files, statistics files), sorted.
	Files []string
	// Bytes is their total size, where metadata records it.
	Bytes int64
	// Cutoff is the snapshot time the plan expires by: now minus
	// [ExpireOptions.OlderThan], or minus the table's max-snapshot-age-ms
	// when that is not given. A branch with its own max-snapshot-age-ms
	// uses that along the branch instead.
	Cutoff time.Time
	// Siblings names the other catalog entries whose locations overlap the
	// table's ([ExpireOptions.Siblings]); Shared counts the files only
	// expired snapshots reach that one of them references: kept, and not
	// in Files.
	Siblings []string
	Shared   int
	// KeepFiles is [ExpireOptions.KeepFiles]: the snapshots expire and no
	// file is deleted, so Files is empty and siblings were not asked.
	KeepFiles bool
}

// ExpireResult is what [Expire] did.
type ExpireResult struct {
	// Expired are the snapshots removed from the table metadata.
	Expired []int64
	// Kept are planned snapshots still in the table: since planning, a
	// branch or tag came to need them. Their files are kept.
	Kept []int64
	// Retained counts the snapshots the table has after the expiry (what
	// [ExpirePlan.Retained] planned, plus Kept and any committed since).
	Retained int
	// RemovedRefs are the refs removed.
	RemovedRefs []string
	// SnapshotID is the table's current snapshot after the commit.
	SnapshotID int64
	// Deleted are the files deleted; DeletedBytes their size.
	Deleted      []string
	DeletedBytes int64
	// Siblings names the catalog entries sharing the location that were
	// read before deleting; Shared are the files only expired snapshots
	// reached that one of them references, kept.
	Siblings []string
	Shared   []string
	// KeepFiles says no file was deleted, as asked
	// ([ExpireOptions.KeepFiles]).
	KeepFiles bool
}

// SelectExpired decides, from table metadata alone, which snapshots expire
// at now, following Iceberg's expire_snapshots semantics: a ref older than
// its max-ref-age-ms is removed (never main); the snapshot a kept ref
// points at is kept; along each kept branch, ancestors are kept while
// younger than max-snapshot-age-ms or among the newest min-snapshots-to-keep
// (the branch's own settings first, then opts, then table properties); any
// snapshot no ref reaches is kept while younger than opts.OlderThan (when
// given, zero included; else the table's max snapshot age). Tags keep only
// the snapshot they point at.
func SelectExpired(md table.Metadata, opts ExpireOptions, now time.Time) (expire []int64, removeRefs []string, err error) {
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	props := md.Properties()
	if v, ok := props[table.GCEnabledKey]; ok {
		if on, err := strconv.ParseBool(v); err == nil && !on {
			return nil, nil, fmt.Errorf("table has %s=false: snapshots may be referenced from outside the table", table.GCEnabledKey)
		}
	}
	propMaxRefAge := props.GetInt64(table.MaxRefAgeMsKey, table.MaxRefAgeMsDefault)
	propMinKeep := props.GetInt(table.MinSnapshotsToKeepKey, table.MinSnapshotsToKeepDefault)
	propMaxAge := props.GetInt64(table.MaxSnapshotAgeMsKey, table.MaxSnapshotAgeMsDefault)
	var optMinKeep *int
	if opts.RetainLast > 0 {
		optMinKeep = &opts.RetainLast
	}
	var optMaxAge *int64
	if opts.olderThanGiven() {
		ms := opts.OlderThan.Milliseconds()
		optMaxAge = &ms
	}
	nowMs := now.UnixMilli()
	lookup := func(id int64) *table.Snapshot { return md.SnapshotByID(id) }

	keep := map[int64]bool{}
	reached := map[int64]bool{}
	for name, ref := range md.Refs() {
		snap := md.SnapshotByID(ref.SnapshotID)
		if snap == nil {
			return nil, nil, fmt.Errorf("ref %s points at missing snapshot %d", name, ref.SnapshotID)
		}
		maxRefAge := *cmp.Or(ref.MaxRefAgeMs, &propMaxRefAge)
		if name != table.MainBranch && nowMs-snap.TimestampMs > maxRefAge {
			removeRefs = append(removeRefs, name)
			continue
		}
		keep[ref.SnapshotID] = true
		reached[ref.SnapshotID] = true
		if ref.SnapshotRefType != table.BranchRef {
			continue
		}
		minKeep := *cmp.Or(ref.MinSnapshotsToKeep, optMinKeep, &propMinKeep)
		maxAge := *cmp.Or(ref.MaxSnapshotAgeMs, optMaxAge, &propMaxAge)
		for i, s := range table.AncestorsOf(ref.SnapshotID, lookup) {
			reached[s.SnapshotID] = true
			if nowMs-s.TimestampMs > maxAge && i >= minKeep {
				continue // older ancestors stay reached, not kept
			}
			keep[s.SnapshotID] = true
		}
	}
	defaultMaxAge := *cmp.Or(optMaxAge, &propMaxAge)
	for _, s := range md.Snapshots() {
		if !reached[s.SnapshotID] && nowMs-s.TimestampMs <= defaultMaxAge {
			keep[s.SnapshotID] = true
		}
	}
	snaps := slices.Clone(md.Snapshots())
	slices.SortFunc(snaps, func(a, b table.Snapshot) int { return cmp.Compare(a.TimestampMs, b.TimestampMs) })
	for _, s := range snaps {
		if !keep[s.SnapshotID] {
			expire = append(expire, s.SnapshotID)
		}
	}
	slices.Sort(removeRefs)
	return expire, removeRefs, nil
}

// PlanExpire is the dry run of [Expire]: which snapshots expire now and
// which files only they reach (no retained snapshot reaches them, nor any
// sibling: see [ExpireOptions.Siblings]). A sibling that cannot be read
// fails the plan with [ErrSiblingUnknown], as it would fail the expiry.
func PlanExpire(ctx context.Context, tbl *table.Table, opts ExpireOptions) (ExpirePlan, error) {
	opts = opts.withDefaults()
	md := tbl.Metadata()
	now := opts.Now()
	expire, refs, err := SelectExpired(md, opts, now)
	if err != nil {
		return ExpirePlan{}, fmt.Errorf("plan expire of %s: %w", tbl.Location(), err)
	}
	plan := ExpirePlan{MetadataLocation: tbl.MetadataLocation(), Snapshots: expire, RemoveRefs: refs,
		Retained: len(md.Snapshots()) - len(expire), Cutoff: now.Add(-opts.MaxSnapshotAge(md)), KeepFiles: opts.KeepFiles}
	if len(expire) == 0 || opts.KeepFiles {
		return plan, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return ExpirePlan{}, fmt.Errorf("plan expire of %s: open table io: %w", tbl.Location(), err)
	}
	files, err := exclusiveFiles(ctx, fio, md, expire, md, retainedIDs(md, expire), opts.MaxConcurrentDeletes)
	if err != nil {
		return ExpirePlan{}, fmt.Errorf("plan expire of %s: %w", tbl.Location(), err)
	}
	sibs, err := readSiblings(ctx, opts.Siblings, opts.MaxConcurrentDeletes)
	if err != nil {
		return ExpirePlan{}, fmt.Errorf("plan expire of %s: %w", tbl.Location(), err)
	}
	plan.Siblings, plan.Shared = sibs.names, len(sibs.keep(files))
	plan.Files = slices.Sorted(maps.Keys(files))
	for _, n := range files {
		plan.Bytes += n
	}
	return plan, nil
}

// retainedIDs lists the snapshots of md not in expired.
func retainedIDs(md table.Metadata, expired []int64) []int64 {
	gone := make(map[int64]bool, len(expired))
	for _, id := range expired {
		gone[id] = true
	}
	var out []int64
	for _, s := range md.Snapshots() {
		if !gone[s.SnapshotID] {
			out = append(out, s.SnapshotID)
		}
	}
	return out
}

// exclusiveFiles is everything the expired snapshots of before reach minus
// everything the kept snapshots of keptMD reach.
func exclusiveFiles(ctx context.Context, fio iceio.IO, before table.Metadata, expired []int64, keptMD table.Metadata, kept []int64, concurrency int) (fileSet, error) {
	gone, err := reachable(ctx, fio, before, expired, false, concurrency)
	if err != nil {
		return nil, fmt.Errorf("files of expired snapshots: %w", err)
	}
	keep, err := reachable(ctx, fio, keptMD, kept, true, concurrency)
	if err != nil {
		return nil, fmt.Errorf("files of retained snapshots: %w", err)
	}
	for p := range keep {
		delete(gone, p)
	}
	return gone, nil
}

// Expire commits the removal of plan's snapshots and refs, then deletes the
// files that no retained snapshot reaches, in parallel. The plan is
// re-checked on the table's newest metadata first: only snapshots that would
// still expire there are removed, and every ref is asserted unchanged by the
// commit, which is retried (bounded) when the table moves. The files deleted
// are computed again after the commit from what was actually expired and
// what the committed metadata retains, never from the plan alone.
//
// A file that a sibling ([ExpireOptions.Siblings]) references is never
// deleted. The siblings are read before the commit — one that cannot be
// read refuses the expiry, and nothing changes — and again, found anew,
// before deleting: one that cannot be read then leaves the snapshots
// expired and every file in place (the error says so), for orphan removal
// to judge later. With [ExpireOptions.KeepFiles] nothing is deleted and no
// sibling is read.
func Expire(ctx context.Context, cat table.CatalogIO, tbl *table.Table, plan ExpirePlan, opts ExpireOptions) (ExpireResult, error) {
	if err := opts.Validate(); err != nil {
		return ExpireResult{}, fmt.Errorf("expire %s: %w", tbl.Location(), err)
	}
	opts = opts.withDefaults()
	if !opts.KeepFiles && len(plan.Snapshots) > 0 {
		// Refuse before anything changes when a sibling is unreadable.
		if _, err := readSiblings(ctx, opts.Siblings, opts.MaxConcurrentDeletes); err != nil {
			return ExpireResult{}, fmt.Errorf("expire %s: no snapshot expired, no file deleted: %w", tbl.Location(), err)
		}
	}
	ident := tbl.Identifier()
	planned := make(map[int64]bool, len(plan.Snapshots))
	for _, id := range plan.Snapshots {
		planned[id] = true
	}
	var (
		before, after *table.Table
		res           ExpireResult
	)
	const maxAttempts = 5
	for attempt := 1; ; attempt++ {
		var err error
		if before, err = cat.LoadTable(ctx, ident); err != nil {
			return res, fmt.Errorf("expire %s: load table: %w", tbl.Location(), err)
		}
		md := before.Metadata()
		allowed, refs, err := SelectExpired(md, opts, opts.Now())
		if err != nil {
			return res, fmt.Errorf("expire %s: %w", tbl.Location(), err)
		}
		var ids []int64
		for _, id := range allowed {
			if planned[id] {
				ids = append(ids, id)
			}
		}
		var removeRefs []string
		for _, r := range refs {
			if slices.Contains(plan.RemoveRefs, r) {
				removeRefs = append(removeRefs, r)
			}
		}
		if len(ids) == 0 && len(removeRefs) == 0 {
			after = before
			break
		}
		reqs := []table.Requirement{table.AssertTableUUID(md.TableUUID())}
		for name, ref := range md.Refs() {
			reqs = append(reqs, table.AssertRefSnapshotID(name, &ref.SnapshotID))
		}
		var updates []table.Update
		for _, r := range removeRefs {
			updates = append(updates, table.NewRemoveSnapshotRefUpdate(r))
		}
		if len(ids) > 0 {
			updates = append(updates, table.NewRemoveSnapshotsUpdate(ids, false))
		}
		_, _, err = cat.CommitTable(ctx, ident, reqs, updates)
		if err == nil {
			res.RemovedRefs = removeRefs
			break
		}
		if !IsRetryableCommitError(err) || attempt >= maxAttempts {
			return res, fmt.Errorf("expire %s: commit attempt %d: %w", tbl.Location(), attempt, err)
		}
		if err := sleepCtx(ctx, time.Duration(attempt)*100*time.Millisecond); err != nil {
			return res, err
		}
	}
	if after == nil {
		var err error
		if after, err = cat.LoadTable(ctx, ident); err != nil {
			return res, fmt.Errorf("expire %s: reload after commit: %w", tbl.Location(), err)
		}
	}
	// What actually expired: snapshots of before that after no longer has,
	// restricted to the plan.
	for _, s := range before.Metadata().Snapshots() {
		if planned[s.SnapshotID] && after.Metadata().SnapshotByID(s.SnapshotID) == nil {
			res.Expired = append(res.Expired, s.SnapshotID)
		}
	}
	for _, id := range plan.Snapshots {
		if after.Metadata().SnapshotByID(id) != nil {
			res.Kept = append(res.Kept, id)
		}
	}
	res.Retained = len(after.Metadata().Snapshots())
	if cur := after.CurrentSnapshot(); cur != nil {
		res.SnapshotID = cur.SnapshotID
	}
	if len(res.Expired) == 0 {
		return res, nil
	}
	if opts.KeepFiles {
		res.KeepFiles = true
		return res, nil
	}
	fio, err := after.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("expire %s: open table io: %w", tbl.Location(), err)
	}
	files, err := exclusiveFiles(ctx, fio, before.Metadata(), res.Expired, after.Metadata(), allSnapshotIDs(after.Metadata()), opts.MaxConcurrentDeletes)
	if err != nil {
		return res, fmt.Errorf("expire %s: %w", tbl.Location(), err)
	}
	// Read after the commit: an entry registered since the check above, or
	// a sibling's commit since, counts.
	sibs, err := readSiblings(ctx, opts.Siblings, opts.MaxConcurrentDeletes)
	if err != nil {
		return res, fmt.Errorf("expire %s: %d snapshots expired, no file deleted (orphan removal can take them later): %w", tbl.Location(), len(res.Expired), err)
	}
	res.Siblings, res.Shared = sibs.names, sibs.keep(files)
	res.Deleted, res.DeletedBytes, err = deleteFiles(ctx, fio, files, opts.MaxConcurrentDeletes)
	if err != nil {
		return res, fmt.Errorf("expire %s: snapshots expired, deleting their files: %w", tbl.Location(), err)
	}
	return res, nil
}

// deleteFiles removes files with at most concurrency deletes in flight. A
// file already gone counts as deleted. Every failure is reported.
func deleteFiles(ctx context.Context, fio iceio.IO, files fileSet, concurrency int) ([]string, int64, error) {
	var (
		mu      sync.Mutex
		deleted []string
		bytes   int64
		errs    []error
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, concurrency))
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			err := fio.Remove(p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("delete %s: %w", p, err))
				return nil
			}
			deleted = append(deleted, p)
			bytes += files[p]
			return nil
		})
	}
	_ = g.Wait() // workers report through errs; none returns an error
	slices.Sort(deleted)
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return deleted, bytes, errors.Join(errs...)
}
