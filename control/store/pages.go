package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PlanCursor is where a page of plans resumes: after the plan created at
// CreatedAt with ID, in the order of [Store.Plans] (newest first, then by
// id). A plan inserted after the page was read is newer than the cursor,
// so it neither shifts nor repeats the pages that follow.
type PlanCursor struct {
	CreatedAt time.Time
	ID        string
}

// PlansPage lists at most limit (at least 1) of the plans f selects, in
// the order of [Store.Plans], after the cursor (nil: from the newest).
func (s *Store) PlansPage(ctx context.Context, f PlanFilter, after *PlanCursor, limit int) ([]PlanRecord, error) {
	if limit < 1 {
		return nil, fmt.Errorf("list plans: limit %d, want at least 1", limit)
	}
	return s.plans(ctx, f, after, limit)
}

// RunCursor is where a page of runs resumes: after the run started at
// StartedAt with ID, in the order of [Store.Runs] (newest first, then by
// id).
type RunCursor struct {
	StartedAt time.Time
	ID        string
}

// RunsPage lists at most limit (at least 1) runs of table
// (catalog.namespace.name, case-insensitive; "" for all tables) with their
// steps, in the order of [Store.Runs], after the cursor (nil: from the
// newest). A table's page is read through the runs_table_key index.
func (s *Store) RunsPage(ctx context.Context, table string, after *RunCursor, limit int) ([]RunRecord, error) {
	if limit < 1 {
		return nil, fmt.Errorf("read runs: limit %d, want at least 1", limit)
	}
	where, args := runsPageWhere(table, after)
	return s.runs(ctx, where, args, limit)
}

// runsPageWhere is the condition of [Store.RunsPage].
func runsPageWhere(table string, after *RunCursor) (string, []any) {
	where, args := "", []any{}
	if table != "" {
		where, args = runsOfTable, append(args, filterKey(table))
	}
	if after != nil {
		if where == "" {
			where = `WHERE `
		} else {
			where += ` AND `
		}
		at := after.StartedAt.UTC().UnixNano()
		where += `(started_at < ? OR (started_at = ? AND id > ?))`
		args = append(args, at, at, after.ID)
	}
	return where, args
}

// tablesRunSinceQuery is [Store.TablesRunSince]'s, through the runs_ended
// index.
const tablesRunSinceQuery = `SELECT DISTINCT table_name FROM runs WHERE ended_at >= ?`

// TablesRunSince lists the tables (as their runs spell them) with a run
// that ended at or after since: the tables whose health floe's own runs
// may have changed since then.
func (s *Store) TablesRunSince(ctx context.Context, since time.Time) (out []string, err error) {
	rows, err := s.db.QueryContext(ctx, tablesRunSinceQuery, since.UTC().UnixNano())
	if err != nil {
		return nil, fmt.Errorf("list tables run since %s: %w", since.Format(time.RFC3339), err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("list tables run since %s: %w", since.Format(time.RFC3339), err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables run since %s: %w", since.Format(time.RFC3339), err)
	}
	return out, nil
}
