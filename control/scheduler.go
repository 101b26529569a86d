package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// Backoff bounds after a table's runs fail: the first retry waits
// BackoffBase, each further failure doubles it, up to BackoffMax.
const (
	BackoffBase = 5 * time.Minute
	BackoffMax  = 6 * time.Hour
)

// OrphanInterval is how often mode: adaptive lists a table's location for
// orphan files: listing has no cheap trigger, so it is due once a day.
const OrphanInterval = 24 * time.Hour

// SchedulerOptions configure a [Scheduler].
type SchedulerOptions struct {
	// Service decides and runs every table's maintenance; its
	// configuration, store, catalogs, engines, clock, logger, runner and
	// lease TTL are the scheduler's. Required.
	Service *Service
	Config  *config.Config
	Store   *store.Store
	// Catalog opens the floe catalog called name (once; the scheduler
	// asks every pass).
	Catalog func(ctx context.Context, name string) (catalog.Catalog, error)
	// MaxConcurrentRuns bounds the runs of one pass. Default: 2.
	MaxConcurrentRuns int
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Logger gets one line per decision and run. Default: discard.
	Logger *slog.Logger
	// Alerts, when set, is told every pass each known table's freshness
	// and failures alerts ([alert.Evaluate]) — also for a table whose
	// catalog could not be read this pass, from the recorded runs.
	Alerts *alert.Notifier
	// OnRun, when set, sees every run the scheduler made (the daemon's
	// metrics), from passes and from [Scheduler.RunNow].
	OnRun func(Run)
	// Engines are the engines a policy's engine key may name. Default:
	// those of Config.
	Engines *Engines
	// Runner names this process in leases and run records. Default:
	// [RunnerID].
	Runner string
	// LeaseTTL is how long a table's lease lasts without renewal (see
	// [OptimizeOptions.LeaseTTL]): a replica that dies loses its tables
	// this long after its last renewal. Default: [RunLeaseTTL].
	LeaseTTL time.Duration
}

// Scheduler decides, pass by pass, which tables are due for maintenance by
// their policies, and runs them with [Service.Run]. It keeps, per
// table, when it last read the table's metadata and how many runs failed
// in a row (for the backoff); everything else — the last run, approved
// plans, running runs — it reads from the state store, so a pass decides
// the same in a daemon and in a one-shot process (floe serve --once).
type Scheduler struct {
	opts SchedulerOptions

	mu     sync.Mutex
	tables map[string]*tableSchedule
}

type tableSchedule struct {
	id       lake.Ident
	polled   time.Time
	failures int
	retryAt  time.Time
}

