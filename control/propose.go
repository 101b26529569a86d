package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// DefaultMinGainPP is the least gain, in percentage points of files
// skipped, that the CLI's plan asks of a candidate over the current layout
// (floe.yaml plan.min_gain_pp, FLOE_PLAN_MIN_GAIN_PP, plan --min-gain): a
// rewrite reads and writes every byte of the partitions it touches, and a
// gain of a point or two is within what a projection's sample can be off
// by.
const DefaultMinGainPP = config.DefaultMinGainPP

// ChooseOptions are the rules of [ChoosePlan]. The zero value asks only
// for a positive gain.
type ChooseOptions struct {
	// MinGainPP is the least gain in percentage points of files skipped a
	// candidate needs over the current layout; any positive gain when zero.
	MinGainPP float64
	// State, when set, bounds the files a candidate may be projected to
	// write: [FileLimit] at the candidate's target file size (its layout's,
	// else the table's).
	State *lake.State
	// Cost, when set, counts what engines pay ([CostBasis.Of]): a
	// candidate that does not repay its rewrite within Cost.MaxPayback is
	// not chosen while another does, and a candidate that skips no more
	// files than today but reads fewer of them (a compaction of small
	// files) gains when its saving in files opened is beyond its error
	// and repays its rewrite — unless it skips fewer files than today
	// beyond its error: no plan that loses, whatever it saves.
	Cost *CostBasis
}

// Choice is the outcome of [ChoosePlan]: the best candidate, the current
// layout it is compared with, and whether it gains enough.
type Choice struct {
	// Current is the projection of the table as it is (zero when current
	// was not projected).
	Current simulator.Projection
	// Best is the candidate with the most files skipped among those within
	// their file limit (all of them when none is); a tie goes to the one
	// that rewrites fewer bytes.
	Best simulator.Projection
	// GainPP is Best's files skipped less Current's, in percentage points.
	GainPP float64
	// MinGainPP is the gain asked for ([ChooseOptions.MinGainPP]).
	MinGainPP float64
	// FileLimit is the most files Best may be projected to write; zero
	// when not bounded.
	FileLimit int
	// Gain says Best is projected to skip more files than Current, by at
	// least MinGainPP, without writing more than FileLimit files. (A gain
	// inside the error bar still counts: the bar is wide at a file-count
	// edge, and the run checks the projection afterwards, LayoutCheck.)
	// Without a gain a rewrite would cost its bytes for too little, so no
	// plan is proposed unless forced.
	Gain bool
	// ByCost says Best was chosen for the files it saves opening, not for
	// files skipped ([ChooseOptions.Cost]): it skips no more than MinGainPP
	// over Current, but each query opens fewer files.
	ByCost bool
	// Cost is Best's cost/benefit against Current; nil without
	// [ChooseOptions.Cost].
	Cost *Cost
	// PaybackDays is the longest payback allowed (Cost's max payback);
	// zero without [ChooseOptions.Cost].
	PaybackDays float64
	// Loses says Best is projected to skip fewer files than Current by
	// more than its error bar: a rewrite into it would make the table
	// worse, and no path proposes it by itself (a policy's fixed layout
	// included); only a person's --force does.
	Loses bool
}

// Reason says, for a choice without gain, why no plan is proposed for
// table; "" when there is a gain.
func (c Choice) Reason(table string) string {
	switch {
	case c.Gain:
		return ""
	case c.Cost != nil && (c.Cost.PaybackDays == nil || *c.Cost.PaybackDays > c.PaybackDays) && c.GainPP > 0:
		never := "never repays its rewrite"
		if c.Cost.PaybackDays != nil {
			never = fmt.Sprintf("repays its rewrite in %.1f days", *c.Cost.PaybackDays)
		}
		return fmt.Sprintf("no plan proposed for %s: no candidate repays its rewrite within max_payback %.1f days (the best, %s, %s); --force proposes it anyway",
			table, c.PaybackDays, c.Best.Layout, never)
	case c.FileLimit > 0 && c.Best.FilesAfter > c.FileLimit:
		return fmt.Sprintf("no plan proposed for %s: every candidate would write more data files than the table has today and its bytes fill at the target size (the best, %s, %d → %d files, limit %d); --force proposes it anyway",
			table, c.Best.Layout, c.Best.FilesBefore, c.Best.FilesAfter, c.FileLimit)
	case c.GainPP > 0:
		return fmt.Sprintf("no plan proposed for %s: the best candidate, %s, is projected to skip %.1f%% of files vs %.1f%% today, a gain of %.1f pp, below the minimum of %.1f pp (--min-gain); --force proposes it anyway",
			table, c.Best.Layout, c.Best.SkippedPct, c.Current.SkippedPct, c.GainPP, c.MinGainPP)
	case c.Loses:
		return fmt.Sprintf("no plan proposed for %s: the best candidate, %s, is projected to skip %.1f%% of files vs %.1f%% today, %.1f pp worse (error ±%.1f pp): rewriting into it would make the table worse; --force proposes it anyway",
			table, c.Best.Layout, c.Best.SkippedPct, c.Current.SkippedPct, -c.GainPP, c.Best.ErrorPP)
	}
	return fmt.Sprintf("no plan proposed for %s: the best candidate, %s, is not projected to skip more files than the current layout (%.1f%% vs %.1f%%); --force proposes it anyway",
		table, c.Best.Layout, c.Best.SkippedPct, c.Current.SkippedPct)
}

