package control

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// PolicyOptions configure [OptimizeByPolicy].
type PolicyOptions struct {
	// Optimize holds the steps' options, with the caller's overrides (the
	// CLI's flags) and [StepDefaults] applied. Its Compact.Layout is
	// replaced by the layout the policy decides; Decisions and PlanID are
	// set here.
	Optimize OptimizeOptions
	// Health measures the table for the decision ([PolicyHealth]).
	Health HealthOptions
	// Plan says how a layout: auto policy projects candidates from the
	// collected queries, and the gain a plan needs.
	Plan PlanOptions
}

// PolicyRun is what [OptimizeByPolicy] did.
type PolicyRun struct {
	Table string `json:"table"`
	// Decisions are the steps the policy called for, and why.
	Decisions []StepDecision `json:"decisions"`
	// Layout is the layout the compaction wrote (or would have written).
	Layout string `json:"layout"`
	// Plan is the layout plan this run ran, or the one that waits for
	// approval; nil when there is none.
	Plan *Plan `json:"plan,omitempty"`
	// Run is the recorded run.
	Run Run `json:"run"`
}

// OptimizeByPolicy runs the maintenance the table's policy and health call
// for — what 'floe optimize TABLE' does without flags, and what the
// daemon runs. In order:
//
//   - An approved plan for the table runs (approving it was the decision).
//   - Otherwise [Decide] says which steps are due, and the layout comes
//     from the policy's layout key: none bin-packs; a fixed layout is kept
//     if the table declares it already, else written when approval.layout
//     is auto, else proposed as a plan; auto projects the candidates from
//     the collected queries ([PlanBest]) and proposes the best if it gains
//     enough (an auto approval approves and runs it at once).
//   - A layout change waiting for approval holds the compaction back (a
//     rewrite now would make the plan stale); the steps that need no
//     approval run.
//
// Every step is recorded, the ones that do not run with their reason.
func OptimizeByPolicy(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, p policy.Policy, opts PolicyOptions) (PolicyRun, error) {
	out := PolicyRun{Table: id.String(), Decisions: []StepDecision{}}
	oo := opts.Optimize
	approved, err := ListPlans(ctx, st, PlanFilter{Table: id.String(), State: PlanApproved})
	if err != nil {
		return out, fmt.Errorf("optimize %s: %w", id, err)
	}
	if len(approved) > 0 && p.Enabled.Compact {
		pl := approved[0]
		out.Plan, out.Layout = &pl, pl.Layout.String()
		out.Decisions = []StepDecision{{Step: StepCompact, Run: true, Reason: fmt.Sprintf("plan %s was approved", pl.ID)}}
		oo.PlanID = pl.ID
		out.Run, err = Optimize(ctx, cat, st, id, oo)
		return out, err
	}
	state, err := loadState(ctx, cat, id)
	if err != nil {
		return out, fmt.Errorf("optimize %s: %w", id, err)
	}
	h, err := Health(state, opts.Health)
	if err != nil {
		return out, fmt.Errorf("optimize %s: %w", id, err)
	}
	out.Decisions = Decide(h, p, opts.Health.History)
	compact := &out.Decisions[2]
	l, why, plan, err := policyLayout(ctx, cat, st, state, p, opts.Plan)
	if err != nil {
		return out, err
	}
	out.Layout, out.Plan = l.String(), plan
	switch {
	case plan != nil && plan.State == PlanProposed:
		*compact = StepDecision{Step: StepCompact, Status: StatusSkipped, Reason: why}
	case why != "" && compact.Status != StatusSkipped:
		// A layout to write is due whatever the file sizes.
		*compact = StepDecision{Step: StepCompact, Run: true, Reason: why}
		if plan != nil && plan.State == PlanApproved {
			oo.PlanID = plan.ID
		}
	}
	oo.Compact.Layout = l
	oo.Decisions = out.Decisions
	out.Run, err = Optimize(ctx, cat, st, id, oo)
	return out, err
}

