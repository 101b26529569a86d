package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// completionTimeout bounds the catalog and store calls of one completion: a
// shell waiting on a catalog that does not answer is worse than no
// candidates.
const completionTimeout = 2 * time.Second

// layoutKeywords start a --layout spec.
var layoutKeywords = []string{"sort(", "zorder(", "hilbert(", "binpack"}

// registerCompletions adds dynamic shell completion to every verb, from what
// its usage line and flags say it takes: TABLE arguments complete the tables
// of the configured catalogs, a plan's ID argument and --plan the plan ids
// in the state store, --layout the layout keywords and, once a TABLE
// argument is given, that table's columns, --table table names and --catalog
// catalog names. 'floe completion bash|zsh|fish|powershell' (cobra's)
// prints the script that makes a shell ask floe.
func registerCompletions(f *factory, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		fields := strings.Fields(c.Use)
		if len(fields) > 1 && c.ValidArgsFunction == nil {
			switch arg := fields[1]; arg {
			case "TABLE", "[TABLE]", "[TABLE...]":
				c.ValidArgsFunction = completeTables(f, strings.HasSuffix(arg, "...]"))
			case "ID":
				if c.Parent() != nil && c.Parent().Name() == "plan" {
					c.ValidArgsFunction = completePlans(f, true)
				}
			}
		}
		flag := func(name string, fn cobra.CompletionFunc) {
			if _, own := c.GetFlagCompletionFunc(name); own {
				return // the verb completes it itself (floe init's --catalog is a type)
			}
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		flag("layout", completeLayout(f))
		flag("plan", completePlans(f, false))
		flag("table", completeTables(f, true))
		flag("catalog", completeCatalogs(f))
		flag("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completionContext is cmd's context bounded by completionTimeout.
func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// completeTables completes table names: namespace.name for the default
// catalog's tables, catalog.namespace.name for the others. Unless many is
// set, only the first argument is a table.
func completeTables(f *factory, many bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if !many && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := f.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := completionContext(cmd)
		defer cancel()
		var out []cobra.Completion
		for _, name := range cfg.CatalogNames() {
			cat, err := f.Catalog(ctx, name)
			if err != nil {
				continue
			}
			ids, err := lake.ListTables(ctx, name, cat)
			if err != nil {
				continue
			}
			for _, id := range ids {
				s := id.String()
				if name == cfg.DefaultCatalog {
					s = strings.TrimPrefix(s, name+".")
				}
				if strings.HasPrefix(s, toComplete) {
					out = append(out, s)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePlans completes plan ids, described by state, table and layout;
// as an argument (arg set), only the first.
func completePlans(f *factory, arg bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if arg && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := completionContext(cmd)
		defer cancel()
		st, err := f.Store(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		plans, err := st.Plans(ctx, store.PlanFilter{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, p := range plans {
			if strings.HasPrefix(p.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(p.ID, p.State+" "+p.Table+" "+p.Layout))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeLayout completes a --layout spec: a keyword, then, inside the
// parentheses, the columns of the table named by the first argument.
func completeLayout(f *factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cut := strings.LastIndexAny(toComplete, "(,")
		if cut < 0 {
			var out []cobra.Completion
			for _, k := range layoutKeywords {
				if strings.HasPrefix(k, strings.ToLower(toComplete)) {
					out = append(out, k)
				}
			}
			return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		prefix, partial := toComplete[:cut+1], toComplete[cut+1:]
		trimmed := strings.TrimLeft(partial, " ")
		prefix += partial[:len(partial)-len(trimmed)]
		ctx, cancel := completionContext(cmd)
		defer cancel()
		_, _, tbl, err := openTable(ctx, f, args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, field := range tbl.Schema().Fields() {
			if strings.HasPrefix(strings.ToLower(field.Name), strings.ToLower(trimmed)) {
				out = append(out, prefix+field.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCatalogs completes the configured catalog names.
func completeCatalogs(f *factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := f.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return cfg.CatalogNames(), cobra.ShellCompDirectiveNoFileComp
	}
}
