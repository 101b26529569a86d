package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// Request is what a person, the scheduler or the API asks of one table:
// the one input of [Service.Decide], [Service.DryRun] and [Service.Run].
// The zero value of every field but Table asks for what the table's policy
// calls for (floe optimize TABLE, and the daemon).
type Request struct {
	Table lake.Ident
	// Steps are the steps asked for by name: a single-step verb (floe
	// compact, expire, orphans, rewrite-deletes, rewrite-manifests) names
	// its own. Nil
	// asks for every step, in run order. A step asked for by name needs
	// no further approval (approval.<step>: required means "only when a
	// person asks for it"); its trigger still decides whether it is due.
	Steps []string
	// Layout, when set, is a layout the caller typed (--layout): the
	// compaction writes it whatever the policy's layout key says and
	// whatever the triggers, and User typing it is recorded as the
	// approval of the layout change.
	Layout *layout.Layout
	// PlanID runs that approved plan: its layout, z-order key, quantiles
	// and file size. A plan that is not approved, or that the table has
	// moved past, does not run.
	PlanID string
	// Options are the steps' options the caller gives (flags); what they
	// leave zero comes from the policy and the table. Options.Compact's
	// Layout is ignored: Layout, PlanID or the policy decide it.
	Options StepOptions
	// Engine names the engine every step runs on (--engine), else the
	// policy's engine key decides per step.
	Engine string
	// Trigger is what started the run. Default: [TriggerManual].
	Trigger Trigger
	// User is who asked: a person's name, "floe serve", or the API's
	// caller. It is recorded with the run and with any approval the
	// request makes. Default: "unknown".
	User string
	// Holder is the table's lease when the caller (the scheduler) has
	// claimed it already; the run renews and releases it.
	Holder string
	// RunID runs the run [Service.Queue] recorded as queued, under that
	// id: its record is taken over when it starts, or ended when the run
	// is refused. Empty: a new run id.
	RunID string
	// Progress is told the compaction's progress.
	Progress func(done, total int, bytesDone, bytesTotal int64)
	// OnPlan, when set, is told each step's plan just before the step
	// does its work (the compaction's groups, the snapshots to expire, the
	// orphan files): a verb prints what is being done while it is.
	OnPlan func(step string, plan StepReport)
}

// StepOptions are the options of each step a request gives.
type StepOptions struct {
	Expire    rewriter.ExpireOptions
	Orphans   rewriter.OrphanOptions
	Compact   rewriter.CompactOptions
	Deletes   rewriter.DeleteRewriteOptions
	Manifests rewriter.ManifestOptions
	// Skip leaves steps out (--skip): they are recorded as skipped.
	Skip map[string]bool
	// SkipReasons say why a skipped step is left out, by step (the
	// scheduler's budget deferring a rewrite); a step without one is
	// recorded as left out by "--skip".
	SkipReasons map[string]string
}

// Decision is what floe decided to do to one table, and why: the same for
// a dry run and for the run that follows it on an unchanged table.
type Decision struct {
	Table   string  `json:"table"`
	Trigger Trigger `json:"trigger"`
	// By is who asked (Request.User).
	By string `json:"by"`
	// Steps say, for every step asked for, in run order, whether it runs
	// and why.
	Steps []StepDecision `json:"steps"`
	// Layout is the layout the compaction writes (or would).
	Layout layout.Layout `json:"layout"`
	// LayoutReason says where Layout comes from.
	LayoutReason string `json:"layout_reason"`
	// Approvals are the approvals this run rests on: of a layout change
	// (a plan's approver, a typed layout's user, the policy's
	// approval.layout: auto) and of steps a policy keeps for a person to
	// ask for. Nil when nothing needed one.
	Approvals []Approval `json:"approvals"`
	// Plan is the layout plan the run executes, waits for, or proposes;
	// nil when none is involved.
	Plan *PlanAction `json:"plan,omitempty"`

	// opts is what the run runs: every step's options, resolved.
	opts OptimizeOptions
	// table is the table as decided on.
	table *Table
}

