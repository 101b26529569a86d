package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
)

type planOptions struct {
	f          *factory
	Table      string
	Layouts    []string
	Workload   string
	Dialect    string
	Since      time.Duration
	ZOrderMode string
	Seed       uint64
	Target     targetSize
	By         string
	Force      bool
	MinGain    float64
	MinGainSet bool
	Output     outputFormat
}

func newPlanCmd(f *factory, runF func(context.Context, *planOptions) error) *cobra.Command {
	opts := &planOptions{f: f, Since: control.DefaultQueryWindow, By: defaultBy()}
	cmd := &cobra.Command{
		Use:   "plan TABLE",
		Short: "Propose a layout plan for a table, to approve before optimize runs it",
		Long: `Project the candidate layouts as 'floe simulate' does — the analyzer's
candidates for the workload (collected, or --workload), or each --layout — pick the one that lets the workload skip the
most files (a tie goes to the one that rewrites fewer bytes), and store it as
a proposed plan for the table's current snapshot. Nothing touches data.

A plan's id is a hash of table, snapshot and layout: planning the same again
shows the stored plan with its state. A candidate is proposed only when it
pays for its rewrite:
  - it is projected to skip at least --min-gain percentage points more files
    than the current layout (default 5, or plan.min_gain_pp in floe.yaml,
    FLOE_PLAN_MIN_GAIN_PP);
  - it does not leave more data files than the table has today, unless its
    bytes fill more at the target file size (per partition, ⌈bytes / target⌉):
    a layout that would leave more, smaller files is not chosen.
Otherwise nothing is proposed (exit 0) and floe says why; --force proposes the
best candidate anyway. A plan runs only once approved:
  floe plan approve ID
  floe optimize --plan ID
If the table's files were rewritten or deleted before it runs, optimize marks
the plan stale and asks for a new one; appends since the plan are fine.

Sub-commands list, show, approve and reject manage stored plans.`,
		Example: `  floe plan web.events
  floe plan web.events --layout 'sort(tenant_id, ts)' --layout 'zorder(tenant_id, user_id)' --since 7d
  floe plan sales.lineitem --workload queries.sql --dialect trino --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.MinGainSet = cmd.Flags().Changed("min-gain")
			if opts.MinGainSet && (opts.MinGain < 0 || opts.MinGain > 100) {
				return flagErrorf("--min-gain must be 0 to 100 percentage points, got %g", opts.MinGain)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPlan(cmd.Context(), opts)
		},
	}
	addWorkloadFlags(cmd, &opts.Workload, &opts.Dialect, &opts.Since)
	cmd.Flags().StringArrayVar(&opts.Layouts, "layout", nil, "a candidate layout (repeatable): sort(…) | zorder(…) | hilbert(…) | binpack (default: the analyzer's candidates)")
	cmd.Flags().StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg or rank (the run uses the same)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "sampling seed")
	opts.Target.add(cmd.Flags(), "file size the rewrite writes (default: the table's write.target-file-size-bytes, else 512MiB)")
	cmd.Flags().StringVar(&opts.By, "by", opts.By, "who proposes the plan")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "propose the best candidate even when it does not gain enough over the current layout")
	cmd.Flags().Float64Var(&opts.MinGain, "min-gain", control.DefaultMinGainPP, "least gain over the current layout, in percentage points of files skipped (default: floe.yaml plan.min_gain_pp, else 5)")
	addOutputFlag(cmd, &opts.Output)
	cmd.AddCommand(
		newPlanListCmd(f, "list [TABLE]", nil),
		newPlanShowCmd(f, nil),
		newPlanDecideCmd(f, "approve", nil),
		newPlanDecideCmd(f, "reject", nil),
	)
	return cmd
}

// defaultBy is who decides when --by is not given: $USER.
func defaultBy() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

func runPlan(ctx context.Context, opts *planOptions) error {
	po, err := projectFlags{Layouts: opts.Layouts, ZOrderMode: opts.ZOrderMode, Seed: opts.Seed, Target: opts.Target}.options()
	if err != nil {
		return err
	}
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	wo, closeWorkload, err := openWorkload(opts.f, opts.Workload, opts.Dialect, opts.Since)
	if err != nil {
		return err
	}
	defer closeWorkload()
	po.Workload = wo
	svc, err := opts.f.Service(ctx)
	if err != nil {
		return err
	}
	req := control.ProposeRequest{Project: po, By: opts.By, Force: opts.Force}
	if opts.MinGainSet {
		req.MinGainPP = &opts.MinGain
	}
	res, err := svc.Propose(ctx, id, req)
	printWarnings(opts.f.IO, res.Projections.Workload)
	err = usageError(err)
	if errors.Is(err, control.ErrNothingToPlan) {
		return flagErrorf("--layout: %v", control.ErrNothingToPlan)
	}
	if err != nil {
		return err
	}
	c := res.Choice
	pr := res.Projections
	if res.Plan == nil {
		// Nothing to gain: not an error — the table is fine as it is — so
		// exit 0 with no plan.
		msg := c.Reason(id.String())
		if opts.Output == outputJSON {
			return writeJSON(opts.f.IO.Out, map[string]any{"table": id.String(), "proposed": false, "reason": msg,
				"best": c.Best.Layout, "best_skipped_pct": c.Best.SkippedPct, "current_skipped_pct": c.Current.SkippedPct,
				"gain_pp": c.GainPP, "min_gain_pp": c.MinGainPP, "best_files_after": c.Best.FilesAfter, "file_limit": c.FileLimit,
				"target_file_size_bytes": pr.TargetFileSizeBytes, "target_source": pr.TargetSource})
		}
		fmt.Fprintln(opts.f.IO.Out, msg)
		fmt.Fprintf(opts.f.IO.Out, "target file size: %s, from %s\n", config.FormatSize(pr.TargetFileSizeBytes), pr.TargetSource)
		return nil
	}
	if !c.Gain {
		fmt.Fprintln(opts.f.IO.ErrOut, "warning: proposed with --force:", strings.TrimSuffix(strings.TrimPrefix(c.Reason(id.String()), "no plan proposed for "+id.String()+": "), "; --force proposes it anyway"))
	}
	if err := printPlans(opts.f.IO, opts.Output, true, *res.Plan); err != nil || opts.Output == outputJSON {
		return err
	}
	_, err = fmt.Fprintf(opts.f.IO.Out, "target file size: %s, from %s (a layout's own \"target\" wins)\n", config.FormatSize(pr.TargetFileSizeBytes), pr.TargetSource)
	return err
}

// printPlans renders plans one after another (--output table) or as JSON:
// one object when one is true, else a list.
func printPlans(ios *IOStreams, format outputFormat, one bool, plans ...control.Plan) error {
	if format == outputJSON {
		if one && len(plans) == 1 {
			return writeJSON(ios.Out, plans[0])
		}
		if plans == nil {
			plans = []control.Plan{}
		}
		return writeJSON(ios.Out, plans)
	}
	if !one {
		t := newTable(ios.Out, "ID", "TABLE", "LAYOUT", "SKIPPED", "CURRENT", "STATE", "CREATED", "BY")
		for _, p := range plans {
			pp := p.Projection
			t.row(p.ID, p.Table, p.Layout.String(), fmt.Sprintf("%.1f%%", pp.SkippedPct), baselineText(pp), string(p.State),
				p.CreatedAt.Local().Format("2006-01-02 15:04"), p.CreatedBy)
		}
		return t.flush()
	}
	for i, p := range plans {
		if i > 0 {
			fmt.Fprintln(ios.Out)
		}
		if err := printPlan(ios.Out, p); err != nil {
			return err
		}
	}
	return nil
}

func baselineText(pp control.PlanProjection) string {
	if pp.CurrentSkippedPct == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *pp.CurrentSkippedPct)
}

func printPlan(w io.Writer, p control.Plan) error {
	pp := p.Projection
	fmt.Fprintf(w, "plan %s: %s\n", p.ID, p.State)
	t := newTable(w, "  table", p.Table)
	t.row("  base snapshot", strconv.FormatInt(p.BaseSnapshot, 10))
	layout := p.Layout.String()
	if pp.ZOrderMode != "" {
		layout += " (z-order key " + pp.ZOrderMode + ")"
	}
	t.row("  layout", layout)
	t.row("  files skipped", fmt.Sprintf("%.1f%% ± %.1f pp (current layout: %s)", pp.SkippedPct, pp.ErrorPP, baselineText(pp)))
	t.row("  bytes read", fmt.Sprintf("%.1f%%", pp.BytesReadPct))
	if pp.BoundRatio > 0 {
		t.row("  read/bound", fmt.Sprintf("%.2fx (1.00x: no layout with as many files could read fewer)", pp.BoundRatio))
	}
	if pp.BoxRatio > 0 {
		t.row("  read/box", fmt.Sprintf("%.2fx (1.00x: the best grid of as many files for the whole workload)", pp.BoxRatio))
	}
	t.row("  files", fmt.Sprintf("%d → %d", pp.FilesBefore, pp.FilesAfter))
	t.row("  rewrite", config.FormatSize(pp.RewriteBytes))
	t.row("  proposed", p.CreatedAt.Local().Format(time.DateTime)+" by "+p.CreatedBy)
	if !p.DecidedAt.IsZero() {
		t.row("  decided", p.DecidedAt.Local().Format(time.DateTime)+" by "+p.DecidedBy)
	}
	if e := pp.TreeExplanation; e != nil {
		// The summary here, its cuts under the table.
		t.row("  learned tree", e.Summary())
	}
	if err := t.flush(); err != nil {
		return err
	}
	if e := pp.TreeExplanation; e != nil {
		for _, l := range e.Lines(0)[1:] {
			fmt.Fprintln(w, "    "+l)
		}
	}
	if r := pp.RecordedTree; r != nil {
		fmt.Fprintln(w, "  beside it: "+r.Compare(pp.SkippedPct))
	}
	switch p.State {
	case control.PlanProposed:
		fmt.Fprintf(w, "next: floe plan approve %s (or reject)\n", p.ID)
	case control.PlanApproved:
		fmt.Fprintf(w, "next: floe optimize --plan %s\n", p.ID)
	case control.PlanStale:
		fmt.Fprintf(w, "next: re-plan: floe plan %s\n", control.ShellArg(p.Table))
	}
	return nil
}
