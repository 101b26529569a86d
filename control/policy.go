package control

import (
	"context"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
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
	var last time.Time
	for _, r := range runs {
		if r.DryRun {
			continue
		}
		for _, s := range r.Steps {
			if s.Name == StepCompact && s.Status == StatusDone && s.EndedAt.After(last) {
				last = s.EndedAt
			}
		}
	}
	return last, nil
}
