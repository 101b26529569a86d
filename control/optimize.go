package control

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// Steps of an optimize run, in the order they run.
const (
	StepExpire    = "expire"
	StepOrphans   = "orphans"
	StepCompact   = "compact"
	StepDeletes   = "deletes"
	StepManifests = "manifests"
)

// OptimizeOptions configure [Optimize]. Each step's options keep their own
// defaults; Skip names steps not to run.
type OptimizeOptions struct {
	Expire  rewriter.ExpireOptions
	Orphans rewriter.OrphanOptions
	Compact rewriter.CompactOptions
	// Deletes tune the delete-maintenance step ([rewriter.RewriteDeletes]);
	// its rewrites take Compact's target file size when it sets none.
	Deletes   rewriter.DeleteRewriteOptions
	Manifests rewriter.ManifestOptions
	// Skip lists steps to leave out (StepExpire, …).
	Skip map[string]bool
	// SkipReasons say why, by step; "--skip" for a step without one.
	SkipReasons map[string]string
	// Decisions, from [Decide], say which steps the table's policy calls
	// for: a step decided against is recorded with the decision's status
	// (not_due or skipped) and reason, and does not run.
	Decisions []StepDecision
	// Projected, when set, is the projection of the plan the run executes
	// (set with PlanID): once the compaction commits, the run measures the
	// workload on the new files beside it ([LayoutCheck]).
	Projected *PlanProjection
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Logger receives one line per step. Default: discard.
	Logger *slog.Logger
	// Progress is passed to the compaction.
	Progress func(done, total int, bytesDone, bytesTotal int64)
	// OnPlan, when set, is told each step's plan just before the step
	// does its work.
	OnPlan func(step string, plan StepReport)
	// PlanID, when set, runs that plan (see [ProposePlan]). Only an
	// approved plan runs; its layout and z-order key replace Compact.Layout
	// and Compact.ZOrderMode (and, when the layout names one, its target
	// file size replaces Compact.TargetFileSizeBytes). The plan moves to
	// running, then done or failed with the run, and the run records the
	// plan's id. A plan the table has moved past ([CheckPlan]) is stored as
	// stale and refused with [ErrStalePlan]. A refused plan starts no run.
	PlanID string
	// Trigger is what started the run, recorded with it. Default:
	// [TriggerManual].
	Trigger Trigger
	// Engine chooses the engine of each step. The zero value runs every
	// step natively.
	Engine EngineSelect
	// Runner names this process in the run record. Default: [RunnerID].
	Runner string
	// LeaseTTL is how long the run's lease of the table, and its run
	// record, stay live without renewal; they are renewed every quarter of
	// it. Default: [RunLeaseTTL].
	LeaseTTL time.Duration
	// Holder, when set, is a lease of the table that the caller (the
	// scheduler) already claimed with [store.Store.ClaimTables]; the run
	// renews and releases it. Otherwise Optimize claims the table itself
	// and refuses with [ErrBusy] a table another run holds.
	Holder string
	// Catalogs are every catalog floe can see: the expire and orphans
	// steps keep what any of their entries sharing the table's location
	// references (see [PlanExpire], [PlanOrphans]). Default: only the
	// table's own catalog.
	Catalogs Catalogs
	// Steps, when set, are the only steps run and recorded (a
	// single-step verb's); nil: all of them.
	Steps []string
	// User is who asked for the run, recorded with it.
	User string
	// RunID, when set, is the run's id: a run recorded as queued
	// ([Service.Queue]) is taken over under it. Default: a new id.
	RunID string

	// decision is the decision the run runs ([Service.Run]), recorded
	// with it.
	decision *Decision
}

// Optimize runs the maintenance steps on one table — expire snapshots,
// remove orphan files, compact into the layout, maintain delete files,
// rewrite manifests — and
// records the run and each step, with before/after health metrics and the
// step's own report, in the state store. The first failing step fails the
// run: Optimize returns its error, the run is stored as failed with the error
// text, and the later steps do not run. Nothing is swallowed. With
// opts.PlanID it runs an approved plan (see [OptimizeOptions.PlanID]).
// Options the table cannot take and a table that does not exist are refused
// before a run is recorded. [PlanOptimize] is the dry run.
func Optimize(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, opts OptimizeOptions) (Run, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Trigger == "" {
		opts.Trigger = TriggerManual
	}
	if _, err := ParseTrigger(string(opts.Trigger)); err != nil {
		return Run{Table: id.String(), PlanID: opts.PlanID, Steps: []Step{}}, fmt.Errorf("optimize %s: %w", id, err)
	}
	if opts.Runner == "" {
		opts.Runner = RunnerID()
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = RunLeaseTTL
	}
	// One run per table, across processes and machines: the table's lease
	// in the state store is claimed first, renewed while the run lasts and
	// released when it ends.
	if opts.Holder == "" {
		holder, err := ClaimTable(ctx, st, id, opts.Runner, opts.LeaseTTL, opts.Now())
		if err != nil {
			return Run{Table: id.String(), PlanID: opts.PlanID, Steps: []Step{}}, fmt.Errorf("optimize %s: %w", id, err)
		}
		opts.Holder = holder
	}
	defer func() {
		if err := st.ReleaseLease(context.WithoutCancel(ctx), opts.Holder, id.String()); err != nil {
			opts.Logger.Warn("table lease not released; it lapses by itself", "table", id.String(), "err", err)
		}
	}()
	if opts.PlanID != "" {
		return runPlan(ctx, cat, st, id, opts)
	}
	return optimize(ctx, cat, st, id, opts)
}

