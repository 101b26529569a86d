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
	"unicode/utf8"
)

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
// with its tables, by a finished one, which counts as inserted. An event
// folded by [Store.PruneEvents] counts as a duplicate too. Events
// without a Source or QueryID are refused, and nothing of the batch is
// stored.
//
// The rows go in with multi-row INSERTs, a few statements per batch
// instead of a few per event: on PostgreSQL every statement is a round
// trip to the server. PostgreSQL gets its rows by COPY instead (see
// [Store.copyRound]), and the batch again by INSERTs when a concurrent
// writer stored one of its keys meanwhile.
func (s *Store) InsertEvents(ctx context.Context, events []collectors.QueryEvent) (inserted, duplicates int, err error) {
	for i := range events {
		if events[i].Source == "" || events[i].QueryID == "" {
			return 0, 0, fmt.Errorf("insert events: event %d has no source or query id", i)
		}
	}
	if len(events) == 0 {
		return 0, 0, nil
	}
	byCopy := s.d.copiesEvents()
	inserted, duplicates, err = s.insertEvents(ctx, events, byCopy)
	if byCopy && errors.Is(err, errCopyConflict) {
		// The transaction is rolled back, so nothing of the batch is
		// stored: the INSERTs' ON CONFLICT settles each key as it comes.
		inserted, duplicates, err = s.insertEvents(ctx, events, false)
	}
	return inserted, duplicates, err
}

// insertEvents is [Store.InsertEvents] in one transaction, its rounds
// stored by COPY (PostgreSQL only) or by INSERTs.
func (s *Store) insertEvents(ctx context.Context, events []collectors.QueryEvent, byCopy bool) (inserted, duplicates int, err error) {
	begin := s.db.BeginTx
	if byCopy {
		begin = s.db.BeginConnTx
	}
	tx, err := begin(ctx, nil)
	if err != nil {
		return 0, 0, s.redact(fmt.Errorf("insert events: begin: %w", err))
	}
	defer func() {
		if err != nil {
			inserted, duplicates = 0, 0
			err = s.redact(errors.Join(err, rollback(tx)))
		}
	}()
	// An event pruned already is folded, not forgotten: a log read again
	// must not store it a second time.
	events, skipped, err := s.dropFolded(ctx, tx, events)
	if err != nil {
		return 0, 0, fmt.Errorf("insert events: %w", err)
	}
	duplicates = skipped
	for _, round := range eventRounds(events) {
		var n int
		if byCopy {
			n, err = s.copyRound(ctx, tx, round)
		} else {
			n, err = s.insertRound(ctx, tx, round)
		}
		if err != nil {
			return 0, 0, err
		}
		inserted += n
		duplicates += len(round) - n
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("insert events: commit: %w", err)
	}
	return inserted, duplicates, nil
}

// eventRounds splits events into rounds in which each (source, query id)
// appears once: round k holds the k-th event of each key, in batch order.
// Storing the rounds one after the other gives what storing the events one
// by one gives (the rules only ever compare an event with the stored one
// of its key), with a few multi-row statements per round.
func eventRounds(events []collectors.QueryEvent) [][]*collectors.QueryEvent {
	type key struct{ source, id string }
	seen := make(map[key]int, len(events))
	var rounds [][]*collectors.QueryEvent
	for i := range events {
		k := key{events[i].Source, events[i].QueryID}
		r := seen[k]
		seen[k] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], &events[i])
	}
	return rounds
}

func unfinished(ev *collectors.QueryEvent) bool {
	return ev.State == collectors.StateUnknown && ev.EndTime.IsZero()
}

