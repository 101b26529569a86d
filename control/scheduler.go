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
	"github.com/floe-project/floe/simulator"
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
	// MaxConcurrentRuns bounds the runs in flight at once (the
	// server.max_concurrent_runs slots): a pass's runs and the queued runs
	// of [Scheduler.Enqueue] share them. Default: 2.
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
	// metrics), from passes and from its queue ([Scheduler.Enqueue]).
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
	// UnreachableAfter is how long a catalog may stay unlistable, or a
	// table's metadata unreadable, before its unreachable alert fires
	// (server.unreachable_after). Default: Config's.
	UnreachableAfter time.Duration
	// RunLateAfter is how long after a scheduled table's run was due it
	// may still not have started before its late alert fires
	// (server.run_late_after). Default: Config's.
	RunLateAfter time.Duration
}

// Scheduler decides, pass by pass, which tables are due for maintenance by
// their policies, and runs them with [Service.Run]; it also runs the runs
// the API queues ([Scheduler.Enqueue]), in the same run slots. It keeps,
// per table, when it last read the table's metadata and how many runs
// failed in a row (for the backoff); everything else — the last run,
// approved plans, running runs, holds — it reads from the state store, so
// a pass decides the same in a daemon and in a one-shot process (floe
// serve --once).
type Scheduler struct {
	opts SchedulerOptions
	// slots are the run slots (MaxConcurrentRuns): a run in flight holds
	// one, whether a pass or the queue started it.
	slots chan struct{}

	mu     sync.Mutex
	tables map[string]*tableSchedule
	// outages are what could not be read, by target ("catalog NAME" or a
	// table's name), since the first failure in a row.
	outages map[string]*outage
	// changes count the commits reported ([Scheduler.Changed]); changed
	// is, by lower-cased table name, the count at the table's newest one.
	changes uint64
	changed map[string]uint64
	// woken has a value when a commit was reported since the daemon's
	// last pass began.
	woken chan struct{}

	q runQueue
}

