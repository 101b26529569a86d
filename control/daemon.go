package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/oklog/run"

	"github.com/floe-project/floe/control/alert"
)

// DaemonOptions configure a [Daemon].
type DaemonOptions struct {
	// Scheduler decides and runs the tables' maintenance and the queued
	// runs. Required.
	Scheduler *Scheduler
	// Interval is the time between scheduling passes. Default: 30s.
	Interval time.Duration
	// WakeDelay is how long after a reported commit
	// ([Scheduler.Changed]) the pass it wakes starts: the commits reported
	// meanwhile share it. Default: 1s.
	WakeDelay time.Duration
	// WakeGap is the least time from the end of a pass to the start of a
	// pass a reported commit wakes: a woken pass decides the whole lake,
	// and a lake whose tables commit every second would otherwise be
	// passed over back to back. Default: 10s (commits wait at most that
	// long; polling catches the rest every Interval).
	WakeGap time.Duration
	// Tick, when set, replaces the interval timer (tests): a pass runs at
	// start and at every tick.
	Tick <-chan time.Time
	// Grace is how long runs in flight may go on once the daemon stops,
	// before they are cancelled (the rewriter leaves the table consistent
	// either way). Default: 2m.
	Grace time.Duration
	// Handler and Listener, when both set, are the HTTP server's actor:
	// the API, metrics, dashboard and telemetry endpoints.
	Handler  http.Handler
	Listener net.Listener
	// ShutdownTimeout bounds how long the HTTP server waits for requests
	// in flight once the daemon stops. Default: 10s.
	ShutdownTimeout time.Duration
	// Observe, when set, is the health observer: it is handed every pass
	// after the pass (the daemon's metrics of each table's health). It
	// runs beside the scheduler, so a slow one never delays a pass, and
	// sees the newest pass when it falls behind. Its errors are logged;
	// the next pass tries again.
	Observe func(ctx context.Context, p Pass) error
	// Checks, when set, are the connection checks (floe doctor's, see
	// [Doctor]), run at start and every CheckInterval (default 5m): a
	// failing one is logged, handed to OnCheck and alerted with the
	// scheduler's Alerts.
	Checks        func(ctx context.Context) []Check
	CheckInterval time.Duration
	OnCheck       func([]Check)
	// Sources, when set, are the telemetry sources of floe.yaml, each
	// collected on its own interval ([Sources.Run]) and alerted when
	// silent.
	Sources *Sources
	// Prune, when set, keeps the state store within its telemetry
	// retention ([PruneTelemetry]) and run retention ([PruneRuns]): run at
	// start and every PruneInterval (default [DefaultPruneInterval]). A
	// failure is logged; the next interval tries again.
	Prune         func(ctx context.Context) error
	PruneInterval time.Duration
	// OnPass, when set, sees every pass and its error as the pass ends, in
	// the scheduler's actor (the heartbeat metric; tests).
	OnPass func(Pass, error)
	// Logger gets the daemon's lifecycle lines and every error an actor
	// returns. Default: the scheduler's logger.
	Logger *slog.Logger
}

// Daemon is floe serve: a group of actors started and stopped together,
// the way Prometheus runs its components (github.com/oklog/run). Each
// actor is an execute function and an interrupt that makes it return:
//
//   - the context: the caller's ctx ending (SIGTERM, SIGINT) stops the group;
//   - the scheduler: a pass every Interval ([Scheduler.RunPass]), and
//     WakeDelay after a commit is reported ([Scheduler.Changed]), at most
//     once per WakeGap;
//   - the run queue: the runs the API queued ([Scheduler.Enqueue]), each
//     started when a run slot is free;
//   - the HTTP server (with Handler and Listener);
//   - the health observer (with Observe);
//   - the connection checks (with Checks);
//   - the telemetry sources (with Sources), each on its own interval.
//   - the pruning of telemetry and runs (with Prune).
//
// When one actor returns, all are interrupted. Then no new run starts; the
// runs in flight — a pass's and the queue's — may go on for the Grace,
// after which they are cancelled and recorded cancelled; queued runs are
// recorded cancelled (never started). Every error an actor returns is
// logged and returned by [Daemon.Run], joined.
type Daemon struct {
	o   DaemonOptions
	s   *Scheduler
	log *slog.Logger
}

