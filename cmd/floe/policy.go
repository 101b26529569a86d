package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

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
		Args: wrapArgs(unknownVerb),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
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
			by = s.Rule + " " + parenthesized(s.Where)
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
