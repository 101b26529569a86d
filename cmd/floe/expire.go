package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
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
	// KeepFiles is --keep-files: expire from metadata only.
	KeepFiles bool
	Output    outputFormat
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
those a ref keeps. The cut-off used is printed, and is "Cutoff" in JSON.

A location can hold more than one table: the same table registered under a
second name (Iceberg's register_table), its entry in a copied catalog or a
restored catalog backup, a table whose location lies inside another's. An
expired snapshot of this entry may be another's current one, and a file
only this entry's expired snapshots reach may be one the other still reads.
So floe loads every table of every configured catalog, and never deletes a
file that any table whose location overlaps this one's (equal, or one
inside the other; s3, s3a and s3n alike) references from any of its
snapshots, metadata or statistics files; it names them and counts the files
it kept for them. The snapshots still expire from this entry's metadata.
When a catalog cannot be listed or one of its tables cannot be loaded, floe
cannot tell what they reference: it expires nothing, deletes nothing, and
says which ones. A Spark or Trino engine's expiry cannot see them, so a
table that shares its location is expired by floe itself, whatever --engine
says.

--keep-files expires the snapshots from the table's metadata and deletes no
file, as Iceberg's cleanExpiredFiles(false): the files only they reached
are left for floe orphans, which removes them once they are old enough and
no table sharing the location references them. It asks no other catalog,
so it works while one cannot be read.`,
		Example: `  floe expire web.events --dry-run
  floe expire web.events --older-than 3d --retain-last 50
  floe expire web.events --keep-files`,
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
	cmd.Flags().BoolVar(&opts.KeepFiles, "keep-files", false, "expire the snapshots from the table's metadata only and delete no file (left for floe orphans)")
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
	eo := control.ExpireDefaults(eff.Policy, rewriter.ExpireOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, RetainLast: opts.RetainLast,
		MaxConcurrentDeletes: opts.MaxConcurrentDeletes, Now: opts.f.Now, KeepFiles: opts.KeepFiles})
	if err := eo.Validate(); err != nil {
		return flagError{err}
	}
	cats, err := opts.f.Catalogs()
	if err != nil {
		return err
	}
	plan, eo, err := control.PlanExpire(ctx, cats, id, tbl, eo)
	if errors.Is(err, rewriter.ErrSiblingUnknown) {
		return fmt.Errorf("%w; --keep-files expires the snapshots without deleting any file", err)
	}
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
		if plan.KeepFiles {
			fmt.Fprintf(w, "%s: would expire %d snapshots older than %s (keeping %d) and delete no file (--keep-files)\n", id, len(plan.Snapshots), formatCutoff(plan.Cutoff), plan.Retained)
			return nil
		}
		fmt.Fprintf(w, "%s: would expire %d snapshots older than %s (keeping %d) and delete %d files (%s)\n", id, len(plan.Snapshots), formatCutoff(plan.Cutoff), plan.Retained, len(plan.Files), config.FormatSize(plan.Bytes))
		printShared(w, plan.Siblings, plan.Shared)
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
	if r.KeepFiles {
		fmt.Fprintf(w, "%s: expired %d snapshots older than %s (%d retained), deleted no file (--keep-files): floe orphans removes the files only they referenced\n", id, len(r.Expired), formatCutoff(plan.Cutoff), r.Retained)
	} else {
		fmt.Fprintf(w, "%s: expired %d snapshots older than %s (%d retained), deleted %d files (%s)\n", id, len(r.Expired), formatCutoff(plan.Cutoff), r.Retained, len(r.Deleted), config.FormatSize(r.DeletedBytes))
		printShared(w, r.Siblings, len(r.Shared))
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(w, "  %d planned snapshots kept: a branch or tag came to need them since planning\n", len(r.Kept))
	}
	return nil
}

// printShared says which catalog entries share the table's location and how
// many files expiry kept for them.
func printShared(w io.Writer, siblings []string, kept int) {
	if len(siblings) > 0 {
		fmt.Fprintf(w, "the location is shared with %s: kept %d files they reference\n", strings.Join(siblings, ", "), kept)
	}
}
