package rewriter

import (
	"cmp"
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
	DataManifests   int `json:"data_manifests"`
	DeleteManifests int `json:"delete_manifests"`
	// Partitions counts the partitions with live data files.
	Partitions int `json:"partitions"`
	// LiveEntries counts live entries over all data manifests.
	LiveEntries int `json:"live_entries"`
	// Worthwhile is true when clustering by partition would leave fewer
	// data manifests than there are now (a rough bound: one per
	// partition).
	Worthwhile bool `json:"worthwhile"`
	// Rewrite counts the data manifests [RewriteManifests] would replace
	// (set by [PlanManifestRewrite] only; zero means none, or not planned).
	Rewrite int `json:"rewrite"`
	// TargetSizeBytes is the manifest size [PlanManifestRewrite] planned
	// for.
	TargetSizeBytes int64 `json:"target_size_bytes,omitempty"`
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

// PlanManifestRewrite is the dry run of [RewriteManifests]: [PlanManifests]
// plus the data manifests the rewrite would replace, decided as the rewrite
// decides (by partition clustering against opts.TargetSizeBytes), reading
// the manifests of st's current snapshot. It changes nothing.
func PlanManifestRewrite(ctx context.Context, st *lake.State, opts ManifestOptions) (ManifestPlan, error) {
	if err := opts.Validate(); err != nil {
		return ManifestPlan{}, MarkInvalidOptions(fmt.Errorf("plan manifest rewrite of %s: %w", st.Ident, err))
	}
	p := PlanManifests(st)
	p.TargetSizeBytes = opts.TargetSizeBytes
	if p.TargetSizeBytes == 0 {
		p.TargetSizeBytes = DefaultManifestTargetSize
	}
	if st.Table == nil {
		return p, nil
	}
	clusters, err := planManifestClusters(ctx, st.Table, p.TargetSizeBytes)
	if err != nil {
		return p, fmt.Errorf("plan manifest rewrite of %s: %w", st.Ident, err)
	}
	p.Rewrite = len(clusters.eligible)
	return p, nil
}

// DefaultManifestTargetSize is [ManifestOptions.TargetSizeBytes]'s default.
const DefaultManifestTargetSize = 8 << 20

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
// partition — neighbouring partitions share a manifest up to
// TargetSizeBytes, a larger partition gets manifests of its own (see
// planManifestClusters) — and commits them as one replace snapshot
// (iceberg-go's Transaction.RewriteManifests). Delete manifests are
// left alone. When nothing would change, nothing is committed. A commit that
// loses a race is replanned on the newest metadata, at most MaxAttempts
// times. It returns the table after the commit.
func RewriteManifests(ctx context.Context, tbl *table.Table, opts ManifestOptions) (_ *table.Table, _ ManifestResult, err error) {
	if err := opts.Validate(); err != nil {
		return tbl, ManifestResult{}, fmt.Errorf("rewrite manifests of %s: %w", tbl.Location(), err)
	}
	// The new manifests are written before the commit that references
	// them: the lease keeps orphan removal off them meanwhile.
	lease, err := AcquireLease(ctx, tbl, LeaseOptions{Table: lake.JoinParts(tbl.Identifier()...), Operation: "rewrite-manifests"})
	if err != nil {
		return tbl, ManifestResult{}, fmt.Errorf("rewrite manifests of %s: %w", tbl.Location(), err)
	}
	defer func() { err = errors.Join(err, lease.Release()) }()
	if opts.TargetSizeBytes == 0 {
		opts.TargetSizeBytes = DefaultManifestTargetSize
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
		clusters, err := planManifestClusters(ctx, cur, opts.TargetSizeBytes)
		eligible := clusters.eligible
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
			table.WithRewriteManifestClusterBy(clusters.clusterBy),
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

// manifestClusters is how the data manifests of a snapshot should be
// clustered: which manifests to rewrite, and the group of neighbouring
// partitions each data file goes to (iceberg-go writes one manifest per
// group, rolling at the target size).
type manifestClusters struct {
	eligible map[string]bool
	group    map[string]int // "spec/partition key" -> group
}

// clusterBy is the iceberg-go cluster key of a data file: its group.
func (c manifestClusters) clusterBy(df iceberg.DataFile) any {
	return c.group[fmt.Sprintf("%d/%v", df.SpecID(), partitionClusterKey(df))]
}

// planManifestClusters decides, per partition spec, whether the data
// manifests of tbl's current snapshot are clustered already, and groups the
// partitions for a rewrite.
//
// Partitions are taken in key order and packed greedily into groups whose
// estimated manifest size (a fixed overhead plus a size per entry, both
// fitted on the existing manifests) stays within target, so that
// neighbouring small partitions share one manifest and a large partition
// gets manifests of its own. The manifests are already clustered — and
// nothing is rewritten, so a repeated run commits nothing — when no two
// manifests' partition ranges interleave (no partition is spread over
// several manifests, no manifest holds a partition between two of
// another's) and no two manifests next to each other are small enough to
// merge (together within 3/4 of the target, which leaves room for the
// estimate's error so that a rewrite's own output is not rewritten again).
func planManifestClusters(ctx context.Context, tbl *table.Table, target int64) (manifestClusters, error) {
	out := manifestClusters{eligible: map[string]bool{}, group: map[string]int{}}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return out, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return out, fmt.Errorf("open table io: %w", err)
	}
	ms, err := snap.Manifests(fio)
	if err != nil {
		return out, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	type info struct {
		m        iceberg.ManifestFile
		keys     map[string]bool
		entries  int
		min, max int // key ranks, filled once keys are sorted
	}
	bySpec := map[int32][]*info{}
	entriesByKey := map[int32]map[string]int{}
	for _, m := range ms {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		spec := m.PartitionSpecID()
		in := &info{m: m, keys: map[string]bool{}}
		if entriesByKey[spec] == nil {
			entriesByKey[spec] = map[string]int{}
		}
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return out, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			k := fmt.Sprintf("%v", partitionClusterKey(e.DataFile()))
			in.keys[k] = true
			in.entries++
			entriesByKey[spec][k]++
		}
		bySpec[spec] = append(bySpec[spec], in)
	}
	next := 0
	for _, spec := range slices.Sorted(maps.Keys(bySpec)) {
		infos := bySpec[spec]
		keys := slices.Sorted(maps.Keys(entriesByKey[spec]))
		rank := make(map[string]int, len(keys))
		for i, k := range keys {
			rank[k] = i
		}
		// Size model: length ≈ overhead + perEntry × entries, fitted on the
		// smallest and largest manifests (by entries).
		var lens, ents []float64
		for _, in := range infos {
			lens = append(lens, float64(in.m.Length()))
			ents = append(ents, float64(in.entries))
		}
		overhead, perEntry := fitManifestSize(ents, lens)
		size := 0.0
		for _, k := range keys {
			add := perEntry * float64(entriesByKey[spec][k])
			if size > 0 && size+add > float64(target) {
				next++
				size = 0
			}
			if size == 0 {
				size = overhead
			}
			size += add
			out.group[fmt.Sprintf("%d/%s", spec, k)] = next
		}
		next++
		// Already clustered?
		for _, in := range infos {
			in.min, in.max = len(keys), -1
			for k := range in.keys {
				in.min, in.max = min(in.min, rank[k]), max(in.max, rank[k])
			}
		}
		slices.SortFunc(infos, func(a, b *info) int { return cmp.Compare(a.min, b.min) })
		clustered := true
		for i := 1; i < len(infos) && clustered; i++ {
			a, b := infos[i-1], infos[i]
			if b.min <= a.max || float64(a.m.Length()+b.m.Length())-overhead <= 0.75*float64(target) {
				clustered = false
			}
		}
		if clustered {
			continue
		}
		for _, in := range infos {
			out.eligible[in.m.FilePath()] = true
		}
	}
	return out, nil
}

// fitManifestSize fits length = overhead + perEntry × entries through the
// manifests with the fewest and the most entries; with one entry count
// only, the overhead is taken as zero (an overestimate per entry).
func fitManifestSize(entries, lengths []float64) (overhead, perEntry float64) {
	if len(entries) == 0 {
		return 0, 0
	}
	lo, hi := 0, 0
	for i := range entries {
		if entries[i] < entries[lo] {
			lo = i
		}
		if entries[i] > entries[hi] {
			hi = i
		}
	}
	if entries[hi] > entries[lo] {
		perEntry = (lengths[hi] - lengths[lo]) / (entries[hi] - entries[lo])
		overhead = lengths[lo] - perEntry*entries[lo]
	}
	if perEntry <= 0 || overhead < 0 {
		var l, e float64
		for i := range entries {
			l += lengths[i]
			e += entries[i]
		}
		return 0, l / max(e, 1)
	}
	return overhead, perEntry
}
