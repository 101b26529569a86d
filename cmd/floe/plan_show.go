package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
)

type planShowOptions struct {
	f      *factory
	ID     string
	Output outputFormat
}

func newPlanShowCmd(f *factory, runF func(context.Context, *planShowOptions) error) *cobra.Command {
	opts := &planShowOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one plan: its layout, projection and state",
		Example: `  floe plan show 3fa9c2d1e0b4
  floe plan show 3fa9c2d1e0b4 --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPlanShow(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runPlanShow(ctx context.Context, opts *planShowOptions) error {
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	p, err := control.GetPlan(ctx, st, opts.ID)
	if err != nil {
		return err
	}
	return printPlans(opts.f.IO, opts.Output, true, p)
}
