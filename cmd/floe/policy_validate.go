package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
)

type policyValidateOptions struct {
	f       *factory
	File    string
	Offline bool
	Output  outputFormat
}

func newPolicyValidateCmd(f *factory, runF func(context.Context, *policyValidateOptions) error) *cobra.Command {
	opts := &policyValidateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check a policies file (or floe.yaml) without changing anything",
		Long: `Check FILE — a policies file (default:, catalogs:, namespaces:, tables:,
optionally under one top-level policies: key) or a whole floe.yaml — and
report every problem at once with file:line and key: unknown keys, values
out of their bounds, a target_file_size below 4MiB without
allow_small_target_file_size, a schedule that never fires (0 0 30 2 *),
rules that tie for a table, warning thresholds above critical ones,
patterns for catalogs that are not configured. It runs the validation
every verb and the daemon run when they load the configuration, so a file
that validates is one they accept. Without FILE the configuration floe
would load (--config, FLOE_CONFIG, ./floe.yaml) is checked.

A table rule that names one table and gives it a fixed layout is also
checked against that table, as a run checks it before it reads any data:
a layout on a column the table lacks, or one its strategy cannot order,
is refused. That reads the table's metadata from its catalog (nothing is
written, no state store is opened); a named table that does not exist yet
is a note, and a catalog that cannot be read fails the check (exit 1) —
--offline checks the file alone. Exits 2 when the file is invalid.`,
		Example: `  floe policy validate policies.yaml
  floe policy validate ./floe.yaml
  floe policy validate policies.yaml --offline   # in CI, without the catalogs`,
		Args: wrapArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPolicyValidate(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Offline, "offline", false, "check the file alone, without reading the tables it names")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// policyValidation is validate's JSON output.
type policyValidation struct {
	File  string         `json:"file"`
	Valid bool           `json:"valid"`
	Rules map[string]int `json:"rules"`
	// Notes say what was not checked against a table and why it need not
	// be (a named table that does not exist yet).
	Notes []string `json:"notes"`
}

func runPolicyValidate(ctx context.Context, opts *policyValidateOptions) error {
	var (
		set     *policy.Set
		source  string
		invalid error
		cfg     *config.Config
	)
	if opts.File == "" || !isPoliciesFile(opts.File) {
		var err error
		cfg, err = opts.f.Config()
		if opts.File != "" {
			cfg, err = config.Load(config.Options{Path: opts.File, Getenv: envOrNone(opts.File), Now: opts.f.Now})
		}
		if err != nil {
			return err
		}
		set, source = cfg.Policies, cfg.Source
		if cfg.PoliciesFile != "" {
			source = cfg.PoliciesFile
		}
	} else {
		data, err := os.ReadFile(opts.File)
		if err != nil {
			return flagErrorf("read %s: %v", opts.File, err)
		}
		source = opts.File
		// The validation loading a configuration runs on its own policies;
		// patterns and engines are checked against the configuration floe
		// would load, when one loads.
		if cfg, err = opts.f.Config(); err != nil {
			cfg = nil
		}
		set, invalid = config.CheckPoliciesFile(cfg, opts.File, data, opts.f.Now())
		if set == nil {
			return invalid
		}
	}
	v := policyValidation{File: source, Valid: true, Notes: []string{}, Rules: map[string]int{
		"default": 0, "catalogs": len(set.Catalogs), "namespaces": len(set.Namespaces), "tables": len(set.Tables)}}
	if cfg != nil && !opts.Offline {
		rep := control.CheckPolicyLayouts(ctx, cfg, set, opts.f.Catalog)
		switch {
		case len(rep.Problems) > 0 && invalid != nil:
			invalid = errors.Join(append([]error{invalid}, rep.Problems...)...)
		case len(rep.Problems) > 0:
			invalid = fmt.Errorf("%w: %w", config.ErrInvalid, errors.Join(rep.Problems...))
		}
		if invalid == nil && len(rep.Unchecked) > 0 {
			return fmt.Errorf("%w\n(--offline checks the file without reading the tables)", errors.Join(rep.Unchecked...))
		}
		v.Notes = append(v.Notes, rep.Notes...)
	}
	if invalid != nil {
		return invalid
	}
	if set.Default != nil {
		v.Rules["default"] = 1
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, v)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(opts.f.IO.ErrOut, "note: %s\n", n)
	}
	fmt.Fprintf(opts.f.IO.Out, "✓ %s: policies are valid (%d default, %d catalog, %d namespace, %d table rules)\n",
		source, v.Rules["default"], v.Rules["catalogs"], v.Rules["namespaces"], v.Rules["tables"])
	return nil
}

// isPoliciesFile reports whether path holds only policy keys at its top
// level (or a single policies: key), not a whole floe.yaml.
func isPoliciesFile(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return true // reported when read again
	}
	return policy.IsPoliciesFile(data)
}

// envOrNone is the environment config.Load reads: the process's, except
// FLOE_CONFIG when a FILE was named (it must not redirect the check).
func envOrNone(file string) func(string) string {
	return func(k string) string {
		if file != "" && k == "FLOE_CONFIG" {
			return ""
		}
		return os.Getenv(k)
	}
}