type tableSchedule struct {
	id     lake.Ident
	polled time.Time
	// read is the scheduler's count of reported commits when the table
	// was last read: a commit reported later makes it due for a read.
	read     uint64
	failures int
	retryAt  time.Time
	// seen is when this scheduler first listed the table: a scheduled
	// table with no run is due from then.
	seen time.Time
	// reason is the newest pass's decision (or error) for the table, which
	// a late alert quotes.
	reason string
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
	var server config.ServerConfig
	if opts.Config != nil {
		server = opts.Config.Server
	}
	if opts.UnreachableAfter <= 0 {
		opts.UnreachableAfter = server.UnreachableAfterDuration()
	}
	if opts.RunLateAfter <= 0 {
		opts.RunLateAfter = server.RunLateAfterDuration()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Service == nil {
		opts.Service = &Service{cfg: opts.Config, catalog: opts.Catalog, store: opts.Store, engines: opts.Engines,
			now: opts.Now, log: opts.Logger, runner: opts.Runner, leaseTTL: opts.LeaseTTL, states: newStateCache(DefaultStateCacheFiles),
			manifests: lake.NewManifestReader(0), trees: simulator.NewTreeCache(0)}
	}
	return &Scheduler{opts: opts, slots: make(chan struct{}, opts.MaxConcurrentRuns), tables: map[string]*tableSchedule{},
		outages: map[string]*outage{}, changed: map[string]uint64{}, woken: make(chan struct{}, 1), q: runQueue{wake: make(chan struct{}, 1)}}
}

// Changed records that table id changed (a commit reported to the daemon:
// an Iceberg commit report, a catalog event, a webhook) and wakes the
// daemon's scheduler: its next pass, started at once, decides an adaptive
// table whatever its poll interval, reading its metadata afresh. Reports
// of several commits before that pass make one pass. A table of another
// mode is decided as always (it reads its metadata every pass it is
// decided). Polling stays the fallback for commits nobody reports.
func (s *Scheduler) Changed(id lake.Ident) {
	s.mu.Lock()
	s.changes++
	s.changed[strings.ToLower(id.String())] = s.changes
	s.mu.Unlock()
	select {
	case s.woken <- struct{}{}:
	default:
	}
}

// reported is whether a commit of table id was reported since it was last
// read (ts), and the count of reports to record when it is read now.
func (s *Scheduler) reported(id lake.Ident, ts *tableSchedule) (bool, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed[strings.ToLower(id.String())] > ts.read, s.changes
}

// TableDecision is what a pass decided for one table.
type TableDecision struct {
	Table string `json:"table"`
	Due   bool   `json:"due"`
	// Trigger is adaptive or scheduled (the table's mode) for a due table;
	// an approved plan runs with its table's mode as the trigger.
	Trigger Trigger `json:"trigger,omitempty"`
	Reason  string  `json:"reason"`
	// Rank is where the pass queued a due table and what it ranked it
	// by; nil when the table was not due.
	Rank *Rank `json:"rank,omitempty"`
	// Deferred says why a budget held the due table's rewrites (compact,
	// deletes) back this pass; its cheap steps still ran when due.
	Deferred string `json:"deferred,omitempty"`
	// MetadataLocation is where the pass knows the table's metadata to be:
	// its catalog's listing, else where the decision (or an earlier pass)
	// read it; "" for a table that ran this pass, which changed it. The
	// gauges measure the table at it ([HealthRequest].MetadataLocation),
	// so an unchanged table is not read again.
	MetadataLocation string `json:"-"`
	// Measured is the table as the pass's alerts measured it last, after
	// its run when it ran; nil when the pass has no alerts or could not
	// measure it. The gauges take it as it is.
	Measured *Measured `json:"-"`
}

// Measured is a table's health and last success as a pass measured them.
type Measured struct {
	Health lake.Health
	// LastSuccess is when the table's newest done run ended (zero: none
	// did), when LastSuccessKnown: the runs the pass read said.
	LastSuccess      time.Time
	LastSuccessKnown bool
}

// Pass is what one scheduling pass did.
type Pass struct {
	At time.Time `json:"at"`
	// EndedAt is when the pass ended: the daemon's heartbeat
	// (floe_scheduler_last_pass_timestamp_seconds).
	EndedAt   time.Time       `json:"ended_at"`
	Decisions []TableDecision `json:"decisions"`
	Runs      []RunResult     `json:"runs"`
	// Errors are the tables that could not be decided or whose run
	// failed, each naming the table; a pass goes on past them.
	Errors []string `json:"errors"`
	// Budgets are the maintenance budgets the pass's due tables spend
	// from: what was spent, what the pass bought and what it deferred.
	Budgets []BudgetUse `json:"budgets"`
}

// Failed reports whether any table could not be decided or any run failed.
func (p Pass) Failed() bool { return len(p.Errors) > 0 }

// RunPass lists every table of every configured catalog (new tables are
// picked up without restart), decides for each whether it is due, and
// runs the due ones, at most MaxConcurrentRuns at once. A table is due
// when its policy's mode says so and, with a window, the clock is inside
// it: an approved plan always; mode: scheduled when the cron schedule
// fired since the table's last run; mode: adaptive when its poll interval
// passed and [Decide] finds a step due. A table with a running or queued
// run is busy; one whose runs failed waits out an exponential backoff
// ([BackoffBase] to [BackoffMax]); a halted one ([Hold]) waits for a
// person to resume it.
//
// The due tables are ranked and the budgets (budget.* of the lake and its
// namespaces) spent on them in that order ([Service.Estimate], and
// docs/policies.md): approved plans first, then tables whose backlog waited
// past max_deferral or the freshness SLA, then by gain per cost; a table a
// budget cannot pay for is deferred with the reason (its decision's
// Deferred, logged), its cheap steps still run, and Pass.Budgets accounts
// for every budget.
//
// Each table found due is logged at info ("run due", with the trigger and
// the reason), and each table whose layout plan waits for approval once
// per pass ("layout plan waits for approval"): its compaction is held
// back, since rewriting now would make the plan stale.
func (s *Scheduler) RunPass(ctx context.Context) (Pass, error) {
	return s.runPass(ctx, ctx)
}

// runPass decides under ctx and runs under runCtx: once ctx ends no new run
// starts, and those started go on until runCtx ends.
func (s *Scheduler) runPass(ctx, runCtx context.Context) (Pass, error) {
	now := s.opts.Now().UTC()
	pass := Pass{At: now, Decisions: []TableDecision{}, Runs: []RunResult{}, Errors: []string{}, Budgets: []BudgetUse{}}
	if _, err := s.opts.Store.RecoverAbandoned(ctx, now); err != nil {
		return pass, fmt.Errorf("scheduling pass: %w", err)
	}
	rec, err := readPassRecords(ctx, s.opts.Config, s.opts.Store)
	if err != nil {
		return pass, fmt.Errorf("scheduling pass: %w", err)
	}
	var jobs []passJob
	var listed []lake.Ident
	// known are the tables' metadata locations as the pass knows them
	// (TableDecision.MetadataLocation), by name.
	known := map[string]string{}
	waiting, err := s.waitingPlans(ctx)
	if err != nil {
		pass.Errors = append(pass.Errors, err.Error())
	}
	for _, name := range s.opts.Config.CatalogNames() {
		cat, err := s.opts.Catalog(ctx, name)
		var tables []lake.Located
		if err == nil {
			tables, err = lake.ListLocated(ctx, name, cat)
		}
		if ctx.Err() == nil {
			s.noteOutage("catalog "+name, lake.Ident{}, err, now)
		}
		if err != nil {
			pass.Errors = append(pass.Errors, fmt.Sprintf("catalog %s: %v", name, err))
			continue
		}
		for _, t := range tables {
			id := t.Ident
			listed = append(listed, id)
			eff, err := rec.policy(ctx, id)
			var d TableDecision
			if err == nil {
				d, err = s.decide(ctx, rec, id, t.MetadataLocation, eff, now)
			}
			// Without a listed location, an adaptive table is taken to
			// be where it was last read until its next poll (or a
			// reported commit); a table of another mode is read afresh.
			if d.MetadataLocation = t.MetadataLocation; d.MetadataLocation == "" && eff.Policy.Mode == policy.ModeAdaptive {
				d.MetadataLocation = s.opts.Service.knownLocation(id)
			}
			known[id.String()] = d.MetadataLocation
			s.noteDecision(id, now, d.Reason, err)
			if err != nil {
				pass.Errors = append(pass.Errors, fmt.Sprintf("%s: %v", id, err))
				continue
			}
			pass.Decisions = append(pass.Decisions, d)
			for _, pl := range waiting[strings.ToLower(d.Table)] {
				s.opts.Logger.Info("layout plan waits for approval; the compaction of the partitions it covers is held back",
					"table", d.Table, "plan_id", pl.ID, "layout", pl.Layout.String(), "approve", "floe plan approve "+pl.ID)
			}
			if d.Due {
				s.opts.Logger.Info("run due", "table", d.Table, "trigger", string(d.Trigger), "reason", d.Reason)
				jobs = append(jobs, passJob{id: id, cat: cat, eff: eff, d: d})
			} else {
				s.opts.Logger.Debug("scheduling decision", "table", d.Table, "due", d.Due, "reason", d.Reason)
			}
		}
	}
	// The most valuable work first, within the budgets.
	jobs = s.prioritize(ctx, rec, jobs, now, &pass)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, j := range jobs {
		// A run slot first; once ctx ends no new run starts.
		release := func() { <-s.slots }
		acquired := false
		select {
		case s.slots <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			if acquired {
				release()
			}
			break
		}
		// Claim the table only once a slot is free, so that replicas
		// deciding at the same moment take different tables: a replica
		// claims no more than it can run (see store.Store.ClaimTables).
		claimAt := s.opts.Now()
		holder := newHolder(s.opts.Runner)
		got, err := s.opts.Store.ClaimTables(ctx, holder, []string{j.id.String()}, 1, claimAt.Add(s.opts.LeaseTTL), claimAt)
		if err != nil || len(got) == 0 {
			release()
			// Not run here: decide it afresh next pass rather than wait
			// out its poll interval.
			ts := s.schedule(j.id.String())
			s.mu.Lock()
			ts.polled = time.Time{}
			s.mu.Unlock()
			if err != nil {
				pass.Errors = append(pass.Errors, fmt.Sprintf("%s: claim: %v", j.id, err))
				s.noteDecision(j.id, now, "", fmt.Errorf("due, but its lease could not be claimed: %w", err))
			} else {
				busy := busyError(ctx, s.opts.Store, j.id)
				s.opts.Logger.Info("table due, but another run holds it", "table", j.id.String(), "err", busy)
				s.noteDecision(j.id, now, fmt.Sprintf("due, but another run holds it: %v", busy), nil)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { release(); wg.Done() }()
			pr, err := s.runTable(runCtx, Request{Table: j.id, Trigger: j.d.Trigger, User: "floe serve", Holder: holder,
				Options: StepOptions{Skip: j.skip, SkipReasons: j.skipWhy}})
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
	// A table that ran changed: it is read afresh, and so are its runs.
	for _, r := range pass.Runs {
		delete(known, r.Run.Table)
		rec.forget(r.Run.Table)
	}
	for i, d := range pass.Decisions {
		if _, ok := known[d.Table]; !ok {
			pass.Decisions[i].MetadataLocation = ""
		}
	}
	if s.opts.Alerts != nil {
		measured, err := s.alert(runCtx, now, listed, known, rec)
		if err != nil {
			pass.Errors = append(pass.Errors, err.Error())
		}
		for i, d := range pass.Decisions {
			if m, ok := measured[d.Table]; ok {
				pass.Decisions[i].Measured = m
			}
		}
	}
	pass.EndedAt = s.opts.Now().UTC()
	return pass, runCtx.Err()
}

// alert evaluates every known table's freshness and failures alerts and
// hands them to the notifier, all in one call. It reads the runs floe
// recorded (through the pass's records, rec), so it judges a table even
// when its catalog is down; the backlog of a listed table is measured at
// the metadata location the pass knows (known). It returns what it
// measured of each listed table, by name, for the gauges.
func (s *Scheduler) alert(ctx context.Context, now time.Time, listed []lake.Ident, known map[string]string, rec *passRecords) (map[string]*Measured, error) {
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
	if err := s.alertHolds(ctx); err != nil {
		errs = append(errs, err)
	}
	measured := map[string]*Measured{}
	alerts := []alert.Alert{}
	for _, id := range ids {
		eff, err := rec.policy(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("alerts of %s: %w", id, err))
			continue
		}
		runs, err := rec.tableRuns(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("alerts of %s: %w", id, err))
			continue
		}
		in := alertInputOf(id, eff.Policy, runs[:min(len(runs), alertRuns)])
		if seen[id.String()] {
			// The backlog, from the table's own metadata: it fires for a
			// table floe never ran on, and never for one nobody writes.
			h, err := s.opts.Service.Health(ctx, id, HealthRequest{MetadataLocation: known[id.String()], Runs: runs, Policy: &eff})
			if ctx.Err() == nil {
				s.noteOutage(id.String(), id, unreadable(err), now)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("alerts of %s: measure its backlog: %w", id, err))
			} else {
				in.ObserveHealth(h.Metrics, now)
				m := &Measured{Health: h}
				if last, ok := lastSuccess(runs); ok {
					m.LastSuccess, m.LastSuccessKnown = last, true
				}
				measured[id.String()] = m
			}
			if eff.Policy.Mode == policy.ModeScheduled {
				alerts = append(alerts, alert.Late(id.String(), s.lateness(id, eff.Policy, in.Runs, now), now))
			}
		}
		alerts = append(alerts, alert.Evaluate(in, now)...)
	}
	if _, err := s.opts.Alerts.Notify(ctx, alerts...); err != nil {
		errs = append(errs, fmt.Errorf("table alerts: %w", err))
	}
	if err := s.alertOutages(ctx, now, seen); err != nil {
		errs = append(errs, err)
	}
	return measured, errors.Join(errs...)
}

// noteOutage records whether target (a catalog, or table id) could be read
// now: err starts or continues its outage, nil ends it.
func (s *Scheduler) noteOutage(target string, id lake.Ident, err error, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.outages, target)
		return
	}
	o := s.outages[target]
	if o == nil {
		o = &outage{Outage: alert.Outage{Target: target, Since: now}, catalog: id.Catalog}
		if id.Name != "" {
			o.Table = id.String()
		}
		s.outages[target] = o
	}
	o.Error = err.Error()
}

