package control

import (
	"context"
	"errors"
	"fmt"
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
// approved or is stale) is refused before a run is recorded: RunResult.Run
// then has no ID. The first failing step fails the run.
func (s *Service) Run(ctx context.Context, req Request) (RunResult, error) {
	out := RunResult{Table: req.Table.String(), Run: Run{Table: req.Table.String(), Steps: []Step{}}}
	if err := s.needStore("run " + req.Table.String()); err != nil {
		return out, err
	}
	req, err := s.planTable(ctx, req)
	if err != nil {
		return out, err
	}
	out.Table, out.Run.Table = req.Table.String(), req.Table.String()
	id := req.Table
	holder := req.Holder
	if holder == "" {
		h, err := ClaimTable(ctx, s.store, id, s.runner, s.leaseTTL, s.now())
		if err != nil {
			return out, fmt.Errorf("run %s: %w", id, err)
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
		if d.Trigger != TriggerManual {
			// Nobody is at a terminal to read the refusal: a daemon's
			// run that cannot start (a policy the schema outgrew, a
			// table gone) is a failed run, which the failures alert
			// counts.
			run, rerr := s.recordRefused(ctx, d, err)
			out.Run = run
			return out, errors.Join(err, rerr)
		}
		return out, err
	}
	if err := s.applyPlan(ctx, &d); err != nil {
		release()
		return out, fmt.Errorf("run %s: %w", id, err)
	}
	out.Decision = d
	opts := d.opts
	opts.decision = &d
	log := s.log.With("table", id.String(), "trigger", string(d.Trigger), "by", d.By)
	log.Info("run decided", "steps", stepsText(d.Steps), "layout", d.Layout.String(), "layout_reason", d.LayoutReason)
	if d.Plan != nil && d.Plan.Action == PlanWait || d.Plan != nil && d.Plan.Action == PlanPropose {
		log.Info("compaction held back: a layout plan waits for approval", "plan_id", d.Plan.Plan.ID, "layout", d.Plan.Plan.Layout.String())
	}
	// Optimize releases the lease it is given when the run ends.
	run, err := Optimize(ctx, d.table.Catalog, s.store, id, opts)
	out.Run = run
	if run.ID == "" {
		return out, err
	}
	if err != nil {
		log.Error("run failed", "run_id", run.ID, "status", string(run.Status), "err", err)
	} else {
		log.Info("run done", "run_id", run.ID, "status", string(run.Status), "steps", runStepsText(run))
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
