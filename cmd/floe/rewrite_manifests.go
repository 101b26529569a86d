package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/rewriter"
)

type manifestsOptions struct {
	// Engine is --engine.
	Engine     string
	f          *factory
	Table      string
	TargetSize string
	DryRun     bool
	Output     outputFormat
}

func newRewriteManifestsCmd(f *factory, runF func(context.Context, *manifestsOptions) error) *cobra.Command {
	opts := &manifestsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rewrite-manifests TABLE",
		Short: "Cluster a table's manifests by partition to a target manifest size",
		Long: `Rewrite the data manifests of the current snapshot so that each holds the
entries of neighbouring partitions, up to --target-size, which lets planners
skip manifests by partition. A table whose manifests are already clustered
is left alone: no empty commit is made.`,
		Example: `  floe rewrite-manifests web.events
  floe rewrite-manifests web.events --target-size 16MiB --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRewriteManifests(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.TargetSize, "target-size", "8MiB", "target manifest size")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be rewritten; change and record nothing")
	addEngineFlag(cmd, &opts.Engine)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runRewriteManifests(ctx context.Context, opts *manifestsOptions) error {
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	size, err := config.ParseSize(opts.TargetSize)
	if err != nil {
		return flagErrorf("--target-size: %v", err)
	}
	req := control.Request{Table: id, Steps: []string{control.StepManifests}, Engine: opts.Engine, User: defaultBy(),
		Options: control.StepOptions{Manifests: rewriter.ManifestOptions{TargetSizeBytes: size}}}
	return runStep(ctx, opts.f, req, opts.DryRun, opts.Output)
}
