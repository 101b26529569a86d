package control_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/layout"
)

// collected stores queries of the plan table filtering id = 42, one per
// start time.
func (pl *planLake) collected(t *testing.T, at ...time.Time) {
	t.Helper()
	var evs []collectors.QueryEvent
	for i, ts := range at {
		filter := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: pl.id.String(), Column: "id", Op: expr.OpEq,
			Values: []expr.Value{{Kind: expr.KindNumber, Text: "42"}}}}
		evs = append(evs, collectors.QueryEvent{
			Source: "trino-event", Engine: collectors.EngineTrino, QueryID: pl.id.Name + "-q" + string(rune('a'+i)), User: "alice",
			StartTime: ts, EndTime: ts.Add(time.Second), State: collectors.StateSucceeded,
			StatementType: "SELECT", SQL: "SELECT * FROM db." + pl.id.Name + " WHERE id = 42",
			Metrics: collectors.QueryMetrics{ElapsedMs: 1000, BytesScanned: 1 << 20},
			Tables: []collectors.TableAccess{{Catalog: pl.id.Catalog, Namespace: "db", Name: pl.id.Name, Direct: true, Filter: filter,
				Evidence: collectors.EvidenceSQL,
				Columns:  []collectors.ColumnUse{{Name: "id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL}}}},
		})
	}
	_, _, err := pl.st.InsertEvents(context.Background(), evs)
	require.NoError(t, err)
}

func TestAnalyzeAndQueriedTables(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	pl.collected(t, now.Add(-time.Hour), now.Add(-2*time.Hour), now.Add(-60*24*time.Hour))
	clock := func() time.Time { return now }

	for _, tc := range []struct {
		name    string
		since   time.Duration
		queries int
	}{
		{"every query", 0, 3},
		{"the last 30 days", 30 * 24 * time.Hour, 2},
		{"the last 90 minutes", 90 * time.Minute, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := control.AnalyzeOptions{Since: tc.since, Now: clock}
			names, err := control.QueriedTables(ctx, pl.st, opts)
			require.NoError(t, err)
			require.Equal(t, []string{pl.id.String()}, names)

			a, err := control.Analyze(ctx, pl.st, pl.state(t), opts)
			require.NoError(t, err)
			require.Equal(t, pl.id.String(), a.Table)
			require.Equal(t, tc.queries, a.Queries)
			require.NotEmpty(t, a.Columns)
			require.Equal(t, "id", a.Columns[0].Column)
			var layouts []string
			for _, c := range a.Candidates {
				layouts = append(layouts, c.Layout.String())
			}
			require.Contains(t, layouts, "sort(id)")
			require.Contains(t, layouts, "current")

			w, err := control.LoadWorkload(ctx, pl.st, pl.id, control.WorkloadOptions{Since: tc.since, Now: clock})
			require.NoError(t, err)
			require.Len(t, w.Queries, tc.queries)
		})
	}

	// Nothing queried in the last minute: no tables, and an analysis with
	// no columns and no nil slices.
	opts := control.AnalyzeOptions{Since: time.Minute, Now: clock}
	names, err := control.QueriedTables(ctx, pl.st, opts)
	require.NoError(t, err)
	require.Empty(t, names)
	a, err := control.Analyze(ctx, pl.st, pl.state(t), opts)
	require.NoError(t, err)
	require.Zero(t, a.Queries)
	require.NotNil(t, a.Columns)
	require.NotNil(t, a.Candidates)
}

// Without layouts, Project projects the analyzer's candidates over the
// collected workload; with WithCurrent, current comes first once.
func TestProjectCandidates(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	pl.collected(t, now.Add(-time.Hour))
	res, err := control.Project(ctx, pl.st, pl.state(t), control.ProjectOptions{
		WithCurrent: true, Seed: 1, TargetFileSizeBytes: 8 << 10,
		Workload: control.WorkloadOptions{Since: 24 * time.Hour, Now: func() time.Time { return now }},
	})
	require.NoError(t, err)
	require.Len(t, res.Workload.Queries, 1)
	var layouts []string
	currents := 0
	for _, p := range res.Projections {
		layouts = append(layouts, p.Layout.String())
		if p.Layout.Strategy == layout.StrategyCurrent {
			currents++
		} else {
			require.Equal(t, int64(8<<10), p.Layout.TargetFileSizeBytes, p.Layout.String())
		}
	}
	require.Equal(t, 1, currents, "current is a candidate already: not added twice")
	require.Contains(t, layouts, "sort(id) target 8192")
	c, err := control.ChoosePlan(res.Projections, control.ChooseOptions{})
	require.NoError(t, err)
	require.True(t, c.Gain, "a sort by id lets id = 42 skip files: %v", layouts)
}

// Without layouts, a SQL workload's own filters choose the candidates: the
// store has collected nothing for the table, yet a workload filtering on id
// makes sort(id) (and a z-order with v) a candidate.
func TestProjectCandidatesFromSQLWorkload(t *testing.T) {
	ctx := context.Background()
	pl := setupPlan(t)
	trino, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	sql := "SELECT * FROM db.p WHERE id = 42; SELECT * FROM db.p WHERE id BETWEEN 100 AND 200 AND v = 3; SELECT count(*) FROM db.p WHERE v = 1"
	for _, st := range []*store.Store{pl.st, nil} {
		res, err := control.Project(ctx, st, pl.state(t), control.ProjectOptions{
			WithCurrent: true, Seed: 1,
			Workload: control.WorkloadOptions{SQL: strings.NewReader(sql), SQLName: "q.sql", Dialect: trino},
		})
		require.NoError(t, err)
		var layouts []string
		for _, p := range res.Projections {
			layouts = append(layouts, p.Layout.String())
		}
		require.Contains(t, layouts, "sort(id)", "store %v", st != nil)
		require.Contains(t, layouts, "current")
		require.Contains(t, layouts, "binpack")
	}
}

func TestLoadWorkloadSQL(t *testing.T) {
	pl := setupPlan(t)
	d, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	sql := "SELECT * FROM db.p WHERE id = 1; SELECT * FROM other.t WHERE x = 2; SELECT * FROM db.p WHERE v > 3"
	w, err := control.LoadWorkload(context.Background(), nil, pl.id, control.WorkloadOptions{SQL: strings.NewReader(sql), SQLName: "q.sql", Dialect: d})
	require.NoError(t, err)
	require.Len(t, w.Queries, 2, "statements of other tables are left out")

	_, err = control.LoadWorkload(context.Background(), nil, pl.id, control.WorkloadOptions{})
	require.ErrorContains(t, err, "no state store")
}