// NewScheduler returns a scheduler with opts' defaults filled: what
// opts.Service holds replaces the fields it stands for.
func NewScheduler(opts SchedulerOptions) *Scheduler {
	if svc := opts.Service; svc != nil {
		opts.Config, opts.Store, opts.Catalog, opts.Engines = svc.cfg, svc.store, svc.catalog, svc.engines
		opts.Now, opts.Logger, opts.Runner, opts.LeaseTTL = svc.now, svc.log, svc.runner, svc.leaseTTL
	}
	if opts.MaxConcurrentRuns < 1 {
		opts.MaxConcurrentRuns = 2
	}
	if opts.Engines == nil {
		opts.Engines = NewEngines(opts.Config, nil)
	}
	if opts.Runner == "" {
		opts.Runner = RunnerID()
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = RunLeaseTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Service == nil {
		opts.Service = &Service{cfg: opts.Config, catalog: opts.Catalog, store: opts.Store, engines: opts.Engines,
			now: opts.Now, log: opts.Logger, runner: opts.Runner, leaseTTL: opts.LeaseTTL}
	}
	return &Scheduler{opts: opts, tables: map[string]*tableSchedule{}}
}

// TableDecision is what a pass decided for one table.
type TableDecision struct {
	Table string `json:"table"`
	Due   bool   `json:"due"`
	// Trigger is adaptive or scheduled (the table's mode) for a due table;
	// an approved plan runs with its table's mode as the trigger.
	Trigger Trigger `json:"trigger,omitempty"`
	Reason  string  `json:"reason"`
}

// Pass is what one scheduling pass did.
type Pass struct {
	At        time.Time       `json:"at"`
	Decisions []TableDecision `json:"decisions"`
	Runs      []RunResult     `json:"runs"`
	// Errors are the tables that could not be decided or whose run
	// failed, each naming the table; a pass goes on past them.
	Errors []string `json:"errors"`
}

// Failed reports whether any table could not be decided or any run failed.
func (p Pass) Failed() bool { return len(p.Errors) > 0 }

// RunPass lists every table of every configured catalog (new tables are
// picked up without restart), decides for each whether it is due, and
// runs the due ones, at most MaxConcurrentRuns at once. A table is due
// when its policy's mode says so and, with a window, the clock is inside
// it: an approved plan always; mode: scheduled when the cron schedule
// fired since the table's last run; mode: adaptive when its poll interval
// passed and [Decide] finds a step due. A table with a running run is
// busy; one whose runs failed waits out an exponential backoff
// ([BackoffBase] to [BackoffMax]).
func (s *Scheduler) RunPass(ctx context.Context) (Pass, error) {
	return s.runPass(ctx, ctx)
}

// runPass decides under ctx and runs under runCtx: once ctx ends no new run
// starts, and those started go on until runCtx ends.
func (s *Scheduler) runPass(ctx, runCtx context.Context) (Pass, error) {
	now := s.opts.Now().UTC()
	pass := Pass{At: now, Decisions: []TableDecision{}, Runs: []RunResult{}, Errors: []string{}}
	if _, err := s.opts.Store.RecoverAbandoned(ctx, now); err != nil {
		return pass, fmt.Errorf("scheduling pass: %w", err)
	}
	type job struct {
		id  lake.Ident
		cat catalog.Catalog
		eff policy.Effective
		d   TableDecision
	}
	var jobs []job
	var listed []lake.Ident
	for _, name := range s.opts.Config.CatalogNames() {
		cat, err := s.opts.Catalog(ctx, name)
		if err != nil {
			pass.Errors = append(pass.Errors, fmt.Sprintf("catalog %s: %v", name, err))
			continue
		}
		ids, err := lake.ListTables(ctx, name, cat)
		if err != nil {
			pass.Errors = append(pass.Errors, fmt.Sprintf("catalog %s: %v", name, err))
			continue
		}
		listed = append(listed, ids...)
		for _, id := range ids {
			eff, err := ResolvePolicy(ctx, s.opts.Config, id)
			var d TableDecision
			if err == nil {
				d, err = s.decide(ctx, cat, id, eff.Policy, now)
			}
			if err != nil {
				pass.Errors = append(pass.Errors, fmt.Sprintf("%s: %v", id, err))
				continue
			}
			pass.Decisions = append(pass.Decisions, d)
			s.opts.Logger.Debug("scheduling decision", "table", d.Table, "due", d.Due, "trigger", d.Trigger, "reason", d.Reason)
			if d.Due {
				jobs = append(jobs, job{id: id, cat: cat, eff: eff, d: d})
			}
		}
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, s.opts.MaxConcurrentRuns)
	)
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		// Claim the table only once a slot is free, so that replicas
		// deciding at the same moment take different tables: a replica
		// claims no more than it can run (see store.Store.ClaimTables).
		claimAt := s.opts.Now()
		holder := newHolder(s.opts.Runner)
		got, err := s.opts.Store.ClaimTables(ctx, holder, []string{j.id.String()}, 1, claimAt.Add(s.opts.LeaseTTL), claimAt)
		if err != nil || len(got) == 0 {
			<-sem
			// Not run here: decide it afresh next pass rather than wait
			// out its poll interval.
			ts := s.schedule(j.id.String())
			s.mu.Lock()
			ts.polled = time.Time{}
			s.mu.Unlock()
			if err != nil {
				pass.Errors = append(pass.Errors, fmt.Sprintf("%s: claim: %v", j.id, err))
			} else {
				s.opts.Logger.Info("table due, but another run holds it", "table", j.id.String(), "err", busyError(ctx, s.opts.Store, j.id))
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			pr, err := s.runTable(runCtx, j.id, j.d.Trigger, holder)
			if pr.Run.ID != "" && s.opts.OnRun != nil {
				s.opts.OnRun(pr.Run)
			}
			mu.Lock()
			defer mu.Unlock()
			if pr.Run.ID != "" {
				pass.Runs = append(pass.Runs, pr)
			}
			if err != nil {
				pass.Errors = append(pass.Errors, fmt.Sprintf("%s: %v", j.id, err))
			}
		}()
	}
	wg.Wait()
	if s.opts.Alerts != nil {
		if err := s.alert(runCtx, now, listed); err != nil {
			pass.Errors = append(pass.Errors, err.Error())
		}
	}
	return pass, runCtx.Err()
}

