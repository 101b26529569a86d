package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DeferralRecord is a table whose rewrites a maintenance budget deferred
// in passes that started no run for it (nothing else of it was due), so
// no run records the deferral: the lake report's queue reads it here.
type DeferralRecord struct {
	// Table is catalog.namespace.name as the scheduler spelled it.
	Table string
	// FirstAt and LastAt are the first and the newest pass of the streak
	// of deferrals, which ends when a budget buys the table's rewrites.
	FirstAt, LastAt time.Time
	// Passes is how many passes of the streak deferred it.
	Passes int
	// Reason is the newest pass's reason.
	Reason string
}

// NoteDeferrals records that the pass at at deferred tables (with each
// one's reason) without a run: a new streak for a table not deferred
// since its rewrites last ran, one more pass of the streak otherwise.
func (s *Store) NoteDeferrals(ctx context.Context, reasons map[string]string, at time.Time) (err error) {
	if len(reasons) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("note deferrals: begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	ns := at.UTC().UnixNano()
	for table, why := range reasons {
		if _, err := tx.ExecContext(ctx, `INSERT INTO table_deferrals (table_key, table_name, first_at, last_at, passes, reason)
VALUES (?, ?, ?, ?, 1, ?)
ON CONFLICT (table_key) DO UPDATE SET table_name = excluded.table_name, last_at = excluded.last_at,
	passes = table_deferrals.passes + 1, reason = excluded.reason`, filterKey(table), table, ns, ns, why); err != nil {
			return fmt.Errorf("note the deferral of %s: %w", table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("note deferrals: commit: %w", err)
	}
	return nil
}

// EndDeferrals ends the streaks of deferrals of tables: a budget bought
// their rewrites.
func (s *Store) EndDeferrals(ctx context.Context, tables []string) error {
	for _, t := range tables {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM table_deferrals WHERE table_key = ?`, filterKey(t)); err != nil {
			return fmt.Errorf("end the deferrals of %s: %w", t, err)
		}
	}
	return nil
}

// Deferrals lists the streaks of deferrals whose newest pass was at or
// after since (every one when since is zero), by table.
func (s *Store) Deferrals(ctx context.Context, since time.Time) (out []DeferralRecord, err error) {
	var from int64
	if !since.IsZero() {
		from = since.UTC().UnixNano()
	}
	rows, err := s.db.QueryContext(ctx, `SELECT table_name, first_at, last_at, passes, reason FROM table_deferrals
WHERE last_at >= ? ORDER BY table_key`, from)
	if err != nil {
		return nil, fmt.Errorf("list deferrals: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var (
			r           DeferralRecord
			first, last int64
		)
		if err := rows.Scan(&r.Table, &first, &last, &r.Passes, &r.Reason); err != nil {
			return nil, fmt.Errorf("list deferrals: %w", err)
		}
		r.FirstAt, r.LastAt = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list deferrals: %w", err)
	}
	return out, nil
}
