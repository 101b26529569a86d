package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// RunResult is what [Service.Run] did: the decision it ran and the
// recorded run (whose ID is empty when the request was refused before a
// run started).
type RunResult struct {
	Table    string   `json:"table"`
	Decision Decision `json:"decision"`
	Run      Run      `json:"run"`
}

// DryRun is the run of req without the doing: the same decision
// ([Service.Decide]: triggers, approvals, layout: auto, budgets), and the
// plan of every step that would run, made against the table as it is now
// with the planners the run uses. It changes and stores nothing: a plan the
// run would propose is shown as such (Decision.Plan, Stored false).
func (s *Service) DryRun(ctx context.Context, req Request) (DryRun, error) {
	d, err := s.decide(ctx, req, true)
	if err != nil {
		return DryRun{Table: d.Table, DryRun: true, Steps: []DryRunStep{}}, err
	}
	dry, err := PlanOptimize(ctx, d.table.Catalog, s.store, d.table.Ident, d.opts)
	dry.Decision = &d
	return dry, err
}

// Run runs req on its table: it claims the table's lease (unless
// req.Holder holds it), decides under it ([Service.Decide]), stores the
// plan the decision proposes (and approves it when the policy does),
// records the run — who asked, the approvals it rests on, every step with
// its before/after health and report — and releases the lease. A request
// the table cannot take (options, a missing table, a plan that is not
// approved or is stale, a table another run holds or that is halted) is
// refused before a run is recorded: RunResult.Run then has no ID. A
// queued run (req.RunID, see [Service.Queue]) has its record already: a
// refusal ends it, cancelled when the table was busy or halted or ctx
// ended, failed otherwise, with the refusal as its error. The first
// failing step fails the run; a step that fails an invariant check
// (rewriter.ErrInvariant) also halts the table ([Hold]).
//
// Each run is logged at info: "run decided" when it starts (table,
// trigger, who asked, the steps and why, the layout, the plan it runs or
// waits for) and "run done", "run failed" or "run cancelled" when it ends.
func (s *Service) Run(ctx context.Context, req Request) (RunResult, error) {
	out := RunResult{Table: req.Table.String(), Run: Run{Table: req.Table.String(), Steps: []Step{}}}
	if err := s.needStore("run " + req.Table.String()); err != nil {
		return out, err
	}
	log := s.log.With("table", req.Table.String(), "trigger", string(orTrigger(req.Trigger)), "by", req.User)
	req, err := s.planTable(ctx, req)
	if err != nil {
		return s.refused(ctx, req, out, log, err)
	}
	out.Table, out.Run.Table = req.Table.String(), req.Table.String()
	id := req.Table
	holder := req.Holder
	if holder == "" {
		h, err := ClaimTable(ctx, s.store, id, s.runner, s.leaseTTL, s.now())
		if err != nil {
			return s.refused(ctx, req, out, log, fmt.Errorf("run %s: %w", id, err))
		}
		holder = h
		req.Holder = h
	}
	release := func() {
		if err := s.store.ReleaseLease(context.WithoutCancel(ctx), holder, id.String()); err != nil {
			s.log.Warn("table lease not released; it lapses by itself", "table", id.String(), "err", err)
		}
	}
	d, err := s.decide(ctx, req, false)
	out.Decision = d
	if err != nil {
		release()
		return s.refused(ctx, req, out, log, err)
	}
	if err := s.applyPlan(ctx, &d); err != nil {
		release()
		return s.refused(ctx, req, out, log, fmt.Errorf("run %s: %w", id, err))
	}
	out.Decision = d
	opts := d.opts
	opts.decision = &d
	opts.RunID = req.RunID
	if opts.RunID == "" {
		opts.RunID = newRunID(s.now())
	}
	log = log.With("run_id", opts.RunID)
	attrs := []any{"steps", stepsText(d.Steps), "layout", d.Layout.String(), "layout_reason", d.LayoutReason}
	if pl := d.Plan; pl != nil {
		attrs = append(attrs, "plan_id", pl.Plan.ID, "plan_action", pl.Action)
		if pl.Action == PlanWait || pl.Action == PlanPropose {
			attrs = append(attrs, "held_back", "compaction: a layout plan waits for approval")
		}
	}
	log.Info("run decided", attrs...)
	// Optimize releases the lease it is given when the run ends.
	run, err := Optimize(ctx, d.table.Catalog, s.store, id, opts)
	out.Run = run
	if err != nil && IsInvariantFailure(err) {
		if herr := s.halt(context.WithoutCancel(ctx), id, run, err); herr != nil {
			err = errors.Join(err, herr)
		}
	}
	if run.ID == "" {
		return s.refused(ctx, req, out, log, err)
	}
	switch {
	case err == nil:
		log.Info("run done", "status", string(run.Status), "steps", runStepsText(run))
	case run.Status == StatusCancelled:
		log.Warn("run cancelled", "status", string(run.Status), "steps", runStepsText(run), "err", err)
	default:
		log.Error("run failed", "status", string(run.Status), "steps", runStepsText(run), "err", err)
	}
	return out, err
}

