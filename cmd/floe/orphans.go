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
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	oo := rewriter.OrphanOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, Force: opts.Force, Concurrency: opts.Concurrency}
	if err := oo.Validate(); err != nil {
		return flagError{err}
	}
	req := control.Request{Table: id, Steps: []string{control.StepOrphans}, Engine: opts.Engine, User: defaultBy(),
		Options: control.StepOptions{Orphans: oo}}
	if err := runStep(ctx, opts.f, req, !opts.Apply, opts.Output); err != nil {
		return err
	}
	if !opts.Apply {
		if opts.Output != outputJSON {
			fmt.Fprintln(opts.f.IO.Out, "nothing deleted; run again with --apply to delete them")
		}
		return nil
	}
	// The sort spill directories of floe runs that died.
	swept, err := rewriter.SweepRunDirs("")
	if opts.Output != outputJSON {
		for _, d := range swept {
			fmt.Fprintf(opts.f.IO.Out, "removed spill directory of a dead run: %s (%s)\n", d.Path, config.FormatSize(d.Bytes))
		}
	}
	return err
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
