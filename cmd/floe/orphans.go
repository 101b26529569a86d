package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/rewriter"
)

type orphansOptions struct {
	// Engine is --engine.
	Engine string
	f      *factory
	Table  string
	// OlderThan is --older-than; OlderThanSet says it was passed, so that
	// 0 means zero and an unset flag leaves the default.
	OlderThan    time.Duration
	OlderThanSet bool
	Apply        bool
	// DryRun is --dry-run: report only, which is also what happens without
	// --apply.
	DryRun      bool
	Force       bool
	Concurrency int
	Output      outputFormat
}

func newOrphansCmd(f *factory, runF func(context.Context, *orphansOptions) error) *cobra.Command {
	opts := &orphansOptions{f: f}
	cmd := &cobra.Command{
		Use:   "orphans TABLE",
		Short: "Find (and with --apply delete) files under a table that nothing references",
		Long: `List the files under the table's location that no retained snapshot, manifest
list, manifest, metadata file or statistics file references and that are
older than --older-than (default 72h). s3, s3a and s3n are treated alike.
The age floor is a safety rule, not a tuning knob: a younger file may belong
to a commit in flight, so --older-than below 24h, 0 included, is refused
unless --force; --older-than 0 --force takes every unreferenced file, however
young. The cut-off used is printed, and is "Cutoff" in JSON.

Runs in flight are protected whatever --older-than and --force say. Every
floe run that writes files (compact, optimize, rewrite-manifests) first
writes a lease under <table location>/.floe/runs/ and renews it until it
ends; while a lease is live, no file modified since that run started (less
5 minutes for clock skew) is deleted, and floe says how many it kept and for
which runs. The leases are read again just before deleting. A killed run's
lease lapses after 2 minutes and is then removed with its run's orphans.

A location can hold more than one table: the same table registered under a
second name (Iceberg's register_table), its entry in a copied catalog or a
restored catalog backup, a table whose location lies inside another's. Each
commits on its own, and one's metadata knows nothing of the files the other
committed. So floe loads every table of every configured catalog, and keeps
every file that any table whose location overlaps this one's (equal, or one
inside the other; s3, s3a and s3n alike) references, whatever its age; it
names them in its report. When a catalog cannot be listed or one of its
tables cannot be loaded, it cannot tell what they reference: it deletes
nothing and says which ones. A Spark or Trino engine's own listing cannot
see them, so a table that shares its location is always cleaned by floe
itself, whatever --engine says.

floe names the data files it writes with the run's id ("…-run-<id>….parquet").
A file so named that no commit took, of a run on this very table (its lease,
or the run's record in floe's state, says which table the run was on) that
is over (its lease released, as when Ctrl-C stops an optimize run that could
not remove its files, or lapsed 2 more minutes ago, as when the process was
killed), is floe's own leftover: it is an orphan whatever --older-than says,
listed as "left by run R". Only the run's own table can say it never
committed the file: a file of a run on another table sharing the location,
or of a run nothing records (a released compact run's), is judged by its age
like any other.

A Spark, Trino or Flink job writing the table holds no floe lease: there
the age floor is the only protection, as it is for Iceberg's own
remove_orphan_files. Keep --older-than above the longest write job.

Without --apply nothing is deleted: floe reports the count, bytes and sample
paths. With --apply it deletes them and reports the bytes reclaimed, and
removes the spill directories that killed floe runs left in the local temp
directory.`,
		Example: `  floe orphans web.events
  floe orphans web.events --older-than 7d --apply`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.OlderThanSet = cmd.Flags().Changed("older-than")
			if opts.Apply && opts.DryRun {
				return flagErrorf("--apply and --dry-run are mutually exclusive")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runOrphans(cmd.Context(), opts)
		},
	}
	cmd.Flags().Var((*durationValue)(&opts.OlderThan), "older-than", fmt.Sprintf("only files older than this (default: the policy's orphans.older_than, %gh unless set; minimum 24h unless --force; 0 with --force: every unreferenced file)", rewriter.DefaultOrphanAge.Hours()))
	cmd.Flags().BoolVar(&opts.Apply, "apply", false, "delete the orphan files (default: only report them)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "only report the orphan files, as without --apply")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "allow --older-than below 24h (dangerous: may delete files of commits in flight)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 8, "files listed and deleted at once")
	addEngineFlag(cmd, &opts.Engine)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runOrphans(ctx context.Context, opts *orphansOptions) error {
	id, _, tbl, err := openTable(ctx, opts.f, opts.Table)
	if err != nil {
		return err
	}
	eff, err := opts.f.Policy(ctx, id)
	if err != nil {
		return err
	}
	oo := control.OrphanDefaults(eff.Policy, rewriter.OrphanOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, Force: opts.Force, Now: opts.f.Now, Concurrency: opts.Concurrency})
	if err := oo.Validate(); err != nil {
		return flagError{err}
	}
	cats, err := opts.f.Catalogs()
	if err != nil {
		return err
	}
	// Runs recorded in the state store say which table each floe run was
	// on; without a store, files of runs are judged by their age.
	history, err := opts.f.ExistingStore(ctx)
	if err != nil {
		return err
	}
	plan, err := control.PlanOrphans(ctx, cats, history, id, tbl, oo)
	if err != nil {
		return err
	}
	out := struct {
		Table  string                 `json:"table"`
		Apply  bool                   `json:"apply"`
		Plan   rewriter.OrphanPlan    `json:"plan"`
		Result *rewriter.OrphanResult `json:"result,omitempty"`
		// Engine is a distributed engine's report, when one removed them.
		Engine *control.DistributedReport `json:"engine,omitempty"`
		// SweptSpill are the spill directories of dead runs removed (--apply).
		SweptSpill []rewriter.SweptDir `json:"swept_spill,omitempty"`
	}{Table: id.String(), Apply: opts.Apply, Plan: plan}
	if opts.Apply && len(plan.Files) > 0 {
		sel, err := engineSelect(opts.f, eff.Policy, opts.Engine)
		if err != nil {
			return err
		}
		cat, err := opts.f.Catalog(ctx, id.Catalog)
		if err != nil {
			return err
		}
		st, err := sel.StepState(ctx, id, tbl)
		if err != nil {
			return err
		}
		rep, err := control.RemoveOrphansOn(ctx, cat, st, plan, oo, sel)
		switch r := rep.(type) {
		case rewriter.OrphanResult:
			out.Result = &r
		case *control.DistributedReport:
			out.Engine = r
		}
		if err != nil {
			return err
		}
	}
	if opts.Apply {
		swept, err := rewriter.SweepRunDirs("")
		out.SweptSpill = swept
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
	}
	fmt.Fprintf(w, "%s: %d orphan files (%s) modified before %s among %d files listed; %d younger files kept\n",
		id, len(plan.Files), config.FormatSize(plan.Bytes), formatCutoff(plan.Cutoff), plan.Scanned, plan.Young)
	if len(plan.Siblings) > 0 {
		fmt.Fprintf(w, "the location is shared with %s: kept %d files only they reference\n", strings.Join(plan.Siblings, ", "), plan.Shared)
	}
	if plan.InFlight > 0 || len(plan.Leases) > 0 {
		fmt.Fprintf(w, "kept %d files that runs in flight may need:\n", plan.InFlight)
		for _, l := range plan.Leases {
			fmt.Fprintf(w, "  run %s (%s on %s, pid %d) started %s, lease until %s\n", l.RunID, cmp.Or(l.Operation, "?"),
				cmp.Or(l.Host, "?"), l.PID, l.StartedAt.UTC().Format(time.RFC3339), l.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	for i, f := range plan.Files {
		if i == 10 {
			fmt.Fprintf(w, "  … and %d more\n", len(plan.Files)-10)
			break
		}
		left := ""
		if f.RunID != "" {
			left = "  (left by run " + f.RunID + ")"
		}
		fmt.Fprintf(w, "  %s  %s  %s%s\n", f.ModTime.Format(time.RFC3339), config.FormatSize(f.Size), f.Path, left)
	}
	for _, r := range leftByRun(plan.Files) {
		fmt.Fprintf(w, "%d files (%s) left by run %s, which ended without committing them: orphans whatever their age\n", r.files, config.FormatSize(r.bytes), r.id)
	}
	if out.Result != nil && len(out.Result.InFlight) > 0 {
		fmt.Fprintf(w, "kept %d planned files: a run started since the listing may need them\n", len(out.Result.InFlight))
	}
	if out.Result != nil && len(out.Result.Shared) > 0 {
		fmt.Fprintf(w, "kept %d planned files: an entry sharing the location committed them since the listing\n", len(out.Result.Shared))
	}
	for _, d := range out.SweptSpill {
		fmt.Fprintf(w, "removed spill directory of a dead run: %s (%s)\n", d.Path, config.FormatSize(d.Bytes))
	}
	if out.Result != nil {
		fmt.Fprintf(w, "deleted %d files, reclaimed %s\n", len(out.Result.Deleted), config.FormatSize(out.Result.Bytes))
	} else if len(plan.Files) > 0 {
		fmt.Fprintln(w, "nothing deleted; run again with --apply to delete them")
	}
	return nil
}

// runLeftovers are the orphans one floe run left.
type runLeftovers struct {
	id    string
	files int
	bytes int64
}

// leftByRun groups the orphans floe runs left by run, in order of first
// appearance.
func leftByRun(files []rewriter.OrphanFile) []runLeftovers {
	var out []runLeftovers
	at := map[string]int{}
	for _, f := range files {
		if f.RunID == "" {
			continue
		}
		i, ok := at[f.RunID]
		if !ok {
			i = len(out)
			at[f.RunID] = i
			out = append(out, runLeftovers{id: f.RunID})
		}
		out[i].files++
		out[i].bytes += f.Size
	}
	return out
}
