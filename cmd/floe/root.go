package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
)

func newRootCmd(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "floe",
		Short: "Query-telemetry-driven layout optimizer and maintenance for Apache Iceberg",
		Long: `floe reads the query logs of Trino, Spark, Athena, Snowflake and DuckDB, learns
which columns each Iceberg table is filtered on, projects how many files each
candidate layout would let those queries skip, and rewrites tables (plus
snapshot expiry, orphan removal and manifest rewrites) once approved.

With no configuration floe uses an embedded local warehouse in ./floe-data
(SQL catalog on SQLite, file:// storage). Run 'floe demo' to fill it, or
'floe init' to write a floe.yaml for your own lake.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       rootVersion(),
		// An unknown verb is a usage error (exit 2), with cobra's
		// suggestions; floe alone prints help.
		Args: wrapArgs(unknownVerb),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate("floe {{.Version}}\n")
	root.PersistentFlags().StringVar(&f.ConfigPath, "config", "", "configuration file, laid over the embedded default (default: $FLOE_CONFIG, then ./floe.yaml)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return flagError{err}
	})
	root.AddCommand(
		newTablesCmd(f, nil),
		newHealthCmd(f, nil),
		newDemoCmd(f, nil),
		newPredicatesCmd(f, nil),
		newCollectCmd(f, nil),
		newQueriesCmd(f, nil),
		newAnalyzeCmd(f, nil),
		newSimulateCmd(f, nil),
		newMeasureCmd(f, nil),
		newCompactCmd(f, nil),
		newExpireCmd(f, nil),
		newOrphansCmd(f, nil),
		newRewriteDeletesCmd(f, nil),
		newRewriteManifestsCmd(f, nil),
		newOptimizeCmd(f, nil),
		newPlanCmd(f, nil),
		newPlanListCmd(f, "plans [TABLE]", nil),
		newRunsCmd(f, nil),
		newPolicyCmd(f),
		newReportCmd(f, nil),
		newServeCmd(f, nil),
		newResumeCmd(f, nil),
		newDoctorCmd(f, nil),
		newInitCmd(f, nil),
		newConfigCmd(f),
		newVersionCmd(f),
	)
	registerCompletions(f, root)
	// A verb that only reads leaves no state behind: run where no
	// warehouse or state store is, it says so instead of creating them.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		f.ReadOnly = readOnlyVerbs[verbName(cmd)]
		noteHistory(f, cmd)
		return nil
	}
	return root
}

// noteHistory prints, for every verb with a --since (analyze, queries,
// report, simulate, measure, plan), the note of [control.HistoryNote] when
// the window reaches past telemetry.history: the queries older than it
// are gone. A --workload file is not the collected queries, and a
// configuration that does not load is the verb's to report.
func noteHistory(f *factory, cmd *cobra.Command) {
	fl := cmd.Flags().Lookup("since")
	if fl == nil || cmd.Flags().Changed("workload") {
		return
	}
	since, ok := fl.Value.(*durationValue)
	if !ok {
		return
	}
	cfg, err := f.Config()
	if err != nil {
		return
	}
	if msg := control.HistoryNote(time.Duration(*since), cfg.Telemetry.HistoryDuration()); msg != "" {
		fmt.Fprintln(f.IO.ErrOut, "note:", msg)
	}
}

// unknownVerb refuses any argument to the root: it is a verb floe does not
// have.
func unknownVerb(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
	} else {
		msg += "; run 'floe --help' for the list of commands"
	}
	return errors.New(msg)
}

// exactArgs and friends wrap cobra's argument checks as flag errors, so
// that they print usage and exit 2.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return flagError{argsError(cmd, args, err)}
		}
		return nil
	}
}

// argsError says what a verb's arguments should have been in the user's
// words — the argument's name from its usage line and the usage itself —
// instead of cobra's "accepts 1 arg(s), received 0".
func argsError(cmd *cobra.Command, args []string, err error) error {
	if cmd.HasSubCommands() && len(args) > 0 {
		return err // cobra's "unknown command", with its did-you-mean
	}
	use := strings.TrimSpace(strings.TrimPrefix(cmd.Use, cmd.Name()))
	usage := strings.TrimSpace(cmd.CommandPath() + " " + use)
	verb := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	var want []string
	for _, w := range strings.Fields(use) {
		if w == strings.ToUpper(w) && strings.Trim(w, "[]|.") != "" && !strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "-") {
			want = append(want, strings.Trim(w, "."))
		}
	}
	switch {
	case len(args) == 0 && len(want) > 0:
		return fmt.Errorf("%s needs %s; usage: %s (see --help)", verb, strings.Join(want, " "), usage)
	case use == "" || !strings.ContainsAny(use, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
		return fmt.Errorf("%s takes no arguments, got %q; usage: %s (see --help)", verb, strings.Join(args, " "), usage)
	}
	return fmt.Errorf("%s: %v; usage: %s (see --help)", verb, err, usage)
}
