package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// Rendering of runs, decisions and step plans for people: what runStep
// and runRequest print as text.

// stepOf is run's step name, and whether the run has it.
func stepOf(run control.Run, name string) (control.Step, bool) {
	for _, s := range run.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return control.Step{}, false
}

// printDecided says, for a step that does not run, why.
func printDecided(w io.Writer, table string, d control.Decision) {
	for _, s := range d.Steps {
		if !s.Run {
			fmt.Fprintf(w, "%s: %s %s: %s\n", table, s.Step, s.Status, s.Reason)
		}
	}
	for _, a := range d.Approvals {
		fmt.Fprintf(w, "%s: %s approved by %s (%s)\n", table, a.What, a.By, a.How)
	}
}

// printStepReport prints what one step of a run did.
func printStepReport(ios *IOStreams, table string, s control.Step) {
	w := ios.Out
	r := s.Report
	switch {
	case r.Engine != nil:
		printEngineReport(ios, table, r.Engine)
	case r.Compact != nil:
		c := r.Compact
		fmt.Fprintf(w, "%s: committed %d snapshots: %d files (%s) → %d files (%s), %d rows verified, in %s\n", table, len(c.Commits),
			c.FilesIn, config.FormatSize(c.BytesIn), c.FilesOut, config.FormatSize(c.BytesOut), c.Rows, c.Duration.Round(time.Millisecond))
		for _, sk := range c.Skipped {
			fmt.Fprintf(w, "  skipped %s: %v (%d files left for 'floe orphans')\n", orDash(sk.Name), sk.Err, len(sk.Orphans))
		}
		if s.Before != nil && s.After != nil {
			fmt.Fprintf(w, "data files %d → %d, small-file ratio %.0f%% → %.0f%%\n", s.Before.Metrics.DataFiles, s.After.Metrics.DataFiles,
				100*s.Before.Metrics.SmallFileRatio, 100*s.After.Metrics.SmallFileRatio)
		}
	case r.CompactPlan != nil:
		fmt.Fprintf(w, "%s: nothing to compact: no partition needs %s\n", table, r.CompactPlan.Layout)
	case r.Expire != nil:
		e := r.Expire
		if e.KeepFiles {
			fmt.Fprintf(w, "%s: expired %d snapshots (%d retained), deleted no file (--keep-files): floe orphans removes the files only they referenced\n", table, len(e.Expired), e.Retained)
		} else {
			fmt.Fprintf(w, "%s: expired %d snapshots (%d retained), deleted %d files (%s)\n", table, len(e.Expired), e.Retained, len(e.Deleted), config.FormatSize(e.DeletedBytes))
			printShared(w, e.Siblings, len(e.Shared))
		}
		if len(e.Kept) > 0 {
			fmt.Fprintf(w, "  %d planned snapshots kept: a branch or tag came to need them since planning\n", len(e.Kept))
		}
	case r.ExpirePlan != nil:
		p := r.ExpirePlan
		fmt.Fprintf(w, "%s: nothing to expire: no snapshot older than %s beyond the %d kept\n", table, formatCutoff(p.Cutoff), p.Retained)
	case r.Orphans != nil:
		o := r.Orphans
		for i, p := range o.Deleted {
			if i == 10 {
				fmt.Fprintf(w, "  … and %d more\n", len(o.Deleted)-10)
				break
			}
			fmt.Fprintln(w, "  deleted "+p)
		}
		if len(o.InFlight) > 0 {
			fmt.Fprintf(w, "kept %d planned files: a run started since the listing may need them\n", len(o.InFlight))
		}
		if len(o.Shared) > 0 {
			fmt.Fprintf(w, "kept %d planned files: an entry sharing the location committed them since the listing\n", len(o.Shared))
		}
		if len(o.Evidence) > 0 {
			fmt.Fprintf(w, "kept %d planned files: the evidence of a failed content check names them\n", len(o.Evidence))
		}
		fmt.Fprintf(w, "%s: deleted %d orphan files, reclaimed %s\n", table, len(o.Deleted), config.FormatSize(o.Bytes))
	case r.OrphanPlan != nil:
		printOrphanPlan(w, table, *r.OrphanPlan)
	case r.Deletes != nil:
		printDeletesResult(w, table, s)
	case r.DeletePlan != nil:
		_ = printDeletePlan(w, table, "", *r.DeletePlan)
	case r.Manifests != nil:
		m := r.Manifests
		if m.NoOp {
			fmt.Fprintf(w, "%s: manifests already clustered; nothing committed\n", table)
		} else {
			fmt.Fprintf(w, "%s: rewrote %d manifests into %d (snapshot %d)\n", table, m.Rewritten, m.Added, m.SnapshotID)
		}
	case r.ManifestPlan != nil:
		fmt.Fprintf(w, "%s: manifests already clustered; nothing committed\n", table)
	}
}

