package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// HoldRecord is one hold of a table: floe stopped changing the table
// because a run of it failed a check that must never fail (the control
// plane's invariant failures), until a person resumes it. The control plane
// owns its meaning; the store keeps it and guards that a table has at most
// one active hold.
type HoldRecord struct {
	// ID numbers the holds in the order they were placed.
	ID int64
	// Table is catalog.namespace.name as the run spelled it.
	Table string
	// RunID is the run that failed; "" when the failure came before a run
	// was recorded.
	RunID string
	// Reason is the failure, as the run recorded it.
	Reason string
	// HeldAt is when the hold was placed.
	HeldAt time.Time
	// ResumedBy and ResumedAt say who resumed the table and when; empty
	// and zero while the hold is active.
	ResumedBy string
	ResumedAt time.Time
	// Note is what the person who resumed it said.
	Note string
}

// Active reports whether the hold still stops the table's runs.
func (h HoldRecord) Active() bool { return h.ResumedAt.IsZero() }

const holdColumns = `id, table_name, run_id, reason, held_at, resumed_by, resumed_at, note`

func scanHold(sc interface{ Scan(...any) error }) (HoldRecord, error) {
	var (
		h       HoldRecord
		held    int64
		resumed sql.NullInt64
	)
	if err := sc.Scan(&h.ID, &h.Table, &h.RunID, &h.Reason, &held, &h.ResumedBy, &resumed, &h.Note); err != nil {
		return HoldRecord{}, err
	}
	h.HeldAt, h.ResumedAt = time.Unix(0, held).UTC(), fromNanos(resumed)
	return h, nil
}

// HoldTable places h on its table unless the table already has an active
// hold, and returns the table's active hold — h as stored, or the one that
// was there (placed is then false: the first failure stays the reason). A
// zero HeldAt means now.
func (s *Store) HoldTable(ctx context.Context, h HoldRecord) (_ HoldRecord, placed bool, err error) {
	if h.Table == "" || h.Reason == "" {
		return HoldRecord{}, false, errors.New("hold table: table and reason are required")
	}
	if h.HeldAt.IsZero() {
		h.HeldAt = s.now()
	}
	// The unique index on the active holds makes a second active hold a
	// conflict, which DO NOTHING turns into no row.
	res, err := s.db.ExecContext(ctx, `INSERT INTO table_holds (table_key, table_name, run_id, reason, held_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`, leaseKey(h.Table), h.Table, h.RunID, h.Reason, h.HeldAt.UTC().UnixNano())
	if err != nil {
		return HoldRecord{}, false, fmt.Errorf("hold table %s: %w", h.Table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return HoldRecord{}, false, fmt.Errorf("hold table %s: %w", h.Table, err)
	}
	cur, err := s.TableHold(ctx, h.Table)
	if err != nil {
		return HoldRecord{}, false, fmt.Errorf("hold table %s: %w", h.Table, err)
	}
	return cur, n == 1, nil
}

// TableHold returns table's active hold (catalog.namespace.name,
// case-insensitive), or a [*NotFoundError] when it has none.
func (s *Store) TableHold(ctx context.Context, table string) (HoldRecord, error) {
	h, err := scanHold(s.db.QueryRowContext(ctx, `SELECT `+holdColumns+` FROM table_holds WHERE table_key = ? AND resumed_at IS NULL`, leaseKey(table)))
	if errors.Is(err, sql.ErrNoRows) {
		return HoldRecord{}, &NotFoundError{Kind: "hold of table", ID: table}
	}
	if err != nil {
		return HoldRecord{}, fmt.Errorf("read hold of table %s: %w", table, err)
	}
	return h, nil
}

// TableHolds lists the holds, by table, then newest first: only the active
// ones, or with all also the resumed ones (the record of who resumed what).
func (s *Store) TableHolds(ctx context.Context, all bool) (out []HoldRecord, err error) {
	q := `SELECT ` + holdColumns + ` FROM table_holds`
	if !all {
		q += ` WHERE resumed_at IS NULL`
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY table_key, held_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list table holds: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	out = []HoldRecord{}
	for rows.Next() {
		h, err := scanHold(rows)
		if err != nil {
			return nil, fmt.Errorf("list table holds: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list table holds: %w", err)
	}
	return out, nil
}

// ResumeTable lifts table's active hold, recording who lifted it, when and
// why, and returns it as it now is. A table without an active hold is a
// [*NotFoundError]. A zero at means now.
func (s *Store) ResumeTable(ctx context.Context, table, by, note string, at time.Time) (HoldRecord, error) {
	if by == "" {
		return HoldRecord{}, fmt.Errorf("resume table %s: who resumes it is required", table)
	}
	if at.IsZero() {
		at = s.now()
	}
	cur, err := s.TableHold(ctx, table)
	if err != nil {
		return HoldRecord{}, err
	}
	// Compare-and-set on the hold's id: two people resuming at once lift
	// it once, and the second finds the table not held.
	res, err := s.db.ExecContext(ctx, `UPDATE table_holds SET resumed_by = ?, resumed_at = ?, note = ? WHERE id = ? AND resumed_at IS NULL`,
		by, at.UTC().UnixNano(), note, cur.ID)
	if err != nil {
		return HoldRecord{}, fmt.Errorf("resume table %s: %w", table, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return HoldRecord{}, fmt.Errorf("resume table %s: %w", table, err)
	} else if n == 0 {
		return HoldRecord{}, &NotFoundError{Kind: "hold of table", ID: table}
	}
	cur.ResumedBy, cur.ResumedAt, cur.Note = by, at.UTC(), note
	return cur, nil
}
