package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
)

type serveOptions struct {
	f        *factory
	Once     bool
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
	cmd.Flags().DurationVar(&opts.Interval, "interval", opts.Interval, "time between scheduling passes")
	cmd.Flags().DurationVar(&opts.Grace, "grace", opts.Grace, "how long runs in flight may finish after SIGTERM before they are cancelled")
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
	sinks, err := alert.Sinks(cfg.Alerts, alert.DefaultWebhookOptions())
	if err != nil {
		return err
	}
	notifier, err := alert.New(alert.Options{Store: st, Sinks: sinks, Repeat: cfg.AlertRepeat(), Logger: log, Now: opts.f.Now})
	if err != nil {
		return err
	}
	s := control.NewScheduler(control.SchedulerOptions{Config: cfg, Store: st, Catalog: opts.f.Catalog, Now: opts.f.Now, Logger: log, Alerts: notifier})
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
	log.Info("floe serve: scheduling", "catalogs", cfg.CatalogNames(), "interval", opts.Interval)
	return s.Serve(ctx, control.ServeOptions{Interval: opts.Interval, Grace: opts.Grace,
		Checks: func(ctx context.Context) []control.Check {
			return control.Doctor(ctx, cfg, control.DoctorOptions{Now: opts.f.Now})
		},
		OnPass: func(p control.Pass, err error) {
			for _, pr := range p.Runs {
				log.Info("run", "table", pr.Table, "run_id", pr.Run.ID, "status", pr.Run.Status)
			}
		}})
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
