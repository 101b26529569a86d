package control

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// Choice is the outcome of [ChoosePlan]: the best candidate, the current
// layout it is compared with, and whether it gains anything.
type Choice struct {
	// Current is the projection of the table as it is (zero when current
	// was not projected).
	Current simulator.Projection
	// Best is the candidate with the most files skipped; a tie goes to the
	// one that rewrites fewer bytes.
	Best simulator.Projection
	// Gain says Best is projected to skip more files than Current. Without
	// a gain a rewrite would cost its bytes and skip no more files, so no
	// plan is proposed unless forced.
	Gain bool
}

// Reason says, for a choice without gain, why no plan is proposed for
// table; "" when there is a gain.
func (c Choice) Reason(table string) string {
	if c.Gain {
		return ""
	}
	return fmt.Sprintf("no plan proposed for %s: the best candidate, %s, is not projected to skip more files than the current layout (%.1f%% vs %.1f%%); --force proposes it anyway",
		table, c.Best.Layout, c.Best.SkippedPct, c.Current.SkippedPct)
}

// ChoosePlan picks, among the projections of every layout but current, the
// one that skips the most files (a tie going to the fewer bytes rewritten),
// and compares it with current: the "no gain, no plan" rule. It returns
// [ErrNothingToPlan] when only current was projected.
func ChoosePlan(projs []simulator.Projection) (Choice, error) {
	var c Choice
	found := false
	for _, p := range projs {
		if p.Layout == string(layout.StrategyCurrent) {
			c.Current = p
			continue
		}
		if !found || p.SkippedPct > c.Best.SkippedPct || (p.SkippedPct == c.Best.SkippedPct && p.RewriteBytes < c.Best.RewriteBytes) {
			c.Best, found = p, true
		}
	}
	if !found {
		return c, ErrNothingToPlan
	}
	c.Gain = c.Best.SkippedPct > c.Current.SkippedPct
	return c, nil
}

// PlanOptions configure [PlanBest].
type PlanOptions struct {
	// Project says what to project; the current layout is always added as
	// the baseline.
	Project ProjectOptions
	// By is who proposes the plan.
	By string
	// Force proposes the best candidate even without a gain.
	Force bool
	// Now is the clock, for the plan's creation time. Default: time.Now.
	Now func() time.Time
}

// Proposal is what [PlanBest] did: the projections, the choice made from
// them and, when one was proposed, the plan.
type Proposal struct {
	Projections Projections
	Choice      Choice
	// Plan is the proposed (or already stored) plan; nil when there was
	// nothing to gain and the proposal was not forced.
	Plan *Plan
}

// PlanBest is the whole planning use case for one table: [Project] the
// candidates with current as the baseline, [ChoosePlan] the best, and — if
// it gains anything, or opts.Force — [ProposePlan] it. No gain is not an
// error: the table is fine as it is, and Proposal.Plan is nil.
func PlanBest(ctx context.Context, cat catalog.Catalog, st *store.Store, state *lake.State, opts PlanOptions) (Proposal, error) {
	po := opts.Project
	po.WithCurrent = true
	var out Proposal
	var err error
	if out.Projections, err = Project(ctx, st, state, po); err != nil {
		return out, err
	}
	id := state.Ident
	if out.Choice, err = ChoosePlan(out.Projections.Projections); err != nil {
		return out, fmt.Errorf("plan %s: %w", id, err)
	}
	if !out.Choice.Gain && !opts.Force {
		return out, nil
	}
	layout, err := layout.Parse(out.Choice.Best.Layout)
	if err != nil {
		return out, fmt.Errorf("plan %s: %w", id, err)
	}
	p, err := ProposePlan(ctx, cat, st, id, layout, out.Choice.Best, opts.By,
		WithBaseline(out.Choice.Current), WithZOrderMode(out.Projections.ZOrderMode), WithProposedAt(nowFunc(opts.Now)()))
	if err != nil {
		return out, err
	}
	out.Plan = &p
	return out, nil
}