// outage is an unreachable target and, for a table, its catalog.
type outage struct {
	alert.Outage
	catalog string
}

// unreadable is err when it says a table's metadata could not be read,
// nil when there is none or it is the table's configuration that is wrong
// (a policy the schema outgrew), which the failures alert reports.
func unreadable(err error) error {
	if err == nil || errors.Is(err, config.ErrInvalid) || errors.Is(err, policy.ErrInvalid) {
		return nil
	}
	return err
}

// alertOutages hands the notifier an unreachable alert for every outage
// that lasted UnreachableAfter, and resolves those of the targets read
// again. A table's outage ends when its catalog lists it no more (seen:
// the tables listed this pass): a dropped table is not unreachable.
func (s *Scheduler) alertOutages(ctx context.Context, now time.Time, seen map[string]bool) error {
	s.mu.Lock()
	var alerts []alert.Alert
	down := map[string]bool{}
	for target, o := range s.outages {
		if o.Table != "" && !seen[o.Table] && s.outages["catalog "+o.catalog] == nil {
			delete(s.outages, target)
			continue
		}
		down[target] = true
		if a := alert.Unreachable(target, &o.Outage, s.opts.UnreachableAfter, now); a.State != "" {
			alerts = append(alerts, a)
		}
	}
	s.mu.Unlock()
	firing, err := s.opts.Alerts.Active(ctx)
	if err != nil {
		return fmt.Errorf("unreachable alerts: %w", err)
	}
	for _, a := range firing {
		if a.Kind == alert.KindUnreachable && !down[a.Key] {
			alerts = append(alerts, alert.Unreachable(a.Key, nil, s.opts.UnreachableAfter, now))
		}
	}
	slices.SortFunc(alerts, func(a, b alert.Alert) int { return strings.Compare(a.Key, b.Key) })
	if _, err := s.opts.Alerts.Notify(ctx, alerts...); err != nil {
		return fmt.Errorf("unreachable alerts: %w", err)
	}
	return nil
}

