package main

import (
	"context"
	"fmt"

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
	st, err := loadState(ctx, opts.f, id)
	if err != nil {
		return err
	}
	before := rewriter.PlanManifests(st)
	eff, err := opts.f.Policy(ctx, id)
	if err != nil {
		return err
	}
	sel, err := engineSelect(opts.f, eff.Policy, opts.Engine)
	if err != nil {
		return err
	}
	cat, err := opts.f.Catalog(ctx, id.Catalog)
	if err != nil {
		return err
	}
	rep, err := control.RewriteManifestsOn(ctx, cat, st, rewriter.ManifestOptions{TargetSizeBytes: size}, sel)
	var (
		res    rewriter.ManifestResult
		engine *control.DistributedReport
	)
	switch r := rep.(type) {
	case rewriter.ManifestResult:
		res = r
	case *control.DistributedReport:
		engine = r
	}
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
		// Engine is a distributed engine's report, when one rewrote them.
		Engine *control.DistributedReport `json:"engine,omitempty"`
	}{id.String(), len(st.Manifests), len(after.Manifests), res, engine}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, out)
	}
	if engine != nil {
		printEngineReport(opts.f.IO, id.String(), engine)
		fmt.Fprintf(opts.f.IO.Out, "%s: %d manifests → %d\n", id, out.ManifestsBefore, out.ManifestsAfter)
		return nil
	}
	if res.NoOp {
		fmt.Fprintf(opts.f.IO.Out, "%s: %d manifests over %d partitions are already clustered; nothing committed\n", id, out.ManifestsBefore, before.Partitions)
		return nil
	}
	fmt.Fprintf(opts.f.IO.Out, "%s: %d manifests → %d (snapshot %d)\n", id, out.ManifestsBefore, out.ManifestsAfter, res.SnapshotID)
	return nil
}
