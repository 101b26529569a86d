package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

type optimizeOptions struct {
	// Engine is --engine.
	Engine string
	compactOptions
	// OlderThan is --expire-older-than and OrphanAge --orphan-older-than;
	// the *Set fields say they were passed, so that 0 means zero and an
	// unset flag leaves the step's default.
	OlderThan    time.Duration
	OlderThanSet bool
	RetainLast   int
	OrphanAge    time.Duration
	OrphanAgeSet bool
	Skip         []string
	ManifestSize string
	// PlanID is --plan: run this approved plan (Table is then optional).
	PlanID string
}

func newOptimizeCmd(f *factory, runF func(context.Context, *optimizeOptions) error) *cobra.Command {
	opts := &optimizeOptions{compactOptions: compactOptions{f: f}}
	cmd := &cobra.Command{
		Use:   "optimize [TABLE] [--plan ID]",
		Short: "Run every maintenance step on a table and record the run",
		Long: `Run, in order: expire snapshots → remove orphan files → compact into the
layout → rewrite manifests. Each step is recorded with the table's health
before and after it in a run in floe's state store ('floe runs' lists them).
The first failing step fails the run: floe exits non-zero with the error, the
run is stored as failed, and the later steps do not run.

With --plan ID floe runs an approved plan ('floe plan', 'floe plan approve'):
the compaction uses the plan's layout, z-order key and file size (so --layout,
--zorder-mode and --target-file-size are refused), the run records the plan,
and the plan ends done or failed. TABLE may be left out; if given it must be
the plan's. A plan that is not approved does not run; one whose files were
rewritten or deleted since it was made is marked stale and must be re-planned.

Before a run is recorded floe checks that the table exists and that every
step can take its options: layout columns the schema has and the strategy can
order by, --partition keys the table has files in, --memory of at least 1MiB
(0: unbounded). What fails the check exits 2 and records nothing. --dry-run
checks the same and prints what each step would do — the snapshots to expire,
the orphan files, the partitions to compact, the manifests to replace — each
planned against the table as it is now; it changes and records nothing.

Without --layout and --plan the table's policy decides ('floe policy show
TABLE'): an approved plan for the table runs; otherwise each step runs when
the policy enables it and its trigger fired (expire: snapshots or their age;
orphans: every time; compact: small files, deletes or clustering depth;
manifests: manifests per 1,000 files), and the layout is the policy's: a
layout change that needs approval is proposed as a plan — its id and the
approve command are printed — and the compaction waits for it, while the
steps that need no approval run. Steps that do not run are recorded with
their reason. Flags still override the policy's values (--expire-older-than,
--retain-last, --orphan-older-than, --target-file-size, --max-bytes).`,
		Example: `  floe optimize web.events
  floe optimize web.events --layout 'sort(tenant_id, ts)'
  floe optimize sales.lineitem --dry-run --output json
  floe optimize web.events --skip orphans --max-bytes 20GiB
  floe optimize --plan 3fa9c2d1e0b4`,
		Args: wrapArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Table = args[0]
			}
			opts.LayoutSet = cmd.Flags().Changed("layout")
			opts.OlderThanSet = cmd.Flags().Changed("expire-older-than")
			if cmd.Flags().Changed("retain-last") && opts.RetainLast < 1 {
				return flagErrorf("--retain-last must be at least 1, got %d", opts.RetainLast)
			}
			opts.OrphanAgeSet = cmd.Flags().Changed("orphan-older-than")
			if opts.PlanID == "" && opts.Table == "" {
				return flagErrorf("optimize needs TABLE or --plan ID")
			}
			if opts.PlanID != "" {
				for _, name := range []string{"layout", "zorder-mode", "target-file-size", "allow-small-target-file-size"} {
					if cmd.Flags().Changed(name) {
						return flagErrorf("--plan and --%s are mutually exclusive: the plan fixes the layout", name)
					}
				}
				if slices.Contains(opts.Skip, control.StepCompact) {
					return flagErrorf("--plan and --skip compact are mutually exclusive: running a plan is compacting")
				}
			}
			for _, s := range opts.Skip {
				switch s {
				case control.StepExpire, control.StepOrphans, control.StepCompact, control.StepManifests:
				default:
					return flagErrorf("--skip %q: want expire, orphans, compact or manifests", s)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runOptimize(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Layout, "layout", "binpack", "compaction layout: sort(…) | zorder(…) | hilbert(…) | binpack (default: the policy decides)")
	fl.StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg or rank")
	opts.Target.add(fl, "size of the files written, at least 4MiB (default: the policy's target_file_size, else the table's, else 512MiB)")
	fl.StringVar(&opts.Memory, "memory", "1GiB", "memory bound of the compaction, at least 1MiB (0: unbounded)")
	fl.StringVar(&opts.MaxBytes, "max-bytes", "", "compact at most this many input bytes in this run")
	fl.Float64Var(&opts.MaxFilesFraction, "max-files-fraction", 0, "compact at most this fraction of the files in this run")
	fl.IntVar(&opts.MinInputFiles, "min-input-files", 5, "bin-pack a partition only with at least this many small files")
	fl.IntVar(&opts.GroupsPerCommit, "groups-per-commit", 1, "partition groups per snapshot")
	fl.Var((*durationValue)(&opts.OlderThan), "expire-older-than", "expire snapshots older than this; 0 means all but --retain-last (default: the table's history.expire.max-snapshot-age-ms, 5d unless set)")
	fl.IntVar(&opts.RetainLast, "retain-last", 0, "always keep this many newest snapshots, at least 1 (default: the table's history.expire.min-snapshots-to-keep, 1 unless set)")
	fl.Var((*durationValue)(&opts.OrphanAge), "orphan-older-than", fmt.Sprintf("remove orphan files older than this (default %gh, minimum 24h)", rewriter.DefaultOrphanAge.Hours()))
	fl.StringVar(&opts.ManifestSize, "manifest-target-size", "8MiB", "target manifest size")
	fl.StringSliceVar(&opts.Skip, "skip", nil, "steps to leave out: expire, orphans, compact, manifests")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "check everything and print what each step would do; change and record nothing")
	fl.StringVar(&opts.PlanID, "plan", "", "run this approved plan (see 'floe plan'); TABLE is then optional")
	addEngineFlag(cmd, &opts.Engine)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runOptimize(ctx context.Context, opts *optimizeOptions) error {
	co, err := compactionSetup(&opts.compactOptions)
	if err != nil {
		return err
	}
	msize, err := parseSizeFlag("--manifest-target-size", opts.ManifestSize)
	if err != nil {
		return err
	}
	id, err := optimizeTarget(ctx, opts)
	if err != nil {
		return err
	}
	svc, err := opts.f.Service(ctx)
	if err != nil {
		return err
	}
	req := control.Request{Table: id, PlanID: opts.PlanID, Engine: opts.Engine, User: defaultBy(),
		Options: control.StepOptions{
			Expire:    rewriter.ExpireOptions{OlderThan: opts.OlderThan, OlderThanSet: opts.OlderThanSet, RetainLast: opts.RetainLast},
			Orphans:   rewriter.OrphanOptions{OlderThan: opts.OrphanAge, OlderThanSet: opts.OrphanAgeSet},
			Compact:   co,
			Manifests: rewriter.ManifestOptions{TargetSizeBytes: msize},
			Skip:      map[string]bool{},
		}}
	for _, s := range opts.Skip {
		req.Options.Skip[s] = true
	}
	if opts.LayoutSet {
		req.Layout = &co.Layout
	}
	return runRequest(ctx, opts.f, svc, req, opts.DryRun, opts.Output)
}

// runRequest runs (or, with dry, dry-runs) req on the service and renders
// the outcome: what optimize and every single-step verb do.
func runRequest(ctx context.Context, f *factory, svc *control.Service, req control.Request, dry bool, format outputFormat) error {
	if dry {
		out, err := svc.DryRun(ctx, req)
		if err != nil {
			return usageError(err)
		}
		return renderDryRun(f.IO, format, out)
	}
	bar := newProgress(f.IO)
	req.Progress = func(done, total int, bytesDone, bytesTotal int64) {
		bar.Bytes("compact "+req.Table.String(), fmt.Sprintf("compact %s: %d/%d partitions", req.Table, done, total), bytesDone, bytesTotal)
	}
	if format != outputJSON {
		req.OnPlan = planPrinter(f.IO.Out, req.Table.String())
	}
	res, err := svc.Run(ctx, req)
	bar.Done()
	if res.Run.ID == "" {
		return usageError(err) // refused before any run started
	}
	if format == outputJSON {
		if jerr := writeJSON(f.IO.Out, res); jerr != nil && err == nil {
			return jerr
		}
		return err
	}
	printRun(f.IO, res.Run)
	if pl := res.Decision.Plan; pl != nil && pl.Plan.State == control.PlanProposed {
		fmt.Fprintf(f.IO.Out, "\nproposed plan %s: rewrite %s into %s; the compaction waits for it\n  approve: floe plan approve %s\n  review:  floe plan show %s\n",
			pl.Plan.ID, res.Table, pl.Plan.Layout, pl.Plan.ID, pl.Plan.ID)
	}
	return err
}

// optimizeTarget resolves the table to optimize — TABLE, or the plan's
// table with --plan (TABLE, if given, must match it) — and opens the store.
func optimizeTarget(ctx context.Context, opts *optimizeOptions) (lake.Ident, error) {
	var id lake.Ident
	if opts.Table != "" {
		var err error
		if id, err = opts.f.ResolveTable(opts.Table); err != nil {
			return id, err
		}
	}
	if opts.PlanID == "" {
		return id, nil
	}
	st, err := opts.f.Store(ctx)
	if err != nil {
		return id, err
	}
	p, err := control.GetPlan(ctx, st, opts.PlanID)
	if err != nil {
		return id, err
	}
	planned, err := opts.f.ResolveTable(p.Table)
	if err != nil {
		return id, err
	}
	if opts.Table != "" && !strings.EqualFold(id.String(), planned.String()) {
		return id, flagErrorf("plan %s is for %s, not %s", p.ID, planned, id)
	}
	return planned, nil
}

func parseSizeFlag(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := config.ParseSize(v)
	if err != nil {
		return 0, flagErrorf("%s: %v", name, err)
	}
	return n, nil
}

func printRun(io *IOStreams, run control.Run) {
	w := io.Out
	by := ""
	switch {
	case run.StartedBy != "" && run.Runner != "":
		by = " by " + run.StartedBy + " on " + run.Runner
	case run.Runner != "":
		by = " by " + run.Runner
	}
	fmt.Fprintf(w, "run %s on %s%s (%s): %s\n", run.ID, run.Table, by, run.Trigger, run.Status)
	t := newTable(w, "  STEP", "STATUS", "DURATION", "FILES", "SNAPSHOTS", "MANIFESTS", "ERROR")
	for _, s := range run.Steps {
		arrow := func(metric func(lake.Metrics) int) string {
			if s.Status != control.StatusDone || s.Before == nil || s.After == nil {
				return "-"
			}
			return fmt.Sprintf("%d → %d", metric(s.Before.Metrics), metric(s.After.Metrics))
		}
		t.row("  "+s.Name, string(s.Status), s.Duration().Round(time.Millisecond).String(),
			arrow(func(m lake.Metrics) int { return m.DataFiles }), arrow(func(m lake.Metrics) int { return m.Snapshots }),
			arrow(func(m lake.Metrics) int { return m.Manifests }), s.Error)
	}
	_ = t.flush()
	for _, s := range run.Steps {
		if s.Reason != "" && s.Status != control.StatusDone {
			fmt.Fprintf(w, "  %s %s: %s\n", s.Name, s.Status, s.Reason)
		}
	}
}
