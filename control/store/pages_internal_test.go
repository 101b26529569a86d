package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPagesSeeEveryRowOnce: paging through runs and plans — of one table
// and of all — with a new run and plan inserted between pages sees every
// row that was there at the start exactly once, in the order of the
// unpaged list, on both databases. Rows sharing a start time are told
// apart by id.
func TestPagesSeeEveryRowOnce(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		insert := func(i int) {
			table := fmt.Sprintf("local.db.t%d", i%2)
			// Every third shares its neighbour's time: the id breaks ties.
			when := at.Add(time.Duration(i-i%3) * time.Minute)
			require.NoError(t, s.StartRun(ctx, RunRecord{ID: fmt.Sprintf("r%03d", i), Table: table, Status: "done", StartedAt: when, EndedAt: when.Add(time.Second)}))
			_, err := s.InsertPlan(ctx, PlanRecord{ID: fmt.Sprintf("p%03d", i), Table: table, State: "proposed", CreatedAt: when})
			require.NoError(t, err)
		}
		for i := range 23 {
			insert(i)
		}
		next := 100
		for _, table := range []string{"", "local.DB.T1"} {
			wantRuns, err := s.Runs(ctx, table, 0)
			require.NoError(t, err)

			var gotRuns []string
			var rc *RunCursor
			for {
				runs, err := s.RunsPage(ctx, table, rc, 4)
				require.NoError(t, err)
				require.LessOrEqual(t, len(runs), 4)
				for _, r := range runs {
					gotRuns = append(gotRuns, r.ID)
				}
				if len(runs) < 4 {
					break
				}
				rc = &RunCursor{StartedAt: runs[len(runs)-1].StartedAt, ID: runs[len(runs)-1].ID}
				next++
				insert(next) // newer than every page read so far
			}
			// The runs' pages inserted plans too: these are the plans now.
			wantPlans, err := s.Plans(ctx, PlanFilter{Table: table})
			require.NoError(t, err)
			var gotPlans []string
			var pc *PlanCursor
			for {
				plans, err := s.PlansPage(ctx, PlanFilter{Table: table}, pc, 5)
				require.NoError(t, err)
				for _, p := range plans {
					gotPlans = append(gotPlans, p.ID)
				}
				if len(plans) < 5 {
					break
				}
				pc = &PlanCursor{CreatedAt: plans[len(plans)-1].CreatedAt, ID: plans[len(plans)-1].ID}
				next++
				insert(next)
			}
			var ids []string
			for _, r := range wantRuns {
				ids = append(ids, r.ID)
			}
			require.Equal(t, ids, gotRuns, "runs of %q", table)
			ids = nil
			for _, p := range wantPlans {
				ids = append(ids, p.ID)
			}
			require.Equal(t, ids, gotPlans, "plans of %q", table)
		}
		_, err := s.RunsPage(ctx, "", nil, 0)
		require.ErrorContains(t, err, "limit 0, want at least 1")
	})
}

// TestPageQueriesUseTheirIndexes: a table's page of runs and of plans,
// a page of every table's runs, and the tables run since a time, are read
// through an index.
func TestPageQueriesUseTheirIndexes(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for i := range 30 {
			table := fmt.Sprintf("local.db.t%d", i%3)
			require.NoError(t, s.StartRun(ctx, RunRecord{ID: fmt.Sprintf("r%02d", i), Table: table, Status: "done", StartedAt: at, EndedAt: at}))
			_, err := s.InsertPlan(ctx, PlanRecord{ID: fmt.Sprintf("p%02d", i), Table: table, State: "proposed", CreatedAt: at})
			require.NoError(t, err)
		}
		runWhere, runArgs := runsPageWhere("local.db.t1", &RunCursor{StartedAt: at, ID: "r05"})
		allWhere, allArgs := runsPageWhere("", &RunCursor{StartedAt: at, ID: "r05"})
		plans, planArgs := plansQuery(PlanFilter{Table: "local.db.t1"}, &PlanCursor{CreatedAt: at, ID: "p05"}, 10)
		scan := map[string]string{DriverSQLite: "SCAN runs", DriverPostgres: "Seq Scan on runs"}[db.Name]
		planScan := map[string]string{DriverSQLite: "SCAN plans", DriverPostgres: "Seq Scan on plans"}[db.Name]
		for _, tc := range []struct {
			name, q     string
			args        []any
			index, scan string
		}{
			{"a page of a table's runs", runsQuery(runWhere, 10), runArgs, "runs_table_key", scan},
			{"a page of every table's runs", runsQuery(allWhere, 10), allArgs, "runs_started", scan},
			{"a page of a table's plans", plans, planArgs, "plans_table_key", planScan},
			{"tables run since", tablesRunSinceQuery, []any{at.UnixNano()}, "runs_ended", scan},
		} {
			plan := explain(t, s, tc.q, tc.args...)
			require.Contains(t, plan, tc.index, "%s:\n%s", tc.name, plan)
			require.NotContains(t, plan, tc.scan, "%s:\n%s", tc.name, plan)
		}
		tables, err := s.TablesRunSince(ctx, at)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"local.db.t0", "local.db.t1", "local.db.t2"}, tables)
		tables, err = s.TablesRunSince(ctx, at.Add(time.Nanosecond))
		require.NoError(t, err)
		require.Empty(t, tables)
	})
}