// Approval is one approval a decision rests on.
type Approval struct {
	// Step is the step approved (compact for a layout change).
	Step string `json:"step"`
	// What was approved: "layout sort(ts)", "plan 3fa9c2d1e0b4",
	// "step expire".
	What string `json:"what"`
	// By is who approved it: the plan's approver, the user who typed the
	// layout or asked for the step, or "policy" (approval.<key>: auto).
	By string `json:"by"`
	// How says how it was given: "plan", "typed", "asked" or "policy".
	How string    `json:"how"`
	At  time.Time `json:"at,omitzero"`
}

// Plan actions of a [PlanAction].
const (
	// PlanRun runs the approved plan.
	PlanRun = "run"
	// PlanWait waits for a person to approve the proposed plan; the
	// compaction is held back, since a rewrite now would make the plan
	// stale.
	PlanWait = "wait"
	// PlanPropose stores the plan as proposed and waits for it.
	PlanPropose = "propose"
	// PlanProposeAndRun stores the plan, approved by the policy
	// (approval.layout: auto), and runs it.
	PlanProposeAndRun = "propose_and_run"
)

// PlanAction is what a decision does with a layout plan.
type PlanAction struct {
	// Action is PlanRun, PlanWait, PlanPropose or PlanProposeAndRun.
	Action string `json:"action"`
	// Plan is the stored plan, or the one the run would store (State
	// proposed, Stored false).
	Plan   Plan `json:"plan"`
	Stored bool `json:"stored"`
}

// Decide decides what a run of req would do, changing and storing nothing:
// the steps that run and why, the compaction's layout and the approvals it
// rests on. [Service.DryRun] adds each step's plan; [Service.Run] runs it.
func (s *Service) Decide(ctx context.Context, req Request) (Decision, error) {
	return s.decide(ctx, req, true)
}

// stepOrder is the order steps run in.
var stepOrder = []string{StepExpire, StepOrphans, StepCompact, StepDeletes, StepManifests}

