package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/floe-project/floe/collectors"
)

// foldShape is what ranking ([analyzer.Rank]) and projection
// ([analyzer.Workload], the simulator's replay) read of an event besides
// its per-query fields: the engine version, and per table read or written
// (metadata tables left out) its name, write flag, filter tree with its
// literal values, filter columns and evidence. Everything else — the SQL
// text, the user, parameters, snapshot ids, raw filter strings, the
// columns a query only projected — is dropped when the event is folded.
//
// Events of equal shapes — a dashboard's panel run every few minutes —
// share one row of folded_shapes, found by [shapeHash] of the JSON.
type foldShape struct {
	EngineVersion string `json:"engine_version,omitempty"`
	// Tables have no metrics: the bytes each scanned are per query
	// ([foldedEvent.tableBytes]).
	Tables []collectors.TableAccess `json:"tables"`
}

// foldedEvent is one folded event: the fields that differ from one run of
// a query to the next, which are columns of folded_events, and its shape.
type foldedEvent struct {
	// eventID is the raw event's id: it orders events that started at the
	// same instant as the raw ones were.
	eventID         int64
	source, queryID string
	engine          collectors.Engine
	start           int64 // UTC Unix nanoseconds
	end             sql.NullInt64
	state           collectors.State
	elapsedMs       int64
	bytesScanned    int64
	// tableBytes are the bytes scanned of each of shape.Tables, in order.
	tableBytes []int64
	shape      foldShape
}

// fold reduces ev, stored as raw event id, to what analysis reads of it.
// An event of metadata-table reads only, or of no table, keeps no access
// (no analysis counts it) but is folded all the same, so that collecting
// it again finds it stored.
func fold(id int64, ev *collectors.QueryEvent) foldedEvent {
	fe := foldedEvent{eventID: id, source: ev.Source, queryID: ev.QueryID, engine: ev.Engine,
		start: nanos(ev.StartTime).Int64, end: nanos(ev.EndTime), state: ev.State,
		elapsedMs: ev.Metrics.ElapsedMs, bytesScanned: ev.Metrics.BytesScanned,
		shape: foldShape{EngineVersion: ev.EngineVersion}}
	for i := range ev.Tables {
		a := &ev.Tables[i]
		if _, meta := a.MetadataTable(); meta {
			continue
		}
		r := collectors.TableAccess{Catalog: a.Catalog, Namespace: a.Namespace, Name: a.Name, Write: a.Write,
			Filter: a.Filter, Evidence: a.Evidence}
		for _, c := range a.Columns {
			if slices.Contains(c.Roles, collectors.RoleFilter) {
				r.Columns = append(r.Columns, collectors.ColumnUse{Name: c.Name, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: c.Evidence})
			}
		}
		fe.shape.Tables = append(fe.shape.Tables, r)
		fe.tableBytes = append(fe.tableBytes, a.Metrics.BytesScanned)
	}
	return fe
}

// event is fe as analysis reads it: the raw event's fields that folding
// keeps. It takes fe's shape, whose tables it gives their bytes scanned.
func (fe *foldedEvent) event() collectors.QueryEvent {
	ev := collectors.QueryEvent{Source: fe.source, QueryID: fe.queryID, Engine: fe.engine, EngineVersion: fe.shape.EngineVersion,
		State: fe.state, StartTime: fromNanos(sql.NullInt64{Int64: fe.start, Valid: fe.start != 0}), EndTime: fromNanos(fe.end),
		Metrics: collectors.QueryMetrics{ElapsedMs: fe.elapsedMs, BytesScanned: fe.bytesScanned}, Tables: fe.shape.Tables}
	for i := range ev.Tables {
		ev.Tables[i].Metrics.BytesScanned = fe.tableBytes[i]
	}
	return ev
}

// shapeHash is the key of a shape's JSON in folded_shapes: the first 128
// bits of its SHA-256, in hex. Two distinct shapes among 10^12 share a key
// with a probability below 10^-14.
func shapeHash(shapeJSON []byte) string {
	sum := sha256.Sum256(shapeJSON)
	return hex.EncodeToString(sum[:16])
}

// encodeTableBytes writes the bytes scanned per table as folded_events
// keeps them: comma-separated, "" when every one is 0 (most sources
// report bytes per query only).
func encodeTableBytes(bs []int64) string {
	if !slices.ContainsFunc(bs, func(b int64) bool { return b != 0 }) {
		return ""
	}
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = strconv.FormatInt(b, 10)
	}
	return strings.Join(parts, ",")
}

// decodeTableBytes reads what encodeTableBytes wrote for n tables.
func decodeTableBytes(s string, n int) ([]int64, error) {
	out := make([]int64, n)
	if s == "" {
		return out, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("table bytes %q: %d values for %d tables", s, len(parts), n)
	}
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("table bytes %q: %w", s, err)
		}
		out[i] = v
	}
	return out, nil
}

