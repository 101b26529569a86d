package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// explain is the plan the database would run q with args by: SQLite's
// EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN with sequential scans turned
// off, so that a table of a few rows is read through an index when one
// serves the query (and by a sequential scan only when none does).
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	ctx := t.Context()
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, rollback(tx)) }()
	prefix := `EXPLAIN QUERY PLAN `
	if s.d == postgresDialect {
		_, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`)
		require.NoError(t, err)
		prefix = `EXPLAIN `
	}
	rows, err := tx.QueryContext(ctx, prefix+q, args...)
	require.NoError(t, err)
	defer func() { require.NoError(t, rows.Close()) }()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		// SQLite: id, parent, notused, detail; PostgreSQL: one line.
		lines = append(lines, fmt.Sprint(vals[len(vals)-1]))
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}

// TestRunLookupsUseTheirIndexes: the queries a scheduling pass makes of
// the runs and plans of each table, its one query of the lapsed runs, its
// one query of the window's spend (Store.Spend), and the hourly prune's,
// are served by an index on both databases: none reads
// every run. Before version 12 they compared lower(table_name), which no
// index serves.
func TestRunLookupsUseTheirIndexes(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for i := range 30 {
			table := fmt.Sprintf("local.db.t%d", i%3)
			require.NoError(t, s.StartRun(ctx, RunRecord{ID: fmt.Sprintf("r%02d", i), Table: table, Status: "done", StartedAt: at.Add(time.Duration(i) * time.Minute)}))
			_, err := s.InsertPlan(ctx, PlanRecord{ID: fmt.Sprintf("p%02d", i), Table: table, State: "proposed", CreatedAt: at})
			require.NoError(t, err)
		}
		key := filterKey("local.db.t1")
		scan := map[string]string{DriverSQLite: "SCAN runs", DriverPostgres: "Seq Scan on runs"}[db.Name]
		planScan := map[string]string{DriverSQLite: "SCAN plans", DriverPostgres: "Seq Scan on plans"}[db.Name]
		plansByTable, plansArgs := plansQuery(PlanFilter{Table: "local.db.t1", State: "approved"}, nil, 0)
		plansOfTable, plansOfArgs := plansQuery(PlanFilter{Table: "local.db.t1"}, nil, 0)
		for _, tc := range []struct {
			name, q     string
			args        []any
			index, scan string
		}{
			{"runs of a table", runsQuery(runsOfTable, 20), []any{key}, "runs_table_key", scan},
			{"every run of a table", runsQuery(runsOfTable, 0), []any{key}, "runs_table_key", scan},
			{"last success", lastRunEndedQuery, []any{key, "done"}, "runs_table_key", scan},
			{"lapsed runs", lapsedRunsQuery, []any{at.UnixNano(), at.UnixNano()}, "runs_live", scan},
			{"runs past their retention", prunableRunsQuery, []any{at.UnixNano()}, "runs_ended", map[string]string{DriverSQLite: "SCAN r", DriverPostgres: "Seq Scan on runs"}[db.Name]},
			{"the window's spend (ended runs)", spendQuery, []any{at.UnixNano()}, "runs_ended", scan},
			{"the window's spend (live runs)", spendQuery, []any{at.UnixNano()}, "runs_live", scan},
			{"approved plans of a table", plansByTable, plansArgs, "plans_table_key", planScan},
			{"plans of a table", plansOfTable, plansOfArgs, "plans_table_key", planScan},
		} {
			plan := explain(t, s, tc.q, tc.args...)
			require.Contains(t, plan, tc.index, "%s:\n%s", tc.name, plan)
			require.NotContains(t, plan, tc.scan, "%s:\n%s", tc.name, plan)
		}
	})
}

// TestRunsOfATableByItsKey: a table's runs and plans are found by its
// name in any case and in any spelling of floe's identifier syntax, in
// any script, on both databases. SQLite's lower() folds only ASCII, so
// before version 12 the runs of local.db.Ärger were not found there.
func TestRunsOfATableByItsKey(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		s := db.Open(t)
		ctx := t.Context()
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for i, table := range []string{"local.db.Ärger", "local.DB.Events", "local.db.other"} {
			require.NoError(t, s.StartRun(ctx, RunRecord{ID: fmt.Sprintf("r%d", i), Table: table, Status: "done", StartedAt: at, EndedAt: at.Add(time.Duration(i+1) * time.Minute)}))
			_, err := s.InsertPlan(ctx, PlanRecord{ID: fmt.Sprintf("p%d", i), Table: table, State: "proposed", CreatedAt: at})
			require.NoError(t, err)
		}
		for _, tc := range []struct{ asked, run string }{
			{"local.db.ärger", "r0"},
			{"LOCAL.DB.ÄRGER", "r0"},
			{`"local"."db"."ärger"`, "r0"},
			{"local.db.events", "r1"},
			{` local.db."EVENTS"`, "r1"},
		} {
			runs, err := s.Runs(ctx, tc.asked, 0)
			require.NoError(t, err)
			require.Len(t, runs, 1, tc.asked)
			require.Equal(t, tc.run, runs[0].ID, tc.asked)
			ended, err := s.LastRunEnded(ctx, tc.asked, "done")
			require.NoError(t, err)
			require.Equal(t, runs[0].EndedAt, ended, tc.asked)
			plans, err := s.Plans(ctx, PlanFilter{Table: tc.asked})
			require.NoError(t, err)
			require.Len(t, plans, 1, tc.asked)
			require.Equal(t, "p"+tc.run[1:], plans[0].ID, tc.asked)
		}
		runs, err := s.Runs(ctx, "local.db.nope", 0)
		require.NoError(t, err)
		require.Empty(t, runs)
	})
}

// TestMigrateTableKeys: runs and plans stored by version 11 get their
// table keys when the database is migrated, and are found by them.
func TestMigrateTableKeys(t *testing.T) {
	ForEachDriver(t, func(t *testing.T, db TestDB) {
		ctx := t.Context()
		s, err := openTo(ctx, db.Cfg, 11)
		require.NoError(t, err)
		for i, table := range []string{"local.db.Ärger", "local.DB.Events", "local.DB.Events"} {
			_, err := s.db.ExecContext(ctx, `INSERT INTO runs (id, table_name, plan_id, status, error, started_at) VALUES (?, ?, '', 'done', '', ?)`,
				fmt.Sprintf("r%d", i), table, int64(i))
			require.NoError(t, err)
			_, err = s.db.ExecContext(ctx, `INSERT INTO plans (id, table_name, base_snapshot, layout, state, created_at) VALUES (?, ?, 1, 'binpack', 'proposed', ?)`,
				fmt.Sprintf("p%d", i), table, int64(i))
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())

		s = db.Open(t)
		runs, err := s.Runs(ctx, "local.db.ärger", 0)
		require.NoError(t, err)
		require.Len(t, runs, 1)
		require.Equal(t, "local.db.Ärger", runs[0].Table, "the name is kept as written")
		runs, err = s.Runs(ctx, "local.db.events", 0)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		plans, err := s.Plans(ctx, PlanFilter{Table: "LOCAL.DB.EVENTS"})
		require.NoError(t, err)
		require.Len(t, plans, 2)
	})
}
