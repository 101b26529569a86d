package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

type compactOptions struct {
	// Engine is --engine.
	Engine string
	f      *factory
	Table  string
	Layout string
	// LayoutSet says --layout was given; else the policy's layout applies
	// when it names one.
	LayoutSet        bool
	ZOrderMode       string
	Partitions       []string
	Target           targetSize
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
are recorded in the table property floe.layout, and a tree (written from a
plan) with its learned tree in floe.layout.tree: --layout 'tree(…)' on a table
that records one routes rows appended since into the same leaves.

--max-bytes / --max-files-fraction bound one run (oldest data first), so a
large backlog is worked down over several runs.

Everything is checked before any data is read, --dry-run included: layout
columns must be top-level primitive columns of the schema that the strategy
can order (a nested column such as addr.city, a struct, or a decimal under
Iceberg-exact z-order is refused, naming the column and its type), each
--partition must match files of the table, --memory must be 0 (unbounded) or
at least 1MiB. A refusal exits 2.

--engine (default: the table's policy engine key) runs the rewrite on a
Trino or Spark cluster of floe.yaml's engines: instead; floe still plans
it, scopes it to the planned partitions, and checks on reload that the
engine committed a replace with every row kept. A layout the engine cannot
write (z-order or Hilbert on Trino, Hilbert on Spark) exits 2.`,
		Example: `  floe compact web.events --layout 'sort(tenant_id, ts)' --dry-run
  floe compact web.events --layout 'zorder(tenant_id, user_id)' --memory 1GiB
  floe compact sales.lineitem --layout binpack --target-file-size 256MiB --max-bytes 10GiB
  floe compact web.clicks --layout 'sort(ts)' --engine trino   # on engines.trino of floe.yaml`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.LayoutSet = cmd.Flags().Changed("layout")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCompact(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Layout, "layout", "binpack", "target layout: sort(a desc nulls last, b) | zorder(a,b) | hilbert(a,b,c) | binpack (default: the policy's layout when it names one)")
	cmd.Flags().StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg (bit-exact with Spark's rewrite_data_files) or rank")
	cmd.Flags().StringSliceVar(&opts.Partitions, "partition", nil, "only these partitions (as 'floe health' prints keys, e.g. ts_day=2026-11-01); each must match files of the table")
	opts.Target.add(cmd.Flags(), "size of the files written, at least 4MiB (default: the policy's target_file_size, else the table's write.target-file-size-bytes, else 512MiB)")
	cmd.Flags().StringVar(&opts.Memory, "memory", "1GiB", "memory bound of the rewrite, at least 1MiB; sorted runs spill to disk beyond it (0: unbounded)")
	cmd.Flags().StringVar(&opts.MaxBytes, "max-bytes", "", "rewrite at most this many input bytes in this run (default: the policy's max_bytes_per_run)")
	cmd.Flags().Float64Var(&opts.MaxFilesFraction, "max-files-fraction", 0, "rewrite at most this fraction of the table's files in this run")
	cmd.Flags().IntVar(&opts.MinInputFiles, "min-input-files", 5, "bin-pack a partition only with at least this many small files")
	cmd.Flags().IntVar(&opts.GroupsPerCommit, "groups-per-commit", 1, "partition groups per snapshot (partial progress: each commit is kept)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan; change nothing")
	addEngineFlag(cmd, &opts.Engine)
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
	if opts.GroupsPerCommit < 1 {
		return rewriter.CompactOptions{}, flagErrorf("--groups-per-commit must be at least 1, got %d", opts.GroupsPerCommit)
	}
	co := rewriter.CompactOptions{Layout: l, ZOrderMode: zm, Partitions: opts.Partitions,
		MaxFilesFraction: opts.MaxFilesFraction, MinInputFiles: opts.MinInputFiles, GroupsPerBatch: opts.GroupsPerCommit}
	if co.TargetFileSizeBytes, err = opts.Target.bytes(); err != nil {
		return co, err
	}
	if m := strings.TrimSpace(opts.Memory); m != "" && m != "0" {
		if co.Group.MemoryBytes, err = config.ParseSize(m); err != nil {
			return co, flagErrorf("--memory: %v", err)
		}
		if co.Group.MemoryBytes < rewriter.MinMemoryBytes {
			return co, flagErrorf("--memory %s is below the %s a rewrite needs; give at least that, or 0 for unbounded", m, config.FormatSize(rewriter.MinMemoryBytes))
		}
		// The engine bounds its Arrow memory by --memory; a soft limit
		// for the Go heap a little above it keeps GC slack from growing
		// the process far past what the user asked for.
		debug.SetMemoryLimit(rewriter.HeapLimit(co.Group.MemoryBytes))
	}
	if opts.MaxBytes != "" {
		// The bounds of max_bytes_per_run, the policy key it stands for.
		if err := policy.CheckValue("max_bytes_per_run", opts.MaxBytes); err != nil {
			return co, flagErrorf("--max-bytes: %v", err)
		}
		if co.MaxBytes, err = config.ParseSize(opts.MaxBytes); err != nil {
			return co, flagErrorf("--max-bytes: %v", err)
		}
	}
	if err := co.Validate(); err != nil {
		return co, flagError{err}
	}
	return co, nil
}

func runCompact(ctx context.Context, opts *compactOptions) (err error) {
	defer func() {
		// Stopped before the rewrite began (rewriter.Compact says itself
		// what it kept): nothing was changed.
		var ie *rewriter.InterruptedError
		if err != nil && ctx.Err() != nil && !errors.As(err, &ie) {
			err = interrupted(ctx, fmt.Sprintf("compact %s interrupted before it rewrote anything: the table is unchanged", opts.Table), err)
		}
	}()
	co, err := compactionSetup(opts)
	if err != nil {
		return err
	}
	co.Pause = pauseAt(os.Getenv, opts.f.IO.ErrOut)
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	req := control.Request{Table: id, Steps: []string{control.StepCompact}, Engine: opts.Engine, User: defaultBy(),
		Options: control.StepOptions{Compact: co}}
	if opts.LayoutSet {
		req.Layout = &co.Layout
	}
	return runStep(ctx, opts.f, req, opts.DryRun, opts.Output)
}

func orDash(s string) string {
	if s == "" {
		return "(unpartitioned)"
	}
	return s
}