// recordRefused records a run of decision d that was refused before it
// started, as failed with err.
func (s *Service) recordRefused(ctx context.Context, d Decision, cause error) (Run, error) {
	now := s.now().UTC()
	run := Run{ID: newRunID(now), Table: d.Table, Status: StatusFailed, Trigger: d.Trigger, Runner: s.runner, StartedBy: d.By,
		Error: cause.Error(), StartedAt: now, EndedAt: now, Steps: []Step{}}
	rec, err := runRecord(run, &d)
	if err == nil {
		err = s.store.StartRun(context.WithoutCancel(ctx), rec)
	}
	if err != nil {
		return Run{Table: d.Table, Steps: []Step{}}, fmt.Errorf("record the refused run of %s: %w", d.Table, err)
	}
	s.log.Error("run refused before it started", "table", d.Table, "run_id", run.ID, "trigger", string(d.Trigger), "err", cause)
	return run, nil
}

// refused is what [Service.Run] answers for req when it was refused with
// err before its run started: the refusal logged, and a queued run's
// record ended with it.
func (s *Service) refused(ctx context.Context, req Request, out RunResult, log *slog.Logger, err error) (RunResult, error) {
	if req.RunID == "" {
		if t := orTrigger(req.Trigger); t != TriggerManual && !errors.Is(err, ErrBusy) && !errors.Is(err, ErrHalted) {
			// Nobody is at a terminal to read the refusal: a daemon's
			// run that cannot start (a policy the schema outgrew, a
			// table gone) is a failed run, which the failures alert
			// counts. A busy or halted table is not a failure of this
			// run: the hold has its own alert.
			d := out.Decision
			if d.Table == "" {
				d = Decision{Table: out.Table, Trigger: t, By: orUnknown(req.User), Steps: []StepDecision{}, Approvals: []Approval{}}
			}
			run, rerr := s.recordRefused(ctx, d, err)
			out.Run = run
			return out, errors.Join(err, rerr)
		}
		log.Info("run refused", "err", err)
		return out, err
	}
	log.Info("run refused", "run_id", req.RunID, "err", err)
	status := StatusFailed
	if errors.Is(err, ErrBusy) || errors.Is(err, ErrHalted) || ctx.Err() != nil {
		status = StatusCancelled
	}
	rctx := context.WithoutCancel(ctx)
	if eerr := s.store.EndQueuedRun(rctx, req.RunID, string(status), "not started: "+err.Error(), s.now()); eerr != nil {
		return out, errors.Join(err, eerr)
	}
	run, gerr := GetRun(rctx, s.store, req.RunID)
	if gerr != nil {
		return out, errors.Join(err, gerr)
	}
	out.Run = run
	return out, err
}

