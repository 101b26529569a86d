package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
	"slices"
	"strings"
	"time"
)

// metadataPrefix starts the Evidence of a metadata-table access.
const metadataPrefix = "metadata-table:"

// MetadataEvidence is the Evidence the ingestion pipeline gives a
// TableAccess that read an Iceberg metadata table (Trino "t$snapshots",
// Spark db.t.snapshots) instead of the table's data: the access is
// attributed to the base table, and the analyzer skips it, since it says
// nothing about which data files queries need. metadata is the metadata
// table's name ("snapshots", "files", …).
func MetadataEvidence(metadata string) collectors.Evidence {
	return collectors.Evidence(metadataPrefix + metadata)
}

// MetadataTable returns the metadata table a TableAccess read, and false
// for an access of the table's data. See [MetadataEvidence].
func MetadataTable(t *collectors.TableAccess) (string, bool) {
	meta, ok := strings.CutPrefix(string(t.Evidence), metadataPrefix)
	if !ok {
		return "", false
	}
	return meta, true
}

// MaxIndexedValues is how many literal values a predicates row repeats
// from the filter tree it indexes. The tree (filter_json of the access) is
// where an event's values are kept; a longer list — a generated IN list of
// thousands of ids — is stored there alone, and its predicates row has no
// values, so that it is not stored twice.
const MaxIndexedValues = 100

// InsertEvents stores events in one transaction. An event whose (Source,
// QueryID) is already stored is left as it is and counted in duplicates,
// so inserting the same batch twice stores each event once — except that
// a stored event collected while its query was still running (State
// UNKNOWN and no EndTime, as read from a log being written) is replaced,
// with its tables, by a finished one, which counts as inserted. Events
// without a Source or QueryID are refused, and nothing of the batch is
// stored.
func (s *Store) InsertEvents(ctx context.Context, events []collectors.QueryEvent) (inserted, duplicates int, err error) {
	for i := range events {
		if events[i].Source == "" || events[i].QueryID == "" {
			return 0, 0, fmt.Errorf("insert events: event %d has no source or query id", i)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("insert events: begin: %w", err)
	}
	defer func() {
		if err != nil {
			inserted, duplicates = 0, 0
			err = errors.Join(err, rollback(tx))
		}
	}()
	w, err := prepareWriter(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, w.close()) }()
	for i := range events {
		ok, err := w.insert(ctx, &events[i])
		if err != nil {
			return 0, 0, fmt.Errorf("insert event %s %s: %w", events[i].Source, events[i].QueryID, err)
		}
		if ok {
			inserted++
		} else {
			duplicates++
		}
	}
	if err := w.close(); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("insert events: commit: %w", err)
	}
	return inserted, duplicates, nil
}

// writer holds the prepared statements of one insert transaction.
type writer struct {
	event, access, column, pred, unfinished *sql.Stmt
	closed                                  bool
}

func prepareWriter(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = tx.PrepareContext(ctx, q)
		return st
	}
	w.event = prep(`INSERT INTO query_events (source, query_id, engine, engine_version, root_query_id, user_name,
	start_time, end_time, state, statement_type, sql_text, sql_truncated, sql_template, params_json,
	default_catalog, default_schema, elapsed_ms, cpu_ms, queued_ms, bytes_scanned, rows_scanned,
	partitions_scanned, partitions_total, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source, query_id) DO NOTHING`)
	w.access = prep(`INSERT INTO table_accesses (event_id, ord, catalog, namespace, name, table_key, metadata,
	direct, write, snapshot_id, evidence, filter_json, filter_text_json, bytes_scanned, rows_scanned,
	result_data_files, skipped_data_files, scanned_manifests, skipped_manifests, planning_nanos)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	w.column = prep(`INSERT INTO column_uses (access_id, ord, name, roles, evidence) VALUES (?, ?, ?, ?, ?)`)
	w.unfinished = prep(`DELETE FROM query_events WHERE source = ? AND query_id = ? AND state = ? AND end_time IS NULL`)
	w.pred = prep(`INSERT INTO predicates (access_id, event_id, table_key, column_name, transform, op, values_json, evidence)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("insert events: prepare: %w", err), w.close())
	}
	return w, nil
}

