package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
)

func newPolicyCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Show a table's effective maintenance policy, or validate a policies file",
		Long: `Policies (floe.yaml's policies: section, or the file policies_file names)
say per table what maintenance should be: snapshot retention, orphan age,
target file size, layout, approvals, mode and schedule, triggers, freshness
SLA and health thresholds. Rules at four levels — default, catalogs,
namespaces, tables (namespace and table rules are glob patterns) — override
the earlier key by key; every verb takes its defaults from the table's
effective policy, and a flag still overrides.`,
		Example: `  floe policy show web.events
  floe policy show local.raw_events.clicks --output json
  floe policy validate policies.yaml`,
	}
	cmd.AddCommand(newPolicyShowCmd(f, nil), newPolicyValidateCmd(f, nil))
	return cmd
}

type policyShowOptions struct {
	f      *factory
	Table  string
	Output outputFormat
}

func newPolicyShowCmd(f *factory, runF func(context.Context, *policyShowOptions) error) *cobra.Command {
	opts := &policyShowOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show TABLE",
		Short: "Print a table's effective policy, with the level and file:line that set every key",
		Long: `Print every policy key of TABLE with its value, the level that set it
(builtin, default, catalog, namespace or table), the rule's pattern and the
file:line (or the catalog's policy) it came from. The table need not exist:
the policy is resolved from its name.`,
		Example: `  floe policy show web.events
  floe policy show local.web.events -o json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPolicyShow(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runPolicyShow(ctx context.Context, opts *policyShowOptions) error {
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	eff, err := opts.f.Policy(ctx, id)
	if err != nil {
		return err
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, eff)
	}
	fmt.Fprintf(opts.f.IO.Out, "policy of %s\n", eff.Table)
	t := newTable(opts.f.IO.Out, "  KEY", "VALUE", "LEVEL", "SET BY")
	for _, s := range eff.Settings {
		v, by := s.Value, s.Where
		if v == "" {
			v = "-"
		}
		if s.Rule != "" && s.Level != policy.LevelDefault {
			by = s.Rule + " (" + s.Where + ")"
		}
		if s.Level == policy.LevelBuiltin {
			by = "built-in default"
		}
		t.row("  "+s.Key, v, string(s.Level), by)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, w := range eff.Warnings {
		fmt.Fprintf(opts.f.IO.ErrOut, "warning: %s\n", w)
	}
	return nil
}

type policyValidateOptions struct {
	f      *factory
	File   string
	Output outputFormat
}

func newPolicyValidateCmd(f *factory, runF func(context.Context, *policyValidateOptions) error) *cobra.Command {
	opts := &policyValidateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check a policies file (or floe.yaml) without touching anything",
		Long: `Check FILE — a policies file (default:, catalogs:, namespaces:, tables:,
optionally under one top-level policies: key) or a whole floe.yaml — and
report every problem at once with file:line and key: unknown keys, values
out of their bounds, a target_file_size below 4MiB without
allow_small_target_file_size, a schedule that never fires (0 0 30 2 *),
rules that tie for a table, warning thresholds above critical ones,
patterns for catalogs that are not configured. It runs the validation
every verb and the daemon run when they load the configuration, so a file
that validates is one they accept. Without FILE the
configuration floe would load (--config, FLOE_CONFIG, ./floe.yaml) is
checked. Nothing is opened: no catalog, no state store. Exits 2 when the
file is invalid.`,
		Example: `  floe policy validate policies.yaml
  floe policy validate ./floe.yaml`,
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
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// policyValidation is validate's JSON output.
type policyValidation struct {
	File  string         `json:"file"`
	Valid bool           `json:"valid"`
	Rules map[string]int `json:"rules"`
}

func runPolicyValidate(_ context.Context, opts *policyValidateOptions) error {
	var (
		set    *policy.Set
		source string
	)
	if opts.File == "" || !isPoliciesFile(opts.File) {
		cfg, err := opts.f.Config()
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
		cfg, err := opts.f.Config()
		if err != nil {
			cfg = nil
		}
		if set, err = config.CheckPoliciesFile(cfg, opts.File, data, opts.f.Now()); err != nil {
			return err
		}
	}
	v := policyValidation{File: source, Valid: true, Rules: map[string]int{
		"default": 0, "catalogs": len(set.Catalogs), "namespaces": len(set.Namespaces), "tables": len(set.Tables)}}
	if set.Default != nil {
		v.Rules["default"] = 1
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, v)
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