// NewDaemon returns the daemon o describes, with o's defaults filled.
func NewDaemon(o DaemonOptions) (*Daemon, error) {
	if o.Scheduler == nil {
		return nil, errors.New("new daemon: a scheduler is required")
	}
	if (o.Handler == nil) != (o.Listener == nil) {
		return nil, errors.New("new daemon: an HTTP handler needs a listener and a listener a handler")
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	if o.WakeDelay <= 0 {
		o.WakeDelay = time.Second
	}
	if o.WakeGap <= 0 {
		o.WakeGap = 10 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Minute
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = 5 * time.Minute
	}
	if o.PruneInterval <= 0 {
		o.PruneInterval = DefaultPruneInterval
	}
	if o.Logger == nil {
		o.Logger = o.Scheduler.opts.Logger
	}
	return &Daemon{o: o, s: o.Scheduler, log: o.Logger}, nil
}

// Run runs the daemon until ctx ends or an actor fails, and returns once
// every actor has returned: nil after a clean stop, else every actor's
// error joined.
func (d *Daemon) Run(ctx context.Context) error {
	// Runs get a context that outlives the stop by the grace.
	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	stopping := make(chan struct{})
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { close(stopping) }) }
	graceDone := make(chan struct{})
	go func() {
		defer close(graceDone)
		select {
		case <-stopping:
		case <-runCtx.Done():
			return
		}
		t := time.NewTimer(d.o.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			d.log.Warn("shutdown grace over: cancelling the runs in flight", "grace", d.o.Grace)
			cancelRuns()
		case <-runCtx.Done():
		}
	}()

	var (
		g    run.Group
		mu   sync.Mutex
		errs []error
	)
	// add registers an actor whose error, if any, is logged and kept.
	add := func(name string, execute func(ctx context.Context) error) {
		actx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			err := execute(actx)
			if err != nil {
				d.log.Error("floe serve: "+name+" stopped", "err", err)
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				mu.Unlock()
			}
			return err
		}, func(error) {
			stop()
			cancel()
		})
	}
	add("signal", func(actx context.Context) error {
		<-actx.Done()
		if ctx.Err() != nil {
			d.log.Info("floe serve: stopping; runs in flight may finish for the grace", "grace", d.o.Grace)
		}
		return nil
	})
	passes := make(chan Pass, 1)
	add("scheduler", func(actx context.Context) error {
		return d.schedule(actx, runCtx, passes)
	})
	add("run queue", func(actx context.Context) error {
		return d.s.work(actx, runCtx)
	})
	if d.o.Handler != nil {
		add("http server", d.serveHTTP)
	}
	if d.o.Observe != nil {
		add("health observer", func(actx context.Context) error {
			return d.observe(actx, passes)
		})
	}
	if d.o.Checks != nil {
		add("connection checks", d.check)
	}
	if d.o.Sources != nil {
		add("telemetry sources", d.o.Sources.Run)
	}
	if d.o.Prune != nil {
		add("telemetry pruning", d.prune)
	}
	d.log.Info("floe serve: running", "interval", d.o.Interval, "grace", d.o.Grace, "max_concurrent_runs", cap(d.s.slots))
	_ = g.Run() // every actor's error is in errs
	cancelRuns()
	<-graceDone
	mu.Lock()
	defer mu.Unlock()
	if len(errs) == 0 {
		d.log.Info("floe serve: stopped")
	}
	return errors.Join(errs...)
}

// schedule runs a pass at start and every Interval (or Tick) until ctx
// ends — and WakeDelay after a reported commit wakes it ([Scheduler.Changed]),
// no sooner than WakeGap after the previous pass ended —, its runs under runCtx, and hands each pass to the health observer
// (the newest one, when it is behind). A pass that fails is logged; the
// next runs regardless, so one dead catalog does not stop the others'
// maintenance. It returns once the pass in flight has ended.
func (d *Daemon) schedule(ctx, runCtx context.Context, passes chan Pass) error {
	tick := d.o.Tick
	if tick == nil {
		t := time.NewTicker(d.o.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		pass, err := d.s.runPass(ctx, runCtx)
		ended := time.Now()
		if err != nil && ctx.Err() == nil {
			d.log.Error("scheduling pass failed", "err", err)
		}
		for _, e := range pass.Errors {
			d.log.Error("scheduling pass", "err", e)
		}
		if d.o.OnPass != nil {
			d.o.OnPass(pass, err)
		}
		// One slot, one sender: the observer gets the newest pass.
		select {
		case passes <- pass:
		default:
			select {
			case <-passes:
			default:
			}
			passes <- pass
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		case <-d.s.woken:
			wait := max(d.o.WakeDelay, d.o.WakeGap-time.Since(ended))
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// observe hands each pass to Observe until ctx ends.
func (d *Daemon) observe(ctx context.Context, passes <-chan Pass) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case p := <-passes:
			if err := d.o.Observe(ctx, p); err != nil && ctx.Err() == nil {
				d.log.Warn("health not observed; the metrics keep their last values until the next pass", "err", err)
			}
		}
	}
}

// serveHTTP serves Handler on Listener until ctx ends, then shuts the
// server down, waiting up to ShutdownTimeout for requests in flight.
func (d *Daemon) serveHTTP(ctx context.Context) error {
	srv := &http.Server{Handler: d.o.Handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(d.o.Listener) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", d.o.Listener.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.o.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("shut down the server on %s: %w", d.o.Listener.Addr(), err)
	}
	return nil
}

// check runs the connection checks now and every CheckInterval until ctx
// ends: a failing one is logged, every one handed to OnCheck and, with the
// scheduler's Alerts, alerted (fired while it fails, resolved when it
// passes).
func (d *Daemon) check(ctx context.Context) error {
	t := time.NewTicker(d.o.CheckInterval)
	defer t.Stop()
	for {
		checks := d.o.Checks(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var alerts []alert.Alert
		for _, c := range checks {
			if c.Skipped {
				continue
			}
			var err error
			if !c.OK {
				err = errors.New(c.Error)
				d.log.Error("connection check failed", "check", c.Name, "target", c.Target, "err", c.Error)
			}
			alerts = append(alerts, alert.Check(c.Name+" "+c.Target, err))
		}
		if d.o.OnCheck != nil {
			d.o.OnCheck(checks)
		}
		if n := d.s.opts.Alerts; n != nil {
			if _, err := n.Notify(ctx, alerts...); err != nil && ctx.Err() == nil {
				d.log.Error("connection check alerts not delivered; retried at the next check", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// prune prunes the state store's telemetry now and every PruneInterval
// until ctx ends. A failed prune (a busy database, a lost connection) is
// logged and retried at the next interval: raw events then stay a little
// longer than the retention, which changes no result.
func (d *Daemon) prune(ctx context.Context) error {
	t := time.NewTicker(d.o.PruneInterval)
	defer t.Stop()
	for {
		if err := d.o.Prune(ctx); err != nil && ctx.Err() == nil {
			d.log.Error("telemetry pruning failed; retried at the next interval", "interval", d.o.PruneInterval, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
