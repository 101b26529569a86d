package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// PruneBatch is how many raw events [Store.PruneEvents] folds and deletes
// in one transaction.
const PruneBatch = 1000

// foldShape is what ranking ([analyzer.Rank]) and projection
// ([analyzer.Workload], the simulator's replay) read of an event besides
// its source, query id, state and times, which are columns of
// folded_events. Everything else — the SQL text, the user, parameters,
// snapshot ids, raw filter strings, metadata-table reads, the columns a
// query only projected — is dropped when the event is folded.
type foldShape struct {
	Engine        collectors.Engine        `json:"engine"`
	EngineVersion string                   `json:"engine_version,omitempty"`
	Metrics       collectors.QueryMetrics  `json:"metrics"`
	Tables        []collectors.TableAccess `json:"tables"`
}

// fold reduces ev to its shape. An event of metadata-table reads only, or
// of no table, keeps no access (no analysis counts it) but is folded all
// the same, so that collecting it again finds it stored.
func fold(ev *collectors.QueryEvent) foldShape {
	sh := foldShape{Engine: ev.Engine, EngineVersion: ev.EngineVersion,
		Metrics: collectors.QueryMetrics{ElapsedMs: ev.Metrics.ElapsedMs, BytesScanned: ev.Metrics.BytesScanned}}
	for i := range ev.Tables {
		a := &ev.Tables[i]
		if _, meta := a.MetadataTable(); meta {
			continue
		}
		r := collectors.TableAccess{Catalog: a.Catalog, Namespace: a.Namespace, Name: a.Name, Write: a.Write,
			Filter: a.Filter, Evidence: a.Evidence, Metrics: collectors.TableMetrics{BytesScanned: a.Metrics.BytesScanned}}
		for _, c := range a.Columns {
			if slices.Contains(c.Roles, collectors.RoleFilter) {
				r.Columns = append(r.Columns, collectors.ColumnUse{Name: c.Name, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: c.Evidence})
			}
		}
		sh.Tables = append(sh.Tables, r)
	}
	return sh
}

