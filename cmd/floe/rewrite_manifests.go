package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/rewriter"
)

type manifestsOptions struct {
	f          *factory
	Table      string
	TargetSize string
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
	st, err := loadState(ctx, opts.f, id)
	if err != nil {
		return err
	}
	before := rewriter.PlanManifests(st)
	_, res, err := rewriter.RewriteManifests(ctx, st.Table, rewriter.ManifestOptions{TargetSizeBytes: size})
	if err != nil {
		return err
	}
	after, err := loadState(ctx, opts.f, id)
	if err != nil {
		return err
	}
	out := struct {
		Table           string                  `json:"table"`
		ManifestsBefore int                     `json:"manifests_before"`
		ManifestsAfter  int                     `json:"manifests_after"`
		Result          rewriter.ManifestResult `json:"result"`
	}{id.String(), len(st.Manifests), len(after.Manifests), res}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, out)
	}
	if res.NoOp {
		fmt.Fprintf(opts.f.IO.Out, "%s: %d manifests over %d partitions are already clustered; nothing committed\n", id, out.ManifestsBefore, before.Partitions)
		return nil
	}
	fmt.Fprintf(opts.f.IO.Out, "%s: %d manifests → %d (snapshot %d)\n", id, out.ManifestsBefore, out.ManifestsAfter, res.SnapshotID)
	return nil
}
