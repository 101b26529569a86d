package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
--events, list the events themselves (most recent first).`,
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
		if opts.Output == outputJSON {
			return writeJSON(opts.f.IO.Out, evs)
		}
		t := newTable(opts.f.IO.Out, "START", "SOURCE", "QUERY ID", "USER", "STATE", "TABLES", "SQL")
		for _, e := range evs {
			var tables []string
			for _, a := range e.Tables {
				tables = append(tables, a.QualifiedName())
			}
			sql := strings.Join(strings.Fields(e.SQL), " ")
			if len(sql) > 60 {
				sql = sql[:57] + "..."
			}
			t.row(e.StartTime.Format(time.RFC3339), e.Source, e.QueryID, e.User, string(e.State), strings.Join(tables, ","), sql)
		}
		return t.flush()
	}
	stats, err := st.TableStats(ctx, filter, 5)
	if err != nil {
		return err
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

// durationValue parses durations with a day unit: 30d, 12h, 90m, 1d12h.
type durationValue time.Duration

func (d *durationValue) String() string {
	if *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}
func (d *durationValue) Type() string { return "duration" }
func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// timeValue parses an instant: RFC 3339, or a date (YYYY-MM-DD, midnight
// UTC).
type timeValue time.Time

func (v *timeValue) String() string {
	if time.Time(*v).IsZero() {
		return ""
	}
	return time.Time(*v).UTC().Format(time.RFC3339)
}
func (v *timeValue) Type() string { return "time" }
func (v *timeValue) Set(s string) error {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			*v = timeValue(t.UTC())
			return nil
		}
	}
	return fmt.Errorf("time %q: want RFC 3339 (2026-11-24T12:00:00Z) or a date (2026-11-24)", s)
}

// parseDuration accepts Go durations plus a leading "Nd" for days.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("duration is empty: want e.g. 30d, 12h, 1d12h")
	}
	var days time.Duration
	if i := strings.Index(s, "d"); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, fmt.Errorf("duration %q: want e.g. 30d, 12h, 1d12h", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
	}
	if s == "" {
		return days, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want e.g. 30d, 12h, 1d12h", s)
	}
	return days + d, nil
}