// RunnerID names this process in run records and leases: host name and
// process id, as "host-a:4242".
func RunnerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// ClaimTable claims table id's lease for one run of runner, until now+ttl,
// and returns the lease's holder (runner and a random suffix, so that two
// runs of one process are told apart). A table whose lease another run
// holds is refused with an error wrapping [ErrBusy] that names the holder.
func ClaimTable(ctx context.Context, st *store.Store, id lake.Ident, runner string, ttl time.Duration, now time.Time) (string, error) {
	holder := newHolder(runner)
	got, err := st.ClaimTables(ctx, holder, []string{id.String()}, 1, now.Add(ttl), now)
	if err != nil {
		return "", err
	}
	if len(got) == 1 {
		return holder, nil
	}
	return "", busyError(ctx, st, id)
}

// busyError says who holds table id's lease.
func busyError(ctx context.Context, st *store.Store, id lake.Ident) error {
	leases, err := st.TableLeases(ctx)
	if err == nil {
		for _, l := range leases {
			if strings.EqualFold(l.Table, id.String()) {
				run := ""
				if l.RunID != "" {
					run = " (run " + l.RunID + ")"
				}
				return fmt.Errorf("%w: %s holds its lease%s until %s", ErrBusy, l.Holder, run, l.ExpiresAt.UTC().Format(time.RFC3339))
			}
		}
	}
	return fmt.Errorf("%w: another run holds its lease", ErrBusy)
}

// newHolder is a lease holder of runner: "host-a:4242/3fa9c2d1".
func newHolder(runner string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return runner + "/" + hex.EncodeToString(b[:])
}

