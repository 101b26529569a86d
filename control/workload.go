package control

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// DefaultQueryWindow is how far back the verbs that read the collected
// queries (analyze, simulate, measure, plan, report) look unless --since
// says otherwise: 30 days.
const DefaultQueryWindow = 30 * 24 * time.Hour

// WorkloadOptions say which queries of a table to replay: the statements of
// SQL, or else the queries collected in the state store.
type WorkloadOptions struct {
	// SQL, when set, is a file of ;-separated statements to replay instead
	// of the collected queries; SQLName names it in errors.
	SQL     io.Reader
	SQLName string
	// Dialect is the dialect of SQL.
	Dialect extract.Dialect
	// Since keeps the collected queries that started within this long
	// before Now; zero keeps them all.
	Since time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Workload is a table's queries, ready to replay.
type Workload struct {
	Queries []simulator.Query
	// Warnings are the statements of a SQL workload that were left out,
	// with the reason.
	Warnings []string
}

// LoadWorkload reads the queries of table id from opts.SQL or, when that
// is nil, from the queries collected in st (which may be nil otherwise).
// Collected queries are selected and weighed as the analyzer ranks them
// ([analyzer.Workload]: metadata-table reads and failed queries dropped,
// duplicates merged, scan reports folded into their query, cost × recency),
// so that ranking and projection judge one workload.
func LoadWorkload(ctx context.Context, st *store.Store, id lake.Ident, opts WorkloadOptions) (Workload, error) {
	match := simulator.MatchIdent(id)
	if opts.SQL != nil {
		qs, warnings, err := simulator.WorkloadFromSQL(opts.SQL, opts.Dialect, match)
		if err != nil {
			return Workload{}, fmt.Errorf("read workload %s: %w", opts.SQLName, err)
		}
		return Workload{Queries: qs, Warnings: warnings}, nil
	}
	if st == nil {
		return Workload{}, fmt.Errorf("load workload of %s: no state store", id)
	}
	filter := store.QueryFilter{Table: id.String()}
	if opts.Since > 0 {
		filter.Since = nowFunc(opts.Now)().Add(-opts.Since)
	}
	events, err := st.Queries(ctx, filter)
	if err != nil {
		return Workload{}, err
	}
	wq, err := analyzer.Workload(id, events, analyzer.RankOptions{Now: nowFunc(opts.Now)()})
	if err != nil {
		return Workload{}, err
	}
	return Workload{Queries: ReplayQueries(wq)}, nil
}

// ReplayQueries turns the analyzer's workload into the simulator's queries,
// with the analyzer's weights.
func ReplayQueries(wq []analyzer.WorkloadQuery) []simulator.Query {
	events := make([]collectors.QueryEvent, len(wq))
	weights := make(map[*collectors.QueryEvent]float64, len(wq))
	for i := range wq {
		events[i] = wq[i].Event
		weights[&events[i]] = wq[i].Weight
	}
	all := func(_, _, _ string) bool { return true }
	return simulator.WorkloadFromEvents(events, all, func(ev *collectors.QueryEvent) float64 { return weights[ev] })
}

// nowFunc is now, or time.Now when nil.
func nowFunc(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}
