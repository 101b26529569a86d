package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
)

type planListOptions struct {
	f      *factory
	Table  string
	State  string
	Output outputFormat
}

// newPlanListCmd builds 'plan list' and its top-level alias 'plans'.
func newPlanListCmd(f *factory, use string, runF func(context.Context, *planListOptions) error) *cobra.Command {
	opts := &planListOptions{f: f}
	cmd := &cobra.Command{
		Use:   use,
		Short: "List stored plans, newest first",
		Example: `  floe plan list
  floe plan list web.events --state approved --output json
  floe plans --state proposed`,
		Args: wrapArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				id, err := f.ResolveTable(args[0])
				if err != nil {
					return err
				}
				opts.Table = id.String()
			}
			if opts.State != "" {
				if _, err := control.ParsePlanState(opts.State); err != nil {
					return flagErrorf("--state: %v", err)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPlanList(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.State, "state", "", "only plans in this state: proposed|approved|rejected|running|done|failed|stale")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runPlanList(ctx context.Context, opts *planListOptions) error {
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	plans, err := control.ListPlans(ctx, st, control.PlanFilter{Table: opts.Table, State: control.PlanState(opts.State)})
	if err != nil {
		return err
	}
	if len(plans) == 0 && opts.Table != "" {
		// A name that is no table exits 4, as in every verb (runs, queries).
		if err := requireTable(ctx, opts.f, opts.Table); err != nil {
			return err
		}
	}
	if len(plans) == 0 && opts.Output != outputJSON {
		fmt.Fprintln(opts.f.IO.ErrOut, "no plans; propose one with 'floe plan TABLE'")
		return nil
	}
	return printPlans(opts.f.IO, opts.Output, false, plans...)
}
