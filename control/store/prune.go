package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// PruneBatch is how many events [Store.PruneEvents] folds and deletes,
// and [Store.DeleteFolded] deletes, in one transaction.
const PruneBatch = 1000

// PruneEvents folds every raw event that started before before and
// deletes it, in transactions of [PruneBatch] events, oldest first. It
// returns how many events were folded (stored in their reduced form) and
// how many raw events were deleted: fewer folded than deleted when a
// deleted event was folded already (stored again by a concurrent
// collection after its first fold).
//
// Folding keeps exactly what [analyzer.Rank] and [analyzer.Workload] read
// of an event (see [Store.WorkloadEvents]), so an analysis that reads the
// raw and folded events together gives the same result after pruning as
// before. Pruning is idempotent (a second call with the same before finds
// nothing to do) and safe against concurrent inserts: a batch's rows are
// deleted in the transaction that folds them, and [Store.InsertEvents]
// counts an event already folded as a duplicate. On PostgreSQL the batch's
// rows are locked (FOR UPDATE SKIP LOCKED), so pruners running at once
// fold different events.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (folded, deleted int, err error) {
	deleted, folded, err = inBatches(func() (int, int, error) {
		f, d, err := s.pruneBatch(ctx, before.UTC().UnixNano())
		return d, f, err
	})
	return folded, deleted, err
}

// inBatches calls batch, a transaction of up to [PruneBatch] events, until
// one deletes fewer (or fails), and returns the sums of the events each
// deleted and of its other count.
func inBatches(batch func() (deleted, other int, err error)) (deleted, other int, err error) {
	for {
		d, o, err := batch()
		deleted, other = deleted+d, other+o
		if err != nil || d < PruneBatch {
			return deleted, other, err
		}
	}
}

