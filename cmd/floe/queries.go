package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
)

type queriesOptions struct {
	f      *factory
	Table  string
	Since  time.Duration
	Source string
	Limit  int
	Events bool
	Output outputFormat
}

func newQueriesCmd(f *factory, runF func(context.Context, *queriesOptions) error) *cobra.Command {
	opts := &queriesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "queries",
		Short: "Summarize the collected queries per table",
		Long: `Show what floe has collected: per table, the queries that read it, their
users, the time range, and the columns predicates filter on most. With
--events, list the events themselves (most recent first).

QUERIES counts a table's queries as analyze, simulate, plan and measure do:
the queries that read its data, once per engine query id, with each Iceberg
scan report folded into the engine query it was planned for; failed and
cancelled queries (FAILED), metadata-table reads and INSERT targets are left
out. --events lists every stored event, those included.`,
		Example: `  floe queries
  floe queries --table web.events --since 7d
  floe queries --table web.events --events --limit 20 --output json`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runQueries(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Table, "table", "", "only queries of this table (namespace.table or catalog.namespace.table)")
	cmd.Flags().Var((*durationValue)(&opts.Since), "since", "only queries that started within this long ago (e.g. 7d, 12h)")
	cmd.Flags().StringVar(&opts.Source, "source", "", "only events of this source")
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "with --events: at most this many events")
	cmd.Flags().BoolVar(&opts.Events, "events", false, "list events instead of the per-table summary")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runQueries(ctx context.Context, opts *queriesOptions) error {
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	filter := store.QueryFilter{Table: opts.Table, Source: opts.Source}
	if opts.Since > 0 {
		filter.Since = opts.f.Now().Add(-opts.Since)
	}
	if opts.Events {
		filter.Limit = opts.Limit
		evs, err := st.Queries(ctx, filter)
		if err != nil {
			return err
		}
		if len(evs) == 0 && opts.Table != "" {
			if err := requireTable(ctx, opts.f, opts.Table); err != nil {
				return err
			}
		}
		// The store returns the newest events in time order; the verb
		// lists them most recent first, as its help says.
		slices.Reverse(evs)
		if opts.Output == outputJSON {
			if evs == nil {
				evs = []collectors.QueryEvent{} // [] for none, not null
			}
			return writeJSON(opts.f.IO.Out, evs)
		}
		t := newTable(opts.f.IO.Out, "START", "SOURCE", "QUERY ID", "USER", "STATE", "TABLES", "SQL")
		for _, e := range evs {
			var tables []string
			for _, a := range e.Tables {
				tables = append(tables, store.AccessName(&a))
			}
			sql := strings.Join(strings.Fields(e.SQL), " ")
			if len(sql) > 60 {
				sql = sql[:57] + "..."
			}
			t.row(e.StartTime.Format(time.RFC3339), e.Source, e.QueryID, e.User, string(e.State), strings.Join(tables, ","), sql)
		}
		return t.flush()
	}
	stats, err := control.QueryStats(ctx, st, filter, 5, opts.f.Now())
	if err != nil {
		return err
	}
	if len(stats) == 0 && opts.Table != "" {
		// Queries of a dropped table stay listed; with none, a name that is
		// no table is an error (exit 4), not "no queries collected".
		if err := requireTable(ctx, opts.f, opts.Table); err != nil {
			return err
		}
		if opts.Output != outputJSON {
			fmt.Fprintf(opts.f.IO.ErrOut, "no queries collected for %s; run 'floe collect PATH…'\n", opts.Table)
			return nil
		}
	}
	return renderTableStats(opts.f.IO, opts.Output, stats)
}

// renderTableStats prints the per-table summary of queries (queries and
// demo).
func renderTableStats(io *IOStreams, format outputFormat, stats []store.TableStat) error {
	if format == outputJSON {
		if stats == nil {
			stats = []store.TableStat{}
		}
		return writeJSON(io.Out, stats)
	}
	if len(stats) == 0 {
		fmt.Fprintln(io.ErrOut, "no queries collected; run 'floe collect PATH…'")
		return nil
	}
	t := newTable(io.Out, "TABLE", "QUERIES", "FAILED", "USERS", "FIRST", "LAST", "TOP FILTER COLUMNS")
	for _, s := range stats {
		var cols []string
		for _, c := range s.TopColumns {
			cols = append(cols, fmt.Sprintf("%s (%d)", c.Column, c.Queries))
		}
		t.row(s.Table, strconv.Itoa(s.Queries), strconv.Itoa(s.Failed), strconv.Itoa(s.Users),
			s.FirstSeen.Format("2006-01-02 15:04"), s.LastSeen.Format("2006-01-02 15:04"), strings.Join(cols, ", "))
	}
	return t.flush()
}
