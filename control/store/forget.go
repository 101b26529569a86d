package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/floe-project/floe/lake"
)

// EventKey names a stored event: its source and query id, which are
// unique among the raw events and among the folded ones.
type EventKey struct {
	Source  string `json:"source"`
	QueryID string `json:"query_id"`
}

// Forget says which telemetry [Store.Forget] deletes.
type Forget struct {
	// Tables are the tables whose query events are deleted: every raw
	// event that read or wrote one of them (with its table accesses,
	// column uses and predicates, whatever other tables it also read), and
	// every folded event whose shape names one. Tables are matched
	// exactly, all three parts, case-insensitively, as resolved events
	// name them ([lake.Ident.String]).
	Tables []lake.Ident
	// Events are deleted by their keys, raw or folded, whatever tables
	// they read: the events of a set of log files (see
	// control.LogEvents), including those that read no table the catalogs
	// know.
	Events []EventKey
	// FilesUnder is a directory whose collected-file records are deleted
	// (the directory itself and every path below it), so that the next
	// collection reads those files again rather than skipping them as
	// unchanged. Empty: no record is deleted.
	FilesUnder string
}

// Forgotten counts what [Store.Forget] deleted.
type Forgotten struct {
	// Events are raw events, FoldedEvents folded ones.
	Events       int `json:"events"`
	FoldedEvents int `json:"folded_events"`
	// Shapes are the folded shapes no folded event referenced any more.
	Shapes int `json:"shapes"`
	// Files are collected-file records.
	Files int `json:"files"`
}

// Forget deletes the telemetry f selects: the raw and folded events of
// f.Tables and those f.Events names, the folded shapes left unreferenced, and the collected-file
// records under f.FilesUnder. It is what `floe demo --reset` calls, so
// that a rebuilt demo warehouse starts from no telemetry instead of adding
// its new queries to the old ones. Events go in transactions of
// [PruneBatch], as [Store.PruneEvents] deletes them, each transaction
// consistent on its own; a second call finds nothing to delete. Events of
// other tables, and events of no table at all, are kept.
func (s *Store) Forget(ctx context.Context, f Forget) (Forgotten, error) {
	var out Forgotten
	if len(f.Tables) > 0 {
		keys := make([]any, len(f.Tables))
		for i, id := range f.Tables {
			keys[i] = strings.ToLower(id.String())
		}
		var err error
		out.Events, _, err = inBatches(func() (int, int, error) {
			n, err := s.forgetBatch(ctx, `SELECT DISTINCT x.event_id FROM table_accesses x WHERE x.table_key IN `, keys, "query_events")
			return n, 0, err
		})
		if err != nil {
			return out, err
		}
		out.FoldedEvents, out.Shapes, err = inBatches(func() (int, int, error) {
			return s.deleteFoldedBatch(ctx, "forget folded events",
				`e.shape_id IN (SELECT x.shape_id FROM folded_shape_tables x WHERE x.table_key IN `+keyList(len(keys))+`) ORDER BY e.id`, keys)
		})
		if err != nil {
			return out, err
		}
	}
	if len(f.Events) > 0 {
		rows := make([][]any, len(f.Events))
		for i, k := range f.Events {
			rows[i] = []any{k.Source, k.QueryID}
		}
		err := s.forChunks(rows, 2, func(rows [][]any) error {
			raw, folded, shapes, err := s.forgetKeys(ctx, rows)
			out.Events, out.FoldedEvents, out.Shapes = out.Events+raw, out.FoldedEvents+folded, out.Shapes+shapes
			return err
		})
		if err != nil {
			return out, err
		}
	}
	if f.FilesUnder != "" {
		dir := filepath.Clean(f.FilesUnder)
		prefix := strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator)
		res, err := s.db.ExecContext(ctx, `DELETE FROM collect_files WHERE path = ? OR (length(path) > ? AND substr(path, 1, ?) = ?)`,
			dir, len(prefix), len(prefix), prefix)
		if err != nil {
			return out, s.redact(fmt.Errorf("forget collected files under %s: %w", dir, err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return out, s.redact(fmt.Errorf("forget collected files under %s: %w", dir, err))
		}
		out.Files = int(n)
	}
	return out, nil
}

// forgetBatch deletes from table up to PruneBatch rows whose ids sel (a
// SELECT of ids ending in "IN ", completed with keys' list) returns, in
// one transaction, and returns how many it deleted.
func (s *Store) forgetBatch(ctx context.Context, sel string, keys []any, table string) (deleted int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.redact(fmt.Errorf("forget events: begin: %w", err))
	}
	defer func() {
		if err != nil {
			deleted = 0
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	ids, err := selectIDs(ctx, tx, sel+keyList(len(keys))+fmt.Sprintf(" LIMIT %d", PruneBatch), keys)
	if err != nil {
		return 0, fmt.Errorf("forget events: %w", err)
	}
	if deleted, err = deleteByID(ctx, tx, table, ids, ""); err != nil {
		return 0, fmt.Errorf("forget events: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.redact(fmt.Errorf("forget events: commit: %w", err))
	}
	return deleted, nil
}

// forgetKeys deletes the raw and folded events of keys, (source, query
// id) rows, and the shapes left unused, in one transaction.
func (s *Store) forgetKeys(ctx context.Context, keys [][]any) (raw, folded, shapes int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, 0, s.redact(fmt.Errorf("forget events: begin: %w", err))
	}
	defer func() {
		if err != nil {
			raw, folded, shapes = 0, 0, 0
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k...)
	}
	// A list of row values, not an OR of conditions, whose depth SQLite
	// bounds at 1000 (as foldedKeys).
	in := ` WHERE (source, query_id) IN (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(keys)), ", ") + `)`
	res, err := tx.ExecContext(ctx, `DELETE FROM query_events`+in, args...)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("forget events: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("forget events: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT shape_id FROM folded_events`+in, args...)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("forget folded events: %w", err)
	}
	var shapeIDs []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, 0, 0, errors.Join(fmt.Errorf("forget folded events: %w", err), rows.Close())
		}
		shapeIDs = append(shapeIDs, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, 0, 0, fmt.Errorf("forget folded events: %w", err)
	}
	res, err = tx.ExecContext(ctx, `DELETE FROM folded_events`+in, args...)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("forget folded events: %w", err)
	}
	f, err := res.RowsAffected()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("forget folded events: %w", err)
	}
	if shapes, err = s.deleteUnusedShapes(ctx, tx, shapeIDs); err != nil {
		return 0, 0, 0, fmt.Errorf("forget folded events: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, 0, s.redact(fmt.Errorf("forget events: commit: %w", err))
	}
	return int(n), int(f), shapes, nil
}

// keyList is an IN list of n placeholders.
func keyList(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// selectIDs runs q, a query of one integer column, in tx.
func selectIDs(ctx context.Context, tx *txn, q string, args []any) (ids []int64, err error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
