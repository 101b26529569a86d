package main

import (
	"context"

	"github.com/spf13/cobra"
)

type planDecideOptions struct {
	f      *factory
	Action string // approve or reject
	ID     string
	By     string
	Output outputFormat
}

// newPlanDecideCmd builds 'plan approve' and 'plan reject'.
func newPlanDecideCmd(f *factory, action string, runF func(context.Context, *planDecideOptions) error) *cobra.Command {
	opts := &planDecideOptions{f: f, Action: action, By: defaultBy()}
	cmd := &cobra.Command{
		Use:   action + " ID",
		Short: "Approve a proposed plan, so that 'floe optimize --plan ID' runs it",
		Long: `Approve a proposed plan. Only an approved plan runs; a plan is decided once
(approving or rejecting a plan that is no longer proposed is an error).`,
		Example: `  floe plan approve 3fa9c2d1e0b4
  floe plan approve 3fa9c2d1e0b4 --by alice --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPlanDecide(cmd.Context(), opts)
		},
	}
	if action == "reject" {
		cmd.Short = "Reject a proposed plan; it will never run"
		cmd.Long = `Reject a proposed plan: it stays on record and never runs. A plan is decided
once (approving or rejecting a plan that is no longer proposed is an error).`
		cmd.Example = `  floe plan reject 3fa9c2d1e0b4
  floe plan reject 3fa9c2d1e0b4 --by bob --output json`
	}
	cmd.Flags().StringVar(&opts.By, "by", opts.By, "who decides")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runPlanDecide(ctx context.Context, opts *planDecideOptions) error {
	svc, err := opts.f.Service(ctx)
	if err != nil {
		return err
	}
	p, err := svc.DecidePlan(ctx, opts.Action, opts.ID, opts.By)
	if err != nil {
		return err
	}
	return printPlans(opts.f.IO, opts.Output, true, p)
}