func (w *writer) close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	for _, st := range []*sql.Stmt{w.event, w.access, w.column, w.pred, w.unfinished} {
		if st != nil {
			if err := st.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close statement: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// insert stores one event; false means it was already stored.
func (w *writer) insert(ctx context.Context, ev *collectors.QueryEvent) (bool, error) {
	params, err := jsonOrNull(ev.Params, len(ev.Params) > 0)
	if err != nil {
		return false, err
	}
	m := ev.Metrics
	res, err := w.event.ExecContext(ctx, ev.Source, ev.QueryID, string(ev.Engine), ev.EngineVersion, ev.RootQueryID,
		ev.User, nanos(ev.StartTime).Int64, nanos(ev.EndTime), string(ev.State), ev.StatementType, ev.SQL,
		boolInt(ev.SQLTruncated), boolInt(ev.SQLTemplate), params, ev.DefaultCatalog, ev.DefaultSchema,
		m.ElapsedMs, m.CPUMs, m.QueuedMs, m.BytesScanned, m.RowsScanned, m.PartitionsScanned, m.PartitionsTotal, ev.Error)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n == 0 {
		return w.replaceUnfinished(ctx, ev)
	}
	eventID, err := res.LastInsertId()
	if err != nil {
		return false, err
	}
	for i := range ev.Tables {
		if err := w.insertAccess(ctx, eventID, i, &ev.Tables[i]); err != nil {
			return false, fmt.Errorf("table %s: %w", ev.Tables[i].QualifiedName(), err)
		}
	}
	return true, nil
}

// replaceUnfinished replaces a stored event that was collected while its
// query was still running (State UNKNOWN, no end time: a Spark execution
// of an .inprogress log) by ev when ev has finished. It reports whether ev
// was stored.
func (w *writer) replaceUnfinished(ctx context.Context, ev *collectors.QueryEvent) (bool, error) {
	if ev.State == collectors.StateUnknown && ev.EndTime.IsZero() {
		return false, nil
	}
	res, err := w.unfinished.ExecContext(ctx, ev.Source, ev.QueryID, string(collectors.StateUnknown))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	return w.insert(ctx, ev)
}

func (w *writer) insertAccess(ctx context.Context, eventID int64, ord int, t *collectors.TableAccess) error {
	filter, err := jsonOrNull(t.Filter, t.Filter != nil)
	if err != nil {
		return err
	}
	ftext, err := jsonOrNull(t.FilterText, len(t.FilterText) > 0)
	if err != nil {
		return err
	}
	var snap sql.NullInt64
	if t.SnapshotID != nil {
		snap = sql.NullInt64{Int64: *t.SnapshotID, Valid: true}
	}
	meta, _ := MetadataTable(t)
	key := tableKey(t.Catalog, t.Namespace, t.Name)
	m := t.Metrics
	res, err := w.access.ExecContext(ctx, eventID, ord, t.Catalog, t.Namespace, t.Name, key, meta,
		boolInt(t.Direct), boolInt(t.Write), snap, string(t.Evidence), filter, ftext,
		m.BytesScanned, m.RowsScanned, m.ResultDataFiles, m.SkippedDataFiles, m.ScannedManifests, m.SkippedManifests, m.PlanningNanos)
	if err != nil {
		return err
	}
	accessID, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, c := range t.Columns {
		roles := make([]string, len(c.Roles))
		for k, r := range c.Roles {
			roles[k] = string(r)
		}
		if _, err := w.column.ExecContext(ctx, accessID, i, c.Name, strings.Join(roles, ","), string(c.Evidence)); err != nil {
			return err
		}
	}
	if meta != "" {
		return nil // a metadata table's filter is on metadata rows, not data
	}
	var perr error
	walkPreds(t.Filter, func(p *expr.Pred) {
		if perr != nil {
			return
		}
		vals := p.Values
		if vals == nil || len(vals) > MaxIndexedValues {
			vals = []expr.Value{} // the full list is in the access's filter tree
		}
		b, err := json.Marshal(vals)
		if err != nil {
			perr = err
			return
		}
		_, perr = w.pred.ExecContext(ctx, accessID, eventID, key, p.Column, p.Transform, string(p.Op), string(b), string(t.Evidence))
	})
	return perr
}

// walkPreds calls fn for every predicate leaf of n.
func walkPreds(n *expr.Node, fn func(*expr.Pred)) {
	if n == nil {
		return
	}
	if n.Kind == expr.NodePred && n.Pred != nil {
		fn(n.Pred)
	}
	for _, c := range n.Children {
		walkPreds(c, fn)
	}
}

func jsonOrNull(v any, present bool) (sql.NullString, error) {
	if !present {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, fmt.Errorf("encode json: %w", err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// QueryFilter selects stored events. The zero value selects all.
type QueryFilter struct {
	// Table keeps events that accessed this table, "catalog.ns.name" or
	// "ns.name" (any catalog), compared case-insensitively.
	Table string
	// Since and Until bound StartTime: Since <= StartTime < Until. Zero
	// means unbounded.
	Since, Until time.Time
	// Source keeps events of one source (trino-event, spark-eventlog, …).
	Source string
	// Limit keeps the most recent Limit events. Default: no limit.
	Limit int
}

// where renders f as a WHERE clause over query_events aliased e.
func (f QueryFilter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Table != "" {
		key := strings.ToLower(strings.TrimSpace(f.Table))
		conds = append(conds, `EXISTS (SELECT 1 FROM table_accesses x WHERE x.event_id = e.id AND (x.table_key = ? OR substr(x.table_key, -length(?) - 1) = '.' || ?))`)
		args = append(args, key, key, key)
	}
	if !f.Since.IsZero() {
		conds = append(conds, `e.start_time >= ?`)
		args = append(args, f.Since.UTC().UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, `e.start_time < ?`)
		args = append(args, f.Until.UTC().UnixNano())
	}
	if f.Source != "" {
		conds = append(conds, `e.source = ?`)
		args = append(args, f.Source)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Queries returns the stored events f selects, oldest first, each with its
// table accesses, column uses and filter trees restored.
func (s *Store) Queries(ctx context.Context, f QueryFilter) (evs []collectors.QueryEvent, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read queries: begin: %w", err)
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	where, args := f.where()
	q := `SELECT e.id, e.source, e.query_id, e.engine, e.engine_version, e.root_query_id, e.user_name,
	e.start_time, e.end_time, e.state, e.statement_type, e.sql_text, e.sql_truncated, e.sql_template,
	e.params_json, e.default_catalog, e.default_schema, e.elapsed_ms, e.cpu_ms, e.queued_ms,
	e.bytes_scanned, e.rows_scanned, e.partitions_scanned, e.partitions_total, e.error
FROM query_events e` + where + ` ORDER BY e.start_time DESC, e.id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	var ids []int64
	byID := map[int64]int{}
	for rows.Next() {
		var (
			ev               collectors.QueryEvent
			id, start        int64
			end              sql.NullInt64
			trunc, tmpl      int
			params           sql.NullString
			engine, stateStr string
		)
		m := &ev.Metrics
		if err := rows.Scan(&id, &ev.Source, &ev.QueryID, &engine, &ev.EngineVersion, &ev.RootQueryID, &ev.User,
			&start, &end, &stateStr, &ev.StatementType, &ev.SQL, &trunc, &tmpl, &params,
			&ev.DefaultCatalog, &ev.DefaultSchema, &m.ElapsedMs, &m.CPUMs, &m.QueuedMs,
			&m.BytesScanned, &m.RowsScanned, &m.PartitionsScanned, &m.PartitionsTotal, &ev.Error); err != nil {
			return nil, errors.Join(fmt.Errorf("read queries: %w", err), rows.Close())
		}
		ev.Engine, ev.State = collectors.Engine(engine), collectors.State(stateStr)
		ev.StartTime, ev.EndTime = fromNanos(sql.NullInt64{Int64: start, Valid: start != 0}), fromNanos(end)
		ev.SQLTruncated, ev.SQLTemplate = trunc != 0, tmpl != 0
		if params.Valid {
			if err := json.Unmarshal([]byte(params.String), &ev.Params); err != nil {
				return nil, errors.Join(fmt.Errorf("read queries: params of %s %s: %w", ev.Source, ev.QueryID, err), rows.Close())
			}
		}
		byID[id] = len(evs)
		ids = append(ids, id)
		evs = append(evs, ev)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	if err := loadAccesses(ctx, tx, ids, byID, evs); err != nil {
		return nil, err
	}
	slices.Reverse(evs)
	return evs, nil
}

// chunk is how many ids go in one IN list.
const chunk = 500

func inList(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")", args
}

func loadAccesses(ctx context.Context, tx *sql.Tx, ids []int64, byID map[int64]int, evs []collectors.QueryEvent) error {
	type ref struct {
		ev, ta int
	}
	accRef := map[int64]ref{}
	var accIDs []int64
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		list, args := inList(ids[:n])
		ids = ids[n:]
		rows, err := tx.QueryContext(ctx, `SELECT id, event_id, catalog, namespace, name, direct, write, snapshot_id,
	evidence, filter_json, filter_text_json, bytes_scanned, rows_scanned, result_data_files,
	skipped_data_files, scanned_manifests, skipped_manifests, planning_nanos
FROM table_accesses WHERE event_id IN `+list+` ORDER BY event_id, ord`, args...)
		if err != nil {
			return fmt.Errorf("read table accesses: %w", err)
		}
		for rows.Next() {
			var (
				t                 collectors.TableAccess
				id, eventID       int64
				direct, write     int
				snap              sql.NullInt64
				evidence          string
				filter, filterTxt sql.NullString
			)
			m := &t.Metrics
			if err := rows.Scan(&id, &eventID, &t.Catalog, &t.Namespace, &t.Name, &direct, &write, &snap,
				&evidence, &filter, &filterTxt, &m.BytesScanned, &m.RowsScanned, &m.ResultDataFiles,
				&m.SkippedDataFiles, &m.ScannedManifests, &m.SkippedManifests, &m.PlanningNanos); err != nil {
				return errors.Join(fmt.Errorf("read table accesses: %w", err), rows.Close())
			}
			t.Direct, t.Write, t.Evidence = direct != 0, write != 0, collectors.Evidence(evidence)
			if snap.Valid {
				v := snap.Int64
				t.SnapshotID = &v
			}
			if filter.Valid {
				if err := json.Unmarshal([]byte(filter.String), &t.Filter); err != nil {
					return errors.Join(fmt.Errorf("read filter of %s: %w", t.QualifiedName(), err), rows.Close())
				}
			}
			if filterTxt.Valid {
				if err := json.Unmarshal([]byte(filterTxt.String), &t.FilterText); err != nil {
					return errors.Join(fmt.Errorf("read filter text of %s: %w", t.QualifiedName(), err), rows.Close())
				}
			}
			ei := byID[eventID]
			evs[ei].Tables = append(evs[ei].Tables, t)
			accRef[id] = ref{ei, len(evs[ei].Tables) - 1}
			accIDs = append(accIDs, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("read table accesses: %w", err)
		}
	}
	for len(accIDs) > 0 {
		n := min(chunk, len(accIDs))
		list, args := inList(accIDs[:n])
		accIDs = accIDs[n:]
		rows, err := tx.QueryContext(ctx, `SELECT access_id, name, roles, evidence FROM column_uses
WHERE access_id IN `+list+` ORDER BY access_id, ord`, args...)
		if err != nil {
			return fmt.Errorf("read column uses: %w", err)
		}
		for rows.Next() {
			var (
				accessID        int64
				c               collectors.ColumnUse
				roles, evidence string
			)
			if err := rows.Scan(&accessID, &c.Name, &roles, &evidence); err != nil {
				return errors.Join(fmt.Errorf("read column uses: %w", err), rows.Close())
			}
			c.Evidence = collectors.Evidence(evidence)
			for r := range strings.SplitSeq(roles, ",") {
				if r != "" {
					c.Roles = append(c.Roles, collectors.Role(r))
				}
			}
			r := accRef[accessID]
			t := &evs[r.ev].Tables[r.ta]
			t.Columns = append(t.Columns, c)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("read column uses: %w", err)
		}
	}
	return nil
}