// noteDecision keeps what the pass decided for table id (or why it could
// not), and when the table was first listed.
func (s *Scheduler) noteDecision(id lake.Ident, now time.Time, reason string, err error) {
	ts := s.schedule(id.String())
	s.mu.Lock()
	defer s.mu.Unlock()
	ts.id = id
	if ts.seen.IsZero() {
		ts.seen = now
	}
	ts.reason = reason
	if err != nil {
		ts.reason = err.Error()
	}
}

// lateness is how late scheduled table id's run is under policy p at now,
// given its runs (newest first), or nil when it is not late: the run is
// due when the schedule fired after the newest run started (or, with no
// run, when this scheduler first listed the table), and late once
// RunLateAfter — or the end of p's maintenance window, when later — has
// passed since with no run started.
func (s *Scheduler) lateness(id lake.Ident, p policy.Policy, runs []alert.Run, now time.Time) *alert.Lateness {
	ts := s.schedule(id.String())
	s.mu.Lock()
	seen, reason := ts.seen, ts.reason
	s.mu.Unlock()
	due := seen
	for _, r := range runs {
		if r.Status == string(StatusQueued) {
			continue
		}
		next, err := policy.NextRun(p.Schedule, r.StartedAt)
		if err != nil {
			return nil // a schedule that never fires: the decision's error says so
		}
		due = next
		break
	}
	if due.IsZero() || due.After(now) {
		return nil
	}
	deadline := due.Add(s.opts.RunLateAfter)
	if p.Window != nil {
		if end := p.Window.EndAfter(due); end.After(deadline) {
			deadline = end
		}
	}
	if now.Before(deadline) {
		return nil
	}
	return &alert.Lateness{Due: due, Deadline: deadline, Schedule: p.Schedule, Reason: reason}
}

