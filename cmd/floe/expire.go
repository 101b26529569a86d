package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/rewriter"
)

type expireOptions struct {
	// Engine is --engine.
	Engine string
	f      *factory
	Table  string
	// OlderThan is --older-than; OlderThanSet says it was passed, so that
	// 0 means zero and an unset flag leaves the table's default.
	OlderThan            time.Duration
	OlderThanSet         bool
	RetainLast           int
	MaxConcurrentDeletes int
	DryRun               bool
	Output               outputFormat
}

func newExpireCmd(f *factory, runF func(context.Context, *expireOptions) error) *cobra.Command {
	opts := &expireOptions{f: f}
	cmd := &cobra.Command{
		Use:   "expire TABLE",
		Short: "Expire old snapshots and delete the files only they referenced",
		Long: `Expire snapshots older than --older-than, keeping at least the --retain-last
newest, and never one that a branch or tag needs (ref retention properties
are honoured). Then delete, in parallel, the manifest lists, manifests, data,
delete and statistics files that only expired snapshots referenced.

Without --older-than the table's policy's snapshots.older_than applies, else
the table's history.expire.max-snapshot-age-ms (5d unless set); without
--retain-last, snapshots.retain_last, else history.expire.min-snapshots-to-keep. An explicit value is used as given: --older-than 0 lets
every snapshot older than now expire, but for the --retain-last newest and
those a ref keeps. The cut-off used is printed, and is "Cutoff" in JSON.`,
		Example: `  floe expire web.events --dry-run
  floe expire web.events --older-than 3d --retain-last 50`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.OlderThanSet = cmd.Flags().Changed("older-than")
			if cmd.Flags().Changed("retain-last") && opts.RetainLast < 1 {
				return flagErrorf("--retain-last must be at least 1, got %d", opts.RetainLast)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runExpire(cmd.Context(), opts)
		},
	}
	cmd.Flags().Var((*durationValue)(&opts.OlderThan), "older-than", "expire snapshots older than this; 0 means all but --retain-last (default: the policy's snapshots.older_than, else the table's history.expire.max-snapshot-age-ms, 5d unless set)")
	cmd.Flags().IntVar(&opts.RetainLast, "retain-last", 0, "always keep this many newest snapshots, at least 1 (default: the policy's snapshots.retain_last, else the table's history.expire.min-snapshots-to-keep, 1 unless set)")
	cmd.Flags().IntVar(&opts.MaxConcurrentDeletes, "max-concurrent-deletes", 8, "files deleted at once")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be expired and deleted; change nothing")
	addEngineFlag(cmd, &opts.Engine)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runExpire(ctx context.Context, opts *expireOptions) error {
	id, cat, tbl, err := openTable(ctx, opts.f, opts.Table)
	if err != nil {
		return err
	}
	eff, err := opts.f.Policy(ctx, id)
	if err != nil {
		return err
	}
	eo := control.ExpireDefaults(eff.Policy, rewriter.ExpireOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, RetainLast: opts.RetainLast, MaxConcurrentDeletes: opts.MaxConcurrentDeletes, Now: opts.f.Now})
	if err := eo.Validate(); err != nil {
		return flagError{err}
	}
	plan, err := rewriter.PlanExpire(ctx, tbl, eo)
	if err != nil {
		return err
	}
	out := struct {
		Table  string                 `json:"table"`
		DryRun bool                   `json:"dry_run"`
		Plan   rewriter.ExpirePlan    `json:"plan"`
		Result *rewriter.ExpireResult `json:"result,omitempty"`
		// Engine is a distributed engine's report, when one ran the expiry.
		Engine *control.DistributedReport `json:"engine,omitempty"`
	}{Table: id.String(), DryRun: opts.DryRun, Plan: plan}
	if !opts.DryRun && len(plan.Snapshots) > 0 {
		sel, err := engineSelect(opts.f, eff.Policy, opts.Engine)
		if err != nil {
			return err
		}
		st, err := sel.StepState(ctx, id, tbl)
		if err != nil {
			return err
		}
		rep, err := control.ExpireOn(ctx, cat, st, plan, eo, sel)
		switch r := rep.(type) {
		case rewriter.ExpireResult:
			out.Result = &r
		case *control.DistributedReport:
			out.Engine = r
		}
		if err != nil {
			return err
		}
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, out)
	}
	w := opts.f.IO.Out
	if out.Engine != nil {
		printEngineReport(opts.f.IO, out.Table, out.Engine)
		return nil
	}
	if opts.DryRun || out.Result == nil {
		fmt.Fprintf(w, "%s: would expire %d snapshots older than %s (keeping %d) and delete %d files (%s)\n", id, len(plan.Snapshots), formatCutoff(plan.Cutoff), plan.Retained, len(plan.Files), config.FormatSize(plan.Bytes))
		for i, p := range plan.Files {
			if i == 20 {
				fmt.Fprintf(w, "  … and %d more\n", len(plan.Files)-20)
				break
			}
			fmt.Fprintln(w, "  "+p)
		}
		return nil
	}
	r := out.Result
	fmt.Fprintf(w, "%s: expired %d snapshots older than %s (%d retained), deleted %d files (%s)\n", id, len(r.Expired), formatCutoff(plan.Cutoff), r.Retained, len(r.Deleted), config.FormatSize(r.DeletedBytes))
	if len(r.Kept) > 0 {
		fmt.Fprintf(w, "  %d planned snapshots kept: a branch or tag came to need them since planning\n", len(r.Kept))
	}
	return nil
}
