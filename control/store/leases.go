package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TableLease is who may work on a table until when. See [Store.ClaimTables].
type TableLease struct {
	// Table is the table's key: catalog.namespace.name, lower-cased.
	Table string `json:"table"`
	// Holder is the floe process holding the lease ("host:pid").
	Holder string `json:"holder"`
	// RunID is the run the holder is doing on the table, "" between runs.
	RunID string `json:"run_id"`
	// AcquiredAt is when Holder claimed it.
	AcquiredAt time.Time `json:"acquired_at,omitzero"`
	// ExpiresAt is when the lease lapses unless renewed; from then on
	// anyone may claim the table.
	ExpiresAt time.Time `json:"expires_at"`
}

// leaseKey is the table_leases key of a table name.
func leaseKey(table string) string { return strings.ToLower(strings.TrimSpace(table)) }

// ClaimTables claims for holder, in the order given, up to limit of
// tables (catalog.namespace.name, compared case-insensitively) whose lease
// is absent, expired (it expired at or before now) or already held by
// holder, leasing each until until. It returns the tables it claimed, as
// spelled in tables. Claims are atomic: of several stores (processes,
// machines) claiming at once, at most one gets a table.
//
// On PostgreSQL the claim selects the free rows FOR UPDATE SKIP LOCKED:
// replicas claiming at the same moment skip the rows another is claiming
// instead of waiting for it, and so take different tables, which spreads
// the work. The lease is a row with an expiry rather than an advisory
// lock because an advisory lock belongs to a database session: a run of
// hours would have to pin one pooled connection for all that time, and a
// lost connection would silently drop the lock while the run went on. A
// row survives reconnects, can be shown by floe runs and the API
// ([Store.TableLeases]), and lapses by itself when its holder dies. On
// SQLite the write transaction begins IMMEDIATE, holding the database's
// write lock, so the same select and update are serialized.
func (s *Store) ClaimTables(ctx context.Context, holder string, tables []string, limit int, until, now time.Time) (_ []string, err error) {
	if holder == "" {
		return nil, errors.New("claim tables: empty holder")
	}
	if limit < 1 {
		return nil, fmt.Errorf("claim tables for %s: limit %d, want at least 1", holder, limit)
	}
	if !until.After(now) {
		return nil, fmt.Errorf("claim tables for %s: lease until %s is not after now (%s)", holder, until.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	var keys []string
	spelled := map[string]string{}
	for _, t := range tables {
		k := leaseKey(t)
		if k == "" {
			return nil, fmt.Errorf("claim tables for %s: empty table name", holder)
		}
		if _, ok := spelled[k]; !ok {
			spelled[k] = t
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return []string{}, nil
	}
	// The rows of never-leased tables go in first, already expired, in a
	// statement of their own: a row inserted inside the claim transaction
	// would make another claimer inserting it too wait for the whole
	// transaction, and concurrent inserts in different orders could
	// deadlock; sorted, in autocommit, they cannot.
	list, args, err := s.d.textList(slices.Sorted(slices.Values(keys)))
	if err != nil {
		return nil, fmt.Errorf("claim tables for %s: %w", holder, err)
	}
	// WHERE true: SQLite would read ON CONFLICT as a join's ON.
	if _, err := s.db.ExecContext(ctx, `INSERT INTO table_leases (table_key, holder, run_id, acquired_at, expires_at)
SELECT k.value, '', '', NULL, 0 FROM `+list+` WHERE true ORDER BY k.value
ON CONFLICT (table_key) DO NOTHING`, args...); err != nil {
		return nil, s.redact(fmt.Errorf("claim tables for %s: add lease rows: %w", holder, err))
	}

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.redact(fmt.Errorf("claim tables for %s: begin: %w", holder, err))
	}
	defer func() {
		if err != nil {
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	list, args, err = s.d.textList(keys)
	if err != nil {
		return nil, fmt.Errorf("claim tables for %s: %w", holder, err)
	}
	q := `SELECT l.table_key FROM table_leases l JOIN ` + list + ` ON l.table_key = k.value
WHERE (l.holder = ? OR l.expires_at <= ?)`
	args = append(args, holder, now.UTC().UnixNano())
	if s.d == postgresDialect {
		// Lock only the rows this claim takes, first in the caller's order,
		// and leave the rest to the other replicas.
		q += ` ORDER BY k.pos LIMIT ? FOR UPDATE OF l SKIP LOCKED`
		args = append(args, limit)
	}
	free := map[string]bool{}
	if err := func() (err error) {
		rs, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, rs.Close()) }()
		for rs.Next() {
			var k string
			if err := rs.Scan(&k); err != nil {
				return err
			}
			free[k] = true
		}
		return rs.Err()
	}(); err != nil {
		return nil, fmt.Errorf("claim tables for %s: select free leases: %w", holder, err)
	}
	var claim []string
	for _, k := range keys {
		if free[k] && len(claim) < limit {
			claim = append(claim, k)
		}
	}
	out := make([]string, 0, len(claim))
	if len(claim) > 0 {
		list, listArgs, err := s.d.textList(claim)
		if err != nil {
			return nil, fmt.Errorf("claim tables for %s: %w", holder, err)
		}
		n := now.UTC().UnixNano()
		// A table changing hands gets a new acquired_at and no run; a
		// holder renewing its own claim keeps them.
		args := append([]any{holder, n, holder, holder, until.UTC().UnixNano()}, listArgs...)
		args = append(args, holder, n)
		res, err := tx.ExecContext(ctx, `UPDATE table_leases SET
	acquired_at = CASE WHEN holder = ? THEN acquired_at ELSE ? END,
	run_id = CASE WHEN holder = ? THEN run_id ELSE '' END,
	holder = ?, expires_at = ?
WHERE table_key IN (SELECT k.value FROM `+list+`) AND (holder = ? OR expires_at <= ?)`, args...)
		if err != nil {
			return nil, fmt.Errorf("claim tables for %s: %w", holder, err)
		}
		if got, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("claim tables for %s: %w", holder, err)
		} else if got != int64(len(claim)) {
			// The rows are write-locked (SQLite) or row-locked (PostgreSQL)
			// since the select: nobody can have taken one.
			return nil, fmt.Errorf("claim tables for %s: updated %d of the %d leases selected", holder, got, len(claim))
		}
		for _, k := range claim {
			out = append(out, spelled[k])
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("claim tables for %s: commit: %w", holder, err)
	}
	return out, nil
}

// RenewLease extends holder's lease of table to until and records the run
// it is doing there (runID, "" for none). When holder no longer holds the
// lease — another process took it over after it lapsed, or it was
// released — the error is a [*LeaseLostError], matching [ErrLeaseLost].
// A holder may renew a lease that lapsed as long as nobody took it.
func (s *Store) RenewLease(ctx context.Context, holder, table, runID string, until time.Time) error {
	key := leaseKey(table)
	res, err := s.db.ExecContext(ctx, `UPDATE table_leases SET expires_at = ?, run_id = ? WHERE table_key = ? AND holder = ?`,
		until.UTC().UnixNano(), runID, key, holder)
	if err != nil {
		return s.redact(fmt.Errorf("renew lease of table %s for %s: %w", table, holder, err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.redact(fmt.Errorf("renew lease of table %s for %s: %w", table, holder, err))
	}
	if n == 1 {
		return nil
	}
	lost := &LeaseLostError{Table: table, Holder: holder}
	var exp sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT holder, expires_at FROM table_leases WHERE table_key = ?`, key).Scan(&lost.CurrentHolder, &exp)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return s.redact(fmt.Errorf("renew lease of table %s for %s: %w", table, holder, errors.Join(lost, err)))
	}
	if lost.CurrentHolder != "" {
		lost.CurrentExpiresAt = fromNanos(exp)
	}
	return lost
}

// ReleaseLease gives up holder's lease of table, so that anyone may claim
// it at once. It does nothing when holder does not hold it.
func (s *Store) ReleaseLease(ctx context.Context, holder, table string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM table_leases WHERE table_key = ? AND holder = ?`, leaseKey(table), holder); err != nil {
		return s.redact(fmt.Errorf("release lease of table %s for %s: %w", table, holder, err))
	}
	return nil
}

// TableLeases lists the leases, live and lapsed, by table; tables no one
// holds are absent.
func (s *Store) TableLeases(ctx context.Context) (out []TableLease, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT table_key, holder, run_id, acquired_at, expires_at FROM table_leases
WHERE holder <> '' ORDER BY table_key`)
	if err != nil {
		return nil, s.redact(fmt.Errorf("list table leases: %w", err))
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	out = []TableLease{}
	for rows.Next() {
		var (
			l        TableLease
			acquired sql.NullInt64
			expires  int64
		)
		if err := rows.Scan(&l.Table, &l.Holder, &l.RunID, &acquired, &expires); err != nil {
			return nil, fmt.Errorf("list table leases: %w", err)
		}
		l.AcquiredAt, l.ExpiresAt = fromNanos(acquired), time.Unix(0, expires).UTC()
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list table leases: %w", err)
	}
	return out, nil
}
