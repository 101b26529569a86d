package control

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// DryRun is what [PlanOptimize] found an optimize run would do: each step's
// plan, made against the table as it is now (so the compaction plan does not
// see what the expiry before it would remove). Nothing is changed or stored.
type DryRun struct {
	Table string `json:"table"`
	// PlanID is the approved plan the run would execute, if any.
	PlanID string `json:"plan_id,omitempty"`
	// DryRun is always true: it marks the output as a dry run.
	DryRun bool         `json:"dry_run"`
	Steps  []DryRunStep `json:"steps"`
	// Decision is the decision the run would run ([Service.Decide]); nil
	// for a dry run of explicit options ([PlanOptimize]).
	Decision *Decision `json:"decision,omitempty"`
}

// DryRunStep is one step of a [DryRun]: skipped, or planned with the plan of
// its own kind set.
type DryRunStep struct {
	Step string `json:"step"`
	// Status is StatusPlanned, StatusSkipped or (by the policy's
	// decision) StatusNotDue.
	Status RunStatus `json:"status"`
	// Reason says why a step does not run.
	Reason    string                      `json:"reason,omitempty"`
	Expire    *rewriter.ExpirePlan        `json:"expire,omitempty"`
	Orphans   *rewriter.OrphanPlan        `json:"orphans,omitempty"`
	Compact   *rewriter.CompactPlan       `json:"compact,omitempty"`
	Deletes   *rewriter.DeleteRewritePlan `json:"deletes,omitempty"`
	Manifests *rewriter.ManifestPlan      `json:"manifests,omitempty"`
}

// StatusPlanned is the status of a [DryRunStep] that would run.
const StatusPlanned RunStatus = "planned"

// PlanOptimize is the dry run of [Optimize]: it checks everything the run
// would check before it starts (the table exists, every step's options, the
// layout against the schema, an approved plan that is not stale) and plans
// each step that is not skipped with the planner the run uses
// ([PlanExpire], [PlanOrphans], [rewriter.PlanCompaction],
// [rewriter.PlanDeleteRewrite], [rewriter.PlanManifestRewrite]). It records no run and moves no plan (a
// stale plan is reported, not marked). Errors from bad options wrap
// [rewriter.ErrInvalidOptions].
func PlanOptimize(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, opts OptimizeOptions) (DryRun, error) {
	if opts.Now == nil {
		opts.Now = nowFunc(nil)
	}
	out := DryRun{Table: id.String(), PlanID: opts.PlanID, DryRun: true, Steps: []DryRunStep{}}
	if opts.PlanID != "" {
		var err error
		if _, opts, err = planRunOptions(ctx, cat, st, id, opts, true); err != nil {
			return out, err
		}
	}
	state, err := checkOptimize(ctx, cat, id, opts)
	if err != nil {
		return out, fmt.Errorf("optimize %s: %w", id, err)
	}
	for _, name := range stepOrder {
		if opts.Steps != nil && !slices.Contains(opts.Steps, name) {
			continue
		}
		step := DryRunStep{Step: name, Status: StatusPlanned}
		if d, ok := decisionOf(opts.Decisions, name); ok && !d.Run && !opts.Skip[name] {
			step.Status, step.Reason = d.Status, d.Reason
			out.Steps = append(out.Steps, step)
			continue
		}
		if opts.Skip[name] {
			step.Status, step.Reason = StatusSkipped, "--skip"
			out.Steps = append(out.Steps, step)
			continue
		}
		var err error
		switch name {
		case StepExpire:
			eo := opts.Expire
			eo.Now = opts.Now
			var p rewriter.ExpirePlan
			p, _, err = PlanExpire(ctx, opts.Catalogs.orDefault(id.Catalog, cat), id, state.Table, eo)
			step.Expire = &p
		case StepOrphans:
			oo := opts.Orphans
			oo.Now = opts.Now
			var p rewriter.OrphanPlan
			p, err = PlanOrphans(ctx, opts.Catalogs.orDefault(id.Catalog, cat), st, id, state.Table, oo)
			step.Orphans = &p
		case StepCompact:
			co := opts.Compact
			if len(co.Priority) == 0 {
				if co.Priority, err = lostPartitions(ctx, st, id, ""); err != nil {
					break
				}
			}
			var p rewriter.CompactPlan
			p, err = rewriter.PlanCompaction(state, co)
			step.Compact = &p
		case StepDeletes:
			var p rewriter.DeleteRewritePlan
			p, err = rewriter.PlanDeleteRewrite(ctx, state, deleteOptions(opts, "", nil))
			step.Deletes = &p
		case StepManifests:
			var p rewriter.ManifestPlan
			p, err = rewriter.PlanManifestRewrite(ctx, state, opts.Manifests)
			step.Manifests = &p
		}
		if err != nil {
			return out, fmt.Errorf("optimize %s: plan step %s: %w", id, name, err)
		}
		out.Steps = append(out.Steps, step)
	}
	return out, nil
}

// checkOptimize loads table id and checks every step's options against it,
// reporting every problem at once: what [Optimize] refuses before it
// records a run, and [PlanOptimize] before it plans.
func checkOptimize(ctx context.Context, cat catalog.Catalog, id lake.Ident, opts OptimizeOptions) (*lake.State, error) {
	state, err := loadState(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	var errs []error
	if !opts.Skip[StepExpire] {
		if err := opts.Expire.Validate(); err != nil {
			errs = append(errs, rewriter.MarkInvalidOptions(fmt.Errorf("expire: %w", err)))
		}
	}
	if !opts.Skip[StepOrphans] {
		if err := opts.Orphans.Validate(); err != nil {
			errs = append(errs, rewriter.MarkInvalidOptions(fmt.Errorf("orphans: %w", err)))
		}
	}
	if !opts.Skip[StepCompact] {
		if err := rewriter.CheckCompaction(state, opts.Compact); err != nil {
			errs = append(errs, fmt.Errorf("compact: %w", err))
		}
	}
	if !opts.Skip[StepDeletes] {
		if err := opts.Deletes.Validate(); err != nil {
			errs = append(errs, rewriter.MarkInvalidOptions(fmt.Errorf("deletes: %w", err)))
		}
	}
	if !opts.Skip[StepManifests] {
		if err := opts.Manifests.Validate(); err != nil {
			errs = append(errs, rewriter.MarkInvalidOptions(fmt.Errorf("manifests: %w", err)))
		}
	}
	return state, errors.Join(errs...)
}