// policyLayout decides the layout of the compaction by the policy's layout
// key. why is set when the layout itself calls for a rewrite (a fixed
// layout the table does not have yet, approved by the policy) or when a
// plan holds the compaction back (the plan is then returned).
func policyLayout(ctx context.Context, cat catalog.Catalog, st *store.Store, state *lake.State, p policy.Policy, po PlanOptions) (l layout.Layout, why string, plan *Plan, err error) {
	binpack := layout.Layout{Strategy: layout.StrategyBinpack}
	id := state.Ident
	if !p.Enabled.Compact {
		return binpack, "", nil, nil
	}
	switch p.Layout {
	case policy.LayoutNone:
		return binpack, "", nil, nil
	case policy.LayoutAuto:
		if p.Approval.Layout == policy.ApprovalAuto {
			po.By = "policy"
		}
		prop, err := PlanBest(ctx, cat, st, state, po)
		if errors.Is(err, ErrNoQueries) {
			return binpack, "", nil, nil // nothing to learn a layout from
		}
		if err != nil {
			return binpack, "", nil, err
		}
		if prop.Plan == nil {
			return binpack, "", nil, nil
		}
		return decidePlanned(ctx, st, *prop.Plan, p, po)
	}
	fixed, err := layout.Parse(p.Layout)
	if err != nil {
		return binpack, "", nil, fmt.Errorf("optimize %s: policy layout: %w", id, err)
	}
	if declares(state, fixed) {
		return fixed, "", nil, nil
	}
	if p.Approval.Layout == policy.ApprovalAuto {
		return fixed, fmt.Sprintf("the policy's layout %s (approval.layout: auto); the table is not in it yet", fixed), nil, nil
	}
	po.Project.Layouts, po.Force = []layout.Layout{fixed}, true
	prop, err := PlanBest(ctx, cat, st, state, po)
	if errors.Is(err, ErrNoQueries) {
		// No queries to project with: propose the layout with no projection.
		pl, perr := ProposePlan(ctx, cat, st, id, fixed, emptyProjection(fixed), "policy", WithProposedAt(nowFunc(po.Now)()))
		if perr != nil {
			return binpack, "", nil, perr
		}
		return decidePlanned(ctx, st, pl, p, po)
	}
	if err != nil {
		return binpack, "", nil, err
	}
	return decidePlanned(ctx, st, *prop.Plan, p, po)
}

// decidePlanned turns a proposed plan into the compaction's layout: with
// approval.layout auto it is approved by "policy" and runs now; else it
// waits, and the compaction with it.
func decidePlanned(ctx context.Context, st *store.Store, pl Plan, p policy.Policy, po PlanOptions) (layout.Layout, string, *Plan, error) {
	binpack := layout.Layout{Strategy: layout.StrategyBinpack}
	switch pl.State {
	case PlanProposed:
		if p.Approval.Layout != policy.ApprovalAuto {
			return binpack, fmt.Sprintf("waits for approval of plan %s (%s, +%.1f pp files skipped): 'floe plan approve %s'; rewriting now would make it stale",
				pl.ID, pl.Layout, planGain(pl), pl.ID), &pl, nil
		}
		approved, err := ApprovePlan(ctx, st, pl.ID, "policy", nowFunc(po.Now)())
		if err != nil {
			return binpack, "", nil, err
		}
		return approved.Layout, fmt.Sprintf("plan %s (%s) approved by the policy (approval.layout: auto)", pl.ID, pl.Layout), &approved, nil
	case PlanApproved:
		return pl.Layout, fmt.Sprintf("plan %s was approved", pl.ID), &pl, nil
	}
	// Rejected, done, failed or stale for this very snapshot: decided before.
	return binpack, "", nil, nil
}

// emptyProjection stands for a plan proposed without queries to project
// with: the policy fixed the layout, no projection justifies it.
func emptyProjection(l layout.Layout) simulator.Projection {
	return simulator.Projection{Layout: l.String()}
}

func planGain(p Plan) float64 {
	if p.Projection.CurrentSkippedPct == nil {
		return p.Projection.SkippedPct
	}
	return p.Projection.SkippedPct - *p.Projection.CurrentSkippedPct
}

// declares reports whether the table declares layout l already: its sort
// order for a sort, its floe.layout property for the others.
func declares(state *lake.State, l layout.Layout) bool {
	md := state.Metadata
	if l.Strategy == layout.StrategySort {
		have, err := layout.Parse("sort(" + lake.SortOrderText(md.SortOrder(), md.CurrentSchema()) + ")")
		return err == nil && strings.EqualFold(have.String(), l.String())
	}
	have, err := layout.Parse(md.Properties().Get(rewriter.PropLayout, ""))
	return err == nil && strings.EqualFold(have.String(), l.String())
}
