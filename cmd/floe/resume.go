package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
)

type resumeOptions struct {
	f      *factory
	Table  string
	By     string
	Note   string
	List   bool
	All    bool
	Output outputFormat
}

func newResumeCmd(f *factory, runF func(context.Context, *resumeOptions) error) *cobra.Command {
	opts := &resumeOptions{f: f, By: defaultBy()}
	cmd := &cobra.Command{
		Use:   "resume [TABLE] [--list]",
		Short: "Let floe run a table again after a run of it failed a check that must never fail",
		Long: `A run that fails a check that must never fail — rewritten rows that are not
the rows read, an output file gone before its commit, a run lease that
lapsed, a distributed engine's commit that fails floe's read-back — halts
its table: retrying cannot help and could make things worse, so floe runs
nothing on it (the daemon's passes, the API, every verb that changes it,
dry runs too) and floe serve raises the halted alert, until a person
resumes it. The hold is kept in the state store: a restart keeps it.

Inspect the table first: 'floe runs TABLE' shows the failed run and its
error, which names what differed and the snapshot to go back to. Repair
what failed, then resume: the daemon runs the table again at its next pass,
and the halted alert resolves. The resume is recorded with --by and --note.
There is no --force on the verbs: resuming is the one way back, so that a
cron job cannot re-run a broken rewrite behind the operator's back.

--list lists the halted tables; with --all also the resumed holds, who
resumed them and when.`,
		Example: `  floe resume --list
  floe resume web.events --note "restored the lost file from backup"
  floe resume --list --all --output json`,
		Args: wrapArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Table = args[0]
			}
			switch {
			case opts.List && opts.Table != "":
				return flagErrorf("--list and TABLE are mutually exclusive")
			case !opts.List && opts.Table == "":
				return flagErrorf("resume needs TABLE, or --list to list the halted tables")
			case opts.All && !opts.List:
				return flagErrorf("--all goes with --list")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runResume(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", opts.By, "who resumes the table, recorded with it")
	cmd.Flags().StringVar(&opts.Note, "note", "", "what was checked or repaired, recorded with it")
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the halted tables")
	cmd.Flags().BoolVar(&opts.All, "all", false, "with --list, also the resumed holds")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runResume(ctx context.Context, opts *resumeOptions) error {
	svc, err := opts.f.Service(ctx)
	if err != nil {
		return err
	}
	if opts.List {
		holds, err := svc.Holds(ctx, opts.All)
		if err != nil {
			return err
		}
		return renderHolds(opts.f.IO, opts.Output, holds)
	}
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	h, err := svc.Resume(ctx, id, opts.By, opts.Note)
	if err != nil {
		return err
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, h)
	}
	fmt.Fprintf(opts.f.IO.Out, "resumed %s (halted since %s after run %s failed); floe runs it again, floe serve at its next pass\n",
		h.Table, h.HeldAt.UTC().Format(time.RFC3339), h.RunID)
	return nil
}

// renderHolds prints holds: a line per hold, active or resumed.
func renderHolds(io *IOStreams, format outputFormat, holds []control.Hold) error {
	if format == outputJSON {
		return writeJSON(io.Out, holds)
	}
	if len(holds) == 0 {
		fmt.Fprintln(io.Out, "no table is halted")
		return nil
	}
	t := newTable(io.Out, "TABLE", "HALTED AT", "RUN", "RESUMED", "REASON")
	for _, h := range holds {
		resumed := "-"
		if !h.ResumedAt.IsZero() {
			resumed = h.ResumedAt.UTC().Format(time.RFC3339) + " by " + h.ResumedBy
		}
		t.row(h.Table, h.HeldAt.UTC().Format(time.RFC3339), h.RunID, resumed, h.Reason)
	}
	return t.flush()
}
