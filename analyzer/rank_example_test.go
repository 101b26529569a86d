package analyzer_test

import (
	"fmt"
	"github.com/floe-project/floe/expr"
	"time"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
)

// Rank a small workload without the table's state (selectivities then
// take their defaults) and turn the ranking into candidate layouts.
func ExampleRank() {
	table := lake.Ident{Catalog: "local", Namespace: []string{"web"}, Name: "events"}
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	leaf := func(col string, op expr.Op, vals ...expr.Value) *expr.Node {
		return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Column: col, Op: op, Values: vals}}
	}
	query := func(id string, f *expr.Node) collectors.QueryEvent {
		return collectors.QueryEvent{
			Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id, StartTime: at,
			State: collectors.StateSucceeded,
			Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "web", Name: "events",
				Filter: f, Evidence: collectors.EvidenceSQL}},
		}
	}
	tenant := leaf("tenant_id", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "42"})
	recent := leaf("ts", expr.OpGtEq, expr.Value{Kind: expr.KindTimestamp, Text: "2026-11-19 00:00:00"})
	events := []collectors.QueryEvent{
		query("q1", tenant),
		query("q2", &expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{tenant, recent}}),
		query("q3", leaf("country", expr.OpIsNotNull)),
	}
	ranks, err := analyzer.Rank(table, nil, events, analyzer.RankOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range ranks {
		fmt.Printf("%-9s score %.2f share %.0f%%: %s\n", r.Column, r.Score, 100*r.Share, r.Reason)
	}
	for _, c := range analyzer.Candidates(ranks, nil, analyzer.CandidateOptions{}) {
		fmt.Println(c.Layout)
	}
	// Output:
	// tenant_id score 1.78 share 67%: filtered by 67% of the workload (2 queries), mostly = (100%); a predicate keeps ~1.0% of rows
	// ts        score 0.48 share 33%: filtered by 33% of the workload (1 query), mostly >= (100%); a predicate keeps ~33% of rows
	// country   score 0.00 share 33%: filtered by 33% of the workload (1 query), mostly is not null (100%); its predicates cannot skip files
	// sort(tenant_id)
	// sort(tenant_id, ts)
	// zorder(tenant_id, ts)
	// hilbert(tenant_id, ts)
	// current
	// binpack
}
