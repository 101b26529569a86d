package control

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// AnalyzeOptions configure [Analyze] and [QueriedTables].
type AnalyzeOptions struct {
	// Since keeps the queries that started within this long before Now;
	// zero keeps them all.
	Since time.Duration
	// HalfLife is the age at which a query's weight halves. Zero means
	// [analyzer.DefaultHalfLife].
	HalfLife time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Analysis is one table's column ranking and candidate layouts.
type Analysis struct {
	Table string `json:"table"`
	// Queries is how many collected queries the ranking read: the table's
	// workload as [analyzer.Workload] selects it, the count [QueryStats]
	// and [LoadWorkload] give too.
	Queries    int                   `json:"queries"`
	Columns    []analyzer.ColumnRank `json:"columns"`
	Candidates []Candidate           `json:"candidates"`
}

// Candidate is a candidate layout and why the analyzer proposes it.
type Candidate struct {
	Layout layout.Layout `json:"layout"`
	Why    string        `json:"why"`
}

// Analyze ranks the predicate columns of the table in state from the
// queries collected in st, and proposes candidate layouts for it. Columns
// and Candidates are never nil.
func Analyze(ctx context.Context, st *store.Store, state *lake.State, opts AnalyzeOptions) (Analysis, error) {
	now := nowFunc(opts.Now)()
	id := state.Ident
	filter := store.QueryFilter{Table: id.String()}
	if opts.Since > 0 {
		filter.Since = now.Add(-opts.Since)
	}
	events, err := st.WorkloadEvents(ctx, filter)
	if err != nil {
		return Analysis{}, err
	}
	ranks, err := analyzer.Rank(id, state, events, analyzer.RankOptions{HalfLife: opts.HalfLife, Now: now})
	if err != nil {
		return Analysis{}, fmt.Errorf("analyze %s: %w", id, err)
	}
	// The queries ranked, counted as every verb counts them ([QueryStats]).
	wq, err := analyzer.Workload(id, events, analyzer.RankOptions{HalfLife: opts.HalfLife, Now: now})
	if err != nil {
		return Analysis{}, fmt.Errorf("analyze %s: %w", id, err)
	}
	a := Analysis{Table: id.String(), Queries: len(wq), Columns: ranks, Candidates: []Candidate{}}
	if a.Columns == nil {
		a.Columns = []analyzer.ColumnRank{}
	}
	for _, c := range analyzer.Candidates(ranks, state, analyzer.CandidateOptions{Tree: true}) {
		a.Candidates = append(a.Candidates, Candidate{Layout: c.Layout, Why: c.Why})
	}
	return a, nil
}

// QueriedTables lists the names of the tables with collected queries (since
// opts.Since), most queried first.
func QueriedTables(ctx context.Context, st *store.Store, opts AnalyzeOptions) ([]string, error) {
	filter := store.QueryFilter{}
	if opts.Since > 0 {
		filter.Since = nowFunc(opts.Now)().Add(-opts.Since)
	}
	stats, err := st.TableStats(ctx, filter, 0)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].Queries > stats[j].Queries })
	names := make([]string, len(stats))
	for i, s := range stats {
		names[i] = s.Table
	}
	return names, nil
}