// alertHolds hands the notifier a halted alert for every table on hold,
// and resolves the halted alerts of the tables resumed since. It reads the
// holds from the store, so a table halted by a verb, the API or another
// replica alerts too, whatever its mode.
func (s *Scheduler) alertHolds(ctx context.Context) error {
	holds, err := s.opts.Service.Holds(ctx, false)
	if err != nil {
		return fmt.Errorf("halted alerts: %w", err)
	}
	held := map[string]bool{}
	var alerts []alert.Alert
	for _, h := range holds {
		held[h.Table] = true
		alerts = append(alerts, alert.Halted(h.Table, &alert.Halt{RunID: h.RunID, Reason: h.Reason, Since: h.HeldAt}))
	}
	firing, err := s.opts.Alerts.Active(ctx)
	if err != nil {
		return fmt.Errorf("halted alerts: %w", err)
	}
	for _, a := range firing {
		if a.Kind == alert.KindHalted && !held[a.Table] {
			alerts = append(alerts, alert.Halted(a.Table, nil))
		}
	}
	if _, err := s.opts.Alerts.Notify(ctx, alerts...); err != nil {
		return fmt.Errorf("halted alerts: %w", err)
	}
	return nil
}

// waitingPlans are the proposed plans by table (lower-cased): layout
// changes that wait for a person's approval.
func (s *Scheduler) waitingPlans(ctx context.Context) (map[string][]Plan, error) {
	plans, err := ListPlans(ctx, s.opts.Store, PlanFilter{State: PlanProposed})
	if err != nil {
		return nil, fmt.Errorf("plans waiting for approval: %w", err)
	}
	out := map[string][]Plan{}
	for _, p := range plans {
		k := strings.ToLower(p.Table)
		out[k] = append(out[k], p)
	}
	return out, nil
}

