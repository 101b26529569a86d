package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/analyzer"
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

// tableAnalysis is one table's ranking and candidate layouts.
type tableAnalysis struct {
	Table      string                `json:"table"`
	Queries    int                   `json:"queries"`
	Columns    []analyzer.ColumnRank `json:"columns"`
	Candidates []candidateOut        `json:"candidates"`
}

type candidateOut struct {
	Layout string `json:"layout"`
	Why    string `json:"why"`
}

func newAnalyzeCmd(f *factory, runF func(context.Context, *analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{f: f, Since: 30 * 24 * time.Hour}
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

// analyzeTable ranks one table's columns from the stored queries.
func analyzeTable(ctx context.Context, f *factory, st *store.Store, id lake.Ident, since, halfLife time.Duration) (tableAnalysis, *lake.State, error) {
	state, err := loadState(ctx, f, id)
	if err != nil {
		return tableAnalysis{}, nil, err
	}
	filter := store.QueryFilter{Table: id.String()}
	if since > 0 {
		filter.Since = f.Now().Add(-since)
	}
	events, err := st.Queries(ctx, filter)
	if err != nil {
		return tableAnalysis{}, nil, err
	}
	ranks, err := analyzer.Rank(id, state, events, analyzer.RankOptions{HalfLife: halfLife, Now: f.Now()})
	if err != nil {
		return tableAnalysis{}, nil, fmt.Errorf("analyze %s: %w", id, err)
	}
	a := tableAnalysis{Table: id.String(), Queries: len(events), Columns: ranks, Candidates: []candidateOut{}}
	if a.Columns == nil {
		a.Columns = []analyzer.ColumnRank{}
	}
	for _, c := range analyzer.Candidates(ranks, state, analyzer.CandidateOptions{}) {
		a.Candidates = append(a.Candidates, candidateOut{Layout: c.Layout.String(), Why: c.Why})
	}
	return a, state, nil
}

// queriedTables lists the tables with stored queries, most queried first.
func queriedTables(ctx context.Context, f *factory, st *store.Store, since time.Duration) ([]lake.Ident, error) {
	filter := store.QueryFilter{}
	if since > 0 {
		filter.Since = f.Now().Add(-since)
	}
	stats, err := st.TableStats(ctx, filter, 0)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].Queries > stats[j].Queries })
	ids := make([]lake.Ident, 0, len(stats))
	for _, s := range stats {
		id, err := f.ResolveTable(s.Table)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func runAnalyze(ctx context.Context, opts *analyzeOptions) error {
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	var ids []lake.Ident
	if len(opts.Tables) > 0 {
		if ids, err = tableIdents(ctx, opts.f, opts.Tables); err != nil {
			return err
		}
	} else if ids, err = queriedTables(ctx, opts.f, st, opts.Since); err != nil {
		return err
	}
	results := make([]tableAnalysis, 0, len(ids))
	for _, id := range ids {
		a, _, err := analyzeTable(ctx, opts.f, st, id, opts.Since, opts.HalfLife)
		if err != nil {
			return err
		}
		results = append(results, a)
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, results)
	}
	if len(results) == 0 {
		fmt.Fprintln(opts.f.IO.ErrOut, "no queries collected; run 'floe collect PATH…' first")
		return nil
	}
	return printAnalysis(opts.f.IO, results)
}

func printAnalysis(io *IOStreams, results []tableAnalysis) error {
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
