package control

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/jsonenc"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// PlanState is where a plan is in its life. A plan moves
//
//	proposed → approved | rejected
//	approved → running → done | failed
//	approved → stale
//	failed → approved (approved again, to retry)
//
// and never back otherwise; every move is a compare-and-set in the store.
type PlanState string

// Plan states.
const (
	PlanProposed PlanState = "proposed"
	PlanApproved PlanState = "approved"
	PlanRejected PlanState = "rejected"
	PlanRunning  PlanState = "running"
	PlanDone     PlanState = "done"
	PlanFailed   PlanState = "failed"
	PlanStale    PlanState = "stale"
)

// PlanStates lists every plan state, in lifecycle order.
var PlanStates = []PlanState{PlanProposed, PlanApproved, PlanRejected, PlanRunning, PlanDone, PlanFailed, PlanStale}

// ParsePlanState reads a plan state's name.
func ParsePlanState(s string) (PlanState, error) {
	for _, p := range PlanStates {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown plan state %q: want proposed, approved, rejected, running, done, failed or stale", s)
}

// RunStatus is the status of a run or of one of its steps.
type RunStatus string

// Run and step statuses.
const (
	// StatusQueued is a run asked for and recorded that waits for a run
	// slot (the daemon's API queues runs; see [Service.Queue]); it becomes
	// running when it starts, or cancelled when the daemon stops first.
	StatusQueued  RunStatus = store.RunQueued
	StatusRunning RunStatus = "running"
	StatusDone    RunStatus = "done"
	StatusFailed  RunStatus = "failed"
	// StatusCancelled is a run or step stopped by its context (SIGTERM,
	// Ctrl-C, the daemon's shutdown grace over) rather than by an error;
	// the table is consistent, as the rewriter leaves it. A queued run
	// that never started (the daemon stopped first, the table was busy or
	// halted when its turn came) ends cancelled too, its error saying why.
	StatusCancelled RunStatus = store.RunCancelled
	// StatusSkipped is a step left out (OptimizeOptions.Skip).
	StatusSkipped RunStatus = "skipped"
	// StatusNotDue is a step the table's policy did not call for: its
	// triggers were checked and none fired ([Decide]). A compaction not
	// due counts as fresh for the freshness SLA.
	StatusNotDue RunStatus = "not_due"
	// StatusAbandoned is a run whose process died: its lease lapsed while
	// it was running (see [RunLeaseTTL]).
	StatusAbandoned RunStatus = store.RunAbandoned
)

// Trigger says what started a run.
type Trigger string

// Run triggers.
const (
	// TriggerManual is a run someone started from the CLI (floe optimize);
	// it is the default, and what runs stored before triggers were recorded
	// read as.
	TriggerManual Trigger = "manual"
	// TriggerScheduled is a run the daemon started on the policy's schedule.
	TriggerScheduled Trigger = "scheduled"
	// TriggerAdaptive is a run the daemon started because the table's
	// health crossed one of the policy's triggers.
	TriggerAdaptive Trigger = "adaptive"
	// TriggerAPI is a run started through the HTTP API
	// (POST /api/v1/tables/{table}/optimize).
	TriggerAPI Trigger = "api"
)

// Triggers lists every trigger.
var Triggers = []Trigger{TriggerManual, TriggerScheduled, TriggerAdaptive, TriggerAPI}

// ParseTrigger reads a trigger's name.
func ParseTrigger(s string) (Trigger, error) {
	for _, t := range Triggers {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown run trigger %q: want manual, scheduled, adaptive or api", s)
}

// Plan is a proposed rewrite of one table into a layout, with the
// projection that justifies it and the decision taken on it.
type Plan struct {
	// ID is a stable hash of table, base snapshot and layout.
	ID string `json:"id"`
	// Table is catalog.namespace.name.
	Table string `json:"table"`
	// BaseSnapshot is the snapshot the plan was made at (0: an empty
	// table). In JSON it is a string, as snapshot ids exceed 2^53.
	BaseSnapshot int64 `json:"base_snapshot_id,string"`
	// Layout is the layout the plan rewrites the table into.
	Layout     layout.Layout  `json:"layout"`
	Projection PlanProjection `json:"projection"`
	State      PlanState      `json:"state"`
	CreatedBy  string         `json:"created_by,omitempty"`
	CreatedAt  time.Time      `json:"created_at"`
	DecidedBy  string         `json:"decided_by,omitempty"`
	// DecidedAt is zero until the plan leaves its first state.
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// Run is one optimize run of one table, with its steps.
type Run struct {
	ID     string    `json:"id"`
	Table  string    `json:"table"`
	PlanID string    `json:"plan_id,omitempty"`
	Status RunStatus `json:"status"`
	// Trigger is what started the run ([TriggerManual] unless the daemon
	// or the API did).
	Trigger Trigger `json:"trigger"`
	// Runner is the process that ran it: host name and process id
	// ([RunnerID]).
	Runner string `json:"runner"`
	// StartedBy is who asked for it: a person, "floe serve", the API's
	// caller; empty for runs recorded before floe recorded it.
	StartedBy string `json:"started_by"`
	// Approvals are the approvals the run rested on (see [Approval]):
	// who approved the layout change it made, and the steps a policy
	// keeps for a person to ask for.
	Approvals Approvals `json:"approvals"`
	// DryRun marks a run that planned every step and changed nothing; it
	// is never stored.
	DryRun bool   `json:"dry_run"`
	Error  string `json:"error,omitempty"`
	// QueuedAt is when a run that waited for a run slot was asked for
	// (the API's runs); zero for a run that started at once.
	QueuedAt time.Time `json:"queued_at,omitzero"`
	// StartedAt is when the run started; while it is queued, when it was
	// queued.
	StartedAt time.Time `json:"started_at"`
	// EndedAt is zero while the run is going.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// LeaseExpiresAt is when a running run is taken for dead unless its
	// process renews the lease (see [RunLeaseTTL]); an ended run keeps its
	// last lease.
	LeaseExpiresAt time.Time `json:"lease_expires_at,omitzero"`
	Steps          []Step    `json:"steps"`
}

// Approvals are the approvals of a run; they encode as [] when there are
// none.
type Approvals []Approval

// MarshalJSON implements [json.Marshaler].
func (a Approvals) MarshalJSON() ([]byte, error) {
	if a == nil {
		return []byte("[]"), nil
	}
	return jsonenc.Marshal([]Approval(a))
}

// Step is one step of a run (StepExpire, StepOrphans, StepCompact,
// StepManifests): the table's health before and after it, and the step's
// own report (its plan on a dry run, its result otherwise).
type Step struct {
	Name   string    `json:"step"`
	Status RunStatus `json:"status"`
	// Before and After are nil for a step that did not get that far.
	Before *StepHealth `json:"before,omitempty"`
	After  *StepHealth `json:"after,omitempty"`
	// Report is what the step did (see [StepReport]): its result, its
	// plan when it found nothing to do, or a distributed engine's report.
	Report StepReport `json:"report,omitzero"`
	// Layout is, for a compaction that ran a plan, the plan's projection
	// beside what the rewritten table measures ([LayoutCheck]).
	Layout *LayoutCheck `json:"layout_check,omitempty"`
	// Reason says why a step was skipped or not due (the policy's
	// decision, see [Decide]).
	Reason    string    `json:"reason,omitempty"`
	Error     string    `json:"error,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// UnmarshalJSON reads a step as [Step] writes it, its report typed by the
// step's name.
func (s *Step) UnmarshalJSON(b []byte) error {
	type plain Step
	var j struct {
		plain
		Report json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	rep, err := decodeStepReport(j.Name, j.Report)
	if err != nil {
		return err
	}
	*s = Step(j.plain)
	s.Report = rep
	return nil
}

// Duration is how long the step took (0 while it runs).
func (s Step) Duration() time.Duration {
	if s.EndedAt.IsZero() {
		return 0
	}
	return s.EndedAt.Sub(s.StartedAt)
}

// StepHealth is a table's health around a step.
type StepHealth struct {
	// SnapshotID is the table's current snapshot then (0: none, or a
	// record older than the field); a compaction whose before and after
	// are one snapshot changed nothing (see [HistoryOf]).
	SnapshotID int64        `json:"snapshot_id,string,omitempty"`
	Status     lake.Status  `json:"status"`
	Reasons    []string     `json:"reasons"`
	Metrics    lake.Metrics `json:"metrics"`
}

// GetPlan returns the stored plan id, or an error wrapping
// [store.ErrNotFound].
func GetPlan(ctx context.Context, st *store.Store, id string) (Plan, error) {
	r, err := st.Plan(ctx, id)
	if err != nil {
		return Plan{}, err
	}
	return planFromRecord(r)
}

// PlanFilter selects plans for [ListPlans]; zero fields match all.
type PlanFilter struct {
	// Table is catalog.namespace.name, case-insensitive.
	Table string
	State PlanState
}

// ListPlans lists the stored plans that match f, newest first.
func ListPlans(ctx context.Context, st *store.Store, f PlanFilter) ([]Plan, error) {
	recs, err := st.Plans(ctx, store.PlanFilter{Table: f.Table, State: string(f.State)})
	if err != nil {
		return nil, err
	}
	return plansOf(recs)
}

// plansOf are the plans of stored records.
func plansOf(recs []store.PlanRecord) ([]Plan, error) {
	out := make([]Plan, 0, len(recs))
	for _, r := range recs {
		p, err := planFromRecord(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// GetRun returns the stored run id with its steps, or an error wrapping
// [store.ErrNotFound].
func GetRun(ctx context.Context, st *store.Store, id string) (Run, error) {
	r, err := st.Run(ctx, id)
	if err != nil {
		return Run{}, err
	}
	return runFromRecord(r)
}

// ListRuns lists the runs of table (catalog.namespace.name; "" for all),
// newest first, at most limit (0: all).
func ListRuns(ctx context.Context, st *store.Store, table string, limit int) ([]Run, error) {
	recs, err := st.Runs(ctx, table, limit)
	if err != nil {
		return nil, err
	}
	return runsOf(recs)
}

// runsOf are the runs of stored records.
func runsOf(recs []store.RunRecord) ([]Run, error) {
	out := make([]Run, 0, len(recs))
	for _, r := range recs {
		run, err := runFromRecord(r)
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

// The conversions below are the only place where plans and runs meet the
// store's rows; every encoding error is returned.

func planRecord(p Plan) (store.PlanRecord, error) {
	pj, err := json.Marshal(p.Projection)
	if err != nil {
		return store.PlanRecord{}, fmt.Errorf("plan %s: encode projection: %w", p.ID, err)
	}
	return store.PlanRecord{
		ID: p.ID, Table: p.Table, BaseSnapshot: p.BaseSnapshot, Layout: p.Layout.String(), Projection: pj,
		State: string(p.State), CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt, DecidedBy: p.DecidedBy, DecidedAt: p.DecidedAt,
	}, nil
}

func planFromRecord(r store.PlanRecord) (Plan, error) {
	p := Plan{
		ID: r.ID, Table: r.Table, BaseSnapshot: r.BaseSnapshot, State: PlanState(r.State),
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, DecidedBy: r.DecidedBy, DecidedAt: r.DecidedAt,
	}
	l, err := layout.Parse(r.Layout)
	if err != nil {
		return Plan{}, fmt.Errorf("read plan %s: %w", r.ID, err)
	}
	p.Layout = l
	if len(r.Projection) > 0 {
		if err := json.Unmarshal(r.Projection, &p.Projection); err != nil {
			return Plan{}, fmt.Errorf("read plan %s: decode projection: %w", r.ID, err)
		}
	}
	return p, nil
}

// runRecord is run's row, with the decision it ran (nil: none recorded).
func runRecord(r Run, d *Decision) (store.RunRecord, error) {
	rec := store.RunRecord{
		ID: r.ID, Table: r.Table, PlanID: r.PlanID, Status: string(r.Status), Trigger: string(r.Trigger), Runner: r.Runner, Error: r.Error,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, LeaseExpiresAt: r.LeaseExpiresAt, StartedBy: r.StartedBy, QueuedAt: r.QueuedAt,
	}
	if d != nil {
		b, err := json.Marshal(d)
		if err != nil {
			return rec, fmt.Errorf("run %s: encode decision: %w", r.ID, err)
		}
		rec.Decision = b
	}
	return rec, nil
}

func runFromRecord(r store.RunRecord) (Run, error) {
	run := Run{
		ID: r.ID, Table: r.Table, PlanID: r.PlanID, Status: RunStatus(r.Status), Trigger: Trigger(r.Trigger), Runner: r.Runner, Error: r.Error,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, LeaseExpiresAt: r.LeaseExpiresAt, StartedBy: r.StartedBy, QueuedAt: r.QueuedAt,
		Steps: make([]Step, 0, len(r.Steps)),
	}
	if len(r.Decision) > 0 {
		var d struct {
			Approvals []Approval `json:"approvals"`
		}
		if err := json.Unmarshal(r.Decision, &d); err != nil {
			return Run{}, fmt.Errorf("read run %s: decode decision: %w", r.ID, err)
		}
		if d.Approvals != nil {
			run.Approvals = d.Approvals
		}
	}
	if run.Trigger == "" {
		run.Trigger = TriggerManual
	}
	for _, sr := range r.Steps {
		s, err := stepFromRecord(sr)
		if err != nil {
			return Run{}, fmt.Errorf("read run %s: %w", r.ID, err)
		}
		run.Steps = append(run.Steps, s)
	}
	return run, nil
}

// storedAfter is how a step's after health and its report share the
// store's after column (the layout floe has always stored).
type storedAfter struct {
	*StepHealth
	Report StepReport   `json:"report,omitzero"`
	Reason string       `json:"reason,omitempty"`
	Layout *LayoutCheck `json:"layout_check,omitempty"`
}

func stepRecord(s Step) (store.StepRecord, error) {
	r := store.StepRecord{Step: s.Name, Status: string(s.Status), Error: s.Error, StartedAt: s.StartedAt, EndedAt: s.EndedAt}
	r.RewrittenBytes, r.RewriteCPUMillis = s.Report.spend()
	if s.Before != nil {
		b, err := json.Marshal(s.Before)
		if err != nil {
			return r, fmt.Errorf("step %s: encode health before: %w", s.Name, err)
		}
		r.Before = b
	}
	if s.After != nil || !s.Report.IsZero() || s.Reason != "" || s.Layout != nil {
		b, err := json.Marshal(storedAfter{StepHealth: s.After, Report: s.Report, Reason: s.Reason, Layout: s.Layout})
		if err != nil {
			return r, fmt.Errorf("step %s: encode health after and report: %w", s.Name, err)
		}
		r.After = b
	}
	return r, nil
}

func stepFromRecord(r store.StepRecord) (Step, error) {
	s := Step{Name: r.Step, Status: RunStatus(r.Status), Error: r.Error, StartedAt: r.StartedAt, EndedAt: r.EndedAt}
	if len(r.Before) > 0 {
		s.Before = &StepHealth{}
		if err := json.Unmarshal(r.Before, s.Before); err != nil {
			return s, fmt.Errorf("step %s: decode health before: %w", r.Step, err)
		}
	}
	if len(r.After) > 0 {
		var a struct {
			StepHealth
			Status *lake.Status    `json:"status"`
			Report json.RawMessage `json:"report"`
			Reason string          `json:"reason"`
			Layout *LayoutCheck    `json:"layout_check"`
		}
		if err := json.Unmarshal(r.After, &a); err != nil {
			return s, fmt.Errorf("step %s: decode health after: %w", r.Step, err)
		}
		if a.Status != nil {
			a.StepHealth.Status = *a.Status
			s.After = &a.StepHealth
		}
		rep, err := decodeStepReport(r.Step, a.Report)
		if err != nil {
			return s, fmt.Errorf("step %s: %w", r.Step, err)
		}
		s.Report, s.Reason, s.Layout = rep, a.Reason, a.Layout
	}
	return s, nil
}
