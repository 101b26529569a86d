package control

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// candidateLayouts are the analyzer's candidate layouts for the workload
// being projected: ranked from the statements of a SQL workload when one is
// given (w, read from opts.Workload.SQL), else from the collected queries
// ([Analyze] over opts.Workload.Since). st may be nil for a SQL workload.
// When the workload filters on two columns or more, a tree over them is
// among the candidates: learned from the workload when it is projected, and
// judged by the same projection, bound and cost as the sorts and curves.
func candidateLayouts(ctx context.Context, st *store.Store, state *lake.State, opts ProjectOptions, w Workload) ([]layout.Layout, error) {
	id := state.Ident
	var cands []Candidate
	if opts.Workload.SQL != nil {
		ranks, err := analyzer.Rank(id, state, workloadEvents(id, w.Queries), analyzer.RankOptions{Now: nowFunc(opts.Workload.Now)()})
		if err != nil {
			return nil, fmt.Errorf("analyze workload %s of %s: %w", opts.Workload.SQLName, id, err)
		}
		for _, c := range analyzer.Candidates(ranks, state, analyzer.CandidateOptions{ZOrderMode: opts.ZOrderMode, Tree: true}) {
			cands = append(cands, Candidate{Layout: c.Layout, Why: c.Why})
		}
	} else {
		if st == nil {
			return nil, fmt.Errorf("simulate %s: no layouts and no state store to find candidates in", id)
		}
		a, err := Analyze(ctx, st, state, AnalyzeOptions{Since: opts.Workload.Since, Now: opts.Workload.Now})
		if err != nil {
			return nil, err
		}
		cands = a.Candidates
	}
	layouts := make([]layout.Layout, len(cands))
	for i, c := range cands {
		layouts[i] = c.Layout
	}
	return layouts, nil
}

// workloadEvents turns a SQL workload's queries into the events the analyzer
// ranks: one succeeded query per statement, reading the table with the
// statement's filter as parsed SQL, each weighing the same (no cost or time
// is known).
func workloadEvents(id lake.Ident, qs []simulator.Query) []collectors.QueryEvent {
	events := make([]collectors.QueryEvent, len(qs))
	for i, q := range qs {
		events[i] = collectors.QueryEvent{
			QueryID: q.ID,
			State:   collectors.StateSucceeded,
			Tables: []collectors.TableAccess{{
				Catalog: id.Catalog, Namespace: id.NamespaceString(), Name: id.Name,
				Filter: q.Filter, Evidence: collectors.EvidenceSQL,
			}},
		}
	}
	return events
}
