package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/server"
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
at most server.max_concurrent_runs in all (the API's queued runs included),
and a table whose runs fail backs off (5m doubling to 6h). A run that fails
a check that must never fail halts its table until 'floe resume TABLE'.

The API, metrics and dashboard listen on --listen; POST .../optimize queues
a run and answers 202 with its id (docs/api.md). Each pass evaluates the
tables' alerts and sends them to alerts.webhooks; 'floe doctor's checks run
every server.check_interval (docs/alerts.md). Every run's decision, start
and end is logged at info, floe serve's default level.

The telemetry sources of floe.yaml (telemetry.sources: files, Trino,
Athena) are collected each on its own interval, and a source that stays
silent longer than its silence alerts (docs/telemetry.md).

--once runs one scheduling pass and exits: 0 when every due run succeeded,
1 when a table could not be checked or a run failed. SIGTERM or SIGINT
stops scheduling and cancels the queued runs; runs in flight may finish for
--grace, then they are cancelled, leaving their tables consistent.`,
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
	opts.f.LogLevel = "info" // a daemon says what it does
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	svc, err := opts.f.Service(ctx)
	if err != nil {
		return err
	}
	log := opts.f.Logger()
	metrics := server.NewMetrics()
	sinks, err := alert.Sinks(cfg.Alerts, alert.DefaultWebhookOptions())
	if err != nil {
		return err
	}
	notifier, err := alert.New(alert.Options{Store: svc.Store(), Sinks: sinks, Repeat: cfg.AlertRepeat(), Logger: log, Now: opts.f.Now,
		OnNotify: func(a alert.Alert) { metrics.AlertSent(string(a.Kind)) }})
	if err != nil {
		return err
	}
	s := control.NewScheduler(control.SchedulerOptions{Service: svc, Alerts: notifier, MaxConcurrentRuns: cfg.Server.MaxConcurrentRuns,
		OnRun: metrics.ObserveRun, UnreachableAfter: cfg.Server.UnreachableAfterDuration(), RunLateAfter: cfg.Server.RunLateAfterDuration()})
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
	handler, err := server.New(ctx, server.Deps{Config: cfg, Store: svc.Store(), Catalog: opts.f.Catalog, Enqueue: s.Enqueue, Changed: s.Changed,
		Metrics: metrics, Now: opts.f.Now, Logger: log, Service: svc}, server.Options{})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("floe serve: listen on %s: %w", cfg.Server.Listen, err)
	}
	grace := opts.Grace
	if grace == 0 {
		grace = cfg.Server.ShutdownGraceDuration()
	}
	var sources *control.Sources
	if len(cfg.Telemetry.Sources) > 0 {
		sources, err = control.NewSources(control.SourcesOptions{Config: cfg, Store: svc.Store(), Catalog: opts.f.Catalog,
			Alerts: notifier, OnCollect: metrics.ObserveSource, Now: opts.f.Now, Logger: log})
		if err != nil {
			return errors.Join(err, ln.Close())
		}
	}
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: s, Interval: opts.Interval, Grace: grace, Handler: handler, Listener: ln,
		Checks: func(ctx context.Context) []control.Check {
			return control.Doctor(ctx, cfg, control.DoctorOptions{Now: opts.f.Now})
		},
		CheckInterval: cfg.Server.CheckIntervalDuration(), OnCheck: metrics.ObserveChecks,
		Observe: func(ctx context.Context, p control.Pass) error { return metrics.ObservePass(ctx, svc, p) },
		OnPass:  metrics.PassEnded,
		Sources: sources,
		Prune: func(ctx context.Context) error {
			r, err := control.PruneTelemetry(ctx, svc.Store(), control.PruneOptions{Retention: cfg.Telemetry.RetentionDuration(),
				History: cfg.Telemetry.HistoryDuration(), Now: opts.f.Now})
			if err == nil {
				metrics.ObservePrune(r)
				log.Info("telemetry pruned", "before", r.Before, "folded", r.Folded, "deleted", r.Deleted,
					"history_before", r.HistoryBefore, "folded_deleted", r.FoldedDeleted, "shapes_deleted", r.ShapesDeleted, "store_bytes", r.Size.Bytes)
			}
			// The runs are pruned whether or not the telemetry could be.
			rr, rerr := control.PruneRuns(ctx, svc.Store(), control.RunPruneOptions{Retention: cfg.Server.RunRetentionDuration(), Now: opts.f.Now})
			metrics.ObserveRunPrune(rr)
			if rerr == nil {
				log.Info("runs pruned", "before", rr.Before, "deleted", rr.Deleted)
			}
			return errors.Join(err, rerr)
		},
		Logger: log})
	if err != nil {
		return errors.Join(err, ln.Close())
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "floe serve: listening on http://%s (API /api/v1, metrics /metrics)\n", ln.Addr())
	log.Info("floe serve: scheduling", "catalogs", cfg.CatalogNames(), "interval", opts.Interval, "listen", ln.Addr().String())
	if sources != nil {
		log.Info("floe serve: collecting telemetry", "sources", sources.Names())
	}
	return d.Run(ctx)
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
		reason := d.Reason
		if d.Deferred != "" {
			due, reason = "deferred", reason+"; "+d.Deferred
		}
		t.row(d.Table, due, string(d.Trigger), reason)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, b := range p.Budgets {
		fmt.Fprintf(io.Out, "budget %s (%s): %s and %.2f vCPU-h spent in the window before this pass; bought %s, %.2f vCPU-h for %d tables; deferred %d\n",
			b.Scope, b.Where, policy.FormatSize(b.SpentBytes), b.SpentVCPUH, policy.FormatSize(b.BoughtBytes), b.BoughtVCPUH, len(b.Bought), len(b.Deferred))
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
