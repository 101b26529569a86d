package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
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
			if err := checkTimeout(opts.Timeout); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDoctor(cmd.Context(), opts)
		},
	}
	addTimeoutFlag(cmd, &opts.Timeout)
	cmd.Flags().BoolVar(&opts.Write, "write", false, "also write and delete a probe object in each warehouse")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// addTimeoutFlag adds --timeout, how long each of floe doctor's checks may
// take (floe doctor, floe init); checkTimeout refuses a value that is not
// positive.
func addTimeoutFlag(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "timeout", control.DefaultDoctorTimeout, "the longest each check may take")
}

func checkTimeout(d time.Duration) error {
	if d <= 0 {
		return flagErrorf("--timeout %s: want a positive duration such as 10s", d)
	}
	return nil
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
	failed, err := doctorChecks(ctx, opts.f, cfg, control.DoctorOptions{Timeout: opts.Timeout, Write: opts.Write}, opts.Output)
	if err != nil || failed == "" {
		return err
	}
	// The failures are on the lines above: say only how many.
	return exitCodeError{code: exitError, msg: "floe: " + failed}
}

// doctorChecks runs floe doctor's checks of cfg and prints them; failed
// says how many failed ("1 of 4 checks failed, 1 not checked"), "" when
// none did. floe init runs it on the file it wrote.
func doctorChecks(ctx context.Context, f *factory, cfg *config.Config, do control.DoctorOptions, format outputFormat) (failed string, _ error) {
	do.Now = f.Now
	checks := control.Doctor(ctx, cfg, do)
	if err := ctx.Err(); err != nil {
		// Interrupted: Main says so (exit 130); the checks cut short are
		// not failures to list.
		return "", err
	}
	nFailed, skipped := 0, 0
	for _, c := range checks {
		switch {
		case c.Skipped:
			skipped++
		case c.Failed():
			nFailed++
		}
	}
	if err := renderDoctor(f.IO, format, doctorReport{OK: nFailed == 0, Checks: checks}); err != nil {
		return "", err
	}
	if nFailed == 0 {
		return "", nil
	}
	failed = fmt.Sprintf("%d of %d checks failed", nFailed, len(checks)-skipped)
	if skipped > 0 {
		failed += fmt.Sprintf(", %d not checked", skipped)
	}
	return failed, nil
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
