package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/rewriter"
)

type deletesOptions struct {
	f      *factory
	Table  string
	DryRun bool
	Output outputFormat
	// MinPositionDeleteFiles is --min-position-delete-files; 0: the
	// policy's triggers.position_delete_files.
	MinPositionDeleteFiles int
	// EqualityDeleteRatio is --equality-delete-ratio; 0: the policy's
	// triggers.equality_delete_ratio.
	EqualityDeleteRatio float64
}

func newRewriteDeletesCmd(f *factory, runF func(context.Context, *deletesOptions) error) *cobra.Command {
	opts := &deletesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rewrite-deletes TABLE",
		Short: "Maintain a table's delete files: drop dangling ones, merge, convert, apply",
		Long: `Keep a table's deletes few and applied, per partition, without changing its
live rows or its format version:

  drop     deletes that apply to no live data file are removed;
  merge    (format 1, 2) a partition's position delete files, when it has at
           least --min-position-delete-files, become one;
  convert  (format 3) position delete files become deletion vectors, one per
           data file, merged with the file's vector;
  apply    a partition whose equality deletes delete at least
           --equality-delete-ratio of its records is rewritten (bin-pack)
           with them applied.

Before the commit every change is checked by reading the live rows of the
data files it touches with the old deletes and with the new ones. Deletes
readers do not apply as meant (misfiled, shadowed: see floe doctor) are
left alone. The step always runs natively, whatever --engine or the
policy's engine says for the other steps.`,
		Example: `  floe rewrite-deletes crm.accounts --dry-run
  floe rewrite-deletes crm.accounts --min-position-delete-files 4 --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRewriteDeletes(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.MinPositionDeleteFiles, "min-position-delete-files", 0, "merge a partition's position delete files when it has this many (default: the policy's triggers.position_delete_files, 2)")
	cmd.Flags().Float64Var(&opts.EqualityDeleteRatio, "equality-delete-ratio", 0, "apply a partition's equality deletes when they delete this share of its records, 0.01 to 1 (default: the policy's triggers.equality_delete_ratio, 0.3)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be done; change and record nothing")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runRewriteDeletes(ctx context.Context, opts *deletesOptions) error {
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	do := rewriter.DeleteRewriteOptions{MinPositionDeleteFiles: opts.MinPositionDeleteFiles, EqualityDeleteRatio: opts.EqualityDeleteRatio}
	if err := do.Validate(); err != nil {
		return flagErrorf("%v", err)
	}
	req := control.Request{Table: id, Steps: []string{control.StepDeletes}, User: defaultBy(),
		Options: control.StepOptions{Deletes: do}}
	return runStep(ctx, opts.f, req, opts.DryRun, opts.Output)
}

// printDeletePlan prints what delete maintenance does (verb "maintaining")
// or would do ("would maintain"): the totals and one line per action.
func printDeletePlan(w io.Writer, table, verb string, p rewriter.DeleteRewritePlan) error {
	if len(p.Actions) == 0 {
		fmt.Fprintf(w, "%s: no delete to maintain: %d deletes, none dangling, to merge, to convert or to apply\n", table, p.DeletesBefore)
	} else {
		fmt.Fprintf(w, "%s (format %d): %s %d deletes: %d actions remove %d and write %d\n", table, p.FormatVersion, verb,
			p.DeletesBefore, len(p.Actions), p.DeletesRemoved, p.DeletesWritten)
		t := newTable(w, "  ACTION", "PARTITION", "DELETES", "DATA FILES", "WHY")
		for _, a := range p.Actions {
			t.row("  "+a.Kind, orDash(a.Partition), fmt.Sprint(len(a.Deletes)), fmt.Sprint(len(a.DataFiles)), a.Reason)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(p.Kept) > 0 {
		fmt.Fprintf(w, "  kept %d deletes readers do not apply as meant (misfiled or shadowed): see floe doctor\n", len(p.Kept))
	}
	return nil
}

// printDeletesResult prints what delete maintenance committed.
func printDeletesResult(w io.Writer, table string, s control.Step) {
	r := s.Report.Deletes
	fmt.Fprintf(w, "%s: removed %d deletes, wrote %d", table, r.DeletesRemoved, r.DeletesWritten)
	if r.SnapshotID != 0 {
		fmt.Fprintf(w, " (snapshot %d)", r.SnapshotID)
	}
	if r.Compact != nil {
		fmt.Fprintf(w, "; rewrote %d data files into %d with equality deletes applied, %d rows verified", r.Compact.FilesIn, r.Compact.FilesOut, r.Compact.Rows)
	}
	fmt.Fprintln(w)
	for _, sk := range r.Skipped {
		fmt.Fprintf(w, "  skipped %s (a concurrent commit; the next run plans it again)\n", sk)
	}
	if s.Before != nil && s.After != nil {
		b, a := s.Before.Metrics, s.After.Metrics
		fmt.Fprintf(w, "position delete files %d → %d, equality delete files %d → %d, deletion vectors %d → %d\n",
			b.PositionDeleteFiles, a.PositionDeleteFiles, b.EqualityDeleteFiles, a.EqualityDeleteFiles, b.DeletionVectors, a.DeletionVectors)
	}
}

// deletesStepText is the dry run's one line for the delete step.
func deletesStepText(p rewriter.DeleteRewritePlan) string {
	if len(p.Actions) == 0 {
		return fmt.Sprintf("maintain no delete: %d deletes, none dangling, to merge, to convert or to apply", p.DeletesBefore)
	}
	counts := map[string]int{}
	for _, a := range p.Actions {
		counts[a.Kind]++
	}
	msg := fmt.Sprintf("remove %d of %d deletes and write %d:", p.DeletesRemoved, p.DeletesBefore, p.DeletesWritten)
	for _, k := range []string{rewriter.DeleteActionDrop, rewriter.DeleteActionMerge, rewriter.DeleteActionConvert, rewriter.DeleteActionApply} {
		if counts[k] > 0 {
			msg += fmt.Sprintf(" %s %d", k, counts[k])
		}
	}
	return msg
}
