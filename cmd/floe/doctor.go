package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
)

type doctorOptions struct {
	f       *factory
	Timeout time.Duration
	Write   bool
	Output  outputFormat
}

func newDoctorCmd(f *factory, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{f: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that floe can reach its catalogs, object stores and state store",
		Long: `Check every configured catalog (open it, list namespaces, load one table), its
object store (list the warehouse; with --write also write and delete a small
probe object .floe-doctor-<random> there) and the state store (open it, schema
current). One line per check: ✓ or ✗ with the error, secrets redacted; a check
that could not run (an object store whose location only an unreachable
catalog knows) is marked –.

Each check gives up after --timeout, so a catalog on a dead host fails in
seconds with a line naming the catalog and its URI instead of hanging. floe
exits 1 if any check failed.`,
		Example: `  floe doctor
  floe doctor --timeout 3s --write
  floe doctor -o json`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Timeout <= 0 {
				return flagErrorf("--timeout %s: want a positive duration such as 10s", opts.Timeout)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDoctor(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", control.DefaultDoctorTimeout, "the longest each check may take")
	cmd.Flags().BoolVar(&opts.Write, "write", false, "also write and delete a probe object in each warehouse")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// doctorReport is floe doctor's JSON output.
type doctorReport struct {
	OK     bool            `json:"ok"`
	Checks []control.Check `json:"checks"`
}

func runDoctor(ctx context.Context, opts *doctorOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	checks := control.Doctor(ctx, cfg, control.DoctorOptions{Timeout: opts.Timeout, Write: opts.Write, Now: opts.f.Now})
	if err := ctx.Err(); err != nil {
		// Interrupted: Main says so (exit 130); the checks cut short are
		// not failures to list.
		return err
	}
	failed, skipped := 0, 0
	for _, c := range checks {
		switch {
		case c.Skipped:
			skipped++
		case c.Failed():
			failed++
		}
	}
	if err := renderDoctor(opts.f.IO, opts.Output, doctorReport{OK: failed == 0, Checks: checks}); err != nil {
		return err
	}
	if failed > 0 {
		// The failures are on the lines above: say only how many.
		msg := fmt.Sprintf("floe: %d of %d checks failed", failed, len(checks)-skipped)
		if skipped > 0 {
			msg += fmt.Sprintf(", %d not checked", skipped)
		}
		return exitCodeError{code: exitError, msg: msg}
	}
	return nil
}

func renderDoctor(io *IOStreams, format outputFormat, r doctorReport) error {
	if format == outputJSON {
		if r.Checks == nil {
			r.Checks = []control.Check{}
		}
		return writeJSON(io.Out, r)
	}
	for _, c := range r.Checks {
		what := strings.ReplaceAll(c.Name, "_", " ") + " " + c.Target
		switch {
		case c.Skipped:
			fmt.Fprintf(io.Out, "– %s: not checked: %s\n", what, c.Detail)
		case c.OK:
			fmt.Fprintf(io.Out, "✓ %s: %s (%s)\n", what, c.Detail, roundDuration(c.Duration))
		default:
			fmt.Fprintf(io.Out, "✗ %s: %s (%s)\n", what, c.Error, roundDuration(c.Duration))
		}
	}
	return nil
}

// roundDuration rounds a check's time to the millisecond, or to the
// microsecond below one (a local listing).
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
