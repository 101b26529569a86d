package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AlertRecord is the stored state of one alert: its last evaluation and
// where its notifications stand. Package control/alert owns its meaning;
// the store keeps it and guards its changes with the notification number.
type AlertRecord struct {
	// Kind and Key identify the alert (freshness and a table name, check
	// and a check name, …).
	Kind string
	Key  string
	// Table is catalog.namespace.name, "" for an alert about no table.
	Table string
	// State is firing or resolved.
	State   string
	Summary string
	// Age and SLA are a freshness alert's compaction age and SLA.
	Age, SLA time.Duration
	Error    string
	RunID    string
	Failures int
	// Since is when the condition began; zero when unknown.
	Since time.Time
	// ChangedAt is when State last changed.
	ChangedAt time.Time
	// Seq numbers the notifications about the alert: it grows by one for
	// every change of state and every repeat.
	Seq int64
	// Pending is true while notification Seq has not reached every sink.
	Pending bool
	// NotifiedAt is when the last notification reached every sink; zero
	// before the first.
	NotifiedAt time.Time
}

const alertColumns = `kind, alert_key, table_name, state, summary, age_seconds, sla_seconds, error, run_id, failures,
	since, changed_at, seq, pending, notified_at`

func scanAlert(sc interface{ Scan(...any) error }) (AlertRecord, error) {
	var (
		r                 AlertRecord
		age, sla, changed int64
		pending           int
		since, notified   sql.NullInt64
	)
	if err := sc.Scan(&r.Kind, &r.Key, &r.Table, &r.State, &r.Summary, &age, &sla, &r.Error, &r.RunID, &r.Failures,
		&since, &changed, &r.Seq, &pending, &notified); err != nil {
		return AlertRecord{}, err
	}
	r.Age, r.SLA = time.Duration(age)*time.Second, time.Duration(sla)*time.Second
	r.Since, r.ChangedAt, r.NotifiedAt = fromNanos(since), time.Unix(0, changed).UTC(), fromNanos(notified)
	r.Pending = pending != 0
	return r, nil
}

// Alert returns the stored alert kind/key, or a [*NotFoundError] when it
// was never stored.
func (s *Store) Alert(ctx context.Context, kind, key string) (AlertRecord, error) {
	r, err := scanAlert(s.db.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM alerts WHERE kind = ? AND alert_key = ?`, kind, key))
	if errors.Is(err, sql.ErrNoRows) {
		return AlertRecord{}, &NotFoundError{Kind: "alert", ID: kind + " " + key}
	}
	if err != nil {
		return AlertRecord{}, fmt.Errorf("read alert %s %s: %w", kind, key, err)
	}
	return r, nil
}

// Alerts lists the stored alerts in state ("" for all), the most recently
// changed first.
func (s *Store) Alerts(ctx context.Context, state string) (out []AlertRecord, err error) {
	q, args := `SELECT `+alertColumns+` FROM alerts`, []any{}
	if state != "" {
		q += ` WHERE state = ?`
		args = append(args, state)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY changed_at DESC, kind, alert_key`, args...)
	if err != nil {
		return nil, fmt.Errorf("list alerts: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		r, err := scanAlert(rows)
		if err != nil {
			return nil, fmt.Errorf("list alerts: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list alerts: %w", err)
	}
	return out, nil
}

// PutAlert stores r as a compare-and-set on the notification number: with
// prevSeq 0 it inserts an alert that must not exist yet, otherwise it
// replaces the stored alert only while that is still at prevSeq. When
// another process got there first the error wraps [ErrStateConflict].
func (s *Store) PutAlert(ctx context.Context, r AlertRecord, prevSeq int64) error {
	if r.Kind == "" || r.Key == "" || r.State == "" || r.ChangedAt.IsZero() {
		return fmt.Errorf("store alert: kind, key, state and changed_at are required")
	}
	args := []any{r.Table, r.State, r.Summary, int64(r.Age / time.Second), int64(r.SLA / time.Second), r.Error, r.RunID, r.Failures,
		nanos(r.Since), r.ChangedAt.UTC().UnixNano(), r.Seq, boolInt(r.Pending), nanos(r.NotifiedAt)}
	var (
		res sql.Result
		err error
	)
	if prevSeq == 0 {
		res, err = s.db.ExecContext(ctx, `INSERT INTO alerts (`+alertColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, alert_key) DO NOTHING`, append([]any{r.Kind, r.Key}, args...)...)
	} else {
		res, err = s.db.ExecContext(ctx, `UPDATE alerts SET table_name = ?, state = ?, summary = ?, age_seconds = ?, sla_seconds = ?,
	error = ?, run_id = ?, failures = ?, since = ?, changed_at = ?, seq = ?, pending = ?, notified_at = ?
WHERE kind = ? AND alert_key = ? AND seq = ?`, append(args, r.Kind, r.Key, prevSeq)...)
	}
	if err != nil {
		return fmt.Errorf("store alert %s %s: %w", r.Kind, r.Key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store alert %s %s: %w", r.Kind, r.Key, err)
	}
	if n == 0 {
		return fmt.Errorf("store alert %s %s at notification %d: another process changed it: %w", r.Kind, r.Key, prevSeq, ErrStateConflict)
	}
	return nil
}

// AlertDeliveries returns, per sink, the number of the last notification
// about alert kind/key that the sink received.
func (s *Store) AlertDeliveries(ctx context.Context, kind, key string) (out map[string]int64, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sink, seq FROM alert_deliveries WHERE kind = ? AND alert_key = ?`, kind, key)
	if err != nil {
		return nil, fmt.Errorf("read deliveries of alert %s %s: %w", kind, key, err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	out = map[string]int64{}
	for rows.Next() {
		var (
			sink string
			seq  int64
		)
		if err := rows.Scan(&sink, &seq); err != nil {
			return nil, fmt.Errorf("read deliveries of alert %s %s: %w", kind, key, err)
		}
		out[sink] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read deliveries of alert %s %s: %w", kind, key, err)
	}
	return out, nil
}

// RecordAlertDelivery records that sink received notification seq about
// alert kind/key at at.
func (s *Store) RecordAlertDelivery(ctx context.Context, kind, key, sink string, seq int64, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO alert_deliveries (kind, alert_key, sink, seq, sent_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (kind, alert_key, sink) DO UPDATE SET seq = excluded.seq, sent_at = excluded.sent_at`,
		kind, key, sink, seq, at.UTC().UnixNano()); err != nil {
		return fmt.Errorf("record delivery of alert %s %s to %s: %w", kind, key, sink, err)
	}
	return nil
}
