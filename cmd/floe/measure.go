package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/simulator"
)

type measureOptions struct {
	f        *factory
	Table    string
	Workload string
	Dialect  string
	Since    time.Duration
	Output   outputFormat
}

func newMeasureCmd(f *factory, runF func(context.Context, *measureOptions) error) *cobra.Command {
	opts := &measureOptions{f: f, Since: control.DefaultQueryWindow}
	cmd := &cobra.Command{
		Use:   "measure TABLE",
		Short: "Count the files each query reads today, with iceberg-go's own scan planning",
		Long: `For each workload query, count the data files that iceberg-go's scan planning
(Scan(WithRowFilter(…)).PlanFiles) keeps for the query's pushed-down
predicates on the table as it is now: the ground truth that simulate's
projections are judged against. 'floe simulate --layout current' agrees with it.`,
		Example: `  floe measure web.events --since 7d
  floe measure sales.lineitem --workload queries.sql --dialect spark --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMeasure(cmd.Context(), opts)
		},
	}
	addWorkloadFlags(cmd, &opts.Workload, &opts.Dialect, &opts.Since)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runMeasure(ctx context.Context, opts *measureOptions) error {
	id, _, tbl, err := openTable(ctx, opts.f, opts.Table)
	if err != nil {
		return err
	}
	wo, closeWorkload, err := openWorkload(opts.f, opts.Workload, opts.Dialect, opts.Since)
	if err != nil {
		return err
	}
	defer closeWorkload()
	st, err := workloadStore(ctx, opts.f, wo)
	if err != nil {
		return err
	}
	res, w, err := control.Measure(ctx, st, id, tbl, wo)
	printWarnings(opts.f.IO, w)
	if err != nil {
		return err
	}
	return renderMeasure(opts.f.IO, opts.Output, res)
}

// renderMeasure prints measure's result (measure and demo).
func renderMeasure(io *IOStreams, format outputFormat, res simulator.MeasureResult) error {
	if format == outputJSON {
		return writeJSON(io.Out, res)
	}
	fmt.Fprintf(io.Out, "%s: %d queries, %d data files; mean files skipped %.1f%%\n", res.Table, len(res.Queries), res.FilesTotal, res.SkippedPct)
	return nil
}