var (
	shapeColumns       = newInsertTable("folded_shapes", `hash text, shape_json text`)
	shapeTableColumns  = newInsertTable("folded_shape_tables", `shape_id bigint, table_key text, catalog text, namespace text, name text`)
	foldedEventColumns = newInsertTable("folded_events", `event_id bigint, source text, query_id text, engine text,
	start_time bigint, end_time bigint, state text, elapsed_ms bigint, bytes_scanned bigint, table_bytes text, shape_id bigint`)
)

// storeFolded stores evs, whose keys are distinct and not folded yet, in
// tx, and returns how many it stored: their shapes first, each once, then
// the events referencing them.
//
// Concurrency (PostgreSQL; SQLite has one writer at a time): the shapes
// are upserted with DO UPDATE, which locks each shape row, new or found,
// until tx ends, in the order of their hashes. [Store.deleteUnusedShapes]
// locks the shapes it may delete in the same order before it looks for
// their events, so a shape is never deleted while a prune references it:
// whichever transaction locks it second sees the other's work committed —
// the events referencing it, or the shape gone and to be inserted anew.
func (s *Store) storeFolded(ctx context.Context, tx *txn, evs []foldedEvent) (int, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	hashes := make([]string, len(evs))
	shapes := map[string]*foldShape{}
	var shapeRows [][]any
	for i := range evs {
		fe := &evs[i]
		b, err := json.Marshal(fe.shape)
		if err != nil {
			return 0, fmt.Errorf("fold %s %s: %w", fe.source, fe.queryID, err)
		}
		h := shapeHash(b)
		hashes[i] = h
		if shapes[h] == nil {
			shapes[h] = &fe.shape
			shapeRows = append(shapeRows, []any{h, string(b)})
		}
	}
	slices.SortFunc(shapeRows, func(a, b []any) int { return strings.Compare(a[0].(string), b[0].(string)) })
	ids := make(map[string]int64, len(shapeRows))
	err := s.insertRows(ctx, tx, shapeColumns, shapeRows, ` ON CONFLICT (hash) DO UPDATE SET hash = excluded.hash RETURNING id, hash`,
		func(r *sql.Rows) error {
			var (
				id int64
				h  string
			)
			if err := r.Scan(&id, &h); err != nil {
				return err
			}
			ids[h] = id
			return nil
		})
	if err != nil {
		return 0, fmt.Errorf("store shapes: %w", err)
	}
	var tableRows [][]any
	for _, row := range shapeRows {
		h := row[0].(string)
		id, ok := ids[h]
		if !ok {
			return 0, fmt.Errorf("store shapes: no id returned for shape %s", h)
		}
		seen := map[string]bool{}
		for _, a := range shapes[h].Tables {
			key := tableKey(a.Catalog, a.Namespace, a.Name)
			if !seen[key] {
				seen[key] = true
				tableRows = append(tableRows, []any{id, key, a.Catalog, a.Namespace, a.Name})
			}
		}
	}
	// A shape found rather than inserted has its tables already.
	if err := s.insertRows(ctx, tx, shapeTableColumns, tableRows, ` ON CONFLICT (shape_id, table_key) DO NOTHING`, nil); err != nil {
		return 0, fmt.Errorf("store shape tables: %w", err)
	}
	rows := make([][]any, len(evs))
	for i := range evs {
		fe := &evs[i]
		rows[i] = []any{fe.eventID, fe.source, fe.queryID, string(fe.engine), fe.start, fe.end, string(fe.state),
			fe.elapsedMs, fe.bytesScanned, encodeTableBytes(fe.tableBytes), ids[hashes[i]]}
	}
	stored := 0
	err = s.insertRows(ctx, tx, foldedEventColumns, rows, ` ON CONFLICT (source, query_id) DO NOTHING RETURNING id`,
		func(*sql.Rows) error { stored++; return nil })
	if err != nil {
		return 0, fmt.Errorf("store folded events: %w", err)
	}
	return stored, nil
}