// alert evaluates every known table's freshness and failures alerts and
// hands them to the notifier. It reads the runs floe recorded, so it
// judges a table even when its catalog is down.
func (s *Scheduler) alert(ctx context.Context, now time.Time, listed []lake.Ident) error {
	// Every table listed this pass, and those known from earlier passes
	// whose catalog could not be listed now (judged from the runs).
	seen := map[string]bool{}
	ids := slices.Clone(listed)
	for _, id := range listed {
		seen[id.String()] = true
	}
	s.mu.Lock()
	for _, ts := range s.tables {
		if ts.id.Name != "" && !seen[ts.id.String()] {
			ids = append(ids, ts.id)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(ids, func(a, b lake.Ident) int { return strings.Compare(a.String(), b.String()) })
	var errs []error
	for _, id := range ids {
		eff, err := ResolvePolicy(ctx, s.opts.Config, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("alerts of %s: %w", id, err))
			continue
		}
		in, err := alertInput(ctx, s.opts.Store, id, eff.Policy)
		if err != nil {
			errs = append(errs, fmt.Errorf("alerts of %s: %w", id, err))
			continue
		}
		if seen[id.String()] {
			// The backlog, from the table's own metadata: it fires for a
			// table floe never ran on, and never for one nobody writes.
			h, err := s.opts.Service.Health(ctx, id, HealthRequest{})
			if err != nil {
				errs = append(errs, fmt.Errorf("alerts of %s: measure its backlog: %w", id, err))
			} else {
				in.ObserveHealth(h.Metrics, now)
			}
		}
		if _, err := s.opts.Alerts.Notify(ctx, alert.Evaluate(in, now)...); err != nil {
			errs = append(errs, fmt.Errorf("alerts of %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// alertInput is what alert.Evaluate judges table id by without reading
// the table: its policy, floe's last recorded compaction and its runs,
// newest first, with the backlog the newest run measured.
func alertInput(ctx context.Context, st *store.Store, id lake.Ident, p policy.Policy) (alert.Input, error) {
	in := alert.Input{Table: id.String(), Policy: p}
	runs, err := ListRuns(ctx, st, id.String(), 50)
	if err != nil {
		return in, err
	}
	in.LastCompaction = lastCompaction(runs)
	for _, r := range runs {
		if r.DryRun {
			continue
		}
		in.Runs = append(in.Runs, alert.Run{ID: r.ID, Status: string(r.Status), Error: r.Error, StartedAt: r.StartedAt, EndedAt: r.EndedAt})
		for _, step := range r.Steps {
			if step.After != nil {
				in.ObserveMetrics(step.After.Metrics, step.EndedAt)
			} else if step.Before != nil {
				in.ObserveMetrics(step.Before.Metrics, step.StartedAt)
			}
		}
	}
	return in, nil
}

// decide says whether table id is due now under policy p.
func (s *Scheduler) decide(ctx context.Context, cat catalog.Catalog, id lake.Ident, p policy.Policy, now time.Time) (TableDecision, error) {
	d := TableDecision{Table: id.String()}
	not := func(format string, args ...any) (TableDecision, error) {
		d.Reason = fmt.Sprintf(format, args...)
		return d, nil
	}
	if p.Mode == policy.ModeManual {
		return not("mode: manual")
	}
	if p.Window != nil && !p.Window.Contains(now) {
		return not("outside the maintenance window %s UTC", p.Window)
	}
	ts := s.schedule(id.String())
	ts.id = id
	if now.Before(ts.retryAt) {
		return not("%d failed runs in a row: backing off until %s", ts.failures, ts.retryAt.Format(time.RFC3339))
	}
	runs, err := ListRuns(ctx, s.opts.Store, id.String(), 20)
	if err != nil {
		return d, err
	}
	if len(runs) > 0 && runs[0].Status == StatusRunning {
		return not("busy: run %s is running", runs[0].ID)
	}
	approved, err := ListPlans(ctx, s.opts.Store, PlanFilter{Table: id.String(), State: PlanApproved})
	if err != nil {
		return d, err
	}
	if len(approved) > 0 {
		d.Due, d.Trigger, d.Reason = true, TriggerAdaptive, fmt.Sprintf("plan %s is approved", approved[0].ID)
		if p.Mode == policy.ModeScheduled {
			d.Trigger = TriggerScheduled
		}
		return d, nil
	}
	switch p.Mode {
	case policy.ModeScheduled:
		// A schedule that never fires (February 30th: robfig/cron's Next
		// is then the zero time, which is before every now) is an error
		// of the table, never due. Validation refuses it; this holds if
		// one gets through (a policy from the catalog).
		if _, err := policy.NextRun(p.Schedule, now); err != nil {
			return d, fmt.Errorf("mode scheduled: %w", err)
		}
		if len(runs) > 0 {
			next, err := policy.NextRun(p.Schedule, runs[0].StartedAt)
			if err != nil {
				return d, fmt.Errorf("mode scheduled: %w", err)
			}
			if next.After(now) {
				return not("scheduled %q: next run at %s", p.Schedule, next.Format(time.RFC3339))
			}
		}
		d.Due, d.Trigger, d.Reason = true, TriggerScheduled, fmt.Sprintf("scheduled %q", p.Schedule)
		return d, nil
	}
	// Adaptive: read the metadata once per poll interval.
	if !ts.polled.IsZero() && now.Sub(ts.polled) < p.PollInterval {
		return not("polled %s ago; poll_interval %s", now.Sub(ts.polled).Round(time.Second), p.PollInterval)
	}
	ts.polled = now
	steps, err := s.opts.Service.Triggers(ctx, id)
	if err != nil {
		return d, err
	}
	for _, st := range steps {
		if !st.Run {
			continue
		}
		if st.Step == StepOrphans && !orphansStale(runs, now) {
			continue
		}
		d.Due, d.Trigger, d.Reason = true, TriggerAdaptive, st.Step+": "+st.Reason
		return d, nil
	}
	return not("no trigger fired")
}

// orphansStale reports whether the last orphan listing among runs finished
// OrphanInterval or longer ago (or never did).
func orphansStale(runs []Run, now time.Time) bool {
	for _, r := range runs {
		for _, s := range r.Steps {
			if s.Name == StepOrphans && s.Status == StatusDone {
				return now.Sub(s.EndedAt) >= OrphanInterval
			}
		}
	}
	return true
}

// runTable runs table id as its policy calls for ([Service.Run]) and
// keeps the table's failure count for the backoff. holder is the table's
// lease, claimed by the caller; the run releases it when it ends.
func (s *Scheduler) runTable(ctx context.Context, id lake.Ident, trigger Trigger, holder string) (RunResult, error) {
	log := s.opts.Logger.With("table", id.String(), "trigger", trigger)
	rr, err := s.opts.Service.Run(ctx, Request{Table: id, Trigger: trigger, User: "floe serve", Holder: holder})
	ts := s.schedule(id.String())
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, ErrBusy):
		// Another run holds the table: not this table's failure.
		log.Info("table busy", "err", err)
	case err != nil && !errors.Is(err, context.Canceled):
		ts.failures++
		wait := min(BackoffBase<<min(ts.failures-1, 16), BackoffMax)
		ts.retryAt = s.opts.Now().Add(wait)
		log.Error("scheduled run failed", "run_id", rr.Run.ID, "failures", ts.failures, "retry_at", ts.retryAt, "err", err)
	case err == nil:
		ts.failures, ts.retryAt = 0, time.Time{}
	}
	return rr, err
}

func (s *Scheduler) schedule(table string) *tableSchedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.tables[table]
	if ts == nil {
		ts = &tableSchedule{}
		s.tables[table] = ts
	}
	return ts
}

// ServeOptions configure [Scheduler.Serve].
type ServeOptions struct {
	// Interval is the time between passes. Default: 30s.
	Interval time.Duration
	// Grace is how long runs in flight may go on after ctx ends, before
	// they are cancelled (the rewriter leaves the table consistent either
	// way). Default: 2m.
	Grace time.Duration
	// OnPass, when set, sees every pass (the daemon's metrics and alerts).
	OnPass func(Pass, error)
	// Tick, when set, replaces the interval timer (tests).
	Tick <-chan time.Time
	// Checks, when set, are the connection checks (floe doctor's, see
	// [Doctor]) run at start and every CheckInterval; a failing one is
	// logged, handed to OnCheck and, with SchedulerOptions.Alerts, alerted.
	Checks        func(ctx context.Context) []Check
	CheckInterval time.Duration
	OnCheck       func([]Check)
}

// Serve runs a pass every Interval until ctx ends. Then it schedules
// nothing new, lets the runs in flight finish for up to Grace, and cancels
// them after that. A pass that fails is logged and handed to OnPass; the
// next one runs regardless, so one dead catalog does not stop the others'
// maintenance.
func (s *Scheduler) Serve(ctx context.Context, opts ServeOptions) error {
	if opts.Interval <= 0 {
		opts.Interval = 30 * time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Minute
	}
	// Runs get a context that outlives ctx by the grace period.
	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(opts.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			s.opts.Logger.Warn("shutdown grace over: cancelling runs in flight", "grace", opts.Grace)
			cancelRuns()
		case <-runCtx.Done():
		}
	})
	defer stop()
	if opts.Checks != nil {
		if opts.CheckInterval <= 0 {
			opts.CheckInterval = 5 * time.Minute
		}
		go s.check(ctx, opts)
	}
	tick := opts.Tick
	if tick == nil {
		t := time.NewTicker(opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		pass, err := s.runPass(ctx, runCtx)
		if err != nil {
			s.opts.Logger.Error("scheduling pass failed", "err", err)
		}
		for _, e := range pass.Errors {
			s.opts.Logger.Error("scheduling pass", "err", e)
		}
		if opts.OnPass != nil {
			opts.OnPass(pass, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if ctx.Err() != nil {
				return nil
			}
		}
	}
}

// check runs the connection checks now and every CheckInterval until ctx
// ends.
func (s *Scheduler) check(ctx context.Context, opts ServeOptions) {
	t := time.NewTicker(opts.CheckInterval)
	defer t.Stop()
	for {
		checks := opts.Checks(ctx)
		var alerts []alert.Alert
		for _, c := range checks {
			if c.Skipped {
				continue
			}
			var err error
			if !c.OK {
				err = errors.New(c.Error)
				s.opts.Logger.Error("connection check failed", "check", c.Name, "target", c.Target, "err", c.Error)
			}
			alerts = append(alerts, alert.Check(c.Name+" "+c.Target, err))
		}
		if opts.OnCheck != nil {
			opts.OnCheck(checks)
		}
		if s.opts.Alerts != nil && ctx.Err() == nil {
			if _, err := s.opts.Alerts.Notify(ctx, alerts...); err != nil {
				s.opts.Logger.Error("connection check alerts", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ErrBusy is returned (wrapped) by [Scheduler.RunNow] for a table that has
// a run in flight: one run per table at a time.
var ErrBusy = errors.New("table busy")

// RunNow runs table id's maintenance now, by its policy, as a pass would
// (the API's POST tables/{table}/optimize): a table with a running run is
// refused with [ErrBusy].
func (s *Scheduler) RunNow(ctx context.Context, id lake.Ident, trigger Trigger) (Run, error) {
	runs, err := ListRuns(ctx, s.opts.Store, id.String(), 1)
	if err != nil {
		return Run{}, err
	}
	if len(runs) > 0 && runs[0].Status == StatusRunning {
		return Run{}, fmt.Errorf("optimize %s: %w: run %s is running", id, ErrBusy, runs[0].ID)
	}
	pr, err := s.runTable(ctx, id, trigger, "")
	if s.opts.OnRun != nil && pr.Run.ID != "" {
		s.opts.OnRun(pr.Run)
	}
	return pr.Run, err
}
