package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SourceRecord is what the store keeps of one telemetry source of
// floe.yaml (telemetry.sources), by name. The control plane owns its
// meaning; the store keeps it across restarts.
type SourceRecord struct {
	// Name and Kind are the source's, as configured.
	Name string
	Kind string
	// Cursor is a polled source's watermark, in the poller's own text
	// form; "" before the first poll (and always for files, whose
	// fingerprints are the collected files' records).
	Cursor string
	// FirstSeen is when the source was first collected.
	FirstSeen time.Time
	// LastNew is when a collection last stored a new event; zero when none
	// ever did.
	LastNew time.Time
	// NewestEvent is the newest event time (its end, else its start) the
	// source delivered; zero when none.
	NewestEvent time.Time
	// CollectedAt is the last collection that succeeded.
	CollectedAt time.Time
	// Error and ErrorAt are the last failed collection's error and time;
	// empty when the last collection succeeded.
	Error   string
	ErrorAt time.Time
}

const sourceColumns = `name, kind, cursor_text, first_seen_at, last_new_at, newest_event, collected_at, error, error_at`

func scanSource(sc interface{ Scan(...any) error }) (SourceRecord, error) {
	var (
		r                                     SourceRecord
		first                                 int64
		lastNew, newest, collected, erroredAt sql.NullInt64
	)
	if err := sc.Scan(&r.Name, &r.Kind, &r.Cursor, &first, &lastNew, &newest, &collected, &r.Error, &erroredAt); err != nil {
		return SourceRecord{}, err
	}
	r.FirstSeen = time.Unix(0, first).UTC()
	r.LastNew, r.NewestEvent, r.CollectedAt, r.ErrorAt = fromNanos(lastNew), fromNanos(newest), fromNanos(collected), fromNanos(erroredAt)
	return r, nil
}

// TelemetrySource returns the record of the source named name, or
// [ErrNotFound] when it was never collected.
func (s *Store) TelemetrySource(ctx context.Context, name string) (SourceRecord, error) {
	r, err := scanSource(s.db.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM telemetry_sources WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return SourceRecord{}, fmt.Errorf("telemetry source %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return SourceRecord{}, fmt.Errorf("read telemetry source %s: %w", name, err)
	}
	return r, nil
}

// PutTelemetrySource inserts or replaces the record of r.Name. A zero
// FirstSeen is set to now.
func (s *Store) PutTelemetrySource(ctx context.Context, r SourceRecord) error {
	if r.Name == "" || r.Kind == "" {
		return errors.New("record telemetry source: name and kind are required")
	}
	if r.FirstSeen.IsZero() {
		r.FirstSeen = s.now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO telemetry_sources (`+sourceColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, cursor_text = excluded.cursor_text,
	first_seen_at = excluded.first_seen_at, last_new_at = excluded.last_new_at, newest_event = excluded.newest_event,
	collected_at = excluded.collected_at, error = excluded.error, error_at = excluded.error_at`,
		r.Name, r.Kind, r.Cursor, r.FirstSeen.UTC().UnixNano(), nanos(r.LastNew), nanos(r.NewestEvent), nanos(r.CollectedAt), r.Error, nanos(r.ErrorAt))
	if err != nil {
		return fmt.Errorf("record telemetry source %s: %w", r.Name, err)
	}
	return nil
}

// TelemetrySources lists the record of every source ever collected, by
// name (sources since removed from floe.yaml included).
func (s *Store) TelemetrySources(ctx context.Context) (out []SourceRecord, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sourceColumns+` FROM telemetry_sources ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list telemetry sources: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		r, err := scanSource(rows)
		if err != nil {
			return nil, fmt.Errorf("list telemetry sources: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list telemetry sources: %w", err)
	}
	return out, nil
}
