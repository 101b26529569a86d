package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// queries, analyze, simulate, plan and measure count one workload: the
// per-table summary's queries and filter-column counts are the analyzer's.
func TestQueryStatsCountTheWorkload(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	pl.collected(t, now.Add(-time.Hour), now.Add(-2*time.Hour), now.Add(-3*time.Hour))
	filter := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: pl.id.String(), Column: "v", Op: expr.OpEq,
		Values: []expr.Value{{Kind: expr.KindNumber, Text: "3"}}}}
	access := func(f *expr.Node, write bool, ev collectors.Evidence) []collectors.TableAccess {
		return []collectors.TableAccess{{Catalog: pl.id.Catalog, Namespace: "db", Name: "p", Direct: true, Filter: f, Write: write, Evidence: ev}}
	}
	at := now.Add(-4 * time.Hour)
	event := func(id string, state collectors.State, tables []collectors.TableAccess) collectors.QueryEvent {
		return collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id, User: "bob",
			StartTime: at, EndTime: at.Add(time.Second), State: state, StatementType: "SELECT", SQL: "SELECT 1", Tables: tables}
	}
	_, _, err := pl.st.InsertEvents(ctx, []collectors.QueryEvent{
		event("failed", collectors.StateFailed, access(filter, false, collectors.EvidenceSQL)),
		event("insert", collectors.StateSucceeded, access(nil, true, collectors.EvidenceSQL)),
		event("meta", collectors.StateSucceeded, access(nil, false, collectors.MetadataEvidence("snapshots"))),
		event("v3", collectors.StateSucceeded, access(filter, false, collectors.EvidenceSQL)),
	})
	require.NoError(t, err)
	// The same query again, as another source logged it.
	dup := event("v3", collectors.StateSucceeded, access(filter, false, collectors.EvidencePushedFilter))
	dup.Source = "trino-log"
	_, _, err = pl.st.InsertEvents(ctx, []collectors.QueryEvent{dup})
	require.NoError(t, err)

	clock := func() time.Time { return now }
	stats, err := control.QueryStats(ctx, pl.st, store.QueryFilter{Table: "db.p"}, 5, now)
	require.NoError(t, err)
	require.Len(t, stats, 1)
	a, err := control.Analyze(ctx, pl.st, pl.state(t), control.AnalyzeOptions{Now: clock})
	require.NoError(t, err)
	w, err := control.LoadWorkload(ctx, pl.st, pl.id, control.WorkloadOptions{Now: clock})
	require.NoError(t, err)

	require.Equal(t, 4, stats[0].Queries, "three id = 42, one v = 3; the failed, the insert, the metadata read and the duplicate left out")
	require.Equal(t, 1, stats[0].Failed)
	require.Equal(t, stats[0].Queries, a.Queries, "queries and analyze agree")
	require.Len(t, w.Queries, stats[0].Queries, "queries and simulate/measure agree")
	ranked := map[string]int{}
	for _, c := range a.Columns {
		ranked[c.Column] = c.Queries
	}
	require.NotEmpty(t, stats[0].TopColumns)
	for _, c := range stats[0].TopColumns {
		require.Equal(t, ranked[c.Column], c.Queries, "filter column %s", c.Column)
	}
	require.Equal(t, "id", stats[0].TopColumns[0].Column)
	require.Equal(t, 3, stats[0].TopColumns[0].Queries)
}
