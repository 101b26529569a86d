package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/rewriter"
)

// addEngineFlag adds --engine, which runs the verb's step on an engine of
// floe.yaml's engines: (or native) instead of the one the policy names.
func addEngineFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "engine", "", "run on this engine: native or a name under engines: in floe.yaml (default: the policy's engine key)")
}

// engineSelect is how a verb's step picks its engine: --engine, else the
// policy. An --engine that names no engine is a usage error.
func engineSelect(f *factory, p policy.Policy, override string) (control.EngineSelect, error) {
	engs, err := f.Engines()
	if err != nil {
		return control.EngineSelect{}, err
	}
	if o := strings.ToLower(strings.TrimSpace(override)); o != "" && o != rewriter.NativeName {
		if _, ok := engs.Config(o); !ok {
			return control.EngineSelect{}, flagErrorf("--engine %s: no such engine (engines: %s)", override, strings.Join(engs.Names(), ", "))
		}
	}
	return control.EngineSelect{Engines: engs, Policy: p, Override: override}, nil
}

// printEngineReport prints what a distributed engine did for one step and
// what floe found when it checked.
func printEngineReport(io *IOStreams, table string, r *control.DistributedReport) {
	out := io.Out
	step := "step"
	if r.EngineReport != nil {
		step = r.Step
	}
	fmt.Fprintf(out, "%s: %s ran on engine %s (%s)\n", table, step, r.Choice.Name, r.Choice.Reason)
	if r.EngineReport != nil {
		for _, s := range r.Statements {
			id := ""
			if s.QueryID != "" {
				id = " [" + s.QueryID + "]"
			}
			fmt.Fprintf(out, "  %s%s\n", s.SQL, id)
		}
		if len(r.Metrics) > 0 {
			keys := make([]string, 0, len(r.Metrics))
			for k := range r.Metrics {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = fmt.Sprintf("%s=%d", k, r.Metrics[k])
			}
			fmt.Fprintf(out, "  %s\n", strings.Join(parts, " "))
		}
		if r.DryRunCount > 0 {
			fmt.Fprintf(out, "  dry run listed %d files\n", r.DryRunCount)
		}
	}
	v := r.Verified
	switch {
	case v.NothingToDo:
		fmt.Fprintf(out, "checked: the engine committed nothing (snapshot %d)\n", v.SnapshotAfter)
	default:
		rows := fmt.Sprintf("rows %d → %d", v.RowsBefore, v.RowsAfter)
		if !v.RowsChecked {
			rows = v.Note
		}
		fmt.Fprintf(out, "checked: snapshot %d → %d, %d data files replaced, %d added, %s", v.SnapshotBefore, v.SnapshotAfter, v.FilesReplaced, v.FilesAdded, rows)
		if v.FilesChecked > 0 {
			fmt.Fprintf(out, ", %d files of the current snapshot on storage", v.FilesChecked)
		}
		fmt.Fprintln(out)
	}
}