// printCompactPlan prints what a compaction does (verb "rewriting") or
// would do ("would rewrite"): the header and one line per partition group.
func printCompactPlan(w io.Writer, table, verb string, p rewriter.CompactPlan) error {
	fmt.Fprintf(w, "%s into %s (target %s): %s %d partitions, %d files, %s\n", table, p.Layout,
		config.FormatSize(p.TargetFileSizeBytes), verb, len(p.Groups), p.InputFiles, config.FormatSize(p.InputBytes))
	t := newTable(w, "  PARTITION", "FILES", "BYTES", "DELETES", "WHY")
	for _, g := range p.Groups {
		t.row("  "+orDash(g.Partition), fmt.Sprint(g.Files), config.FormatSize(g.Bytes), fmt.Sprint(g.Deletes), strings.Join(g.Reasons, ", "))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(p.Deferred) > 0 {
		fmt.Fprintf(w, "  %d partitions deferred to a later run by the budget\n", len(p.Deferred))
	}
	return nil
}

// printExpirePlan prints what an expiry would do.
func printExpirePlan(w io.Writer, table string, plan rewriter.ExpirePlan) {
	if plan.KeepFiles {
		fmt.Fprintf(w, "%s: would expire %d snapshots older than %s (keeping %d) and delete no file (--keep-files)\n", table, len(plan.Snapshots), formatCutoff(plan.Cutoff), plan.Retained)
		return
	}
	fmt.Fprintf(w, "%s: would expire %d snapshots older than %s (keeping %d) and delete %d files (%s)\n", table, len(plan.Snapshots), formatCutoff(plan.Cutoff), plan.Retained, len(plan.Files), config.FormatSize(plan.Bytes))
	printShared(w, plan.Siblings, plan.Shared)
	for i, p := range plan.Files {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more\n", len(plan.Files)-20)
			break
		}
		fmt.Fprintln(w, "  "+p)
	}
}

// printOrphanPlan prints the orphan files found and what was kept, and
// why.
func printOrphanPlan(w io.Writer, table string, plan rewriter.OrphanPlan) {
	fmt.Fprintf(w, "%s: %d orphan files (%s) modified before %s among %d files listed; %d younger files kept\n",
		table, len(plan.Files), config.FormatSize(plan.Bytes), formatCutoff(plan.Cutoff), plan.Scanned, plan.Young)
	if len(plan.Siblings) > 0 {
		fmt.Fprintf(w, "the location is shared with %s: kept %d files only they reference\n", strings.Join(plan.Siblings, ", "), plan.Shared)
	}
	if plan.Evidence > 0 {
		fmt.Fprintf(w, "kept %d files: the evidence of a failed content check (see .floe/evidence/)\n", plan.Evidence)
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
}

// planPrinter prints what a step is about to do, before it does it.
func planPrinter(w io.Writer, table string) func(string, control.StepReport) {
	return func(_ string, r control.StepReport) {
		switch {
		case r.CompactPlan != nil:
			_ = printCompactPlan(w, table, "rewriting", *r.CompactPlan)
		case r.ExpirePlan != nil:
			p := r.ExpirePlan
			fmt.Fprintf(w, "%s: expiring %d snapshots older than %s (keeping %d)\n", table, len(p.Snapshots), formatCutoff(p.Cutoff), p.Retained)
		case r.OrphanPlan != nil:
			printOrphanPlan(w, table, *r.OrphanPlan)
		case r.DeletePlan != nil:
			_ = printDeletePlan(w, table, "maintaining", *r.DeletePlan)
		}
	}
}

// printStepPlan prints a dry run's plan of one step in full.
func printStepPlan(w io.Writer, table string, s control.DryRunStep) error {
	switch {
	case s.Compact != nil:
		return printCompactPlan(w, table, "would rewrite", *s.Compact)
	case s.Expire != nil:
		printExpirePlan(w, table, *s.Expire)
	case s.Orphans != nil:
		printOrphanPlan(w, table, *s.Orphans)
	case s.Deletes != nil:
		return printDeletePlan(w, table, "would maintain", *s.Deletes)
	case s.Manifests != nil:
		fmt.Fprintf(w, "%s: %s\n", table, dryRunStepText(s))
	}
	return nil
}

// printRun prints a run: who ran it, each step's status and what it
// changed, and why the steps that did not run did not.
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
		if s.Layout != nil {
			fmt.Fprintf(w, "  %s check: %s\n", s.Name, s.Layout.Summary())
		}
	}
}
