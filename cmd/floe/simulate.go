package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/simulator"
)

type simulateOptions struct {
	f          *factory
	Table      string
	Layouts    []string
	Workload   string
	Dialect    string
	Since      time.Duration
	ZOrderMode string
	Seed       uint64
	Target     targetSize
	PerQuery   bool
	Output     outputFormat
}

func newSimulateCmd(f *factory, runF func(context.Context, *simulateOptions) error) *cobra.Command {
	opts := &simulateOptions{f: f, Since: control.DefaultQueryWindow}
	cmd := &cobra.Command{
		Use:   "simulate TABLE",
		Short: "Project how many files each candidate layout would let the workload skip",
		Long: `Replay a workload — the collected queries of the table (--since) or a file of
SQL statements (--workload, --dialect) — against candidate layouts without
moving any data. For each layout floe samples the table's rows (only the
columns the workload filters on and the layout orders by), orders the sample
by the layout key per partition, cuts it into the files the rewrite would
write, and replays every query's predicate tree against those files' ranges;
'current' replays against the table's real file bounds. Reported per layout:
files after the rewrite, files skipped (%), bytes read (%), the error bar
(percentage points, from a bootstrap over the sampled files plus where the
writer cuts files; "thin*" when the sample holds too few rows per projected
file to trust it), files read ÷ the bound (the fewest files each query could
read at that file count: 1.00x is the best possible) and the rewrite cost.
The sample is stratified: every partition is sampled, so candidates keep the
partition pruning the table has; binpack is projected from the real file
bounds, so binpack of a table already bin-packed projects what current does.

Without --layout, the analyzer's candidates for the workload replayed — the
collected queries, or the statements of --workload — are simulated. Every
layout is checked against the table's schema first: a column the table lacks,
a nested, struct, list or map column, or a type the strategy cannot order
exits 2, naming the column and its type.`,
		Example: `  floe simulate web.events
  floe simulate web.events --layout current --layout 'sort(tenant_id, ts)' --layout 'hilbert(tenant_id, user_id)'
  floe simulate sales.lineitem --workload queries.sql --dialect trino --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSimulate(cmd.Context(), opts)
		},
	}
	addWorkloadFlags(cmd, &opts.Workload, &opts.Dialect, &opts.Since)
	cmd.Flags().StringArrayVar(&opts.Layouts, "layout", nil, "a layout to simulate (repeatable): current | binpack | sort(…) | zorder(…) | hilbert(…)")
	cmd.Flags().StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg or rank")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "sampling seed")
	opts.Target.add(cmd.Flags(), "file size the rewrites would write (default: the table's write.target-file-size-bytes, else 512MiB)")
	cmd.Flags().BoolVar(&opts.PerQuery, "per-query", false, "include each query's files read in JSON output")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runSimulate(ctx context.Context, opts *simulateOptions) error {
	pr, err := projectTable(ctx, opts.f, opts.Table, projectFlags{Layouts: opts.Layouts, ZOrderMode: opts.ZOrderMode, Seed: opts.Seed, Target: opts.Target},
		opts.Workload, opts.Dialect, opts.Since)
	if err != nil {
		return err
	}
	return renderSimulate(opts.f.IO, opts.Output, pr, opts.PerQuery)
}

// simulateTreeCuts is how many of a learned tree's cuts floe simulate spells out: the
// root's and its children's. floe plan show prints them all.
const simulateTreeCuts = 3

// writeTreeLines prints a tree's explanation ([layout.TreeExplanation.Lines]): its summary
// after first, every cut on a line of its own after indent.
func writeTreeLines(w io.Writer, first, indent string, lines []string) {
	for i, l := range lines {
		if i == 0 {
			fmt.Fprintln(w, first+l)
			continue
		}
		fmt.Fprintln(w, indent+l)
	}
}

// renderSimulate prints simulate's projections (simulate and demo); the
// per-query detail only with perQuery.
func renderSimulate(io *IOStreams, format outputFormat, pr control.Projections, perQuery bool) error {
	res := simulator.SimulateResult{Table: pr.Table.String(), Queries: len(pr.Workload.Queries), Candidates: pr.Projections,
		TargetFileSizeBytes: pr.TargetFileSizeBytes, TargetSource: pr.TargetSource}
	if !perQuery {
		for i := range res.Candidates {
			res.Candidates[i].PerQuery = nil
		}
	}
	if format == outputJSON {
		return writeJSON(io.Out, res)
	}
	w := io.Out
	fmt.Fprintf(w, "%s: %d queries replayed against %d files today\n", res.Table, res.Queries, len(pr.State.DataFiles))
	fmt.Fprintf(w, "target file size: %s, from %s (a layout's own \"target\" wins)\n", config.FormatSize(res.TargetFileSizeBytes), res.TargetSource)
	t := newTable(w, "  LAYOUT", "FILES AFTER", "FILES SKIPPED", "BYTES READ", "± (pp)", "READ/BOUND", "READ/BOX", "REWRITE")
	var notes []string
	for _, p := range res.Candidates {
		errText := fmt.Sprintf("%.1f", p.ErrorPP)
		if p.SampleThin {
			errText = "thin*"
			notes = append(notes, fmt.Sprintf("  * %s: %s", p.Layout, p.SampleNote))
		}
		t.row("  "+p.Layout.String(), strconv.Itoa(p.FilesAfter), fmt.Sprintf("%.1f%%", p.SkippedPct), fmt.Sprintf("%.1f%%", p.BytesReadPct),
			errText, report.RatioText(p.BoundRatio), report.RatioText(p.BoxRatio), config.FormatSize(p.RewriteBytes))
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, p := range res.Candidates {
		if p.TreeExplanation != nil {
			writeTreeLines(w, "  "+p.Layout.String()+": ", "    ", p.TreeExplanation.Lines(simulateTreeCuts))
		}
		if r := p.RecordedTree; r != nil {
			fmt.Fprintln(w, "    beside it: "+r.Compare(p.SkippedPct))
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w, "  READ/BOUND: files each query reads ÷ the fewest it could read at that file count (1.00x is the best possible).")
	fmt.Fprintln(w, "  READ/BOX: files read ÷ what the best grid of as many files reads for the whole workload (near 1.00x no layout does much better).")
	return nil
}