// FileLimit is the most data files a rewrite of the table in st at
// targetFileSizeBytes (zero: the table's own target) may be projected to
// leave: the files it has today, or, when more, what its bytes fill at the
// target, partition by partition (the sum of ⌈partition bytes / target⌉).
// A layout projected past it would leave more, smaller files than both —
// as one that compresses worse than today's does — and is not chosen.
func FileLimit(st *lake.State, targetFileSizeBytes int64) int {
	if targetFileSizeBytes <= 0 {
		targetFileSizeBytes = st.TargetFileSizeBytes(simulator.DefaultTargetFileSizeBytes)
	}
	bytes := map[string]int64{}
	for _, f := range st.DataFiles {
		bytes[f.PartitionKey] += f.SizeBytes
	}
	fill := 0
	for _, b := range bytes {
		fill += int((b + targetFileSizeBytes - 1) / targetFileSizeBytes)
	}
	return max(len(st.DataFiles), fill)
}

// ChoosePlan picks, among the projections of every layout but current, the
// one that skips the most files (a tie going to the fewer bytes rewritten)
// among those within their file limit, and compares it with current: the
// "no gain, no plan" rule, with opts' minimum gain. It returns
// [ErrNothingToPlan] when only current was projected.
func ChoosePlan(projs []simulator.Projection, opts ChooseOptions) (Choice, error) {
	c := Choice{MinGainPP: max(opts.MinGainPP, 0)}
	for _, p := range projs {
		if p.Layout.Strategy == layout.StrategyCurrent {
			c.Current = p
		}
	}
	limit := func(p simulator.Projection) int {
		if opts.State == nil {
			return 0
		}
		return FileLimit(opts.State, p.Layout.TargetFileSizeBytes)
	}
	pays := func(p simulator.Projection) bool {
		return opts.Cost == nil || opts.Cost.Pays(opts.Cost.Of(c.Current, p))
	}
	within := func(p simulator.Projection) bool { n := limit(p); return (n == 0 || p.FilesAfter <= n) && pays(p) }
	better := func(p, than simulator.Projection) bool {
		return p.SkippedPct > than.SkippedPct || (p.SkippedPct == than.SkippedPct && p.RewriteBytes < than.RewriteBytes)
	}
	found, foundWithin := false, false
	for _, p := range projs {
		if p.Layout.Strategy == layout.StrategyCurrent {
			continue
		}
		in := within(p)
		switch {
		case !found, in && !foundWithin, in == foundWithin && better(p, c.Best):
			c.Best, found, foundWithin = p, true, in
		}
	}
	if !found {
		return c, ErrNothingToPlan
	}
	c.setBest(c.Best, limit, opts.Cost)
	c.Gain = foundWithin && c.GainPP > 0 && c.GainPP >= c.MinGainPP
	c.Loses = c.GainPP < 0 && -c.GainPP > c.Best.ErrorPP
	if c.Gain || opts.Cost == nil {
		return c, nil
	}
	// No candidate skips enough more files: the one that saves the most
	// by opening fewer files, if that saving is beyond its error and
	// repays its rewrite.
	var byCost *simulator.Projection
	var most float64
	for i, p := range projs {
		if p.Layout.Strategy == layout.StrategyCurrent || !within(p) {
			continue
		}
		if loses := c.Current.SkippedPct - p.SkippedPct; loses > p.ErrorPP {
			continue // no plan that loses, whatever it saves
		}
		k := opts.Cost.Of(c.Current, p)
		if k.FilesSavedPerQuery <= p.ErrorPP/100*float64(p.FilesAfter) || k.SavedBytesPerDay <= 0 {
			continue
		}
		if byCost == nil || k.SavedBytesPerDay > most {
			byCost, most = &projs[i], k.SavedBytesPerDay
		}
	}
	if byCost != nil {
		c.setBest(*byCost, limit, opts.Cost)
		c.Gain, c.ByCost, c.Loses = true, true, false
	}
	return c, nil
}