// optimize runs and records the steps; opts has its defaults and, for a
// plan, the plan's layout.
func optimize(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, opts OptimizeOptions) (Run, error) {
	// What the steps would refuse is refused before a run is recorded: a
	// table that does not exist, options the table cannot take.
	if _, err := checkOptimize(ctx, cat, id, opts); err != nil {
		return Run{Table: id.String(), PlanID: opts.PlanID, Steps: []Step{}}, fmt.Errorf("optimize %s: %w", id, err)
	}
	runID := opts.RunID
	if runID == "" {
		runID = newRunID(opts.Now())
	}
	run := Run{ID: runID, Table: id.String(), PlanID: opts.PlanID, Status: StatusRunning, Trigger: opts.Trigger, Runner: opts.Runner,
		StartedBy: opts.User, StartedAt: opts.Now().UTC(), LeaseExpiresAt: opts.Now().Add(opts.LeaseTTL).UTC(), Steps: []Step{}}
	if d := opts.decision; d != nil {
		run.Approvals = d.Approvals
	}
	rec, err := runRecord(run, opts.decision)
	if err != nil {
		return run, fmt.Errorf("optimize %s: %w", id, err)
	}
	if err := st.StartRun(ctx, rec); err != nil {
		// Not recorded (a queued run ended meanwhile): no run started.
		return Run{Table: id.String(), PlanID: opts.PlanID, Steps: []Step{}}, fmt.Errorf("optimize %s: %w", id, err)
	}
	log := opts.Logger.With("table", id.String(), "run_id", run.ID)
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	stopRenewing := renewRunLease(ctx, st, lease{run: run.ID, table: id.String(), holder: opts.Holder, ttl: opts.LeaseTTL}, opts.Now, log, lost)
	defer stopRenewing()
	steps := []struct {
		name string
		do   func(ctx context.Context) (StepReport, error)
	}{
		{StepExpire, func(ctx context.Context) (StepReport, error) {
			return expireStep(ctx, cat, id, opts)
		}},
		{StepOrphans, func(ctx context.Context) (StepReport, error) {
			return orphansStep(ctx, cat, st, id, opts)
		}},
		{StepCompact, func(ctx context.Context) (StepReport, error) {
			state, err := loadState(ctx, cat, id)
			if err != nil {
				return StepReport{}, err
			}
			co := opts.Compact
			co.Commit.RunID = run.ID
			if len(co.Priority) == 0 {
				// Partitions whose groups lost commit races in the table's
				// previous compaction go first this time.
				if co.Priority, err = lostPartitions(ctx, st, id, run.ID); err != nil {
					return StepReport{}, err
				}
			}
			co.Progress = opts.Progress
			co.Logger = log
			return compactStep(ctx, cat, id, state, co, opts.Engine, opts.onPlan(StepCompact))
		}},
		{StepDeletes, func(ctx context.Context) (StepReport, error) {
			return deletesStep(ctx, cat, id, deleteOptions(opts, run.ID, log), opts.onPlan(StepDeletes))
		}},
		{StepManifests, func(ctx context.Context) (StepReport, error) {
			return manifestsStep(ctx, cat, id, opts)
		}},
	}
	for _, s := range steps {
		if opts.Steps != nil && !slices.Contains(opts.Steps, s.name) {
			continue
		}
		rec := Step{Name: s.name, Status: StatusRunning, StartedAt: opts.Now().UTC()}
		if d, ok := decisionOf(opts.Decisions, s.name); ok && !d.Run && !opts.Skip[s.name] {
			rec.Status, rec.Reason, rec.EndedAt = d.Status, d.Reason, rec.StartedAt
			if err := putStep(ctx, st, run.ID, rec); err != nil {
				return run, fmt.Errorf("optimize %s: %w", id, err)
			}
			run.Steps = append(run.Steps, rec)
			log.Info("optimize step not run", "step", s.name, "status", d.Status, "reason", d.Reason)
			continue
		}
		if opts.Skip[s.name] {
			rec.Status, rec.Reason, rec.EndedAt = StatusSkipped, cmp.Or(opts.SkipReasons[s.name], "--skip"), rec.StartedAt
			if err := putStep(ctx, st, run.ID, rec); err != nil {
				return run, fmt.Errorf("optimize %s: %w", id, err)
			}
			run.Steps = append(run.Steps, rec)
			continue
		}
		var err error
		rec.Before, err = stepHealth(ctx, cat, id, opts.Now())
		if err == nil {
			err = ctx.Err()
		}
		if err == nil {
			rec.Report, err = s.do(ctx)
		}
		// From here the step's work is done and kept (a compaction
		// interrupted after its last commit returns no error): its health
		// after and its record are taken even when the run was stopped
		// meanwhile, so that the record says what changed. A later step
		// sees the context and stops.
		if err == nil {
			rec.After, err = stepHealth(context.WithoutCancel(ctx), cat, id, opts.Now())
		}
		if err == nil && s.name == StepCompact && opts.Projected != nil && compacted(rec.Report) {
			rec.Layout = checkLayout(ctx, cat, st, id, opts.PlanID, *opts.Projected, WorkloadOptions{Now: opts.Now})
			if c := rec.Layout; c.Error != "" {
				log.Warn("projection not checked after the rewrite; the rewrite stands", "err", c.Error)
			} else {
				log.Info("projection checked after the rewrite", "plan_id", c.PlanID, "projected_skipped_pct", c.ProjectedSkippedPct,
					"measured_skipped_pct", c.MeasuredSkippedPct, "delta_pp", c.DeltaPP, "within_error", c.WithinError)
			}
		}
		rec.EndedAt = opts.Now().UTC()
		if err != nil {
			if r := lake.StoreRefusal(id.Catalog, err); r != nil {
				r.Hint = refusedHint
				err = r
			}
			err = fmt.Errorf("optimize %s: step %s: %w", id, s.name, err)
			status := StatusFailed
			if cause := context.Cause(ctx); errors.Is(cause, store.ErrLeaseLost) {
				// Another process claimed the table: this run was stopped so
				// that two never work on it at once.
				err = fmt.Errorf("%w (%w)", err, cause)
			} else if ctx.Err() != nil {
				// Stopped (SIGTERM, Ctrl-C), not broken. The step's error
				// need not say so: a catalog call cut short by the context
				// can fail as "transaction has already been committed or
				// rolled back" (database/sql) instead of context.Canceled.
				status = StatusCancelled
			}
			rec.Status, rec.Error = status, err.Error()
			log.Error("optimize step failed", "step", s.name, "err", err)
			// Record the failure with a context that outlives a cancelled run.
			rctx := context.WithoutCancel(ctx)
			serr := putStep(rctx, st, run.ID, rec)
			eerr := st.EndRun(rctx, run.ID, string(status), err.Error(), opts.Now().UTC())
			run.Steps = append(run.Steps, rec)
			run.Status, run.Error, run.EndedAt = status, err.Error(), opts.Now().UTC()
			return run, errors.Join(err, serr, eerr)
		}
		rec.Status = StatusDone
		if err := putStep(context.WithoutCancel(ctx), st, run.ID, rec); err != nil {
			return run, fmt.Errorf("optimize %s: %w", id, err)
		}
		run.Steps = append(run.Steps, rec)
		log.Info("optimize step done", "step", s.name, "duration", rec.Duration())
	}
	run.Status, run.EndedAt = StatusDone, opts.Now().UTC()
	if err := st.EndRun(context.WithoutCancel(ctx), run.ID, string(StatusDone), "", run.EndedAt); err != nil {
		return run, fmt.Errorf("optimize %s: %w", id, err)
	}
	return run, nil
}

