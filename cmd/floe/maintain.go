package main

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

type compactOptions struct {
	f                *factory
	Table            string
	Layout           string
	ZOrderMode       string
	Partitions       []string
	TargetFileSize   string
	Memory           string
	MaxBytes         string
	MaxFilesFraction float64
	MinInputFiles    int
	GroupsPerCommit  int
	DryRun           bool
	Output           outputFormat
}

func newCompactCmd(f *factory, runF func(context.Context, *compactOptions) error) *cobra.Command {
	opts := &compactOptions{f: f}
	cmd := &cobra.Command{
		Use:   "compact TABLE",
		Short: "Rewrite a table's files into a layout (sort, z-order, Hilbert) or bin-pack them",
		Long: `Rewrite the partitions that need it — small, oversized or delete-laden files,
or files not yet in the target layout — with floe's native engine: deletes
applied, rows ordered by the layout key with an external merge sort bounded
by --memory, files rolled at the target size. Each partition group is
committed as one atomic 'replace' snapshot; on a concurrent commit floe
reloads the table, re-validates that every input is still live and untouched
by new deletes, and retries; a group whose inputs changed is skipped, never
committed blindly. A sort becomes the table's sort order; z-order and Hilbert
are recorded in the table property floe.layout.

--max-bytes / --max-files-fraction bound one run (oldest data first), so a
large backlog is worked down over several runs.`,
		Example: `  floe compact web.events --layout 'sort(tenant_id, ts)' --dry-run
  floe compact web.events --layout 'zorder(tenant_id, user_id)' --memory 1GiB
  floe compact sales.lineitem --layout binpack --target-file-size 256MiB --max-bytes 10GiB`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCompact(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Layout, "layout", "binpack", "target layout: sort(a desc nulls last, b) | zorder(a,b) | hilbert(a,b,c) | binpack")
	cmd.Flags().StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg (bit-exact with Spark's rewrite_data_files) or rank")
	cmd.Flags().StringSliceVar(&opts.Partitions, "partition", nil, "only these partitions (as 'floe health' prints keys, e.g. ts_day=2026-11-01)")
	cmd.Flags().StringVar(&opts.TargetFileSize, "target-file-size", "", "size of the files written (default: the table's write.target-file-size-bytes, else 512MiB)")
	cmd.Flags().StringVar(&opts.Memory, "memory", "1GiB", "memory bound of the rewrite; sorted runs spill to disk beyond it")
	cmd.Flags().StringVar(&opts.MaxBytes, "max-bytes", "", "rewrite at most this many input bytes in this run")
	cmd.Flags().Float64Var(&opts.MaxFilesFraction, "max-files-fraction", 0, "rewrite at most this fraction of the table's files in this run")
	cmd.Flags().IntVar(&opts.MinInputFiles, "min-input-files", 5, "bin-pack a partition only with at least this many small files")
	cmd.Flags().IntVar(&opts.GroupsPerCommit, "groups-per-commit", 1, "partition groups per snapshot (partial progress: each commit is kept)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan; change nothing")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// compactionSetup turns flag values into rewriter options.
func compactionSetup(opts *compactOptions) (rewriter.CompactOptions, error) {
	l, err := layout.Parse(opts.Layout)
	if err != nil {
		return rewriter.CompactOptions{}, flagErrorf("--layout: %v", err)
	}
	zm, err := layout.ParseZOrderMode(opts.ZOrderMode)
	if err != nil {
		return rewriter.CompactOptions{}, flagErrorf("--zorder-mode: %v", err)
	}
	co := rewriter.CompactOptions{Layout: l, ZOrderMode: zm, Partitions: opts.Partitions,
		MaxFilesFraction: opts.MaxFilesFraction, MinInputFiles: opts.MinInputFiles, GroupsPerBatch: opts.GroupsPerCommit}
	if opts.TargetFileSize != "" {
		if co.TargetFileSizeBytes, err = config.ParseSize(opts.TargetFileSize); err != nil {
			return co, flagErrorf("--target-file-size: %v", err)
		}
	}
	if opts.Memory != "" {
		if co.Group.MemoryBytes, err = config.ParseSize(opts.Memory); err != nil {
			return co, flagErrorf("--memory: %v", err)
		}
		// The engine bounds its Arrow memory by --memory; a soft limit
		// for the Go heap a little above it keeps GC slack from growing
		// the process far past what the user asked for.
		debug.SetMemoryLimit(co.Group.MemoryBytes + co.Group.MemoryBytes/4 + 256<<20)
	}
	if opts.MaxBytes != "" {
		if co.MaxBytes, err = config.ParseSize(opts.MaxBytes); err != nil {
			return co, flagErrorf("--max-bytes: %v", err)
		}
	}
	if err := co.Validate(); err != nil {
		return co, flagError{err}
	}
	return co, nil
}

// compactSummary is compact's JSON output.
type compactSummary struct {
	Table  string                  `json:"table"`
	DryRun bool                    `json:"dry_run"`
	Plan   rewriter.CompactPlan    `json:"plan"`
	Result *rewriter.CompactResult `json:"result,omitempty"`
	Before lake.Metrics            `json:"before"`
	After  *lake.Metrics           `json:"after,omitempty"`
}

func runCompact(ctx context.Context, opts *compactOptions) error {
	co, err := compactionSetup(opts)
	if err != nil {
		return err
	}
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	st, err := loadState(ctx, opts.f, id)
	if err != nil {
		return err
	}
	before, err := lake.ComputeHealth(st, lake.HealthOptions{Now: opts.f.Now()})
	if err != nil {
		return err
	}
	plan, err := rewriter.PlanCompaction(st, co)
	if err != nil {
		return flagError{err}
	}
	sum := compactSummary{Table: id.String(), DryRun: opts.DryRun, Plan: plan, Before: before.Metrics}
	if !opts.DryRun && len(plan.Groups) > 0 {
		bar := newProgress(opts.f.IO)
		co.Progress = func(done, total int, bytesDone, bytesTotal int64) {
			bar.Set("compact "+id.String(), done, total)
		}
		co.Logger = opts.f.Logger()
		res, err := rewriter.Compact(ctx, st, plan, co)
		bar.Done()
		sum.Result = &res
		if err != nil {
			if opts.Output == outputJSON {
				_ = writeJSON(opts.f.IO.Out, sum)
			}
			return err
		}
		after, err := loadState(ctx, opts.f, id)
		if err != nil {
			return err
		}
		h, err := lake.ComputeHealth(after, lake.HealthOptions{Now: opts.f.Now()})
		if err != nil {
			return err
		}
		sum.After = &h.Metrics
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, sum)
	}
	return printCompact(opts.f.IO, sum)
}

func printCompact(io *IOStreams, s compactSummary) error {
	out := io.Out
	verb := "would rewrite"
	if !s.DryRun {
		verb = "rewriting"
	}
	fmt.Fprintf(out, "%s into %s (target %s): %s %d partitions, %d files, %s\n", s.Table, s.Plan.Layout,
		config.FormatSize(s.Plan.TargetFileSizeBytes), verb, len(s.Plan.Groups), s.Plan.InputFiles, config.FormatSize(s.Plan.InputBytes))
	t := newTable(out, "  PARTITION", "FILES", "BYTES", "DELETES", "WHY")
	for _, g := range s.Plan.Groups {
		t.row("  "+orDash(g.Partition), fmt.Sprint(g.Files), config.FormatSize(g.Bytes), fmt.Sprint(g.Deletes), joinReasons(g.Reasons))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(s.Plan.Deferred) > 0 {
		fmt.Fprintf(out, "  %d partitions deferred to a later run by the budget\n", len(s.Plan.Deferred))
	}
	if r := s.Result; r != nil {
		fmt.Fprintf(out, "\ncommitted %d snapshots: %d files (%s) → %d files (%s), %d rows, in %s\n", len(r.Commits), r.FilesIn,
			config.FormatSize(r.BytesIn), r.FilesOut, config.FormatSize(r.BytesOut), r.Rows, r.Duration.Round(time.Millisecond))
		for _, sk := range r.Skipped {
			fmt.Fprintf(out, "  skipped %s: %v (%d files left for 'floe orphans')\n", orDash(sk.Name), sk.Err, len(sk.Orphans))
		}
	}
	if s.After != nil {
		fmt.Fprintf(out, "data files %d → %d, small-file ratio %.0f%% → %.0f%%\n", s.Before.DataFiles, s.After.DataFiles,
			100*s.Before.SmallFileRatio, 100*s.After.SmallFileRatio)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "(unpartitioned)"
	}
	return s
}

func joinReasons(r []string) string {
	out := ""
	for i, s := range r {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

type expireOptions struct {
	f     *factory
	Table string
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

Without --older-than the table's history.expire.max-snapshot-age-ms applies
(5d unless set). An explicit value is used as given: --older-than 0 lets
every snapshot older than now expire, but for the --retain-last newest and
those a ref keeps. The cut-off used is printed, and is "Cutoff" in JSON.`,
		Example: `  floe expire web.events --dry-run
  floe expire web.events --older-than 3d --retain-last 50`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.OlderThanSet = cmd.Flags().Changed("older-than")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runExpire(cmd.Context(), opts)
		},
	}
	cmd.Flags().Var((*durationValue)(&opts.OlderThan), "older-than", "expire snapshots older than this; 0 means all but --retain-last (default: the table's history.expire.max-snapshot-age-ms, 5d unless set)")
	cmd.Flags().IntVar(&opts.RetainLast, "retain-last", 1, "always keep this many newest snapshots")
	cmd.Flags().IntVar(&opts.MaxConcurrentDeletes, "max-concurrent-deletes", 8, "files deleted at once")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be expired and deleted; change nothing")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runExpire(ctx context.Context, opts *expireOptions) error {
	id, cat, tbl, err := openTable(ctx, opts.f, opts.Table)
	if err != nil {
		return err
	}
	eo := rewriter.ExpireOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, RetainLast: opts.RetainLast, MaxConcurrentDeletes: opts.MaxConcurrentDeletes, Now: opts.f.Now}
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
	}{Table: id.String(), DryRun: opts.DryRun, Plan: plan}
	if !opts.DryRun && len(plan.Snapshots) > 0 {
		res, err := rewriter.Expire(ctx, cat, tbl, plan, eo)
		if err != nil {
			return err
		}
		out.Result = &res
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, out)
	}
	w := opts.f.IO.Out
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
	fmt.Fprintf(w, "%s: expired %d snapshots older than %s (kept %d), deleted %d files (%s)\n", id, len(r.Expired), formatCutoff(plan.Cutoff), len(r.Kept), len(r.Deleted), config.FormatSize(r.DeletedBytes))
	return nil
}

// formatCutoff renders a plan's cut-off in text output as JSON has it, in
// UTC to the second.
func formatCutoff(t time.Time) string { return t.UTC().Format(time.RFC3339) }

type orphansOptions struct {
	f     *factory
	Table string
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
	cmd.Flags().Var((*durationValue)(&opts.OlderThan), "older-than", fmt.Sprintf("only files older than this (default %gh; minimum 24h unless --force; 0 with --force: every unreferenced file)", rewriter.DefaultOrphanAge.Hours()))
	cmd.Flags().BoolVar(&opts.Apply, "apply", false, "delete the orphan files (default: only report them)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "only report the orphan files, as without --apply")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "allow --older-than below 24h (dangerous: may delete files of commits in flight)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 8, "files listed and deleted at once")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runOrphans(ctx context.Context, opts *orphansOptions) error {
	id, _, tbl, err := openTable(ctx, opts.f, opts.Table)
	if err != nil {
		return err
	}
	oo := rewriter.OrphanOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, Force: opts.Force, Now: opts.f.Now, Concurrency: opts.Concurrency}
	if err := oo.Validate(); err != nil {
		return flagError{err}
	}
	plan, err := rewriter.PlanOrphans(ctx, tbl, oo)
	if err != nil {
		return err
	}
	out := struct {
		Table  string                 `json:"table"`
		Apply  bool                   `json:"apply"`
		Plan   rewriter.OrphanPlan    `json:"plan"`
		Result *rewriter.OrphanResult `json:"result,omitempty"`
		// SweptSpill are the spill directories of dead runs removed (--apply).
		SweptSpill []rewriter.SweptDir `json:"swept_spill,omitempty"`
	}{Table: id.String(), Apply: opts.Apply, Plan: plan}
	if opts.Apply && len(plan.Files) > 0 {
		res, err := rewriter.DeleteOrphans(ctx, tbl, plan, opts.Concurrency)
		if err != nil {
			return err
		}
		out.Result = &res
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
	fmt.Fprintf(w, "%s: %d orphan files (%s) modified before %s among %d files listed; %d younger files kept\n",
		id, len(plan.Files), config.FormatSize(plan.Bytes), formatCutoff(plan.Cutoff), plan.Scanned, plan.Young)
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
		fmt.Fprintf(w, "  %s  %s  %s\n", f.ModTime.Format(time.RFC3339), config.FormatSize(f.Size), f.Path)
	}
	if out.Result != nil && len(out.Result.InFlight) > 0 {
		fmt.Fprintf(w, "kept %d planned files: a run started since the listing may need them\n", len(out.Result.InFlight))
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

func parseSize(v string) (int64, error) { return config.ParseSize(v) }
