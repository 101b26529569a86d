package analyzer_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// TestWorkloadSelectsAsRankDoes pins that the projection's workload is the
// ranking's: a metadata-table read, a duplicate of a query and the scan
// report of a query are not queries of their own (they were, when the CLI
// built the simulator's workload from the raw events).
func TestWorkloadSelectsAsRankDoes(t *testing.T) {
	st := eventsTable(t, "events", nil)
	tenant := pred("tenant_id", expr.OpEq, num("150"))
	q1 := event(st, "q1", pred("country", expr.OpEq, str("FR")), collectors.EvidenceSQL)
	q1.StartTime, q1.EndTime = now.Add(-10*time.Second), now.Add(10*time.Second)
	dup := q1
	dup.Source, dup.State = "trino-log", collectors.StateUnknown
	report := event(st, "report-1", tenant, collectors.EvidenceScanReport)
	report.Source, report.Engine, report.EngineVersion, report.State = "iceberg-scanreport", collectors.EngineIceberg, "trino 467", collectors.StateUnknown
	snapshots := event(st, "q2", nil, collectors.EvidenceSQL)
	snapshots.Tables[0].Name = "events$snapshots"
	metadata := event(st, "q3", nil, collectors.Evidence("metadata-table:snapshots"))
	failed := event(st, "q4", nil, collectors.EvidenceSQL)
	failed.State = collectors.StateFailed
	q5 := event(st, "q5", pred("country", expr.OpEq, str("DE")), collectors.EvidenceSQL)

	events := []collectors.QueryEvent{q1, dup, report, snapshots, metadata, failed, q5}
	qs := workload(t, st.Ident, events, analyzer.RankOptions{Now: now, HalfLife: math.MaxInt64})
	require.Len(t, qs, 2)
	require.Equal(t, "q1", qs[0].ID)
	require.Same(t, tenant, qs[0].Filter, "the folded scan report's filter is the scan's")
	require.Equal(t, "q5", qs[1].ID)
	require.NotNil(t, qs[1].Filter)
	for _, q := range qs {
		require.InDelta(t, 1.0, q.Weight, 1e-6)
	}

	_, err := analyzer.Workload(st.Ident, events, analyzer.RankOptions{HalfLife: -time.Hour})
	require.Error(t, err)
}

func TestWorkloadWeighsAsRankDoes(t *testing.T) {
	st := eventsTable(t, "events", nil)
	cheap := event(st, "cheap", pred("country", expr.OpEq, str("FR")), collectors.EvidenceSQL)
	cheap.Metrics.BytesScanned = 100
	dear := event(st, "dear", pred("country", expr.OpEq, str("FR")), collectors.EvidenceSQL)
	dear.Metrics.BytesScanned = 300
	old := event(st, "old", pred("country", expr.OpEq, str("FR")), collectors.EvidenceSQL)
	old.Metrics.BytesScanned = 200
	old.StartTime = now.Add(-analyzer.DefaultHalfLife)
	qs := workload(t, st.Ident, []collectors.QueryEvent{cheap, dear, old}, analyzer.RankOptions{Now: now})
	require.Len(t, qs, 3)
	require.InDelta(t, 0.5, qs[0].Weight, 1e-9)
	require.InDelta(t, 1.5, qs[1].Weight, 1e-9)
	require.InDelta(t, 0.5, qs[2].Weight, 1e-9)
}

// workload is analyzer.Workload as the simulator replays it.
func workload(t *testing.T, id lake.Ident, events []collectors.QueryEvent, opts analyzer.RankOptions) []simulator.Query {
	t.Helper()
	wq, err := analyzer.Workload(id, events, opts)
	require.NoError(t, err)
	return control.ReplayQueries(wq)
}
