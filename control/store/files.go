package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/floe-project/floe/collectors"
)

// File returns the record of path; ok is false when path was never
// collected.
func (s *Store) File(ctx context.Context, path string) (rec collectors.FileRecord, ok bool, err error) {
	var mtime, at int64
	err = s.db.QueryRowContext(ctx, `SELECT path, source, size, mtime, events, bad, collected_at
FROM collect_files WHERE path = ?`, path).Scan(&rec.Path, &rec.Source, &rec.Size, &mtime, &rec.Events, &rec.Bad, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return collectors.FileRecord{}, false, nil
	}
	if err != nil {
		return collectors.FileRecord{}, false, fmt.Errorf("read collected file %s: %w", path, err)
	}
	rec.ModTime, rec.CollectedAt = time.Unix(0, mtime).UTC(), time.Unix(0, at).UTC()
	return rec, true, nil
}

// RecordFile inserts or replaces the record of rec.Path. A zero
// CollectedAt is set to now.
func (s *Store) RecordFile(ctx context.Context, rec collectors.FileRecord) error {
	if rec.CollectedAt.IsZero() {
		rec.CollectedAt = s.now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO collect_files (path, source, size, mtime, events, bad, collected_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET source = excluded.source, size = excluded.size, mtime = excluded.mtime,
	events = excluded.events, bad = excluded.bad, collected_at = excluded.collected_at`,
		rec.Path, rec.Source, rec.Size, rec.ModTime.UTC().UnixNano(), rec.Events, rec.Bad, rec.CollectedAt.UTC().UnixNano())
	if err != nil {
		return fmt.Errorf("record collected file %s: %w", rec.Path, err)
	}
	return nil
}

// Files lists every collected file, by path.
func (s *Store) Files(ctx context.Context) (out []collectors.FileRecord, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, source, size, mtime, events, bad, collected_at
FROM collect_files ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("list collected files: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var (
			rec       collectors.FileRecord
			mtime, at int64
		)
		if err := rows.Scan(&rec.Path, &rec.Source, &rec.Size, &mtime, &rec.Events, &rec.Bad, &at); err != nil {
			return nil, fmt.Errorf("list collected files: %w", err)
		}
		rec.ModTime, rec.CollectedAt = time.Unix(0, mtime).UTC(), time.Unix(0, at).UTC()
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list collected files: %w", err)
	}
	return out, nil
}
