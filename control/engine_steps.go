package control

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// The steps of a run, each on the engine [EngineSelect] picks for it.
// floe plans every step from the table's metadata whichever engine runs
// it; a distributed engine's report comes back as a [*DistributedReport]
// with floe's check of what it committed, the native engine's as its own
// result.

func expireStep(ctx context.Context, cat catalog.Catalog, id lake.Ident, opts OptimizeOptions) (StepReport, error) {
	eo := opts.Expire
	eo.Now = opts.Now
	state, err := stepState(ctx, cat, id, opts.Engine)
	if err != nil {
		return StepReport{}, err
	}
	plan, eo, err := PlanExpire(ctx, opts.Catalogs.orDefault(id.Catalog, cat), id, state.Table, eo)
	if err != nil || len(plan.Snapshots) == 0 {
		return StepReport{ExpirePlan: &plan}, err
	}
	opts.onPlan(StepExpire)(StepReport{ExpirePlan: &plan})
	return ExpireOn(ctx, cat, state, plan, eo, opts.Engine)
}

func orphansStep(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, opts OptimizeOptions) (StepReport, error) {
	oo := opts.Orphans
	oo.Now = opts.Now
	state, err := stepState(ctx, cat, id, opts.Engine)
	if err != nil {
		return StepReport{}, err
	}
	plan, err := PlanOrphans(ctx, opts.Catalogs.orDefault(id.Catalog, cat), st, id, state.Table, oo)
	if err != nil || len(plan.Files) == 0 {
		// floe's own listing found nothing old enough: no engine is asked
		// to list the location again.
		return StepReport{OrphanPlan: &plan}, err
	}
	opts.onPlan(StepOrphans)(StepReport{OrphanPlan: &plan})
	return RemoveOrphansOn(ctx, cat, state, plan, oo, opts.Engine)
}

func manifestsStep(ctx context.Context, cat catalog.Catalog, id lake.Ident, opts OptimizeOptions) (StepReport, error) {
	state, err := loadState(ctx, cat, id)
	if err != nil {
		return StepReport{}, err
	}
	return RewriteManifestsOn(ctx, cat, state, opts.Manifests, opts.Engine)
}

// deletesStep plans the delete maintenance of table id
// ([rewriter.PlanDeleteRewrite]) and carries the plan out
// ([rewriter.RewriteDeletes]). It always runs natively, whatever engine
// the run's other steps take: floe reads the position deletes, writes the
// merged files and deletion vectors, and checks each change by reading the
// live rows before and after; no engine offers that check.
func deletesStep(ctx context.Context, cat catalog.Catalog, id lake.Ident, do rewriter.DeleteRewriteOptions, onPlan func(StepReport)) (StepReport, error) {
	state, err := loadState(ctx, cat, id)
	if err != nil {
		return StepReport{}, err
	}
	plan, err := rewriter.PlanDeleteRewrite(ctx, state, do)
	if err != nil || len(plan.Actions) == 0 {
		return StepReport{DeletePlan: &plan}, err
	}
	onPlan(StepReport{DeletePlan: &plan})
	res, err := rewriter.RewriteDeletes(ctx, state, plan, do)
	return StepReport{Deletes: &res}, err
}

// deleteOptions are the delete step's options of a run: opts.Deletes,
// whose rewrites (the apply action's bin-pack compaction) take the
// compaction's target file size and memory budget — never its layout or
// the layout's declaration —, commit under runID and log to log (nil: no
// logger, for a dry run).
func deleteOptions(opts OptimizeOptions, runID string, log *slog.Logger) rewriter.DeleteRewriteOptions {
	do := opts.Deletes
	if do.Compact.TargetFileSizeBytes == 0 {
		do.Compact.TargetFileSizeBytes = opts.Compact.TargetFileSizeBytes
	}
	if do.Compact.Group.MemoryBytes == 0 {
		do.Compact.Group.MemoryBytes = opts.Compact.Group.MemoryBytes
	}
	if do.Compact.Group.TempDir == "" {
		do.Compact.Group.TempDir = opts.Compact.Group.TempDir
	}
	do.Compact.Commit.RunID = runID
	do.Compact.Logger = log
	return do
}

// stepState loads table id and what its step needs of it ([EngineSelect.StepState]).
func stepState(ctx context.Context, cat catalog.Catalog, id lake.Ident, sel EngineSelect) (*lake.State, error) {
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	return sel.StepState(ctx, id, tbl)
}

// ExpireOn runs plan, the expiry of state's table planned with
// [PlanExpire] (eo as it returned them), on the engine sel picks: natively,
// [rewriter.Expire]; elsewhere the engine's expiry with the plan's cutoff
// and the number of snapshots to retain. An engine's expiry deletes what
// the table's own metadata no longer reaches, knowing nothing of the other
// catalog entries sharing the location, and always deletes: a table that
// has such siblings ([rewriter.ExpirePlan.Siblings]), or an expiry that is
// to delete no file ([rewriter.ExpireOptions.KeepFiles]), is expired
// natively.
func ExpireOn(ctx context.Context, cat catalog.Catalog, state *lake.State, plan rewriter.ExpirePlan, eo rewriter.ExpireOptions, sel EngineSelect) (StepReport, error) {
	tbl := state.Table
	choice := sel.choose(dataBytes(state))
	if choice.Name == rewriter.NativeName || len(plan.Siblings) > 0 || eo.KeepFiles {
		res, err := rewriter.Expire(ctx, cat, tbl, plan, eo)
		return StepReport{Expire: &res}, err
	}
	retain := eo.RetainLast
	if retain <= 0 {
		retain = tbl.Metadata().Properties().GetInt(table.MinSnapshotsToKeepKey, table.MinSnapshotsToKeepDefault)
	}
	return sel.distributed(ctx, choice, cat, state.Ident, state, verifyMaintenance, false, func(ctx context.Context, eng rewriter.Engine, t rewriter.EngineTable) (rewriter.StepReport, error) {
		return eng.Expire(ctx, rewriter.ExpireJob{Table: t, Catalog: cat, Tbl: tbl, Plan: plan, Options: eo, OlderThan: plan.Cutoff, RetainLast: retain})
	})
}