// Queue records a run of req as queued — asked for, waiting for a run
// slot — and returns it: the daemon's API answers with its ID at once,
// and [Service.Run] with req.RunID set to it runs it later. A table that
// is halted ([ErrHalted]) or has a run queued or running ([ErrBusy]) is
// refused and nothing is recorded. The queued run has a lease like a
// running one: its queue renews it ([store.Store.RenewRun]), and a queue
// that died leaves it to be recorded cancelled once it lapses.
func (s *Service) Queue(ctx context.Context, req Request) (Run, error) {
	id := req.Table
	if err := s.needStore("queue a run of " + id.String()); err != nil {
		return Run{}, err
	}
	if err := s.checkHold(ctx, id); err != nil {
		return Run{}, err
	}
	runs, err := ListRuns(ctx, s.store, id.String(), 5)
	if err != nil {
		return Run{}, fmt.Errorf("queue a run of %s: %w", id, err)
	}
	for _, r := range runs {
		if r.Status == StatusRunning || r.Status == StatusQueued {
			return Run{}, fmt.Errorf("queue a run of %s: %w: run %s is %s", id, ErrBusy, r.ID, r.Status)
		}
	}
	now := s.now().UTC()
	leases, err := s.store.TableLeases(ctx)
	if err != nil {
		return Run{}, fmt.Errorf("queue a run of %s: %w", id, err)
	}
	for _, l := range leases {
		if strings.EqualFold(l.Table, id.String()) && l.ExpiresAt.After(now) {
			return Run{}, fmt.Errorf("queue a run of %s: %w: %s holds its lease until %s", id, ErrBusy, l.Holder, l.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	run := Run{ID: newRunID(now), Table: id.String(), Status: StatusQueued, Trigger: orTrigger(req.Trigger), Runner: s.runner,
		StartedBy: orUnknown(req.User), QueuedAt: now, StartedAt: now, LeaseExpiresAt: now.Add(s.leaseTTL), Steps: []Step{}}
	rec, err := runRecord(run, nil)
	if err != nil {
		return Run{}, err
	}
	if err := s.store.StartRun(ctx, rec); err != nil {
		return Run{}, fmt.Errorf("queue a run of %s: %w", id, err)
	}
	s.log.Info("run queued", "table", run.Table, "trigger", string(run.Trigger), "by", run.StartedBy, "run_id", run.ID)
	return run, nil
}

// orTrigger is t, or [TriggerManual] when it is unset.
func orTrigger(t Trigger) Trigger {
	if t == "" {
		return TriggerManual
	}
	return t
}

// applyPlan stores the plan d proposes, approving it when the policy does,
// so that the run runs it.
func (s *Service) applyPlan(ctx context.Context, d *Decision) error {
	act := d.Plan
	if act == nil || act.Stored && act.Action != PlanProposeAndRun {
		return nil
	}
	if !act.Stored {
		got, err := storePlan(ctx, s.store, act.Plan)
		if err != nil {
			return err
		}
		act.Plan, act.Stored = got, true
	}
	if act.Action != PlanProposeAndRun {
		return nil
	}
	if act.Plan.State == PlanProposed {
		approved, err := ApprovePlan(ctx, s.store, act.Plan.ID, "policy", s.now())
		if err != nil {
			return err
		}
		act.Plan = approved
	}
	if act.Plan.State != PlanApproved {
		return fmt.Errorf("plan %s is %s, not approved", act.Plan.ID, act.Plan.State)
	}
	// The run executes the plan: its layout, z-order key and file size.
	_, resolved, err := planRunOptions(ctx, d.table.Catalog, s.store, d.table.Ident, d.opts, false)
	if err != nil {
		return err
	}
	d.opts = resolved
	return nil
}

func stepsText(ds []StepDecision) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += ", "
		}
		state := "runs"
		if !d.Run {
			state = string(d.Status)
		}
		out += d.Step + " " + state
	}
	return out
}

func runStepsText(r Run) string {
	out := ""
	for i, st := range r.Steps {
		if i > 0 {
			out += ", "
		}
		out += st.Name + " " + string(st.Status)
	}
	return out
}