// readFolded reads the folded events f selects, oldest first, with the
// ids of the raw events they were. Each event gets its own copy of its
// shape's tables.
func readFolded(ctx context.Context, tx *txn, f QueryFilter) (ids []int64, evs []collectors.QueryEvent, err error) {
	where, args := f.foldedWhere()
	q := `SELECT e.event_id, e.source, e.query_id, e.engine, e.start_time, e.end_time, e.state, e.elapsed_ms,
	e.bytes_scanned, e.table_bytes, e.shape_id, s.shape_json
FROM folded_events e LEFT JOIN folded_shapes s ON s.id = e.shape_id` + where + ` ORDER BY e.start_time DESC, e.event_id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read folded queries: %w", err)
	}
	for rows.Next() {
		var (
			fe                        foldedEvent
			engine, state, tableBytes string
			shapeID                   int64
			shapeJSON                 sql.NullString
		)
		if err := rows.Scan(&fe.eventID, &fe.source, &fe.queryID, &engine, &fe.start, &fe.end, &state, &fe.elapsedMs,
			&fe.bytesScanned, &tableBytes, &shapeID, &shapeJSON); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("read folded queries: %w", err), rows.Close())
		}
		fe.engine, fe.state = collectors.Engine(engine), collectors.State(state)
		if !shapeJSON.Valid {
			return nil, nil, errors.Join(fmt.Errorf("read folded queries: %s %s: shape %d is missing", fe.source, fe.queryID, shapeID), rows.Close())
		}
		if err := json.Unmarshal([]byte(shapeJSON.String), &fe.shape); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("read folded queries: %s %s: shape %d: %w", fe.source, fe.queryID, shapeID, err), rows.Close())
		}
		if fe.tableBytes, err = decodeTableBytes(tableBytes, len(fe.shape.Tables)); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("read folded queries: %s %s: %w", fe.source, fe.queryID, err), rows.Close())
		}
		ids = append(ids, fe.eventID)
		evs = append(evs, fe.event())
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, fmt.Errorf("read folded queries: %w", err)
	}
	slices.Reverse(ids)
	slices.Reverse(evs)
	return ids, evs, nil
}

// deleteUnusedShapes deletes those of the shapes ids that no folded event
// references any more, in tx, and returns how many it deleted (their
// tables go with them). On PostgreSQL it first locks the shapes in the
// order of their hashes (see [Store.storeFolded]); the statement that then
// looks for their events sees every prune that locked them before.
func (s *Store) deleteUnusedShapes(ctx context.Context, tx *txn, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if s.d == postgresDialect {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM folded_shapes WHERE id = ANY(?::bigint[]) ORDER BY hash FOR UPDATE`, ids)
		if err != nil {
			return 0, fmt.Errorf("lock shapes: %w", err)
		}
		for rows.Next() {
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return 0, fmt.Errorf("lock shapes: %w", err)
		}
	}
	deleted, err := deleteByID(ctx, tx, "folded_shapes", ids, `NOT EXISTS (SELECT 1 FROM folded_events e WHERE e.shape_id = folded_shapes.id)`)
	if err != nil {
		return 0, fmt.Errorf("delete unused shapes: %w", err)
	}
	return deleted, nil
}

// foldShapeV10 is shape_json of a folded event of schema version 10,
// which kept the engine and the costs in it.
type foldShapeV10 struct {
	Engine        collectors.Engine        `json:"engine"`
	EngineVersion string                   `json:"engine_version,omitempty"`
	Metrics       collectors.QueryMetrics  `json:"metrics"`
	Tables        []collectors.TableAccess `json:"tables"`
}

// convertFoldedV10 moves the folded events of schema version 10 (renamed
// folded_events_v10 by migration 11) into folded_events and their shapes
// into folded_shapes, [PruneBatch] events at a time, and drops the old
// table. A converted event reads as it did ([readFolded]).
func convertFoldedV10(ctx context.Context, s *Store, tx *txn) error {
	var after int64
	for {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT id, event_id, source, query_id, start_time, end_time, state, shape_json
FROM folded_events_v10 WHERE id > ? ORDER BY id LIMIT %d`, PruneBatch), after)
		if err != nil {
			return fmt.Errorf("read folded events of version 10: %w", err)
		}
		var evs []foldedEvent
		for rows.Next() {
			var (
				fe           foldedEvent
				state, shape string
				old          foldShapeV10
			)
			if err := rows.Scan(&after, &fe.eventID, &fe.source, &fe.queryID, &fe.start, &fe.end, &state, &shape); err != nil {
				return errors.Join(fmt.Errorf("read folded events of version 10: %w", err), rows.Close())
			}
			if err := json.Unmarshal([]byte(shape), &old); err != nil {
				return errors.Join(fmt.Errorf("read folded event %s %s of version 10: %w", fe.source, fe.queryID, err), rows.Close())
			}
			fe.state, fe.engine = collectors.State(state), old.Engine
			fe.elapsedMs, fe.bytesScanned = old.Metrics.ElapsedMs, old.Metrics.BytesScanned
			fe.shape = foldShape{EngineVersion: old.EngineVersion, Tables: old.Tables}
			for i := range fe.shape.Tables {
				t := &fe.shape.Tables[i]
				fe.tableBytes = append(fe.tableBytes, t.Metrics.BytesScanned)
				t.Metrics = collectors.TableMetrics{}
			}
			evs = append(evs, fe)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("read folded events of version 10: %w", err)
		}
		if len(evs) == 0 {
			break
		}
		n, err := s.storeFolded(ctx, tx, evs)
		if err != nil {
			return fmt.Errorf("convert folded events: %w", err)
		}
		if n != len(evs) {
			return fmt.Errorf("convert folded events: stored %d of %d", n, len(evs))
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE folded_events_v10`); err != nil {
		return fmt.Errorf("drop folded events of version 10: %w", err)
	}
	return nil
}
