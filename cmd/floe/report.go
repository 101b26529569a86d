package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/lake"
)

type reportOptions struct {
	f          *factory
	Tables     []string
	Since      time.Duration
	Format     string
	File       string
	ZOrderMode string
	Seed       uint64
	Target     targetSize
	MinGain    float64
	MinGainSet bool
	Top        int
}

// defaultReportTop is how many tables a lake-wide report details (--top).
const defaultReportTop = 20

// The report's formats (--format).
const (
	formatMarkdown = "markdown"
	formatHTML     = "html"
	formatJSON     = "json"
)

func newReportCmd(f *factory, runF func(context.Context, *reportOptions) error) *cobra.Command {
	opts := &reportOptions{f: f, Since: control.DefaultQueryWindow, Top: defaultReportTop}
	cmd := &cobra.Command{
		Use:   "report [TABLE...]",
		Short: "Write the recommendation report to read before approving a rewrite",
		Long: `Write, per table: its health and the reasons; the predicate columns ranked
from the collected queries (--since), with their share of the workload, their
operator mix and why; every candidate layout's projection (files skipped and
its error bar, bytes read, files after, bytes to rewrite); the recommendation
and why; its cost/benefit — the bytes it rewrites once against the scan bytes
it saves per day at the recorded query rate, and the payback time; the
table's pending plans and its last runs with before/after metrics.

  scan bytes saved per day = (bytes read % today − bytes read % with the
      candidate) × table bytes × queries per day (queries in the window / days)
  payback (days) = bytes rewritten / scan bytes saved per day

A candidate that pays back more slowly than the table's max_payback (default
30 days), or saves nothing, is shown but not recommended. Without TABLE the
report covers every table: it reads and analyses them one at a time, and
starts with the lake's totals (tables, data, small-file backlog, expected
gain, runs and no-op runs in the window), the maintenance queue (each
budget's spend and what is left, the tables a budget deferred) and every
table ranked by expected gain (scan bytes saved per day); then the full
sections of the first --top tables of the ranking (default 20; 0: every
table). Nothing is proposed or changed: 'floe plan' does that.

-o markdown (the default; GitHub-flavoured, to paste into a pull request or
chat), html (one self-contained file with inline SVG charts, readable
offline) or json (the same content, stable keys): -o is the output format,
as in every verb. --file FILE writes the report there instead of standard
output; without -o the format is the file's extension's (.html, .json, else
markdown).`,
		Example: `  floe report web.events
  floe report --file report.html
  floe report --top 5
  floe report web.events sales.orders --since 7d -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tables = args
			opts.MinGainSet = cmd.Flags().Changed("min-gain")
			if err := opts.complete(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReport(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Top, "top", defaultReportTop, "lake-wide report: full sections for this many tables, the most to gain first (0: every table)")
	cmd.Flags().Var((*durationValue)(&opts.Since), "since", "collected queries that started within this long ago")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "", "report format: markdown|html|json (default: from --file's extension, else markdown)")
	cmd.Flags().StringVar(&opts.Format, "format", "", "the same as -o")
	_ = cmd.Flags().MarkHidden("format")
	cmd.Flags().StringVar(&opts.File, "file", "", "write the report to this file instead of standard output")
	cmd.Flags().StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg or rank")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "sampling seed")
	opts.Target.add(cmd.Flags(), "file size the rewrites would write (default: the table's write.target-file-size-bytes, else 512MiB)")
	cmd.Flags().Float64Var(&opts.MinGain, "min-gain", control.DefaultMinGainPP, "least gain over the current layout to recommend, in percentage points of files skipped (default: floe.yaml plan.min_gain_pp, else 5)")
	return cmd
}

// complete checks the flags and, unless -o was given, takes the format
// from --file's extension, else markdown.
func (o *reportOptions) complete() error {
	if strings.ContainsAny(o.Format, "./\\") {
		// -o report.html: how -o wrote a file before it was the format.
		return flagErrorf("-o %s: -o is the output format (markdown, html or json), as in every verb; write a file with --file %s", o.Format, o.Format)
	}
	if o.Format == "" {
		o.Format = formatMarkdown
		switch strings.ToLower(filepath.Ext(o.File)) {
		case ".html", ".htm":
			o.Format = formatHTML
		case ".json":
			o.Format = formatJSON
		}
	}
	o.Format = strings.ToLower(o.Format)
	switch o.Format {
	case formatMarkdown, formatHTML, formatJSON:
	default:
		return flagErrorf("-o %q: want markdown, html or json", o.Format)
	}
	if o.Top < 0 {
		return flagErrorf("--top must be 0 (every table) or more, got %d", o.Top)
	}
	if o.MinGainSet && (o.MinGain < 0 || o.MinGain > 100) {
		return flagErrorf("--min-gain must be 0 to 100 percentage points, got %g", o.MinGain)
	}
	return nil
}

func runReport(ctx context.Context, opts *reportOptions) error {
	po, err := projectFlags{ZOrderMode: opts.ZOrderMode, Seed: opts.Seed, Target: opts.Target}.options()
	if err != nil {
		return err
	}
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	minGain := opts.MinGain
	if !opts.MinGainSet {
		minGain = cfg.MinGainPP()
	}
	r, err := gatherReport(ctx, opts.f, opts.Tables, control.ReportOptions{
		Since: opts.Since, Top: opts.Top, ZOrderMode: po.ZOrderMode, Seed: po.Seed, TargetFileSizeBytes: po.TargetFileSizeBytes, MinGainPP: minGain,
	})
	if err != nil {
		return err
	}
	if opts.File == "" {
		return renderReport(opts.f.IO.Out, opts.Format, r)
	}
	if err := writeReportFile(opts.File, opts.Format, r); err != nil {
		return err
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "wrote %s\n", opts.File)
	return nil
}

// gatherReport reports on the named tables, or on every table when none
// are named: a lake-wide report, which [control.ReportLake] streams,
// loading one table at a time (report and demo).
func gatherReport(ctx context.Context, f *factory, names []string, ro control.ReportOptions) (report.Report, error) {
	cfg, err := f.Config()
	if err != nil {
		return report.Report{}, err
	}
	ids, err := tableIdents(ctx, f, names)
	if err != nil {
		return report.Report{}, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return report.Report{}, err
	}
	ro.Now, ro.Lake, ro.HealthTargetFileSizeBytes = f.Now, len(names) == 0, cfg.TargetFileSizeBytes()
	ro.Policy = func(id lake.Ident) (policy.Policy, error) {
		eff, err := f.Policy(ctx, id)
		return eff.Policy, err
	}
	load := func(ctx context.Context, id lake.Ident) (*lake.State, error) { return loadState(ctx, f, id) }
	if ro.Lake {
		ro.Budgets = cfg.Policies.Budgets
		r, err := control.ReportLake(ctx, st, ids, load, ro)
		return r, usageError(err)
	}
	states := make([]*lake.State, 0, len(ids))
	for _, id := range ids {
		s, err := load(ctx, id)
		if err != nil {
			return report.Report{}, err
		}
		states = append(states, s)
	}
	r, err := control.Report(ctx, st, states, ro)
	return r, usageError(err)
}

// renderReport writes r in format.
func renderReport(w io.Writer, format string, r report.Report) error {
	switch format {
	case formatHTML:
		return report.HTML(w, r)
	case formatJSON:
		return report.JSON(w, r)
	}
	return report.Markdown(w, r)
}

// writeReportFile writes r to path through a temporary file renamed into
// place, so that a reader never sees half a report.
func writeReportFile(path, format string, r report.Report) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.Remove(tmp.Name()))
		}
	}()
	if err := renderReport(tmp, format, r); err != nil {
		return errors.Join(fmt.Errorf("write report %s: %w", path, err), tmp.Close())
	}
	if err := tmp.Chmod(0o644); err != nil {
		return errors.Join(fmt.Errorf("write report %s: %w", path, err), tmp.Close())
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}
