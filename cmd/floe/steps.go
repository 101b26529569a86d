package main

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/control"
)

// The single-step verbs (compact, expire, orphans, rewrite-deletes,
// rewrite-manifests) ask the service for their step by name: the same
// decision as that step of floe optimize, a run record and the table's
// lease. runview.go prints what a step planned or did.

// runStep runs (or, with dry, dry-runs) a single-step request and prints
// the outcome: what the single-step verbs share.
func runStep(ctx context.Context, f *factory, req control.Request, dry bool, format outputFormat) error {
	svc, err := f.Service(ctx)
	if err != nil {
		return err
	}
	table := req.Table.String()
	if dry {
		out, err := svc.DryRun(ctx, req)
		if err != nil {
			return usageError(err)
		}
		if format == outputJSON {
			return writeJSON(f.IO.Out, out)
		}
		if out.Decision != nil {
			printDecided(f.IO.Out, table, *out.Decision)
		}
		for _, s := range out.Steps {
			if s.Status == control.StatusPlanned {
				if err := printStepPlan(f.IO.Out, table, s); err != nil {
					return err
				}
			}
		}
		return nil
	}
	bar := newProgress(f.IO)
	req.Progress = func(done, total int, bytesDone, bytesTotal int64) {
		bar.Bytes("compact "+table, fmt.Sprintf("compact %s: %d/%d partitions", table, done, total), bytesDone, bytesTotal)
	}
	if format != outputJSON {
		req.OnPlan = planPrinter(f.IO.Out, table)
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
	printDecided(f.IO.Out, table, res.Decision)
	for _, s := range res.Run.Steps {
		printStepReport(f.IO, table, s)
	}
	printRun(f.IO, res.Run)
	return err
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