// RemoveOrphansOn removes the orphan files of state's table, planned with
// [PlanOrphans], on the engine sel picks: natively, plan's files
// ([rewriter.DeleteOrphans], which looks at each again); elsewhere the
// engine lists and deletes what is older than a cutoff that floe moves
// before the start of every live floe run of the table
// ([rewriter.OrphanCutoff]), and floe then checks that every file of the
// current snapshot is still there. An engine's own listing knows nothing of
// the other catalog entries sharing the table's location, so a table that
// has such siblings ([rewriter.OrphanPlan.Siblings]) is always cleaned
// natively.
func RemoveOrphansOn(ctx context.Context, cat catalog.Catalog, state *lake.State, plan rewriter.OrphanPlan, oo rewriter.OrphanOptions, sel EngineSelect) (StepReport, error) {
	tbl := state.Table
	choice := sel.choose(dataBytes(state))
	if choice.Name == rewriter.NativeName || len(plan.Siblings) > 0 {
		res, err := rewriter.DeleteOrphans(ctx, tbl, plan, oo.Concurrency)
		return StepReport{Orphans: &res}, err
	}
	cutoff, _, err := rewriter.OrphanCutoff(ctx, tbl, oo)
	if err != nil {
		return StepReport{}, err
	}
	return sel.distributed(ctx, choice, cat, state.Ident, state, verifyMaintenance, true, func(ctx context.Context, eng rewriter.Engine, t rewriter.EngineTable) (rewriter.StepReport, error) {
		return eng.RemoveOrphans(ctx, rewriter.OrphanJob{Table: t, Tbl: tbl, Plan: plan, Options: oo, OlderThan: cutoff})
	})
}

// RewriteManifestsOn rewrites the manifests of state's table on the engine
// sel picks.
func RewriteManifestsOn(ctx context.Context, cat catalog.Catalog, state *lake.State, mo rewriter.ManifestOptions, sel EngineSelect) (StepReport, error) {
	choice := sel.choose(dataBytes(state))
	if choice.Name == rewriter.NativeName {
		_, res, err := rewriter.RewriteManifests(ctx, state.Table, mo)
		return StepReport{Manifests: &res}, err
	}
	return sel.distributed(ctx, choice, cat, state.Ident, state, verifyManifests, false, func(ctx context.Context, eng rewriter.Engine, t rewriter.EngineTable) (rewriter.StepReport, error) {
		return eng.RewriteManifests(ctx, rewriter.ManifestJob{Table: t, Tbl: state.Table, Options: mo})
	})
}

// compactStep plans the compaction of state and runs it (see [CompactOn]).
func compactStep(ctx context.Context, cat catalog.Catalog, id lake.Ident, state *lake.State, co rewriter.CompactOptions, sel EngineSelect, onPlan func(StepReport)) (StepReport, error) {
	plan, err := rewriter.PlanCompaction(state, co)
	if err != nil || len(plan.Groups) == 0 {
		return StepReport{CompactPlan: &plan}, err
	}
	onPlan(StepReport{CompactPlan: &plan})
	return CompactOn(ctx, cat, state, plan, co, sel)
}

// CompactOn runs plan, made from state, on the engine sel picks for the
// plan's input bytes: natively, [rewriter.Compact]; elsewhere the engine's
// rewrite in the plan's layout, scoped to the plan's partitions when the
// plan leaves some of the table out (a budget, --partition). A layout the
// engine cannot write is refused before anything is sent
// ([rewriter.ErrLayoutUnsupported]).
func CompactOn(ctx context.Context, cat catalog.Catalog, state *lake.State, plan rewriter.CompactPlan, co rewriter.CompactOptions, sel EngineSelect) (StepReport, error) {
	id := state.Ident
	choice := sel.choose(plan.InputBytes)
	if choice.Name == rewriter.NativeName {
		res, err := rewriter.Compact(ctx, state, plan, co)
		return StepReport{Compact: &res}, err
	}
	engs := sel.Engines
	if engs == nil {
		engs = NewEngines(nil, nil)
	}
	eng, err := engs.Get(ctx, choice.Name)
	if err != nil {
		return StepReport{}, err
	}
	if err := engs.checkEngineLayout(ctx, eng, co); err != nil {
		return StepReport{}, err
	}
	var scope []rewriter.PartitionScope
	if len(plan.Deferred) > 0 || len(co.Partitions) > 0 {
		keys := make([]string, len(plan.Groups))
		for i, g := range plan.Groups {
			keys[i] = g.Partition
		}
		if scope, err = rewriter.PartitionScopes(state, keys); err != nil {
			return StepReport{}, fmt.Errorf("scope the rewrite of %s on engine %s to the plan's %d partitions: %w", id, eng.Name(), len(keys), err)
		}
	}
	return sel.distributed(ctx, choice, cat, id, state, verifyCompact, false, func(ctx context.Context, eng rewriter.Engine, t rewriter.EngineTable) (rewriter.StepReport, error) {
		return eng.Compact(ctx, rewriter.CompactJob{Table: t, State: state, Plan: plan, Options: co, Scope: scope})
	})
}
