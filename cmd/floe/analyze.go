package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

type analyzeOptions struct {
	f        *factory
	Tables   []string
	Since    time.Duration
	HalfLife time.Duration
	Output   outputFormat
}

func newAnalyzeCmd(f *factory, runF func(context.Context, *analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{f: f, Since: control.DefaultQueryWindow}
	cmd := &cobra.Command{
		Use:   "analyze [TABLE...]",
		Short: "Rank the columns queries filter on and propose candidate layouts",
		Long: `Rank each table's predicate columns from the collected queries: each query
weighted by its cost (bytes scanned, else elapsed time, else 1) and recency
(--half-life), each predicate by its operator (equality and narrow ranges help
most; is not null and leading-wildcard like help nothing) and by its
selectivity estimated from the table's own file statistics; columns the
partition spec already prunes are discounted. Then propose candidate layouts:
sort, z-order and Hilbert on the top columns, the current layout, and binpack.
Tables default to every table with collected queries.`,
		Example: `  floe analyze
  floe analyze web.events --since 7d --output json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tables = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runAnalyze(cmd.Context(), opts)
		},
	}
	cmd.Flags().Var((*durationValue)(&opts.Since), "since", "only queries that started within this long ago")
	cmd.Flags().Var((*durationValue)(&opts.HalfLife), "half-life", "age at which a query's weight halves (default 7d)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runAnalyze(ctx context.Context, opts *analyzeOptions) error {
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	results, err := analyzeTables(ctx, opts.f, st, opts.Tables, control.AnalyzeOptions{Since: opts.Since, HalfLife: opts.HalfLife, Now: opts.f.Now})
	if err != nil {
		return err
	}
	return renderAnalysis(opts.f.IO, opts.Output, results)
}

// analyzeTables runs [control.Analyze] on the named tables, or on every
// table with collected queries, most queried first (analyze and demo).
func analyzeTables(ctx context.Context, f *factory, st *store.Store, names []string, ao control.AnalyzeOptions) ([]control.Analysis, error) {
	var ids []lake.Ident
	var err error
	if len(names) > 0 {
		if ids, err = tableIdents(ctx, f, names); err != nil {
			return nil, err
		}
	} else if ids, err = queriedTables(ctx, f, st, ao); err != nil {
		return nil, err
	}
	results := make([]control.Analysis, 0, len(ids))
	for _, id := range ids {
		state, err := loadState(ctx, f, id)
		if err != nil {
			return nil, err
		}
		a, err := control.Analyze(ctx, st, state, ao)
		if err != nil {
			return nil, err
		}
		results = append(results, a)
	}
	return results, nil
}

// queriedTables resolves the tables with collected queries, most queried
// first.
func queriedTables(ctx context.Context, f *factory, st *store.Store, ao control.AnalyzeOptions) ([]lake.Ident, error) {
	names, err := control.QueriedTables(ctx, st, ao)
	if err != nil {
		return nil, err
	}
	ids := make([]lake.Ident, 0, len(names))
	for _, n := range names {
		id, err := f.ResolveTable(n)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// renderAnalysis prints analyze's results (analyze and demo).
func renderAnalysis(io *IOStreams, format outputFormat, results []control.Analysis) error {
	if format == outputJSON {
		return writeJSON(io.Out, results)
	}
	if len(results) == 0 {
		fmt.Fprintln(io.ErrOut, "no queries collected; run 'floe collect PATH…' first")
		return nil
	}
	for i, a := range results {
		if i > 0 {
			fmt.Fprintln(io.Out)
		}
		fmt.Fprintf(io.Out, "%s — %d queries\n", a.Table, a.Queries)
		t := newTable(io.Out, "  COLUMN", "SCORE", "SHARE", "OPS", "SELECTIVITY", "WHY")
		for _, c := range a.Columns {
			t.row("  "+c.Column, strconv.FormatFloat(c.Score, 'f', 1, 64), fmt.Sprintf("%.0f%%", 100*c.Share),
				opMix(c.OpMix), fmt.Sprintf("%.3g", c.Selectivity), c.Reason)
		}
		if err := t.flush(); err != nil {
			return err
		}
		fmt.Fprintln(io.Out, "  candidate layouts:")
		for _, c := range a.Candidates {
			fmt.Fprintf(io.Out, "    %-28s %s\n", c.Layout, c.Why)
		}
	}
	return nil
}

// opMix prints the two or three most frequent operators.
func opMix(m map[string]float64) string {
	type kv struct {
		op string
		f  float64
	}
	var s []kv
	for op, f := range m {
		s = append(s, kv{op, f})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].f > s[j].f || (s[i].f == s[j].f && s[i].op < s[j].op) })
	var parts []string
	for i, e := range s {
		if i == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", e.op, 100*e.f))
	}
	return strings.Join(parts, ", ")
}