// onPlan is the OnPlan hook of step, a no-op when there is none.
func (o OptimizeOptions) onPlan(step string) func(StepReport) {
	return func(r StepReport) {
		if o.OnPlan != nil {
			o.OnPlan(step, r)
		}
	}
}

// putStep stores step s of run runID.
func putStep(ctx context.Context, st *store.Store, runID string, s Step) error {
	rec, err := stepRecord(s)
	if err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	return st.PutRunStep(ctx, runID, rec)
}

func loadState(ctx context.Context, cat catalog.Catalog, id lake.Ident) (*lake.State, error) {
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	return lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
}

// stepHealth is the table's health, for a step's before/after.
func stepHealth(ctx context.Context, cat catalog.Catalog, id lake.Ident, now time.Time) (*StepHealth, error) {
	st, err := loadState(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: now, Expiry: expiryOf(st, rewriter.ExpireOptions{}, now)})
	if err != nil {
		return nil, err
	}
	return &StepHealth{SnapshotID: h.SnapshotID, Status: h.Status, Reasons: h.Reasons, Metrics: h.Metrics}, nil
}

// lostPartitions are the partitions whose groups were skipped (lost a
// commit race, or their inputs changed) in the newest earlier run of table
// id that compacted, read from that run's compact report.
func lostPartitions(ctx context.Context, st *store.Store, id lake.Ident, self string) ([]string, error) {
	runs, err := ListRuns(ctx, st, id.String(), 20)
	if err != nil {
		return nil, fmt.Errorf("read previous runs: %w", err)
	}
	for _, r := range runs {
		if r.ID == self {
			continue
		}
		for _, step := range r.Steps {
			if step.Name != StepCompact || step.Report.IsZero() {
				continue
			}
			if step.Report.Compact == nil {
				return nil, nil // a plan with nothing to do, or an engine's run
			}
			var out []string
			for _, g := range step.Report.Compact.Skipped {
				out = append(out, g.Name)
			}
			return out, nil
		}
	}
	return nil, nil
}

// RunLeaseTTL is how long a run's lease of its table, and its run record,
// stay live without a renewal from its process; both are renewed every
// quarter of that. A run whose process died is marked abandoned once its
// record's lease lapses (see store.Store.RecoverAbandoned), its plan can
// run again, and another process may claim the table.
const RunLeaseTTL = 2 * time.Minute

// lease is what a run renews: its record and its table's lease.
type lease struct {
	run, table, holder string
	ttl                time.Duration
}

// renewRunLease renews the run record's lease and the table's lease until
// the returned stop is called: once at once, so that the table's lease
// names its run from the start (a run refused as busy meanwhile says which
// run holds the table, and floe runs shows it), then every quarter of the
// TTL. When the table's lease is lost (it lapsed and another process
// claimed the table) it calls lost, which cancels the run: two runs must
// not work on one table.
func renewRunLease(ctx context.Context, st *store.Store, l lease, now func() time.Time, log *slog.Logger, lost context.CancelCauseFunc) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// renew reports whether the run may go on.
	renew := func(record bool) bool {
		until := now().Add(l.ttl)
		if record {
			if err := st.RenewRun(ctx, l.run, until); err != nil {
				log.Warn("run lease not renewed; another process may take the run for dead when it lapses", "err", err)
			}
		}
		if err := st.RenewLease(ctx, l.holder, l.table, l.run, until); err != nil {
			if errors.Is(err, store.ErrLeaseLost) {
				log.Error("table lease lost: stopping the run", "err", err)
				lost(fmt.Errorf("stopped: %w", err))
				return false
			}
			log.Warn("table lease not renewed", "err", err)
		}
		return true
	}
	if !renew(false) { // the run's record was just started with its lease
		return cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(l.ttl / 4)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !renew(true) {
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// newRunID is sortable by start time and unique: 20261129T101500Z-3fa9c2d1.
func newRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// refusedHint is what a step whose object store refused its credentials
// says to do: credentials a REST catalog vends in a table's config are
// used as given, and a step that outlasts them fails (before its commit
// when it is still writing).
const refusedHint = "if the catalog vends the table's credentials, they expired before the step ended: " +
	"have the catalog vend longer-lived ones, or shorten runs with max_bytes_per_run"
