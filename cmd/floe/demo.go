package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/demo"
	"github.com/floe-project/floe/lake"
)

type demoOptions struct {
	f            *factory
	Reset        bool
	EventCommits int
	Orders       int
	Queries      int
	// AsOf is the end of the generated event and query time range (the
	// --as-of flag); zero means now.
	AsOf time.Time
}

func newDemoCmd(f *factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build the demo warehouse and run floe's flow on it",
		Long: `Create realistic Iceberg tables in the configured default catalog (the
embedded ./floe-data warehouse unless configured otherwise):

  web.events      320 streaming micro-batch commits of small files, day(ts) partitions
  sales.orders    TPC-H orders, four batch loads
  sales.lineitem  TPC-H line items, four batch loads
  crm.accounts    a merge-on-read table with position deletes

then print the health of every table, write query logs of all six telemetry
sources over those tables (Trino event-listener JSON, a Spark event log,
Athena API JSON, Snowflake QUERY_HISTORY/ACCESS_HISTORY CSV, the DuckDB query
log and Iceberg REST scan reports) under <data_dir>/logs, collect them,
summarize the queries, and write the report of every table to
<data_dir>/report.html (see 'floe report'). --reset rebuilds existing demo
tables and forgets the telemetry of the demo before: the stored query
events of its tables and of its previous query logs, and the records of
those collected files, so the rebuilt warehouse has the queries of its
new logs only.

The event times and the query log end at --as-of (default: now), so the
files, partitions and queries the demo builds depend on --as-of and on
nothing else: the same --as-of gives the same warehouse on any day. The
demo's own analyze, simulate and measure steps look at the 30 days before
--as-of; when --as-of lies further back, later runs need a --since that
reaches it.`,
		Example: `  floe demo
  floe demo --reset
  floe demo --reset --as-of 2026-11-24T12:00:00Z   # the same warehouse on any day`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDemo(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Reset, "reset", false, "drop and rebuild the demo tables if they exist")
	cmd.Flags().IntVar(&opts.EventCommits, "event-commits", 320, "micro-batch commits to write to web.events")
	cmd.Flags().IntVar(&opts.Orders, "orders", 25000, "TPC-H orders to generate (about four line items each)")
	cmd.Flags().IntVar(&opts.Queries, "queries", 3000, "queries in the generated query logs")
	cmd.Flags().Var((*timeValue)(&opts.AsOf), "as-of", "end of the generated event and query time range: RFC 3339 or YYYY-MM-DD, UTC (default: now)")
	return cmd
}

