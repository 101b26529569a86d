package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/lake"
)

type serveOptions struct {
	f        *factory
	Once     bool
	Listen   string
	Interval time.Duration
	Grace    time.Duration
	Output   outputFormat
}

func newServeCmd(f *factory, runF func(context.Context, *serveOptions) error) *cobra.Command {
	opts := &serveOptions{f: f, Interval: 30 * time.Second, Grace: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:   "serve [--once]",
		Short: "Watch every table and run the maintenance its policy calls for",
		Long: `Watch every table of every configured catalog (new tables are picked up
without restart) and run, by each table's policy ('floe policy show TABLE'):
mode: adaptive reads the table's metadata every poll_interval and runs the
steps whose triggers fired; mode: scheduled runs on the cron schedule;
mode: manual never runs by itself. An approved plan runs at the next pass.
Maintenance windows are honoured, at most one run per table is in flight,
and a table whose runs fail backs off exponentially (5m doubling to 6h).

--once runs one scheduling pass and exits (for cron or a Kubernetes
CronJob): exit 0 when every due run succeeded, 1 when a table could not be
checked or a run failed, as the CLI's verbs do.

Every pass also evaluates each table's freshness and failures alerts (see
docs/alerts.md) and sends them to floe.yaml's alerts.webhooks; the
connection checks of 'floe doctor' run at start and every 5 minutes, and a
failing one is an alert too.

SIGTERM or SIGINT stops scheduling; runs in flight may finish for --grace,
then they are cancelled, leaving their tables consistent.`,
		Example: `  floe serve
  floe serve --once --output json`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("grace") {
				opts.Grace = 0 // server.shutdown_grace
			}
			if opts.Interval < time.Second {
				return flagErrorf("--interval must be at least 1s, got %s", opts.Interval)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runServe(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "run one scheduling pass and exit")
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "address of the HTTP API, metrics and telemetry endpoints (default: server.listen, 127.0.0.1:8080)")
	cmd.Flags().DurationVar(&opts.Interval, "interval", opts.Interval, "time between scheduling passes")
	cmd.Flags().DurationVar(&opts.Grace, "grace", opts.Grace, "how long runs in flight may finish after SIGTERM before they are cancelled (default: server.shutdown_grace, 2m)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runServe(ctx context.Context, opts *serveOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	log := opts.f.Logger()
	metrics := server.NewMetrics()
	sinks, err := alert.Sinks(cfg.Alerts, alert.DefaultWebhookOptions())
	if err != nil {
		return err
	}
	notifier, err := alert.New(alert.Options{Store: st, Sinks: sinks, Repeat: cfg.AlertRepeat(), Logger: log, Now: opts.f.Now,
		OnNotify: func(a alert.Alert) { metrics.AlertSent(string(a.Kind)) }})
	if err != nil {
		return err
	}
	// The factory's engines, so that the sessions they open are closed
	// when floe serve ends.
	engines, err := opts.f.Engines()
	if err != nil {
		return err
	}
	svc, err := control.NewService(control.Deps{Config: cfg, Catalog: opts.f.Catalog, Store: st, Engines: engines, Now: opts.f.Now,
		Logger: log, LeaseTTL: cfg.Server.LeaseTTLDuration()})
	if err != nil {
		return err
	}
	s := control.NewScheduler(control.SchedulerOptions{Service: svc, Alerts: notifier, MaxConcurrentRuns: cfg.Server.MaxConcurrentRuns,
		OnRun: metrics.ObserveRun})
	if opts.Once {
		pass, err := s.RunPass(ctx)
		if err != nil {
			return err
		}
		if err := renderPass(opts.f.IO, opts.Output, pass); err != nil {
			return err
		}
		if pass.Failed() {
			return exitCodeError{code: exitError, msg: fmt.Sprintf("floe: %d of the pass's tables failed: %s", len(pass.Errors), strings.Join(pass.Errors, "; "))}
		}
		return nil
	}
	if opts.Listen != "" {
		cfg.Server.Listen = opts.Listen
	}
	if err := cfg.CheckServerListen(); err != nil {
		return err
	}
	handler, err := server.New(ctx, server.Deps{Config: cfg, Store: st, Catalog: opts.f.Catalog, Run: s.RunNow,
		Metrics: metrics, Now: opts.f.Now, Logger: log, Service: svc}, server.Options{})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("floe serve: listen on %s: %w", cfg.Server.Listen, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(opts.f.IO.ErrOut, "floe serve: listening on http://%s (API /api/v1, metrics /metrics)\n", ln.Addr())
	grace := opts.Grace
	if grace == 0 {
		grace = cfg.Server.ShutdownGraceDuration()
	}
	log.Info("floe serve: scheduling", "catalogs", cfg.CatalogNames(), "interval", opts.Interval, "listen", ln.Addr().String())
	serr := s.Serve(ctx, control.ServeOptions{Interval: opts.Interval, Grace: grace, CheckInterval: cfg.Server.CheckIntervalDuration(),
		Checks: func(ctx context.Context) []control.Check {
			return control.Doctor(ctx, cfg, control.DoctorOptions{Now: opts.f.Now})
		},
		OnCheck: func(checks []control.Check) {
			for _, c := range checks {
				if !c.Skipped {
					metrics.SetCheck(c.Name+" "+c.Target, c.OK)
				}
			}
		},
		OnPass: func(p control.Pass, err error) {
			observeHealth(ctx, svc, metrics, p, log)
		}})
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	herr := srv.Shutdown(shutdown)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		herr = errors.Join(herr, err)
	}
	return errors.Join(serr, herr)
}

// observeHealth gives the metrics each decided table's health after a
// pass. A table that cannot be measured keeps its last values and is
// logged; the pass's own errors say why too.
func observeHealth(ctx context.Context, svc *control.Service, m *server.Metrics, p control.Pass, log *slog.Logger) {
	for _, d := range p.Decisions {
		id, err := lake.ParseIdent(d.Table, svc.Config().CatalogNames(), svc.Config().DefaultCatalog)
		if err == nil {
			var h lake.Health
			if h, err = svc.Health(ctx, id, control.HealthRequest{}); err == nil {
				var last time.Time
				if last, err = svc.LastSuccess(ctx, d.Table); err == nil {
					m.ObserveHealth(h, last)
					continue
				}
			}
		}
		log.Warn("table health not measured; its metrics keep their last values", "table", d.Table, "err", err)
	}
	if err := m.RefreshPlans(ctx, svc.Store()); err != nil {
		log.Warn("plan metrics not refreshed", "err", err)
	}
}

// renderPass prints one scheduling pass: a line per table, then its runs.
func renderPass(io *IOStreams, format outputFormat, p control.Pass) error {
	if format == outputJSON {
		return writeJSON(io.Out, p)
	}
	t := newTable(io.Out, "TABLE", "DUE", "TRIGGER", "REASON")
	for _, d := range p.Decisions {
		due := "no"
		if d.Due {
			due = "yes"
		}
		t.row(d.Table, due, string(d.Trigger), d.Reason)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, pr := range p.Runs {
		fmt.Fprintln(io.Out)
		printRun(io, pr.Run)
	}
	for _, e := range p.Errors {
		fmt.Fprintf(io.ErrOut, "error: %s\n", e)
	}
	return nil
}