// decide is [Service.Decide]; with dry false (a run deciding under its
// lease) an approved plan the table moved past is stored as stale.
func (s *Service) decide(ctx context.Context, req Request, dry bool) (Decision, error) {
	req, err := s.planTable(ctx, req)
	if err != nil {
		return Decision{Table: req.Table.String(), Steps: []StepDecision{}, Approvals: []Approval{}}, err
	}
	id := req.Table
	d := Decision{Table: id.String(), Trigger: req.Trigger, By: req.User, Steps: []StepDecision{}, Approvals: []Approval{}}
	if d.Trigger == "" {
		d.Trigger = TriggerManual
	}
	if d.By == "" {
		d.By = "unknown"
	}
	asked, err := askedSteps(req)
	if err == nil {
		err = checkSkip(req.Options.Skip)
	}
	if err != nil {
		return d, fmt.Errorf("decide %s: %w", id, rewriter.MarkInvalidOptions(err))
	}
	// A halted table takes no run, whoever asks: a person resumes it
	// first (see [Hold]).
	if err := s.checkHold(ctx, id); err != nil {
		return d, err
	}
	t, err := s.Table(ctx, id, HealthRequest{})
	if err != nil {
		return d, fmt.Errorf("decide %s: %w", id, err)
	}
	d.table = t
	p := t.Policy.Policy
	opts, err := s.stepOptions(req, d, p)
	if err != nil {
		return d, fmt.Errorf("decide %s: %w", id, err)
	}
	// A step asked for by name is approved by the asking; the policy's
	// switches (enabled.<step>) and triggers still hold.
	byName := req.Steps != nil
	gated := p
	if byName {
		for _, step := range asked {
			if approvalOf(p, step) == policy.ApprovalRequired {
				setApproval(&gated, step, policy.ApprovalAuto)
				d.Approvals = append(d.Approvals, Approval{Step: step, What: "step " + step, By: d.By, How: "asked", At: s.now().UTC()})
			}
		}
	}
	var all []StepDecision
	switch {
	case req.PlanID != "":
		all, err = s.decidePlan(ctx, t, req.PlanID, dry, &d, &opts)
	case req.Layout != nil:
		all = s.decideTyped(t, *req.Layout, gated, &d, &opts)
	case !slices.Contains(asked, StepCompact) || req.Options.Skip[StepCompact]:
		// No compaction: there is no layout to decide, and projecting the
		// candidates for it (seconds on a large workload) would be waste.
		all = Decide(t.Health, gated, t.HealthOptions.History)
	default:
		all, err = s.decideByPolicy(ctx, t, gated, dry, &d, &opts)
	}
	if err != nil {
		return d, fmt.Errorf("decide %s: %w", id, err)
	}
	if byName {
		// A person asking for a step by name wants it done whether or not
		// its trigger fired; what the step then does is its planner's
		// (the partitions that need compacting, the snapshots past the
		// cut-off). The policy's switches, a layout waiting for approval
		// and the approvals still hold.
		for i, sd := range all {
			if !sd.Run && sd.Status == StatusNotDue && slices.Contains(asked, sd.Step) {
				all[i] = StepDecision{Step: sd.Step, Run: true, Reason: "asked for by name (its trigger alone would not run it: " + sd.Reason + ")"}
			}
		}
	}
	for _, step := range asked {
		if dec, ok := decisionOf(all, step); ok {
			d.Steps = append(d.Steps, dec)
		} else {
			d.Steps = append(d.Steps, StepDecision{Step: step, Run: true, Reason: "asked for"})
		}
	}
	if !slices.ContainsFunc(d.Steps, func(sd StepDecision) bool { return sd.Step == StepCompact && sd.Run }) {
		// The approval of a layout change nobody makes is moot.
		d.Approvals = slices.DeleteFunc(d.Approvals, func(a Approval) bool { return a.Step == StepCompact && a.How != "asked" })
	}
	// A tree layout with no plan (the policy's, a typed one, the table's
	// own) routes rows by the tree the table records; the options carry it
	// whether or not the compaction is due, as the run checks them all.
	if err := recordedTree(t, &opts.Compact); err != nil {
		return d, fmt.Errorf("decide %s: %w", id, err)
	}
	d.Layout = opts.Compact.Layout
	opts.Decisions = d.Steps
	opts.Steps = asked
	d.opts = opts
	return d, nil
}

// planTable fills req.Table from req.PlanID's plan when the request names
// no table (floe optimize --plan ID), and checks a table it names is the
// plan's.
func (s *Service) planTable(ctx context.Context, req Request) (Request, error) {
	if req.PlanID == "" {
		return req, nil
	}
	if err := s.needStore("run plan " + req.PlanID); err != nil {
		return req, err
	}
	p, err := GetPlan(ctx, s.store, req.PlanID)
	if err != nil {
		return req, err
	}
	planned, err := lake.ParseIdent(p.Table, s.cfg.CatalogNames(), s.cfg.DefaultCatalog)
	if err != nil {
		return req, fmt.Errorf("plan %s: table %s: %w", p.ID, p.Table, err)
	}
	if req.Table.Name != "" && !strings.EqualFold(req.Table.String(), planned.String()) {
		return req, rewriter.MarkInvalidOptions(fmt.Errorf("plan %s is for %s, not %s", p.ID, planned, req.Table))
	}
	req.Table = planned
	return req, nil
}

// Validate checks what a request asks for without reading the table: the
// step names, the steps to skip, and that a plan is not combined with a
// layout or with skipping the compaction. A verb calls it while parsing
// flags, so these are usage errors; [Service.Decide] checks the same.
func (r Request) Validate() error {
	if _, err := askedSteps(r); err != nil {
		return err
	}
	return checkSkip(r.Options.Skip)
}

