package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
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
			}
			skip := map[string]bool{}
			for _, s := range opts.Skip {
				skip[s] = true
			}
			if err := (control.Request{PlanID: opts.PlanID, Options: control.StepOptions{Skip: skip}}).Validate(); err != nil {
				return flagErrorf("%v", err)
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
	fl.StringSliceVar(&opts.Skip, "skip", nil, "steps to leave out: expire, orphans, compact, deletes, manifests")
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
	var id lake.Ident
	if opts.Table != "" { // else --plan names it
		if id, err = opts.f.ResolveTable(opts.Table); err != nil {
			return err
		}
	}
	svc, err := opts.f.Service(ctx)
	if err != nil {
		return err
	}
	if id.Name == "" && opts.PlanID != "" && svc.Store() != nil {
		// The plan names the table; the service checks the rest. Knowing
		// it here names it in the progress and the step plans printed.
		if p, perr := control.GetPlan(ctx, svc.Store(), opts.PlanID); perr == nil {
			if pid, rerr := opts.f.ResolveTable(p.Table); rerr == nil {
				id = pid
			}
		}
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
