package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
)

type runsOptions struct {
	f      *factory
	Table  string
	Limit  int
	Output outputFormat
}

func newRunsCmd(f *factory, runF func(context.Context, *runsOptions) error) *cobra.Command {
	opts := &runsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "runs [TABLE]",
		Short: "List recorded optimize runs and their steps",
		Example: `  floe runs
  floe runs web.events --limit 5 --output json`,
		Args: wrapArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				id, err := f.ResolveTable(args[0])
				if err != nil {
					return err
				}
				opts.Table = id.String()
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRuns(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "at most this many runs, newest first")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runRuns(ctx context.Context, opts *runsOptions) error {
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	runs, err := control.ListRuns(ctx, st, opts.Table, opts.Limit)
	if err != nil {
		return err
	}
	if len(runs) == 0 && opts.Table != "" {
		// The runs of a dropped table stay listed; with none, a name that is
		// no table is an error (exit 4), not an empty list.
		if err := requireTable(ctx, opts.f, opts.Table); err != nil {
			return err
		}
	}
	if opts.Output == outputJSON {
		if runs == nil {
			runs = []control.Run{} // an empty list, not null
		}
		return writeJSON(opts.f.IO.Out, runs)
	}
	if len(runs) == 0 {
		what := "no runs recorded"
		if opts.Table != "" {
			what += " for " + opts.Table
		}
		fmt.Fprintf(opts.f.IO.Out, "%s: floe optimize TABLE (or floe serve) records one\n", what)
		return nil
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(opts.f.IO.Out)
		}
		printRun(opts.f.IO, r)
	}
	return nil
}