// checkSkip checks the names of the steps to skip.
func checkSkip(skip map[string]bool) error {
	for step := range skip {
		if !slices.Contains(stepOrder, step) {
			return fmt.Errorf("skip %q: want %s", step, strings.Join(stepOrder, ", "))
		}
	}
	return nil
}

// askedSteps checks req's steps and returns them in run order.
func askedSteps(req Request) ([]string, error) {
	if req.PlanID != "" && req.Layout != nil {
		return nil, errors.New("a plan and a layout are mutually exclusive: the plan fixes the layout")
	}
	if req.Steps == nil {
		if req.PlanID != "" && req.Options.Skip[StepCompact] {
			return nil, fmt.Errorf("plan %s: the %s step cannot be skipped when running a plan", req.PlanID, StepCompact)
		}
		return slices.Clone(stepOrder), nil
	}
	var out []string
	for _, step := range stepOrder {
		if slices.Contains(req.Steps, step) {
			out = append(out, step)
		}
	}
	for _, step := range req.Steps {
		if !slices.Contains(stepOrder, step) {
			return nil, fmt.Errorf("unknown step %q: want %s", step, strings.Join(stepOrder, ", "))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no step asked for")
	}
	if (req.PlanID != "" || req.Layout != nil) && !slices.Contains(out, StepCompact) {
		return nil, fmt.Errorf("a layout is written by the %s step, which was not asked for", StepCompact)
	}
	return out, nil
}

// stepOptions resolves the request's step options: the caller's, then
// the policy's ([StepDefaults]), with the service's clock, logger, engines
// and catalogs.
func (s *Service) stepOptions(req Request, d Decision, p policy.Policy) (OptimizeOptions, error) {
	so := req.Options
	skip := map[string]bool{}
	for k, v := range so.Skip {
		skip[k] = v
	}
	if o := strings.ToLower(strings.TrimSpace(req.Engine)); o != "" && o != rewriter.NativeName {
		if _, ok := s.engines.Config(o); !ok {
			return OptimizeOptions{}, rewriter.MarkInvalidOptions(fmt.Errorf("engine %s: no such engine (engines: %s)", req.Engine, strings.Join(s.engines.Names(), ", ")))
		}
	}
	opts := StepDefaults(p, OptimizeOptions{
		Expire: so.Expire, Orphans: so.Orphans, Compact: so.Compact, Deletes: so.Deletes, Manifests: so.Manifests,
		Skip: skip, SkipReasons: so.SkipReasons, Now: s.now, Logger: s.log, Progress: req.Progress, OnPlan: req.OnPlan, Trigger: d.Trigger,
		Engine:   EngineSelect{Engines: s.engines, Override: req.Engine},
		Runner:   s.runner,
		LeaseTTL: s.leaseTTL,
		Holder:   req.Holder,
		Catalogs: s.Catalogs(),
		User:     d.By,
	})
	opts.Compact.Layout = layout.Layout{Strategy: layout.StrategyBinpack}
	var errs []error
	for _, err := range []error{opts.Expire.Validate(), opts.Orphans.Validate(), opts.Compact.Validate(), opts.Deletes.Validate(), opts.Manifests.Validate()} {
		if err != nil {
			errs = append(errs, rewriter.MarkInvalidOptions(err))
		}
	}
	return opts, errors.Join(errs...)
}

// decidePlan decides a run of approved plan id: the compaction writes the
// plan's layout; the other steps run unless the policy turns them off.
func (s *Service) decidePlan(ctx context.Context, t *Table, id string, dry bool, d *Decision, opts *OptimizeOptions) ([]StepDecision, error) {
	if err := s.needStore("run plan " + id); err != nil {
		return nil, err
	}
	opts.PlanID = id
	pl, resolved, err := planRunOptions(ctx, t.Catalog, s.store, t.Ident, *opts, dry)
	if err != nil {
		return nil, err
	}
	*opts = resolved
	d.Plan = &PlanAction{Action: PlanRun, Plan: pl, Stored: true}
	d.LayoutReason = fmt.Sprintf("plan %s", pl.ID)
	d.Approvals = append(d.Approvals, Approval{Step: StepCompact, What: "plan " + pl.ID + " (" + pl.Layout.String() + ")", By: pl.DecidedBy, How: "plan", At: pl.DecidedAt})
	out := Disabled(t.Policy.Policy)
	return append(out, StepDecision{Step: StepCompact, Run: true, Reason: fmt.Sprintf("plan %s was approved by %s", pl.ID, orUnknown(pl.DecidedBy))}), nil
}

// decideTyped decides a run into a layout the caller typed: the
// compaction writes it, the other steps run unless the policy turns them
// off. Typing it approves the layout change.
func (s *Service) decideTyped(t *Table, l layout.Layout, p policy.Policy, d *Decision, opts *OptimizeOptions) []StepDecision {
	opts.Compact.Layout = l
	d.LayoutReason = "typed by " + d.By
	if l.Strategy != layout.StrategyBinpack && !declares(t.State, l) {
		d.Approvals = append(d.Approvals, Approval{Step: StepCompact, What: "layout " + l.String(), By: d.By, How: "typed", At: s.now().UTC()})
	}
	return Disabled(p)
}

// decideByPolicy decides what the table's policy calls for: an approved
// plan runs (approving it was the decision); otherwise [Decide] says which
// steps are due, and the policy's layout key the layout (see
// [Service.policyLayout]).
func (s *Service) decideByPolicy(ctx context.Context, t *Table, p policy.Policy, dry bool, d *Decision, opts *OptimizeOptions) ([]StepDecision, error) {
	steps := Decide(t.Health, p, s.history(t, opts.Expire))
	if s.store != nil && p.Enabled.Compact {
		approved, err := ListPlans(ctx, s.store, PlanFilter{Table: t.Ident.String(), State: PlanApproved})
		if err != nil {
			return nil, err
		}
		if len(approved) > 0 {
			ps, err := s.decidePlan(ctx, t, approved[0].ID, dry, d, opts)
			if err != nil {
				return nil, err
			}
			compact, _ := decisionOf(ps, StepCompact)
			return replaceDecision(steps, compact), nil
		}
	}
	l, why, act, err := s.policyLayout(ctx, t, p, opts)
	if err != nil {
		return nil, err
	}
	opts.Compact.Layout = l
	d.LayoutReason = why
	d.Plan = act
	compact, _ := decisionOf(steps, StepCompact)
	switch {
	case act != nil && (act.Action == PlanWait || act.Action == PlanPropose):
		compact = StepDecision{Step: StepCompact, Status: StatusSkipped, Reason: why}
	case act != nil && (act.Action == PlanRun || act.Action == PlanProposeAndRun) && compact.Status != StatusSkipped:
		compact = StepDecision{Step: StepCompact, Run: true, Reason: why}
		opts.PlanID = act.Plan.ID
		d.Approvals = append(d.Approvals, planApproval(act, s.now()))
	case why != "" && l.Strategy != layout.StrategyBinpack && compact.Status != StatusSkipped && p.Layout != policy.LayoutAuto:
		// A fixed layout the table is not in yet, which the policy
		// approves (approval.layout: auto): due whatever the file sizes.
		// (With layout: auto and no plan, the layout is the one the table
		// declares already: the triggers decide, as for bin-pack.)
		compact = StepDecision{Step: StepCompact, Run: true, Reason: why}
		d.Approvals = append(d.Approvals, Approval{Step: StepCompact, What: "layout " + l.String(), By: "policy", How: "policy", At: s.now().UTC()})
	}
	return replaceDecision(steps, compact), nil
}

func planApproval(act *PlanAction, now time.Time) Approval {
	if act.Action == PlanProposeAndRun || act.Plan.DecidedBy == "policy" {
		return Approval{Step: StepCompact, What: "plan " + act.Plan.ID + " (" + act.Plan.Layout.String() + ")", By: "policy", How: "policy", At: now.UTC()}
	}
	return Approval{Step: StepCompact, What: "plan " + act.Plan.ID + " (" + act.Plan.Layout.String() + ")", By: act.Plan.DecidedBy, How: "plan", At: act.Plan.DecidedAt}
}

func replaceDecision(ds []StepDecision, d StepDecision) []StepDecision {
	out := slices.Clone(ds)
	for i := range out {
		if out[i].Step == d.Step {
			out[i] = d
		}
	}
	return out
}

// policyLayout decides the compaction's layout by the policy's layout key,
// storing nothing: binpack for none (or compaction off); for auto, the
// best candidate projected from the collected queries when it gains
// enough, else the layout the table declares ([keepDeclared]); for a fixed layout, that layout. A layout the table declares
// already is simply written; a change is written when the policy approves
// it (approval.layout: auto), else it becomes a plan that waits for a
// person (proposed now if it is not stored yet). why says what decided,
// and is empty for plain binpack.
func (s *Service) policyLayout(ctx context.Context, t *Table, p policy.Policy, opts *OptimizeOptions) (layout.Layout, string, *PlanAction, error) {
	binpack := layout.Layout{Strategy: layout.StrategyBinpack}
	if !p.Enabled.Compact || p.Layout == policy.LayoutNone || p.Layout == "" {
		return binpack, "", nil, nil
	}
	po := PlanOptions{MinGainPP: s.cfg.MinGainPP(), By: "policy", Now: s.now, Policy: &p,
		Project: ProjectOptions{TargetFileSizeBytes: opts.Compact.TargetFileSizeBytes, ZOrderMode: opts.Compact.ZOrderMode, Workload: WorkloadOptions{Since: DefaultQueryWindow, Now: s.now}, TreeCache: s.trees}}
	var cand *Plan
	if p.Layout == policy.LayoutAuto {
		if s.store == nil {
			return binpack, "layout: auto needs collected queries, and there is no state store", nil, nil
		}
		_, c, err := chooseBest(ctx, s.store, t.State, po)
		if errors.Is(err, ErrNoQueries) {
			return keepDeclared(t.State, "layout: auto, and no queries collected for the table yet")
		}
		if err != nil {
			return binpack, "", nil, err
		}
		if c == nil {
			return keepDeclared(t.State, "layout: auto, and no candidate gains enough over the current layout")
		}
		cand = c
	} else {
		fixed, err := layout.Parse(p.Layout)
		if err != nil {
			return binpack, "", nil, fmt.Errorf("policy layout: %w", err)
		}
		if declares(t.State, fixed) {
			return fixed, fmt.Sprintf("the policy's layout %s, which the table declares", fixed), nil, nil
		}
		if p.Approval.Layout == policy.ApprovalAuto {
			return fixed, fmt.Sprintf("the policy's layout %s (approval.layout: auto); the table is not in it yet", fixed), nil, nil
		}
		po.Project.Layouts, po.Force = []layout.Layout{fixed}, true
		var (
			c    *Plan
			prop Proposal
		)
		if s.store != nil {
			prop, c, err = chooseBest(ctx, s.store, t.State, po)
		} else {
			err = ErrNoQueries
		}
		if err == nil && prop.Choice.Loses {
			// No plan that loses, by any path: the policy's layout is
			// projected to make the table worse than it is.
			ch := prop.Choice
			return binpack, fmt.Sprintf("the policy's layout %s is projected to skip %.1f%% of files vs %.1f%% today (%.1f pp worse, error ±%.1f pp): not proposed; change the policy's layout",
				fixed, ch.Best.SkippedPct, ch.Current.SkippedPct, -ch.GainPP, ch.Best.ErrorPP), nil, nil
		}
		if errors.Is(err, ErrNoQueries) {
			// No queries to project with: the layout with no projection.
			pl, perr := newPlan(t.State.Metadata, t.Ident, fixed, emptyProjection(fixed), "policy", WithProposedAt(s.now()))
			if perr != nil {
				return binpack, "", nil, perr
			}
			c, err = &pl, nil
		}
		if err != nil {
			return binpack, "", nil, err
		}
		cand = c
	}
	return s.planned(ctx, *cand, p)
}

// keepDeclared is the compaction's layout when layout: auto finds nothing
// better (why): the layout the table declares ([keptLayout]), so that
// appended rows are sorted or routed into it; bin-pack for a table that
// declares none, and for a tree whose record no longer fits the schema
// (health says the table needs a new plan).
func keepDeclared(state *lake.State, why string) (layout.Layout, string, *PlanAction, error) {
	binpack := layout.Layout{Strategy: layout.StrategyBinpack}
	l, _, err := keptLayout(state)
	switch {
	case err != nil:
		return binpack, fmt.Sprintf("%s; %v (re-plan it: floe plan %s)", why, err, ShellArg(state.Ident.String())), nil, nil
	case l.Strategy == layout.StrategyBinpack:
		return binpack, why, nil, nil
	}
	return l, fmt.Sprintf("%s: keeps the layout the table declares, %s", why, l), nil, nil
}

// planned turns the candidate plan of a policy's layout into the
// compaction's layout, by the state of its stored copy (if any) and the
// policy's approval.layout.
func (s *Service) planned(ctx context.Context, cand Plan, p policy.Policy) (layout.Layout, string, *PlanAction, error) {
	binpack := layout.Layout{Strategy: layout.StrategyBinpack}
	auto := p.Approval.Layout == policy.ApprovalAuto
	stored := false
	if s.store != nil {
		got, err := GetPlan(ctx, s.store, cand.ID)
		switch {
		case err == nil:
			cand, stored = got, true
		case !errors.Is(err, store.ErrNotFound):
			return binpack, "", nil, err
		}
	}
	act := &PlanAction{Plan: cand, Stored: stored}
	gain := fmt.Sprintf("%s, +%.1f pp files skipped", cand.Layout, planGain(cand))
	switch cand.State {
	case PlanProposed:
		if auto {
			act.Action = PlanProposeAndRun
			return cand.Layout, fmt.Sprintf("plan %s (%s) approved by the policy (approval.layout: auto)", cand.ID, gain), act, nil
		}
		act.Action = PlanWait
		if !stored {
			act.Action = PlanPropose
		}
		return binpack, fmt.Sprintf("waits for approval of plan %s (%s): 'floe plan approve %s'; rewriting now would make it stale",
			cand.ID, gain, cand.ID), act, nil
	case PlanApproved:
		act.Action = PlanRun
		return cand.Layout, fmt.Sprintf("plan %s was approved by %s", cand.ID, orUnknown(cand.DecidedBy)), act, nil
	}
	// Rejected, done, failed or stale for this very snapshot: decided before.
	return binpack, fmt.Sprintf("plan %s for this snapshot is %s", cand.ID, cand.State), nil, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// approvalOf is the policy's approval key of step.
func approvalOf(p policy.Policy, step string) string {
	switch step {
	case StepExpire:
		return p.Approval.Expire
	case StepOrphans:
		return p.Approval.Orphans
	case StepCompact:
		return p.Approval.Binpack
	case StepDeletes:
		return p.Approval.Deletes
	case StepManifests:
		return p.Approval.Manifests
	}
	return ""
}

func setApproval(p *policy.Policy, step, v string) {
	switch step {
	case StepExpire:
		p.Approval.Expire = v
	case StepOrphans:
		p.Approval.Orphans = v
	case StepCompact:
		p.Approval.Binpack = v
	case StepDeletes:
		p.Approval.Deletes = v
	case StepManifests:
		p.Approval.Manifests = v
	}
}