func runDemo(ctx context.Context, opts *demoOptions) (err error) {
	// stage is what the demo is doing, for the message when Ctrl-C stops it.
	stage := "building the demo warehouse"
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = interrupted(ctx, "demo interrupted while "+stage+": what it built and collected so far is kept; 'floe demo --reset' builds the warehouse again", err)
		}
	}()
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	if cfg.DefaultCatalog == "" {
		return flagErrorf("demo: no default catalog configured")
	}
	cat, err := opts.f.Catalog(ctx, cfg.DefaultCatalog)
	if err != nil {
		return err
	}
	bar := newProgress(opts.f.IO)
	start := time.Now()
	now := opts.f.Now()
	if !opts.AsOf.IsZero() {
		now = opts.AsOf
	}
	// The demo's queries lie in the 30 days before now; the windows of the
	// analysis steps below are measured from the factory's clock, so they
	// reach back to cover them when --as-of is in the past.
	window := 30*24*time.Hour + max(0, opts.f.Now().Sub(now))
	fmt.Fprintf(opts.f.IO.ErrOut, "building the demo warehouse in catalog %q %s\n", cfg.DefaultCatalog, parenthesized(cfg.Source))
	err = demo.Build(ctx, cat, demo.Options{
		Reset: opts.Reset, EventCommits: opts.EventCommits, Orders: opts.Orders,
		Progress: bar.Set, Now: now,
	})
	bar.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "built %d tables in %s\n", len(demo.Tables), time.Since(start).Round(100*time.Millisecond))
	logDir := filepath.Join(cfg.DataDir, "logs")
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	if opts.Reset {
		// The rebuilt tables get new query logs: the old ones' events
		// would add to theirs, and the counts would grow with each reset.
		stage = "forgetting the telemetry of the previous demo"
		tables := make([]lake.Ident, len(demo.Tables))
		for i, name := range demo.Tables {
			if tables[i], err = lake.ParseIdent(name, cfg.CatalogNames(), cfg.DefaultCatalog); err != nil {
				return err
			}
		}
		// The previous logs' events include some that read no demo table
		// (views, other catalogs, SHOW statements): they are forgotten by
		// their keys, read from the logs still on disk.
		forget := store.Forget{Tables: tables, FilesUnder: logDir}
		if _, err := os.Stat(logDir); err == nil {
			if forget.Events, _, err = control.LogEvents(ctx, cfg, opts.f.Catalog, []string{logDir}); err != nil {
				return err
			}
		}
		gone, err := st.Forget(ctx, forget)
		if err != nil {
			return err
		}
		if gone != (store.Forgotten{}) {
			fmt.Fprintf(opts.f.IO.ErrOut, "forgot the previous demo's telemetry: %d query events (%d folded), %d collected files\n",
				gone.Events+gone.FoldedEvents, gone.FoldedEvents, gone.Files)
		}
	}

	out := opts.f.IO.Out
	section := func(title string) {
		stage, _, _ = strings.Cut(title, "  (")
		stage = "running " + stage
		fmt.Fprintf(out, "\n== %s\n\n", title)
	}
	section("health")
	hs, err := tableHealth(ctx, opts.f, nil, control.HealthRequest{})
	if err != nil {
		return err
	}
	if err := renderHealth(opts.f.IO, outputTable, hs); err != nil {
		return err
	}

	// Query logs of all six sources over the demo tables, then collected.
	stage = "writing the query logs"
	sum, err := demo.WriteLogs(logDir, demo.LogOptions{Queries: opts.Queries, Now: now, Orders: opts.Orders})
	if err != nil {
		return err
	}
	section(fmt.Sprintf("floe collect %s  (%d queries from Trino, Spark, Athena, Snowflake, DuckDB and Iceberg scan reports)", logDir, sum.Queries))
	rep, err := control.Collect(ctx, st, cfg, opts.f.Catalog, control.CollectOptions{Paths: []string{logDir}, Force: true})
	if err != nil {
		return err
	}
	if err := renderCollect(opts.f.IO, outputTable, rep); err != nil {
		return err
	}
	section("floe queries")
	stats, err := control.QueryStats(ctx, st, store.QueryFilter{}, 5, opts.f.Now())
	if err != nil {
		return err
	}
	if err := renderTableStats(opts.f.IO, outputTable, stats); err != nil {
		return err
	}
	section("floe analyze")
	an, err := analyzeTables(ctx, opts.f, st, nil, control.AnalyzeOptions{Since: window, Now: opts.f.Now})
	if err != nil {
		return err
	}
	if err := renderAnalysis(opts.f.IO, outputTable, an); err != nil {
		return err
	}
	// The demo tables are small: the embedded configuration's policy scales
	// their target file size down to 64 KiB, and simulate, the report and
	// floe serve all read it there, so they agree without a flag.
	section("floe simulate web.events")
	pr, err := projectTable(ctx, opts.f, "web.events", projectFlags{ZOrderMode: "iceberg", Seed: 1}, "", "", window)
	if err != nil {
		return err
	}
	if err := renderSimulate(opts.f.IO, outputTable, pr, false); err != nil {
		return err
	}
	section("floe measure web.events  (today's files, iceberg-go scan planning: the ground truth for 'current')")
	id, _, tbl, err := openTable(ctx, opts.f, "web.events")
	if err != nil {
		return err
	}
	res, _, err := control.Measure(ctx, st, id, tbl, control.WorkloadOptions{Since: window, Now: opts.f.Now})
	if err != nil {
		return err
	}
	if err := renderMeasure(opts.f.IO, outputTable, res); err != nil {
		return err
	}
	// The report of every table, at each table's policy target as simulate
	// above, for a person to read before approving a rewrite.
	stage = "writing the report"
	path := filepath.Join(cfg.DataDir, "report.html")
	r, err := gatherReport(ctx, opts.f, nil, control.ReportOptions{Since: window, Seed: 1, MinGainPP: cfg.MinGainPP()})
	if err != nil {
		return err
	}
	if err := writeReportFile(path, formatHTML, r); err != nil {
		return err
	}
	section("floe report --file " + path)
	fmt.Fprintf(out, "wrote the report of %d tables to %s\n", len(r.Tables), path)
	cfgFlag := ""
	if opts.f.ConfigPath != "" {
		cfgFlag = " --config " + opts.f.ConfigPath
	}
	fmt.Fprintf(out, "\nto keep these tables maintained by their policies, with the API and metrics on http://127.0.0.1:8080/:\n  floe%s serve\n", cfgFlag)
	return nil
}
