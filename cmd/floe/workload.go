package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// The workload and projection flags that simulate, plan and measure share,
// and their translation into control's options.

func addWorkloadFlags(cmd *cobra.Command, workload, dialect *string, since *time.Duration) {
	cmd.Flags().StringVar(workload, "workload", "", "a file of ;-separated SQL statements to replay instead of the collected queries")
	cmd.Flags().StringVar(dialect, "dialect", "trino", "dialect of --workload: trino|athena|spark|snowflake|duckdb")
	cmd.Flags().Var((*durationValue)(since), "since", "collected queries that started within this long ago")
}

// openWorkload turns --workload, --dialect and --since into workload
// options; close closes the --workload file (a no-op without one).
func openWorkload(f *factory, file, dialect string, since time.Duration) (wo control.WorkloadOptions, close func(), err error) {
	wo = control.WorkloadOptions{Since: since, Now: f.Now}
	if file == "" {
		return wo, func() {}, nil
	}
	if wo.Dialect, err = extract.ParseDialect(dialect); err != nil {
		return wo, nil, flagErrorf("--dialect: %v", err)
	}
	fh, err := os.Open(file)
	if err != nil {
		return wo, nil, flagErrorf("--workload: %v", err)
	}
	wo.SQL, wo.SQLName = fh, file
	return wo, func() { _ = fh.Close() }, nil
}

// workloadStore opens the state store when the workload, and so the
// candidate layouts, come from it: not for a --workload file.
func workloadStore(ctx context.Context, f *factory, wo control.WorkloadOptions) (*store.Store, error) {
	if wo.SQL != nil {
		return nil, nil
	}
	return f.Store(ctx)
}

// printWarnings prints the statements a --workload file left out.
func printWarnings(io *IOStreams, w control.Workload) {
	for _, msg := range w.Warnings {
		fmt.Fprintln(io.ErrOut, "warning:", msg)
	}
}

// projectFlags are the flags of simulate and plan that say what to project.
type projectFlags struct {
	Layouts    []string
	ZOrderMode string
	Seed       uint64
	Target     targetSize
}

// options parses the flags into control's projection options (the
// workload aside).
func (p projectFlags) options() (control.ProjectOptions, error) {
	var po control.ProjectOptions
	zm, err := layout.ParseZOrderMode(p.ZOrderMode)
	if err != nil {
		return po, flagErrorf("--zorder-mode: %v", err)
	}
	po.ZOrderMode, po.Seed = zm, p.Seed
	for _, s := range p.Layouts {
		l, err := layout.Parse(s)
		if err != nil {
			return po, flagErrorf("--layout: %v", err)
		}
		po.Layouts = append(po.Layouts, l)
	}
	po.TargetSource = "--target-file-size"
	if po.TargetFileSizeBytes, err = p.Target.bytes(); err != nil {
		return po, err
	}
	return po, nil
}

// policyTarget gives po the target file size of the table's policy when
// --target-file-size did not set one: candidates are projected at the size
// the rewrite will write.
func policyTarget(ctx context.Context, f *factory, id lake.Ident, po *control.ProjectOptions) error {
	if po.TargetFileSizeBytes > 0 {
		return nil
	}
	eff, err := f.Policy(ctx, id)
	if err != nil {
		return err
	}
	po.TargetFileSizeBytes, po.TargetSource = eff.Policy.TargetFileSizeBytes, "the policy's target_file_size"
	return nil
}

// projectTable resolves the table, parses the flags and calls
// [control.Project] (simulate and demo).
func projectTable(ctx context.Context, f *factory, table string, pf projectFlags, workload, dialect string, since time.Duration) (control.Projections, error) {
	var res control.Projections
	po, err := pf.options()
	if err != nil {
		return res, err
	}
	id, err := f.ResolveTable(table)
	if err != nil {
		return res, err
	}
	if err := policyTarget(ctx, f, id, &po); err != nil {
		return res, err
	}
	wo, closeWorkload, err := openWorkload(f, workload, dialect, since)
	if err != nil {
		return res, err
	}
	defer closeWorkload()
	po.Workload = wo
	st, err := workloadStore(ctx, f, wo)
	if err != nil {
		return res, err
	}
	state, err := loadState(ctx, f, id)
	if err != nil {
		return res, err
	}
	res, err = control.Project(ctx, st, state, po)
	printWarnings(f.IO, res.Workload)
	return res, usageError(err)
}