// pruneBatch folds and deletes up to PruneBatch events older than before
// (Unix nanoseconds) in one transaction.
func (s *Store) pruneBatch(ctx context.Context, before int64) (folded, deleted int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, s.redact(fmt.Errorf("prune events: begin: %w", err))
	}
	defer func() {
		if err != nil {
			folded, deleted = 0, 0
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	rest := fmt.Sprintf(` WHERE e.start_time < ? ORDER BY e.start_time, e.id LIMIT %d`, PruneBatch)
	if s.d == postgresDialect {
		rest += ` FOR UPDATE SKIP LOCKED`
	}
	ids, evs, err := readEvents(ctx, tx, rest, []any{before})
	if err != nil {
		return 0, 0, fmt.Errorf("prune events: %w", err)
	}
	if len(ids) == 0 {
		return 0, 0, tx.Commit()
	}
	// A raw copy of an event folded already (stored again by a
	// collection that raced an earlier prune) is deleted, not folded twice.
	keys := make([][]any, len(evs))
	for i := range evs {
		keys[i] = []any{evs[i].Source, evs[i].QueryID}
	}
	done, err := s.foldedKeys(ctx, tx, keys)
	if err != nil {
		return 0, 0, fmt.Errorf("prune events: %w", err)
	}
	var fes []foldedEvent
	for i := range evs {
		if !done[foldKey{evs[i].Source, evs[i].QueryID}] {
			fes = append(fes, fold(ids[i], &evs[i]))
		}
	}
	if folded, err = s.storeFolded(ctx, tx, fes); err != nil {
		return 0, 0, fmt.Errorf("prune events: %w", err)
	}
	if deleted, err = deleteByID(ctx, tx, "query_events", ids, ""); err != nil {
		return 0, 0, fmt.Errorf("prune events: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, s.redact(fmt.Errorf("prune events: commit: %w", err))
	}
	return folded, deleted, nil
}

// FoldedQueries returns the folded events f selects, oldest first, as
// [Store.PruneEvents] kept them: source, query id, engine, state, start
// and end times, elapsed time and bytes scanned, and their accesses of
// tables (filter trees, filter columns, evidence, bytes scanned).
func (s *Store) FoldedQueries(ctx context.Context, f QueryFilter) (evs []collectors.QueryEvent, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.redact(fmt.Errorf("read folded queries: begin: %w", err))
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	_, evs, err = readFolded(ctx, tx, f)
	return evs, err
}

// WorkloadEvents returns the events an analysis reads: the raw events f
// selects ([Store.Queries]) and the folded ones ([Store.FoldedQueries]),
// merged oldest first in the order the raw events had before they were
// folded (start time, then the order they were stored in). f.Limit is
// ignored: an analysis reads every event of its window. Ranking and projection give the same
// result over these events whether or not some were pruned.
func (s *Store) WorkloadEvents(ctx context.Context, f QueryFilter) (evs []collectors.QueryEvent, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.redact(fmt.Errorf("read workload events: begin: %w", err))
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	f.Limit = 0
	where, args := f.where()
	rawIDs, raw, err := readEvents(ctx, tx, where+` ORDER BY e.start_time, e.id`, args)
	if err != nil {
		return nil, err
	}
	foldIDs, folded, err := readFolded(ctx, tx, f)
	if err != nil {
		return nil, err
	}
	type item struct {
		id int64
		ev *collectors.QueryEvent
	}
	all := make([]item, 0, len(raw)+len(folded))
	for i := range raw {
		all = append(all, item{rawIDs[i], &raw[i]})
	}
	for i := range folded {
		all = append(all, item{foldIDs[i], &folded[i]})
	}
	slices.SortStableFunc(all, func(a, b item) int {
		if c := a.ev.StartTime.Compare(b.ev.StartTime); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	evs = make([]collectors.QueryEvent, len(all))
	for i, it := range all {
		evs[i] = *it.ev
	}
	return evs, nil
}

// dropFolded removes from events those whose (source, query id) is
// folded already, in tx, and returns the rest and how many it removed.
// Only events that started no later than the newest folded event can be
// folded, so the common batch — newer than anything pruned — costs one
// indexed lookup.
func (s *Store) dropFolded(ctx context.Context, tx *txn, events []collectors.QueryEvent) ([]collectors.QueryEvent, int, error) {
	var newest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(start_time) FROM folded_events`).Scan(&newest); err != nil {
		return nil, 0, fmt.Errorf("read newest folded event: %w", err)
	}
	if !newest.Valid {
		return events, 0, nil
	}
	var keys [][]any
	for i := range events {
		if t := nanos(events[i].StartTime); !t.Valid || t.Int64 <= newest.Int64 {
			keys = append(keys, []any{events[i].Source, events[i].QueryID})
		}
	}
	if len(keys) == 0 {
		return events, 0, nil
	}
	found, err := s.foldedKeys(ctx, tx, keys)
	if err != nil {
		return nil, 0, err
	}
	if len(found) == 0 {
		return events, 0, nil
	}
	out := make([]collectors.QueryEvent, 0, len(events))
	for _, ev := range events {
		if !found[foldKey{ev.Source, ev.QueryID}] {
			out = append(out, ev)
		}
	}
	return out, len(events) - len(out), nil
}

// foldKey is an event's (source, query id).
type foldKey struct{ source, id string }

// foldedKeys returns which of keys, (source, query id) pairs, are folded
// events in tx.
func (s *Store) foldedKeys(ctx context.Context, tx *txn, keys [][]any) (map[foldKey]bool, error) {
	found := map[foldKey]bool{}
	err := s.forChunks(keys, 2, func(rows [][]any) error {
		args := make([]any, 0, 2*len(rows))
		for _, r := range rows {
			args = append(args, r...)
		}
		// A list of row values, not an OR of conditions, whose depth
		// SQLite bounds at 1000.
		values := strings.TrimSuffix(strings.Repeat("(?, ?), ", len(rows)), ", ")
		rs, err := tx.QueryContext(ctx, `SELECT source, query_id FROM folded_events WHERE (source, query_id) IN (VALUES `+values+`)`, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var k foldKey
			if err := rs.Scan(&k.source, &k.id); err != nil {
				return errors.Join(err, rs.Close())
			}
			found[k] = true
		}
		return errors.Join(rs.Err(), rs.Close())
	})
	if err != nil {
		return nil, fmt.Errorf("look up folded events: %w", err)
	}
	return found, nil
}

// DeleteFolded deletes every folded event that started before before, in
// transactions of [PruneBatch] events, oldest first, and the shapes no
// folded event references any more. It returns how many folded events
// and shapes it deleted. This is what bounds the store: raw events are
// folded after the telemetry retention ([Store.PruneEvents]), folded ones
// deleted after the telemetry history. An analysis whose window reaches
// further back than before reads fewer events afterwards; one within it
// is unchanged. Like PruneEvents it is idempotent, and safe against
// concurrent pruners (on PostgreSQL the batch's rows are locked FOR
// UPDATE SKIP LOCKED, and a shape is locked before it is deleted; see
// [Store.deleteUnusedShapes]).
func (s *Store) DeleteFolded(ctx context.Context, before time.Time) (events, shapes int, err error) {
	return inBatches(func() (int, int, error) {
		return s.deleteFoldedBatch(ctx, "delete folded events", `e.start_time < ? ORDER BY e.start_time, e.id`, []any{before.UTC().UnixNano()})
	})
}

// deleteFoldedBatch deletes up to PruneBatch folded events e that cond (a
// condition on folded_events e, followed by its ORDER BY) selects, and the
// shapes left unused, in one transaction; what names the deletion in
// errors ("delete folded events").
func (s *Store) deleteFoldedBatch(ctx context.Context, what, cond string, args []any) (events, shapes int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, s.redact(fmt.Errorf("%s: begin: %w", what, err))
	}
	defer func() {
		if err != nil {
			events, shapes = 0, 0
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	q := fmt.Sprintf(`SELECT e.id, e.shape_id FROM folded_events e WHERE %s LIMIT %d`, cond, PruneBatch)
	if s.d == postgresDialect {
		q += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", what, err)
	}
	var ids, shapeIDs []int64
	seen := map[int64]bool{}
	for rows.Next() {
		var id, shape int64
		if err := rows.Scan(&id, &shape); err != nil {
			return 0, 0, errors.Join(fmt.Errorf("%s: %w", what, err), rows.Close())
		}
		ids = append(ids, id)
		if !seen[shape] {
			seen[shape] = true
			shapeIDs = append(shapeIDs, shape)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", what, err)
	}
	if len(ids) == 0 {
		return 0, 0, tx.Commit()
	}
	if events, err = deleteByID(ctx, tx, "folded_events", ids, ""); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", what, err)
	}
	if shapes, err = s.deleteUnusedShapes(ctx, tx, shapeIDs); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, s.redact(fmt.Errorf("%s: commit: %w", what, err))
	}
	return events, shapes, nil
}

// deleteByID deletes the rows of table whose id is one of ids and that
// meet cond (a condition on the table's columns after AND, or ""), in
// chunks, and returns how many it deleted.
func deleteByID(ctx context.Context, tx *txn, table string, ids []int64, cond string) (int, error) {
	deleted := 0
	for rest := ids; len(rest) > 0; {
		n := min(chunk, len(rest))
		list, args := inList(rest[:n])
		rest = rest[n:]
		q := `DELETE FROM ` + table + ` WHERE id IN ` + list
		if cond != "" {
			q += ` AND ` + cond
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		n64, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		deleted += int(n64)
	}
	return deleted, nil
}

// Size is how large the state store is.
type Size struct {
	// Bytes is the database's size: SQLite's page count × page size (the
	// WAL not included), PostgreSQL's pg_total_relation_size summed over
	// the tables of floe's schema (indexes and TOAST included).
	Bytes int64 `json:"bytes"`
	// Events counts the raw events, FoldedEvents the folded ones.
	Events       int64 `json:"events"`
	FoldedEvents int64 `json:"folded_events"`
	// FoldedShapes counts the distinct shapes of the folded events: each
	// is stored once, however many folded events share it.
	FoldedShapes int64 `json:"folded_shapes"`
}

// Size measures the store.
func (s *Store) Size(ctx context.Context) (Size, error) {
	var sz Size
	q := `SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size())`
	if s.d == postgresDialect {
		q = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()`
	}
	if err := s.db.QueryRowContext(ctx, q).Scan(&sz.Bytes); err != nil {
		return Size{}, s.redact(fmt.Errorf("measure store: %w", err))
	}
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM query_events), (SELECT count(*) FROM folded_events),
	(SELECT count(*) FROM folded_shapes)`).Scan(&sz.Events, &sz.FoldedEvents, &sz.FoldedShapes); err != nil {
		return Size{}, s.redact(fmt.Errorf("measure store: count events: %w", err))
	}
	return sz, nil
}

// PruneRuns deletes the runs, with their steps, that ended before before,
// in transactions of [PruneBatch] runs, oldest first, and returns how many
// it deleted. It keeps, whatever their age, the runs that what floe reads
// of a table's history needs:
//
//   - its newest done run (its last success: freshness, floe_table_last_success)
//     and its newest failed run;
//   - its failed and abandoned runs newer than its newest done run: the
//     failures in a row that the failures alert counts, and dates from the
//     oldest of;
//   - for each step, the newest run in which the step ran to the end
//     (done): the last orphan listing, the no-op a trigger backs off
//     from; and the newest run whose compaction was done or not due, the
//     last compaction freshness counts from;
//   - the run an active hold names.
//
// "Newer" is the order [Store.Runs] lists in (started_at descending, then
// id). Running and queued runs have not ended and are never deleted.
// Pruning is idempotent, and safe beside replicas pruning at once: they
// delete the same runs, each counted once.
func (s *Store) PruneRuns(ctx context.Context, before time.Time) (deleted int, err error) {
	for {
		found, n, err := s.pruneRunBatch(ctx, before.UTC().UnixNano())
		deleted += n
		if err != nil || found < PruneBatch {
			return deleted, err
		}
	}
}

// prunableRunsQuery selects up to PruneBatch runs [Store.PruneRuns]
// deletes, ended before its first argument, oldest first: through the
// runs_ended index, each kept-or-not question answered through
// runs_table_key (a range from r's start on) and the steps' primary key. A
// run is newer than r when it started later, or at the same time with a
// smaller id.
var prunableRunsQuery = fmt.Sprintf(`SELECT r.id FROM runs r
WHERE r.ended_at < ? AND r.status NOT IN ('running', 'queued')
AND (r.status NOT IN ('done', 'failed', 'abandoned') OR EXISTS (SELECT 1 FROM runs n
	WHERE n.table_key = r.table_key AND n.status = 'done' AND %[1]s))
AND NOT (r.status = 'failed' AND NOT EXISTS (SELECT 1 FROM runs n
	WHERE n.table_key = r.table_key AND n.status = 'failed' AND %[1]s))
AND NOT EXISTS (SELECT 1 FROM run_steps s WHERE s.run_id = r.id AND s.status = 'done'
	AND NOT EXISTS (SELECT 1 FROM runs n JOIN run_steps ns ON ns.run_id = n.id
		WHERE n.table_key = r.table_key AND %[1]s AND ns.step = s.step AND ns.status = 'done'))
AND NOT (EXISTS (SELECT 1 FROM run_steps s WHERE s.run_id = r.id AND s.step = 'compact' AND s.status IN ('done', 'not_due'))
	AND NOT EXISTS (SELECT 1 FROM runs n JOIN run_steps ns ON ns.run_id = n.id
		WHERE n.table_key = r.table_key AND %[1]s AND ns.step = 'compact' AND ns.status IN ('done', 'not_due')))
AND NOT EXISTS (SELECT 1 FROM table_holds h WHERE h.run_id = r.id AND h.resumed_at IS NULL)
ORDER BY r.ended_at, r.id LIMIT %[2]d`,
	`n.started_at >= r.started_at AND (n.started_at > r.started_at OR n.id < r.id)`, PruneBatch)

// pruneRunBatch deletes up to PruneBatch prunable runs ended before
// before (Unix nanoseconds), with their steps, in one transaction: found
// of them, deleted by this call (fewer when a replica pruning at once
// deleted some first).
func (s *Store) pruneRunBatch(ctx context.Context, before int64) (found, deleted int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, s.redact(fmt.Errorf("prune runs: begin: %w", err))
	}
	defer func() {
		if err != nil {
			found, deleted = 0, 0
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	rows, err := tx.QueryContext(ctx, prunableRunsQuery, before)
	if err != nil {
		return 0, 0, fmt.Errorf("prune runs: %w", err)
	}
	var ids []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return 0, 0, errors.Join(fmt.Errorf("prune runs: %w", err), rows.Close())
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, 0, fmt.Errorf("prune runs: %w", err)
	}
	if len(ids) == 0 {
		return 0, 0, tx.Commit()
	}
	list := "(" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
	if _, err := tx.ExecContext(ctx, `DELETE FROM run_steps WHERE run_id IN `+list, ids...); err != nil {
		return 0, 0, fmt.Errorf("prune runs: delete steps: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN `+list, ids...)
	if err != nil {
		return 0, 0, fmt.Errorf("prune runs: delete: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, fmt.Errorf("prune runs: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, s.redact(fmt.Errorf("prune runs: commit: %w", err))
	}
	return len(ids), int(n), nil
}
