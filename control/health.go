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

// HealthOptions configure [Health].
type HealthOptions struct {
	// TargetFileSizeBytes is the target for tables without
	// write.target-file-size-bytes.
	TargetFileSizeBytes int64
	// Columns are measured for clustering besides the sort-order columns.
	Columns []string
	// Named says the caller named the table: a column it lacks is then an
	// error. Otherwise (the table is one of all the catalogs' tables) the
	// columns apply where they exist.
	Named bool
	// TargetOverride makes TargetFileSizeBytes replace the table's own
	// target: the table's policy set it (see [PolicyHealth]).
	TargetOverride bool
	// Thresholds classify the table; nil means lake's defaults.
	Thresholds *lake.Thresholds
	// LastCompaction is floe's last successful compaction of the table
	// ([LastCompaction]), zero when unknown.
	LastCompaction time.Time
	// History is what floe's run records say of the table, for [Decide]
	// (see [PolicyHealth]).
	History History
	// Expire is the snapshot expiry the table's policy sets
	// ([ExpireDefaults]), for what expiring would remove now: the advice
	// of a snapshot-count warning names what brings the table under it
	// (see [lake.Expiry]). Its unset keys defer to the table's
	// history.expire.* properties, as the expire step does.
	Expire rewriter.ExpireOptions
	// AllowSmallTarget judges small files by a target below the floor as
	// it is (the policy's allow_small_target_file_size, or the flag
	// --allow-small-target-file-size); see [lake.HealthOptions].
	AllowSmallTarget bool
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// PolicyHealth returns base with what the table's policy says: its health
// thresholds and freshness SLA, its target file size (and whether a small
// one is accepted), and (when st is not nil) what floe's run records say:
// the last compaction, so that freshness counts one that found nothing to
// rewrite, and the [History] [Decide] judges by.
func PolicyHealth(ctx context.Context, cfg *config.Config, st *store.Store, id lake.Ident, p policy.Policy, base HealthOptions) (HealthOptions, error) {
	th := p.Health
	base.Thresholds = &th
	if base.TargetFileSizeBytes == 0 { // else a flag gave it
		base.TargetFileSizeBytes, base.TargetOverride = TargetFileSize(cfg, p)
	}
	base.AllowSmallTarget = base.AllowSmallTarget || p.AllowSmallTargetFileSize
	base.Expire = ExpireDefaults(p, base.Expire)
	if st != nil {
		runs, err := ListRuns(ctx, st, id.String(), historyRuns)
		if err != nil {
			return base, fmt.Errorf("history of %s: %w", id, err)
		}
		base.LastCompaction, base.History = lastCompaction(runs), HistoryOf(runs)
	}
	return base, nil
}

// Health measures and classifies the table in state.
func Health(state *lake.State, opts HealthOptions) (lake.Health, error) {
	cols := opts.Columns
	if !opts.Named {
		cols = nil
		for _, c := range opts.Columns {
			if _, _, ok := state.FieldID(c); ok {
				cols = append(cols, c)
			}
		}
	}
	now := nowFunc(opts.Now)()
	drift, inTree := treeDrift(state)
	return lake.ComputeHealth(state, lake.HealthOptions{TargetFileSizeBytes: opts.TargetFileSizeBytes, TargetOverride: opts.TargetOverride, AllowSmallTarget: opts.AllowSmallTarget,
		Thresholds: opts.Thresholds, LastCompaction: opts.LastCompaction, Columns: cols, Now: now, Expiry: expiryOf(state, opts.Expire, now),
		LayoutDrift: drift, InTree: inTree})
}

// expiryOf is what expiring state's table with o would do at now: how
// many snapshots it removes and past which age. Nil when the table cannot
// be expired (gc.enabled=false), so health advises nothing it cannot do.
func expiryOf(state *lake.State, o rewriter.ExpireOptions, now time.Time) *lake.Expiry {
	if state.Metadata == nil {
		return nil
	}
	expired, _, err := rewriter.SelectExpired(state.Metadata, o, now)
	if err != nil {
		return nil
	}
	return &lake.Expiry{Expirable: len(expired), OlderThan: o.MaxSnapshotAge(state.Metadata),
		Command: "floe expire " + ShellArg(state.Ident.String())}
}
