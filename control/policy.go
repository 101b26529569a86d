package control

import (
	"context"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// ResolvePolicy returns the table's effective policy: the built-in
// defaults overridden by cfg's policies (see package policy) and, with
// policies.from_catalog on a Polaris catalog, by the policies Polaris
// applies to the table, at the level Polaris reports them (floe.yaml wins
// at the same level).
func ResolvePolicy(ctx context.Context, cfg *config.Config, id lake.Ident) (policy.Effective, error) {
	set := cfg.Policies
	if set == nil {
		set = &policy.Set{}
	}
	var (
		extra    []policy.Rule
		warnings []string
	)
	if set.FromCatalog {
		rules, w, err := catalogPolicies(ctx, cfg, id)
		if err != nil {
			return policy.Effective{}, err
		}
		extra, warnings = rules, w
	}
	eff, err := set.Resolve(id, extra...)
	eff.Warnings = append(eff.Warnings, warnings...)
	return eff, err
}

// TargetFileSize is the target file size of the table's policy, else the
// configuration's health.target_file_size, with whether the policy set it
// (a policy's target replaces the table's write.target-file-size-bytes; the
// configuration's default only stands in for a table without one).
func TargetFileSize(cfg *config.Config, p policy.Policy) (bytes int64, fromPolicy bool) {
	if p.TargetFileSizeBytes > 0 {
		return p.TargetFileSizeBytes, true
	}
	return cfg.TargetFileSizeBytes(), false
}

// LastCompaction is when floe last finished a compaction step of table
// successfully, from the run records (zero when it never did). A
// compaction that found nothing to rewrite commits no snapshot; this is
// how health still counts it as fresh.
func LastCompaction(ctx context.Context, st *store.Store, table string) (time.Time, error) {
	runs, err := ListRuns(ctx, st, table, 200)
	if err != nil {
		return time.Time{}, fmt.Errorf("last compaction of %s: %w", table, err)
	}
	return lastCompaction(runs), nil
}

// lastCompaction is when the newest compaction step among runs that was
// done or not due ended; zero when none.
func lastCompaction(runs []Run) time.Time {
	var last time.Time
	for _, r := range runs {
		if r.DryRun {
			continue
		}
		for _, s := range r.Steps {
			if s.Name == StepCompact && (s.Status == StatusDone || s.Status == StatusNotDue) && s.EndedAt.After(last) {
				last = s.EndedAt
			}
		}
	}
	return last
}

// ExpireDefaults fills what o leaves unset from the policy: the expiry age
// (snapshots.older_than) and the snapshots always kept
// (snapshots.retain_last). Keys the policy leaves unset keep deferring to
// the table's history.expire.* properties.
func ExpireDefaults(p policy.Policy, o rewriter.ExpireOptions) rewriter.ExpireOptions {
	if !o.OlderThanSet && o.OlderThan == 0 && p.Snapshots.OlderThan != nil {
		o.OlderThan, o.OlderThanSet = *p.Snapshots.OlderThan, true
	}
	if o.RetainLast == 0 && p.Snapshots.RetainLast != nil {
		o.RetainLast = *p.Snapshots.RetainLast
	}
	return o
}

// OrphanDefaults fills the orphan age from the policy (orphans.older_than)
// when o leaves it unset.
func OrphanDefaults(p policy.Policy, o rewriter.OrphanOptions) rewriter.OrphanOptions {
	if !o.OlderThanSet && o.OlderThan == 0 && p.Orphans.OlderThan > 0 {
		o.OlderThan, o.OlderThanSet = p.Orphans.OlderThan, true
	}
	return o
}

// CompactDefaults fills the target file size (target_file_size) and the
// bytes one run may rewrite (max_bytes_per_run) from the policy when o
// leaves them unset.
func CompactDefaults(p policy.Policy, o rewriter.CompactOptions) rewriter.CompactOptions {
	if o.TargetFileSizeBytes == 0 && p.TargetFileSizeBytes > 0 {
		o.TargetFileSizeBytes = p.TargetFileSizeBytes
	}
	if o.MaxBytes == 0 && o.MaxFilesFraction == 0 && p.MaxBytesPerRun > 0 {
		o.MaxBytes = p.MaxBytesPerRun
	}
	return o
}

// DeleteDefaults fills the thresholds of delete maintenance from the
// policy (triggers.position_delete_files, triggers.equality_delete_ratio)
// when o leaves them unset.
func DeleteDefaults(p policy.Policy, o rewriter.DeleteRewriteOptions) rewriter.DeleteRewriteOptions {
	if o.MinPositionDeleteFiles == 0 && p.Triggers.PositionDeleteFiles > 0 {
		o.MinPositionDeleteFiles = p.Triggers.PositionDeleteFiles
	}
	if o.EqualityDeleteRatio == 0 && p.Triggers.EqualityDeleteRatio > 0 {
		o.EqualityDeleteRatio = p.Triggers.EqualityDeleteRatio
	}
	return o
}

// StepDefaults applies [ExpireDefaults], [OrphanDefaults],
// [CompactDefaults] and [DeleteDefaults] to an optimize run's options,
// and makes the policy's engine key choose the engine of each step.
func StepDefaults(p policy.Policy, o OptimizeOptions) OptimizeOptions {
	o.Expire = ExpireDefaults(p, o.Expire)
	o.Orphans = OrphanDefaults(p, o.Orphans)
	o.Compact = CompactDefaults(p, o.Compact)
	o.Deletes = DeleteDefaults(p, o.Deletes)
	o.Engine.Policy = p
	return o
}
