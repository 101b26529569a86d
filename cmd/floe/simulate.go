package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

type simulateOptions struct {
	f          *factory
	Table      string
	Layouts    []string
	Workload   string
	Dialect    string
	Since      time.Duration
	ZOrderMode string
	Seed       uint64
	TargetSize string
	PerQuery   bool
	Output     outputFormat
}

func newSimulateCmd(f *factory, runF func(context.Context, *simulateOptions) error) *cobra.Command {
	opts := &simulateOptions{f: f, Since: 30 * 24 * time.Hour}
	cmd := &cobra.Command{
		Use:   "simulate TABLE",
		Short: "Project how many files each candidate layout would let the workload skip",
		Long: `Replay a workload — the collected queries of the table (--since) or a file of
SQL statements (--workload, --dialect) — against candidate layouts without
moving any data. For each layout floe samples the table's rows (only the
columns the workload filters on and the layout orders by), orders the sample
by the layout key per partition, cuts it into the files the rewrite would
write, and replays every query's predicate tree against those files' ranges;
'current' replays against the table's real file bounds. Reported per layout:
files after the rewrite, files skipped (%), bytes read (%), the error bound of
the sample (percentage points) and the rewrite cost.

Without --layout, the analyzer's candidates for the table are simulated.`,
		Example: `  floe simulate web.events
  floe simulate web.events --layout current --layout 'sort(tenant_id, ts)' --layout 'hilbert(tenant_id, user_id)'
  floe simulate sales.lineitem --workload queries.sql --dialect trino --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSimulate(cmd.Context(), opts)
		},
	}
	addWorkloadFlags(cmd, &opts.Workload, &opts.Dialect, &opts.Since)
	cmd.Flags().StringArrayVar(&opts.Layouts, "layout", nil, "a layout to simulate (repeatable): current | binpack | sort(…) | zorder(…) | hilbert(…)")
	cmd.Flags().StringVar(&opts.ZOrderMode, "zorder-mode", "iceberg", "z-order key: iceberg or rank")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "sampling seed")
	cmd.Flags().StringVar(&opts.TargetSize, "target-file-size", "", "file size the rewrites would write (default: the table's write.target-file-size-bytes, else 512MiB)")
	cmd.Flags().BoolVar(&opts.PerQuery, "per-query", false, "include each query's files read in JSON output")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func addWorkloadFlags(cmd *cobra.Command, workload, dialect *string, since *time.Duration) {
	cmd.Flags().StringVar(workload, "workload", "", "a file of ;-separated SQL statements to replay instead of the collected queries")
	cmd.Flags().StringVar(dialect, "dialect", "trino", "dialect of --workload: trino|athena|spark|snowflake|duckdb")
	cmd.Flags().Var((*durationValue)(since), "since", "collected queries that started within this long ago")
}

// loadWorkload reads the table's queries from a SQL file or the state store.
func loadWorkload(ctx context.Context, f *factory, id lake.Ident, file, dialect string, since time.Duration) ([]simulator.Query, error) {
	match := simulator.MatchIdent(id)
	if file != "" {
		d, err := extract.ParseDialect(dialect)
		if err != nil {
			return nil, flagErrorf("--dialect: %v", err)
		}
		fh, err := os.Open(file)
		if err != nil {
			return nil, flagErrorf("--workload: %v", err)
		}
		defer fh.Close()
		qs, warnings, err := simulator.WorkloadFromSQL(fh, d, match)
		if err != nil {
			return nil, fmt.Errorf("read workload %s: %w", file, err)
		}
		for _, w := range warnings {
			fmt.Fprintln(f.IO.ErrOut, "warning:", w)
		}
		return qs, nil
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	filter := store.QueryFilter{Table: id.String()}
	if since > 0 {
		filter.Since = f.Now().Add(-since)
	}
	events, err := st.Queries(ctx, filter)
	if err != nil {
		return nil, err
	}
	// The analyzer's selection and weights: the workload analyze ranked.
	return analyzer.Workload(id, events, analyzer.RankOptions{Now: f.Now()})
}

// projectRequest is what simulate and plan share: the table, the layouts
// to project (none: the analyzer's candidates) and the workload.
type projectRequest struct {
	Table      lake.Ident
	Layouts    []string
	Workload   string
	Dialect    string
	Since      time.Duration
	ZOrderMode string
	Seed       uint64
	TargetSize string
	// WithCurrent adds the current layout when the layouts don't name it:
	// the baseline a plan is compared with.
	WithCurrent bool
}

// projectResult is the table's state, the workload and one projection per
// layout, in order.
type projectResult struct {
	State       *lake.State
	Queries     []simulator.Query
	ZOrderMode  simulator.ZOrderMode
	Projections []simulator.Projection
}

// projectLayouts replays the workload against each layout (simulate's and
// plan's common core).
func projectLayouts(ctx context.Context, f *factory, req projectRequest) (projectResult, error) {
	var res projectResult
	zm, err := simulator.ParseZOrderMode(req.ZOrderMode)
	if err != nil {
		return res, flagErrorf("--zorder-mode: %v", err)
	}
	res.ZOrderMode = zm
	id := req.Table
	queries, err := loadWorkload(ctx, f, id, req.Workload, req.Dialect, req.Since)
	if err != nil {
		return res, err
	}
	res.Queries = queries
	var layouts []simulator.Layout
	var state *lake.State
	if len(req.Layouts) == 0 {
		st, err := f.Store(ctx)
		if err != nil {
			return res, err
		}
		a, s, err := analyzeTable(ctx, f, st, id, req.Since, 0)
		if err != nil {
			return res, err
		}
		state = s
		for _, c := range a.Candidates {
			l, err := simulator.ParseLayout(c.Layout)
			if err != nil {
				return res, err
			}
			layouts = append(layouts, l)
		}
	} else {
		for _, s := range req.Layouts {
			l, err := simulator.ParseLayout(s)
			if err != nil {
				return res, flagErrorf("--layout: %v", err)
			}
			layouts = append(layouts, l)
		}
	}
	if req.WithCurrent && !slices.ContainsFunc(layouts, func(l simulator.Layout) bool { return l.Strategy == simulator.StrategyCurrent }) {
		layouts = append([]simulator.Layout{{Strategy: simulator.StrategyCurrent}}, layouts...)
	}
	if state == nil {
		if state, err = loadState(ctx, f, id); err != nil {
			return res, err
		}
	}
	res.State = state
	if req.TargetSize != "" {
		size, err := config.ParseSize(req.TargetSize)
		if err != nil {
			return res, flagErrorf("--target-file-size: %v", err)
		}
		for i := range layouts {
			if layouts[i].Strategy != simulator.StrategyCurrent {
				layouts[i].TargetFileSizeBytes = size
			}
		}
	}
	res.Projections, err = simulator.Project(ctx, state, layouts, queries, simulator.ProjectOptions{ZOrderMode: zm, Sample: simulator.SampleOptions{Seed: req.Seed}})
	if err != nil {
		return res, fmt.Errorf("simulate %s: %w", id, err)
	}
	return res, nil
}

func runSimulate(ctx context.Context, opts *simulateOptions) error {
	if _, err := simulator.ParseZOrderMode(opts.ZOrderMode); err != nil {
		return flagErrorf("--zorder-mode: %v", err)
	}
	id, err := opts.f.ResolveTable(opts.Table)
	if err != nil {
		return err
	}
	pr, err := projectLayouts(ctx, opts.f, projectRequest{Table: id, Layouts: opts.Layouts, Workload: opts.Workload, Dialect: opts.Dialect,
		Since: opts.Since, ZOrderMode: opts.ZOrderMode, Seed: opts.Seed, TargetSize: opts.TargetSize})
	if err != nil {
		return err
	}
	queries, state, projs := pr.Queries, pr.State, pr.Projections
	res := simulator.SimulateResult{Table: id.String(), Queries: len(queries), Candidates: projs}
	if !opts.PerQuery {
		for i := range res.Candidates {
			res.Candidates[i].PerQuery = nil
		}
	}
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, res)
	}
	w := opts.f.IO.Out
	fmt.Fprintf(w, "%s: %d queries replayed against %d files today\n", res.Table, res.Queries, len(state.DataFiles))
	t := newTable(w, "  LAYOUT", "FILES AFTER", "FILES SKIPPED", "BYTES READ", "± (pp)", "REWRITE")
	for _, p := range res.Candidates {
		t.row("  "+p.Layout, strconv.Itoa(p.FilesAfter), fmt.Sprintf("%.1f%%", p.SkippedPct), fmt.Sprintf("%.1f%%", p.BytesReadPct),
			fmt.Sprintf("%.1f", p.ErrorPP), config.FormatSize(p.RewriteBytes))
	}
	return t.flush()
}

type measureOptions struct {
	f        *factory
	Table    string
	Workload string
	Dialect  string
	Since    time.Duration
	Output   outputFormat
}

func newMeasureCmd(f *factory, runF func(context.Context, *measureOptions) error) *cobra.Command {
	opts := &measureOptions{f: f, Since: 30 * 24 * time.Hour}
	cmd := &cobra.Command{
		Use:   "measure TABLE",
		Short: "Count the files each query reads today, with iceberg-go's own scan planning",
		Long: `For each workload query, count the data files that iceberg-go's scan planning
(Scan(WithRowFilter(…)).PlanFiles) keeps for the query's pushed-down
predicates on the table as it is now: the ground truth that simulate's
projections are judged against. 'floe simulate --layout current' agrees with it.`,
		Example: `  floe measure web.events --since 7d
  floe measure sales.lineitem --workload queries.sql --dialect spark --output json`,
		Args: wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMeasure(cmd.Context(), opts)
		},
	}
	addWorkloadFlags(cmd, &opts.Workload, &opts.Dialect, &opts.Since)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runMeasure(ctx context.Context, opts *measureOptions) error {
	id, _, tbl, err := openTable(ctx, opts.f, opts.Table)
	if err != nil {
		return err
	}
	queries, err := loadWorkload(ctx, opts.f, id, opts.Workload, opts.Dialect, opts.Since)
	if err != nil {
		return err
	}
	res, err := simulator.Measure(ctx, tbl, queries)
	if err != nil {
		return fmt.Errorf("measure %s: %w", id, err)
	}
	res.Table = id.String()
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, res)
	}
	fmt.Fprintf(opts.f.IO.Out, "%s: %d queries, %d data files; mean files skipped %.1f%%\n", res.Table, len(res.Queries), res.FilesTotal, res.SkippedPct)
	return nil
}
