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
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	eo := rewriter.ExpireOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, RetainLast: opts.RetainLast,
		MaxConcurrentDeletes: opts.MaxConcurrentDeletes, KeepFiles: opts.KeepFiles}
	if err := eo.Validate(); err != nil {
		return flagError{err}
	}
	req := control.Request{Table: id, Steps: []string{control.StepExpire}, Engine: opts.Engine, User: defaultBy(),
		Options: control.StepOptions{Expire: eo}}
	err = runStep(ctx, opts.f, req, opts.DryRun, opts.Output)
	if errors.Is(err, rewriter.ErrSiblingUnknown) && !opts.KeepFiles {
		return fmt.Errorf("%w; --keep-files expires the snapshots without deleting any file", err)
	}
	return err
}

// printShared says which catalog entries share the table's location and how
// many files expiry kept for them.
func printShared(w io.Writer, siblings []string, kept int) {
	if len(siblings) > 0 {
		fmt.Fprintf(w, "the location is shared with %s: kept %d files they reference\n", strings.Join(siblings, ", "), kept)
	}
}