var (
	foldedColumns = newInsertTable("folded_events", `event_id bigint, source text, query_id text, start_time bigint,
	end_time bigint, state text, shape_json text`)
	foldedTableColumns = newInsertTable("folded_tables", `fold_id bigint, table_key text, catalog text, namespace text, name text`)
)

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
	for {
		f, d, err := s.pruneBatch(ctx, before.UTC().UnixNano())
		folded, deleted = folded+f, deleted+d
		if err != nil {
			return folded, deleted, err
		}
		if d < PruneBatch {
			return folded, deleted, nil
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
	type evKey struct{ source, id string }
	var rows [][]any
	shapes := map[evKey]*foldShape{}
	for i := range evs {
		ev := &evs[i]
		sh := fold(ev)
		b, err := json.Marshal(sh)
		if err != nil {
			return 0, 0, fmt.Errorf("prune events: fold %s %s: %w", ev.Source, ev.QueryID, err)
		}
		shapes[evKey{ev.Source, ev.QueryID}] = &sh
		rows = append(rows, []any{ids[i], ev.Source, ev.QueryID, nanos(ev.StartTime).Int64, nanos(ev.EndTime), string(ev.State), string(b)})
	}
	var tableRows [][]any
	err = s.insertRows(ctx, tx, foldedColumns, rows, ` ON CONFLICT (source, query_id) DO NOTHING RETURNING id, source, query_id`,
		func(r *sql.Rows) error {
			var (
				id int64
				k  evKey
			)
			if err := r.Scan(&id, &k.source, &k.id); err != nil {
				return err
			}
			sh := shapes[k]
			if sh == nil {
				return fmt.Errorf("returned unknown event %s %s", k.source, k.id)
			}
			folded++
			seen := map[string]bool{}
			for _, a := range sh.Tables {
				key := tableKey(a.Catalog, a.Namespace, a.Name)
				if !seen[key] {
					seen[key] = true
					tableRows = append(tableRows, []any{id, key, a.Catalog, a.Namespace, a.Name})
				}
			}
			return nil
		})
	if err != nil {
		return 0, 0, fmt.Errorf("prune events: store folded events: %w", err)
	}
	if err := s.insertRows(ctx, tx, foldedTableColumns, tableRows, "", nil); err != nil {
		return 0, 0, fmt.Errorf("prune events: store folded tables: %w", err)
	}
	for rest := ids; len(rest) > 0; {
		n := min(chunk, len(rest))
		list, args := inList(rest[:n])
		rest = rest[n:]
		res, err := tx.ExecContext(ctx, `DELETE FROM query_events WHERE id IN `+list, args...)
		if err != nil {
			return 0, 0, fmt.Errorf("prune events: delete: %w", err)
		}
		n64, err := res.RowsAffected()
		if err != nil {
			return 0, 0, fmt.Errorf("prune events: delete: %w", err)
		}
		deleted += int(n64)
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

// readFolded reads the folded events f selects, oldest first, with the
// ids of the raw events they were.
func readFolded(ctx context.Context, tx *txn, f QueryFilter) (ids []int64, evs []collectors.QueryEvent, err error) {
	where, args := f.foldedWhere()
	q := `SELECT e.event_id, e.source, e.query_id, e.start_time, e.end_time, e.state, e.shape_json
FROM folded_events e` + where + ` ORDER BY e.start_time DESC, e.event_id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read folded queries: %w", err)
	}
	for rows.Next() {
		var (
			ev           collectors.QueryEvent
			id, start    int64
			end          sql.NullInt64
			state, shape string
			sh           foldShape
		)
		if err := rows.Scan(&id, &ev.Source, &ev.QueryID, &start, &end, &state, &shape); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("read folded queries: %w", err), rows.Close())
		}
		if err := json.Unmarshal([]byte(shape), &sh); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("read folded queries: %s %s: %w", ev.Source, ev.QueryID, err), rows.Close())
		}
		ev.State = collectors.State(state)
		ev.StartTime, ev.EndTime = fromNanos(sql.NullInt64{Int64: start, Valid: start != 0}), fromNanos(end)
		ev.Engine, ev.EngineVersion, ev.Metrics, ev.Tables = sh.Engine, sh.EngineVersion, sh.Metrics, sh.Tables
		ids = append(ids, id)
		evs = append(evs, ev)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, fmt.Errorf("read folded queries: %w", err)
	}
	slices.Reverse(ids)
	slices.Reverse(evs)
	return ids, evs, nil
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
	type evKey struct{ source, id string }
	found := map[evKey]bool{}
	err := s.forChunks(keys, 2, func(rows [][]any) error {
		conds := make([]string, len(rows))
		var args []any
		for i, r := range rows {
			conds[i] = "(source = ? AND query_id = ?)"
			args = append(args, r...)
		}
		rs, err := tx.QueryContext(ctx, `SELECT source, query_id FROM folded_events WHERE `+strings.Join(conds, " OR "), args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var k evKey
			if err := rs.Scan(&k.source, &k.id); err != nil {
				return errors.Join(err, rs.Close())
			}
			found[k] = true
		}
		return errors.Join(rs.Err(), rs.Close())
	})
	if err != nil {
		return nil, 0, fmt.Errorf("look up folded events: %w", err)
	}
	if len(found) == 0 {
		return events, 0, nil
	}
	out := make([]collectors.QueryEvent, 0, len(events))
	for _, ev := range events {
		if !found[evKey{ev.Source, ev.QueryID}] {
			out = append(out, ev)
		}
	}
	return out, len(events) - len(out), nil
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
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM query_events), (SELECT count(*) FROM folded_events)`).
		Scan(&sz.Events, &sz.FoldedEvents); err != nil {
		return Size{}, s.redact(fmt.Errorf("measure store: count events: %w", err))
	}
	return sz, nil
}