// insertRound stores events, whose keys are distinct, and returns how many
// were stored. An event whose key is stored already is inserted again
// only when it has finished and the stored one is unfinished, which is
// then deleted (with its tables) first: a second pass, so that the common
// batch — no key stored yet — costs no delete.
func (s *Store) insertRound(ctx context.Context, tx *txn, events []*collectors.QueryEvent) (int, error) {
	type evKey struct{ source, id string }
	ids := make(map[evKey]int64, len(events))
	insert := func(evs []*collectors.QueryEvent) error {
		rows := make([][]any, 0, len(evs))
		for _, ev := range evs {
			row, err := eventRow(ev)
			if err != nil {
				return err
			}
			rows = append(rows, row)
		}
		err := s.insertRows(ctx, tx, eventColumns, rows,
			` ON CONFLICT (source, query_id) DO NOTHING RETURNING id, source, query_id`,
			func(r *sql.Rows) error {
				var (
					id int64
					k  evKey
				)
				if err := r.Scan(&id, &k.source, &k.id); err != nil {
					return err
				}
				ids[k] = id
				return nil
			})
		if err != nil {
			return fmt.Errorf("insert events: %w", err)
		}
		return nil
	}
	if err := insert(events); err != nil {
		return 0, err
	}
	var again []*collectors.QueryEvent
	var keys [][]any
	for _, ev := range events {
		if _, ok := ids[evKey{ev.Source, ev.QueryID}]; !ok && !unfinished(ev) {
			again = append(again, ev)
			keys = append(keys, []any{ev.Source, ev.QueryID})
		}
	}
	if len(again) > 0 {
		if err := s.forChunks(keys, 2, func(rows [][]any) error {
			conds := make([]string, len(rows))
			args := []any{string(collectors.StateUnknown)}
			for i, r := range rows {
				conds[i] = "(source = ? AND query_id = ?)"
				args = append(args, r...)
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM query_events WHERE state = ? AND end_time IS NULL AND (`+strings.Join(conds, " OR ")+`)`, args...)
			return err
		}); err != nil {
			return 0, fmt.Errorf("insert events: replace unfinished events: %w", err)
		}
		if err := insert(again); err != nil {
			return 0, err
		}
	}

	// The tables of the stored events. RETURNING names its rows by event
	// and position, since neither database promises them in VALUES order.
	type accKey struct {
		event int64
		ord   int
	}
	var (
		accRows [][]any
		accs    = map[accKey]*collectors.TableAccess{}
	)
	for _, ev := range events {
		eventID, ok := ids[evKey{ev.Source, ev.QueryID}]
		if !ok {
			continue
		}
		for i := range ev.Tables {
			t := &ev.Tables[i]
			row, err := accessRow(eventID, i, t)
			if err != nil {
				return 0, fmt.Errorf("insert event %s %s: table %s: %w", ev.Source, ev.QueryID, t.QualifiedName(), err)
			}
			accRows = append(accRows, row)
			accs[accKey{eventID, i}] = t
		}
	}
	var colRows, predRows [][]any
	var perr error
	err := s.insertRows(ctx, tx, accessColumns, accRows,
		` RETURNING id, event_id, ord`,
		func(r *sql.Rows) error {
			var (
				accessID int64
				k        accKey
			)
			if err := r.Scan(&accessID, &k.event, &k.ord); err != nil {
				return err
			}
			t := accs[k]
			if t == nil {
				return fmt.Errorf("insert table accesses: returned unknown access %d of event %d", k.ord, k.event)
			}
			colRows = appendColumnRows(colRows, accessID, t)
			if perr == nil {
				predRows, perr = appendPredRows(predRows, accessID, k.event, t)
			}
			return nil
		})
	if err == nil {
		err = perr
	}
	if err != nil {
		return 0, fmt.Errorf("insert events: table accesses: %w", err)
	}
	if err := s.insertRows(ctx, tx, columnUseColumns, colRows, "", nil); err != nil {
		return 0, fmt.Errorf("insert events: column uses: %w", err)
	}
	if err := s.insertRows(ctx, tx, predicateColumns, predRows, "", nil); err != nil {
		return 0, fmt.Errorf("insert events: predicates: %w", err)
	}
	return len(ids), nil
}

// maxParams bounds the parameters of one statement, under SQLite's 32766
// and PostgreSQL's 65535.
const maxParams = 10000

// forChunks calls fn with consecutive chunks of rows, each small enough
// that its ncols parameters per row stay under maxParams.
func (s *Store) forChunks(rows [][]any, ncols int, fn func([][]any) error) error {
	per := max(1, maxParams/ncols)
	for len(rows) > 0 {
		n := min(per, len(rows))
		if err := fn(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// insertTable is a table the events are inserted into, and its columns
// with their PostgreSQL types (bigint or text).
type insertTable struct {
	name  string
	cols  []string
	types []string
}

func newInsertTable(name, cols string) insertTable {
	t := insertTable{name: name}
	for c := range strings.SplitSeq(cols, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(c), " ")
		t.cols, t.types = append(t.cols, name), append(t.types, typ)
	}
	return t
}

var (
	eventColumns = newInsertTable("query_events", `source text, query_id text, engine text, engine_version text,
	root_query_id text, user_name text, start_time bigint, end_time bigint, state text, statement_type text,
	sql_text text, sql_truncated bigint, sql_template bigint, params_json text, default_catalog text,
	default_schema text, elapsed_ms bigint, cpu_ms bigint, queued_ms bigint, bytes_scanned bigint,
	rows_scanned bigint, partitions_scanned bigint, partitions_total bigint, error text`)
	accessColumns = newInsertTable("table_accesses", `event_id bigint, ord bigint, catalog text, namespace text,
	name text, table_key text, metadata text, direct bigint, write bigint, snapshot_id bigint, evidence text,
	filter_json text, filter_text_json text, bytes_scanned bigint, rows_scanned bigint, result_data_files bigint,
	skipped_data_files bigint, scanned_manifests bigint, skipped_manifests bigint, planning_nanos bigint`)
	columnUseColumns = newInsertTable("column_uses", `access_id bigint, ord bigint, name text, roles text, evidence text`)
	predicateColumns = newInsertTable("predicates", `access_id bigint, event_id bigint, table_key text,
	column_name text, transform text, op text, values_json text, evidence text`)
)

// insertRows inserts rows into t, followed by tail (ON CONFLICT,
// RETURNING), and calls scan (when not nil) for every row the statement
// returns. SQLite gets multi-row VALUES lists, in chunks. PostgreSQL gets
// one array parameter per column and a single INSERT … SELECT FROM
// unnest(…): one statement per table and batch, whose text does not
// depend on the number of rows, so the server parses and plans it once
// instead of a VALUES list of thousands of parameters per batch.
func (s *Store) insertRows(ctx context.Context, tx *txn, t insertTable, rows [][]any, tail string, scan func(*sql.Rows) error) error {
	if len(rows) == 0 {
		return nil
	}
	for i, row := range rows {
		if len(row) != len(t.cols) {
			return fmt.Errorf("%s row %d has %d values, want %d", t.name, i, len(row), len(t.cols))
		}
	}
	head := "INSERT INTO " + t.name + " (" + strings.Join(t.cols, ", ") + ") "
	if s.d == postgresDialect {
		args := make([]any, len(t.cols))
		casts := make([]string, len(t.cols))
		for j, typ := range t.types {
			casts[j] = fmt.Sprintf("$%d::%s[]", j+1, typ)
			col, err := pgArray(typ, rows, j)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", t.name, t.cols[j], err)
			}
			args[j] = col
		}
		return runInsert(ctx, tx, head+"SELECT * FROM unnest("+strings.Join(casts, ", ")+")"+tail, args, scan)
	}
	return s.forChunks(rows, len(t.cols), func(chunk [][]any) error {
		var b strings.Builder
		b.WriteString(head)
		b.WriteString("VALUES ")
		args := make([]any, 0, len(chunk)*len(t.cols))
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ") + ")"
		for i, r := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row)
			args = append(args, r...)
		}
		b.WriteString(tail)
		return runInsert(ctx, tx, b.String(), args, scan)
	})
}

// runInsert runs one insert statement. The text is in the dialect
// already: it goes around the rebinder, whose cache these texts (one per
// chunk length) would only fill.
func runInsert(ctx context.Context, tx *txn, q string, args []any, scan func(*sql.Rows) error) (err error) {
	if scan == nil {
		_, err := tx.Tx.ExecContext(ctx, q, args...)
		return err
	}
	rs, err := tx.Tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rs.Close()) }()
	for rs.Next() {
		if err := scan(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// pgArray collects column j of rows into a slice pgx sends as a
// PostgreSQL array of typ (bigint or text), NULLs as nil pointers.
func pgArray(typ string, rows [][]any, j int) (any, error) {
	switch typ {
	case "bigint":
		out := make([]*int64, len(rows))
		for i, r := range rows {
			v, ok, err := bigintValue(r[j])
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", i, err)
			}
			if ok {
				out[i] = &v
			}
		}
		return out, nil
	case "text":
		out := make([]*string, len(rows))
		for i, r := range rows {
			v, ok, err := textValue(r[j])
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", i, err)
			}
			if ok {
				out[i] = &v
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown column type %q", typ)
}

// bigintValue is a row's value of a bigint column; false for NULL.
func bigintValue(x any) (int64, bool, error) {
	switch x := x.(type) {
	case int:
		return int64(x), true, nil
	case int64:
		return x, true, nil
	case sql.NullInt64:
		return x.Int64, x.Valid, nil
	case nil:
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("%T is no bigint", x)
}

// textValue is a row's value of a text column; false for NULL.
func textValue(x any) (string, bool, error) {
	switch x := x.(type) {
	case string:
		return x, true, nil
	case sql.NullString:
		return x.String, x.Valid, nil
	case nil:
		return "", false, nil
	}
	return "", false, fmt.Errorf("%T is no text", x)
}

// eventRow is ev's row of eventColumns.
func eventRow(ev *collectors.QueryEvent) ([]any, error) {
	params, err := jsonOrNull(ev.Params, len(ev.Params) > 0)
	if err != nil {
		return nil, fmt.Errorf("insert event %s %s: %w", ev.Source, ev.QueryID, err)
	}
	m := ev.Metrics
	return []any{ev.Source, ev.QueryID, string(ev.Engine), ev.EngineVersion, ev.RootQueryID,
		ev.User, nanos(ev.StartTime).Int64, nanos(ev.EndTime), string(ev.State), ev.StatementType, ev.SQL,
		boolInt(ev.SQLTruncated), boolInt(ev.SQLTemplate), params, ev.DefaultCatalog, ev.DefaultSchema,
		m.ElapsedMs, m.CPUMs, m.QueuedMs, m.BytesScanned, m.RowsScanned, m.PartitionsScanned, m.PartitionsTotal, ev.Error}, nil
}

func accessRow(eventID int64, ord int, t *collectors.TableAccess) ([]any, error) {
	filter, err := jsonOrNull(t.Filter, t.Filter != nil)
	if err != nil {
		return nil, err
	}
	ftext, err := jsonOrNull(t.FilterText, len(t.FilterText) > 0)
	if err != nil {
		return nil, err
	}
	var snap sql.NullInt64
	if t.SnapshotID != nil {
		snap = sql.NullInt64{Int64: *t.SnapshotID, Valid: true}
	}
	meta, _ := t.MetadataTable()
	m := t.Metrics
	return []any{eventID, ord, t.Catalog, t.Namespace, t.Name, tableKey(t.Catalog, t.Namespace, t.Name), meta,
		boolInt(t.Direct), boolInt(t.Write), snap, string(t.Evidence), filter, ftext,
		m.BytesScanned, m.RowsScanned, m.ResultDataFiles, m.SkippedDataFiles, m.ScannedManifests, m.SkippedManifests, m.PlanningNanos}, nil
}

func appendColumnRows(rows [][]any, accessID int64, t *collectors.TableAccess) [][]any {
	for i, c := range t.Columns {
		roles := make([]string, len(c.Roles))
		for k, r := range c.Roles {
			roles[k] = string(r)
		}
		rows = append(rows, []any{accessID, i, c.Name, strings.Join(roles, ","), string(c.Evidence)})
	}
	return rows
}

func appendPredRows(rows [][]any, accessID, eventID int64, t *collectors.TableAccess) ([][]any, error) {
	if _, ok := t.MetadataTable(); ok {
		return rows, nil // a metadata table's filter is on metadata rows, not data
	}
	key := tableKey(t.Catalog, t.Namespace, t.Name)
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
		rows = append(rows, []any{accessID, eventID, key, p.Column, p.Transform, string(p.Op), string(b), string(t.Evidence)})
	})
	return rows, perr
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
	return f.whereOn("table_accesses x WHERE x.event_id = e.id")
}

// foldedWhere renders f as a WHERE clause over folded_events aliased e,
// whose tables are those of its shape.
func (f QueryFilter) foldedWhere() (string, []any) {
	return f.whereOn("folded_shape_tables x WHERE x.shape_id = e.shape_id")
}

// whereOn renders f as a WHERE clause over events aliased e whose tables
// are the rows x of accesses ("table x WHERE x.… = e.id").
func (f QueryFilter) whereOn(accesses string) (string, []any) {
	var conds []string
	var args []any
	if f.Table != "" {
		cond, cargs := tableMatch("x.table_key", filterKey(f.Table))
		conds = append(conds, `EXISTS (SELECT 1 FROM `+accesses+` AND `+cond+`)`)
		args = append(args, cargs...)
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

// tableMatch matches col, a table key, against key: equal, or ending in
// "." + key ("ns.name" matches any catalog). Written with functions both
// dialects have alike (PostgreSQL's substr takes no negative start).
func tableMatch(col, key string) (string, []any) {
	suffix := "." + key
	n := utf8.RuneCountInString(suffix)
	return "(" + col + " = ? OR (length(" + col + ") >= ? AND substr(" + col + ", length(" + col + ") - ? + 1) = ?))",
		[]any{key, n, n, suffix}
}

// Queries returns the stored events f selects, oldest first, each with its
// table accesses, column uses and filter trees restored. Events folded by
// [Store.PruneEvents] are not among them; [Store.FoldedQueries] reads those.
func (s *Store) Queries(ctx context.Context, f QueryFilter) (evs []collectors.QueryEvent, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.redact(fmt.Errorf("read queries: begin: %w", err))
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	where, args := f.where()
	tail := ` ORDER BY e.start_time DESC, e.id DESC`
	if f.Limit > 0 {
		tail += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	_, evs, err = readEvents(ctx, tx, where+tail, args)
	if err != nil {
		return nil, err
	}
	slices.Reverse(evs)
	return evs, nil
}

// readEvents reads the events of query_events e that rest (a WHERE clause
// and what follows it) selects, in its order, with their ids, table
// accesses, column uses and filter trees.
func readEvents(ctx context.Context, tx *txn, rest string, args []any) (ids []int64, evs []collectors.QueryEvent, err error) {
	q := `SELECT e.id, e.source, e.query_id, e.engine, e.engine_version, e.root_query_id, e.user_name,
	e.start_time, e.end_time, e.state, e.statement_type, e.sql_text, e.sql_truncated, e.sql_template,
	e.params_json, e.default_catalog, e.default_schema, e.elapsed_ms, e.cpu_ms, e.queued_ms,
	e.bytes_scanned, e.rows_scanned, e.partitions_scanned, e.partitions_total, e.error
FROM query_events e` + rest
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read queries: %w", err)
	}
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
			return nil, nil, errors.Join(fmt.Errorf("read queries: %w", err), rows.Close())
		}
		ev.Engine, ev.State = collectors.Engine(engine), collectors.State(stateStr)
		ev.StartTime, ev.EndTime = fromNanos(sql.NullInt64{Int64: start, Valid: start != 0}), fromNanos(end)
		ev.SQLTruncated, ev.SQLTemplate = trunc != 0, tmpl != 0
		if params.Valid {
			if err := json.Unmarshal([]byte(params.String), &ev.Params); err != nil {
				return nil, nil, errors.Join(fmt.Errorf("read queries: params of %s %s: %w", ev.Source, ev.QueryID, err), rows.Close())
			}
		}
		byID[id] = len(evs)
		ids = append(ids, id)
		evs = append(evs, ev)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, fmt.Errorf("read queries: %w", err)
	}
	if err := loadAccesses(ctx, tx, slices.Clone(ids), byID, evs); err != nil {
		return nil, nil, err
	}
	return ids, evs, nil
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

func loadAccesses(ctx context.Context, tx *txn, ids []int64, byID map[int64]int, evs []collectors.QueryEvent) error {
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
