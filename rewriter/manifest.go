package rewriter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// ManifestOptions tune [RewriteManifests]. A zero value means "use the
// default".
type ManifestOptions struct {
	// TargetSizeBytes is the size of the manifests written. Default: 8 MiB.
	TargetSizeBytes int64
	// MaxAttempts bounds the commit attempts. Default: 5.
	MaxAttempts int
}

// Validate reports every invalid option at once.
func (o ManifestOptions) Validate() error {
	var errs []error
	if o.TargetSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("target manifest size must be >= 0, got %d", o.TargetSizeBytes))
	}
	if o.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("max attempts must be >= 1, got %d", o.MaxAttempts))
	}
	return errors.Join(errs...)
}

// ManifestPlan describes the manifests of a table's current snapshot.
type ManifestPlan struct {
	// DataManifests and DeleteManifests count the manifests by content.
	DataManifests, DeleteManifests int
	// Partitions counts the partitions with live data files.
	Partitions int
	// LiveEntries counts live entries over all data manifests.
	LiveEntries int
	// Worthwhile is true when clustering by partition would leave fewer
	// data manifests than there are now (a rough bound: one per
	// partition).
	Worthwhile bool
}

// PlanManifests is the dry run of [RewriteManifests]: what the current
// manifests look like, from st alone.
func PlanManifests(st *lake.State) ManifestPlan {
	var p ManifestPlan
	for _, m := range st.Manifests {
		if m.Content == iceberg.ManifestContentDeletes {
			p.DeleteManifests++
			continue
		}
		p.DataManifests++
		p.LiveEntries += m.LiveEntries
	}
	parts := map[string]bool{}
	for _, f := range st.DataFiles {
		parts[f.PartitionKey] = true
	}
	p.Partitions = len(parts)
	p.Worthwhile = p.DataManifests > max(1, p.Partitions)
	return p
}

// ManifestResult is what [RewriteManifests] did.
type ManifestResult struct {
	// NoOp is true when the manifests were already clustered and sized:
	// nothing was committed.
	NoOp bool
	// SnapshotID is the replace snapshot committed (0 for a no-op).
	SnapshotID int64
	// Rewritten and Added count the manifests replaced and written.
	Rewritten, Added int
	// Attempts counts commit attempts.
	Attempts int
}

// RewriteManifests clusters the data manifests of tbl's current snapshot by
// partition, rolling to TargetSizeBytes, and commits them as one replace
// snapshot (iceberg-go's Transaction.RewriteManifests). Delete manifests are
// left alone. When nothing would change, nothing is committed. A commit that
// loses a race is replanned on the newest metadata, at most MaxAttempts
// times. It returns the table after the commit.
func RewriteManifests(ctx context.Context, tbl *table.Table, opts ManifestOptions) (_ *table.Table, _ ManifestResult, err error) {
	if err := opts.Validate(); err != nil {
		return tbl, ManifestResult{}, fmt.Errorf("rewrite manifests of %s: %w", tbl.Location(), err)
	}
	// The new manifests are written before the commit that references
	// them: the lease keeps orphan removal off them meanwhile.
	lease, err := AcquireLease(ctx, tbl, LeaseOptions{Table: strings.Join(tbl.Identifier(), "."), Operation: "rewrite-manifests"})
	if err != nil {
		return tbl, ManifestResult{}, fmt.Errorf("rewrite manifests of %s: %w", tbl.Location(), err)
	}
	defer func() { err = errors.Join(err, lease.Release()) }()
	if opts.TargetSizeBytes == 0 {
		opts.TargetSizeBytes = 8 << 20
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 5
	}
	var res ManifestResult
	cur := tbl
	for attempt := 1; ; attempt++ {
		fresh := *cur
		if err := fresh.Refresh(ctx); err != nil {
			return cur, res, fmt.Errorf("rewrite manifests of %s: reload table: %w", tbl.Location(), err)
		}
		cur = &fresh
		eligible, err := unclusteredManifests(ctx, cur, opts.TargetSizeBytes)
		if err != nil {
			return cur, res, fmt.Errorf("rewrite manifests of %s: %w", tbl.Location(), err)
		}
		res.Attempts = attempt
		if len(eligible) == 0 {
			res.NoOp = true
			return cur, res, nil
		}
		tx := cur.NewTransaction()
		r, err := tx.RewriteManifests(ctx,
			table.WithManifestTargetSize(opts.TargetSizeBytes),
			table.WithRewriteManifestClusterBy(partitionClusterKey),
			table.WithRewriteManifestPredicate(func(m iceberg.ManifestFile) bool { return eligible[m.FilePath()] }))
		if err != nil {
			return cur, res, fmt.Errorf("rewrite manifests of %s: stage: %w", tbl.Location(), err)
		}
		if r.IsNoOp() {
			res.NoOp = true
			return cur, res, nil
		}
		if err := lease.Check(); err != nil {
			return cur, res, fmt.Errorf("rewrite manifests of %s: %w", tbl.Location(), err)
		}
		next, err := tx.Commit(ctx)
		if err == nil {
			res.Rewritten, res.Added = len(r.RewrittenManifests), len(r.AddedManifests)
			if s := next.CurrentSnapshot(); s != nil {
				res.SnapshotID = s.SnapshotID
			}
			return next, res, nil
		}
		if !IsRetryableCommitError(err) || attempt >= opts.MaxAttempts {
			return cur, res, fmt.Errorf("rewrite manifests of %s: commit attempt %d: %w", tbl.Location(), attempt, err)
		}
		if err := sleepCtx(ctx, time.Duration(attempt)*100*time.Millisecond); err != nil {
			return cur, res, err
		}
	}
}

// partitionClusterKey is a comparable key of a data file's partition
// values (the spec is kept apart by iceberg-go itself).
func partitionClusterKey(df iceberg.DataFile) any {
	part := df.Partition()
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(part)) {
		fmt.Fprintf(&b, "%d=%T:%v;", id, part[id], part[id])
	}
	return b.String()
}

// unclusteredManifests picks the data manifests of tbl's current snapshot
// that clustering would change: those holding more than one partition, and
// every manifest below target size of a partition that is spread over
// several manifests or shares one with other partitions. iceberg-go would
// otherwise rewrite already clustered manifests again on every run.
func unclusteredManifests(ctx context.Context, tbl *table.Table, target int64) (map[string]bool, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table io: %w", err)
	}
	ms, err := snap.Manifests(fio)
	if err != nil {
		return nil, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	type info struct {
		m    iceberg.ManifestFile
		keys map[string]bool
	}
	var infos []info
	byKey := map[string][]int{}
	for _, m := range ms {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		in := info{m: m, keys: map[string]bool{}}
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			k := fmt.Sprintf("%d/%v", m.PartitionSpecID(), partitionClusterKey(e.DataFile()))
			in.keys[k] = true
		}
		for k := range in.keys {
			byKey[k] = append(byKey[k], len(infos))
		}
		infos = append(infos, in)
	}
	out := map[string]bool{}
	for _, idx := range byKey {
		mixed, small := false, 0
		for _, i := range idx {
			if len(infos[i].keys) > 1 {
				mixed = true
			}
			if infos[i].m.Length() < target {
				small++
			}
		}
		if !mixed && small < 2 {
			continue
		}
		for _, i := range idx {
			if len(infos[i].keys) > 1 || infos[i].m.Length() < target {
				out[infos[i].m.FilePath()] = true
			}
		}
	}
	return out, nil
}