// setBest makes p the choice's best candidate, with its file limit, gain
// and cost.
func (c *Choice) setBest(p simulator.Projection, limit func(simulator.Projection) int, basis *CostBasis) {
	c.Best = p
	c.FileLimit = limit(p)
	c.GainPP = p.SkippedPct - c.Current.SkippedPct
	if basis != nil {
		k := basis.Of(c.Current, p)
		c.Cost, c.PaybackDays = &k, basis.maxPaybackDays()
	}
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
	// MinGainPP is the least gain over the current layout, in percentage
	// points of files skipped ([ChooseOptions.MinGainPP]); the CLI passes
	// floe.yaml's plan.min_gain_pp, [DefaultMinGainPP] unless set. Zero
	// asks only for a positive gain.
	MinGainPP float64
	// Now is the clock, for the plan's creation time. Default: time.Now.
	Now func() time.Time
	// Policy, when set, is the table's effective policy: the candidates'
	// cost/benefit is reckoned with its cost model and max_payback over
	// the collected queries' window ([NewCostBasis], as the report does),
	// and [ChoosePlan] counts it ([ChooseOptions.Cost]). Not used with a
	// workload file, whose queries have no rate.
	Policy *policy.Policy
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
// candidates with current as the baseline, [ChoosePlan] the best (by
// opts.MinGainPP, within the table's [FileLimit]), and — if it gains
// enough, or opts.Force — [ProposePlan] it. No gain is not an
// error: the table is fine as it is, and Proposal.Plan is nil.
func PlanBest(ctx context.Context, cat catalog.Catalog, st *store.Store, state *lake.State, opts PlanOptions) (Proposal, error) {
	out, cand, err := chooseBest(ctx, st, state, opts)
	if err != nil || cand == nil {
		return out, err
	}
	p, err := storePlan(ctx, st, *cand)
	if err != nil {
		return out, err
	}
	out.Plan = &p
	return out, nil
}

// chooseBest is [PlanBest] without the store write: the projections, the
// choice, and the plan it would propose (nil when the best candidate does
// not gain enough and opts.Force is not set).
func chooseBest(ctx context.Context, st *store.Store, state *lake.State, opts PlanOptions) (Proposal, *Plan, error) {
	po := opts.Project
	po.WithCurrent = true
	var out Proposal
	var err error
	if out.Projections, err = Project(ctx, st, state, po); err != nil {
		return out, nil, err
	}
	id := state.Ident
	co := ChooseOptions{MinGainPP: opts.MinGainPP, State: state}
	if opts.Policy != nil && po.Workload.SQL == nil {
		basis, err := NewCostBasis(ctx, st, state, *opts.Policy, len(out.Projections.Workload.Queries), po.Workload.Since, nowFunc(po.Workload.Now)())
		if err != nil {
			return out, nil, fmt.Errorf("plan %s: %w", id, err)
		}
		co.Cost = &basis
	}
	if out.Choice, err = ChoosePlan(out.Projections.Projections, co); err != nil {
		return out, nil, fmt.Errorf("plan %s: %w", id, err)
	}
	if !out.Choice.Gain && !opts.Force {
		return out, nil, nil
	}
	p, err := newPlan(state.Metadata, id, out.Choice.Best.Layout, out.Choice.Best, opts.By,
		WithBaseline(out.Choice.Current), WithZOrderMode(out.Projections.ZOrderMode), WithProposedAt(nowFunc(opts.Now)()))
	if err != nil {
		return out, nil, err
	}
	if st != nil && state.Table != nil {
		// The same layout waiting in a plan made at an earlier snapshot
		// that still holds (only appends since, or a manifest rewrite) is
		// that plan, not a new one for every new snapshot.
		pending, ok, err := pendingPlan(ctx, st, state.Table, p, nowFunc(opts.Now)())
		if err != nil {
			return out, nil, fmt.Errorf("plan %s: %w", id, err)
		}
		if ok {
			p = pending
		}
	}
	return out, &p, nil
}

// pendingPlan is the newest stored plan of cand's table with cand's layout
// and z-order key that waits (proposed or approved) and still describes
// the table tbl as it is ([CheckPlan]); cand itself when it is stored. A
// proposed plan that no longer holds is marked stale on the way (decided by "floe", at now),
// so that nobody is asked to approve it.
func pendingPlan(ctx context.Context, st *store.Store, tbl *table.Table, cand Plan, now time.Time) (Plan, bool, error) {
	plans, err := ListPlans(ctx, st, PlanFilter{Table: cand.Table})
	if err != nil {
		return Plan{}, false, err
	}
	for _, pl := range plans {
		if (pl.State != PlanProposed && pl.State != PlanApproved) ||
			!strings.EqualFold(pl.Layout.String(), cand.Layout.String()) || pl.Projection.ZOrderMode != cand.Projection.ZOrderMode {
			continue
		}
		reason, err := CheckPlan(ctx, tbl, pl)
		if err != nil {
			return Plan{}, false, err
		}
		if reason == "" {
			return pl, true, nil
		}
		if pl.State == PlanProposed {
			pl.DecidedBy, pl.DecidedAt = "floe", now
			if err := transitionPlan(ctx, st, pl, PlanProposed, PlanStale); err != nil && !errors.Is(err, store.ErrStateConflict) {
				return Plan{}, false, fmt.Errorf("mark plan %s stale: %w", pl.ID, err)
			}
		}
	}
	return Plan{}, false, nil
}