// alertRuns is how many of a table's newest runs its alerts judge it by.
const alertRuns = 50

// alertInputOf is what alert.Evaluate judges table id by without reading
// the table: its policy, floe's last recorded compaction and its runs
// (newest first, as read: at most [alertRuns]), with the backlog the
// newest run measured.
func alertInputOf(id lake.Ident, p policy.Policy, runs []Run) alert.Input {
	in := alert.Input{Table: id.String(), Policy: p}
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
	return in
}

// decide says whether table id, listed at metadata location loc ("": its
// catalog lists none), is due now under policy p.
func (s *Scheduler) decide(ctx context.Context, rec *passRecords, id lake.Ident, loc string, eff policy.Effective, now time.Time) (TableDecision, error) {
	p := eff.Policy
	d := TableDecision{Table: id.String()}
	not := func(format string, args ...any) (TableDecision, error) {
		d.Reason = fmt.Sprintf(format, args...)
		return d, nil
	}
	if held, halted := rec.hold(id); halted {
		return not("halted since %s: run %s failed a check that must never fail; resume it: floe resume %s",
			held.HeldAt.UTC().Format(time.RFC3339), held.RunID, ShellArg(id.String()))
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
	runs, err := rec.tableRuns(ctx, id)
	if err != nil {
		return d, err
	}
	if len(runs) > 0 && (runs[0].Status == StatusRunning || runs[0].Status == StatusQueued) {
		return not("busy: run %s is %s", runs[0].ID, runs[0].Status)
	}
	if approved := rec.approvedPlans(id); len(approved) > 0 {
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
	// Adaptive: decide once per poll interval, or at once after a
	// reported commit; on the state kept since the last read when the
	// listing says the metadata did not move (Decide runs again at the
	// new clock: ages move on), else read afresh.
	reported, changes := s.reported(id, ts)
	if !reported && !ts.polled.IsZero() && now.Sub(ts.polled) < p.PollInterval {
		return not("polled %s ago; poll_interval %s", now.Sub(ts.polled).Round(time.Second), p.PollInterval)
	}
	if reported {
		loc = ""
	}
	ts.polled, ts.read = now, changes
	steps, err := s.opts.Service.triggers(ctx, id, HealthRequest{MetadataLocation: loc, Runs: runs, Policy: &eff})
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

// runTable runs req ([Service.Run]) and keeps the table's failure count
// for the backoff. req.Holder, when set, is the table's lease, claimed by
// the caller; the run releases it when it ends. A run that failed an
// invariant check halted its table ([Hold]): it is not retried, so it does
// not count for the backoff.
func (s *Scheduler) runTable(ctx context.Context, req Request) (RunResult, error) {
	id := req.Table
	log := s.opts.Logger.With("table", id.String(), "trigger", req.Trigger)
	rr, err := s.opts.Service.Run(ctx, req)
	if rr.Run.ID != "" && s.opts.OnRun != nil {
		s.opts.OnRun(rr.Run)
	}
	ts := s.schedule(id.String())
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, ErrBusy):
		// Another run holds the table: not this table's failure.
		log.Info("table busy", "err", err)
	case errors.Is(err, ErrHalted), IsInvariantFailure(err):
		// Halted until a person resumes it (Service.Run logged it): no
		// retry to back off from.
		ts.failures, ts.retryAt = 0, time.Time{}
	case err != nil && !errors.Is(err, context.Canceled):
		ts.failures++
		wait := min(BackoffBase<<min(ts.failures-1, 16), BackoffMax)
		ts.retryAt = s.opts.Now().Add(wait)
		log.Error("run failed; the table backs off", "run_id", rr.Run.ID, "failures", ts.failures, "retry_at", ts.retryAt, "err", err)
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

// ErrBusy is returned (wrapped) by [Service.Run], [Service.Queue] and
// [Scheduler.Enqueue] for a table that has a run in flight (or queued):
// one run per table at a time.
var ErrBusy = errors.New("table busy")
