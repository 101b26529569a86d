//go:build duckdb

package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
	"github.com/floe-project/floe/collectors"
)

// readDB reads every table of the database at name that has the columns of
// duckdb_logs (message and timestamp at least).
func readDB(ctx context.Context, name string, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) (err error) {
	db, err := sql.Open("duckdb", name+"?access_mode=read_only")
	if err != nil {
		return fmt.Errorf("open duckdb database %s: %w", name, err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	tables, err := logTables(ctx, db)
	if err != nil {
		return fmt.Errorf("list log tables of %s: %w", name, err)
	}
	if len(tables) == 0 {
		return bad(collectors.BadRecord{File: name, Reason: "no table with the columns of duckdb_logs (message, timestamp)"})
	}
	for _, t := range tables {
		if err := readLogTable(ctx, db, name, t, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

type logTable struct {
	schema, table string
	cols          map[string]bool
}

func (t logTable) ident() string {
	return quoteIdent(t.schema) + "." + quoteIdent(t.table)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func logTables(ctx context.Context, db *sql.DB) ([]logTable, error) {
	rows, err := db.QueryContext(ctx, `SELECT schema_name, table_name, lower(column_name)
		FROM duckdb_columns() WHERE database_name = current_database()
		ORDER BY schema_name, table_name, column_index`)
	if err != nil {
		return nil, err
	}
	byName := map[string]*logTable{}
	var order []string
	for rows.Next() {
		var s, t, c string
		if err := rows.Scan(&s, &t, &c); err != nil {
			return nil, errors.Join(err, rows.Close())
		}
		k := s + "." + t
		lt, ok := byName[k]
		if !ok {
			lt = &logTable{schema: s, table: t, cols: map[string]bool{}}
			byName[k] = lt
			order = append(order, k)
		}
		lt.cols[c] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	var out []logTable
	for _, k := range order {
		if t := byName[k]; t.cols["message"] && t.cols["timestamp"] {
			out = append(out, *t)
		}
	}
	return out, nil
}

func readLogTable(ctx context.Context, db *sql.DB, name string, t logTable, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	col := func(c string) string {
		if t.cols[c] {
			return "CAST(" + quoteIdent(c) + " AS VARCHAR)"
		}
		return "NULL"
	}
	q := fmt.Sprintf(`SELECT %s, %s, %s, CAST("timestamp" AS TIMESTAMPTZ), %s, CAST(message AS VARCHAR) FROM %s ORDER BY "timestamp"`,
		col("context_id"), col("connection_id"), col("query_id"), col("type"), t.ident())
	if t.cols["query_id"] {
		q += `, query_id`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read log table %s: %w", t.ident(), err)
	}
	d := &deduper{}
	for i := 1; rows.Next(); i++ {
		var ctxID, conn, qid, typ, msg sql.NullString
		var ts sql.NullTime
		if err := rows.Scan(&ctxID, &conn, &qid, &ts, &typ, &msg); err != nil {
			return errors.Join(fmt.Errorf("read log table %s: %w", t.ident(), err), rows.Close())
		}
		pos := collectors.BadRecord{File: name, Index: i}
		if !ts.Valid {
			pos.Reason = fmt.Sprintf("table %s row %d: no timestamp", t.ident(), i)
			if err := bad(pos); err != nil {
				return errors.Join(err, rows.Close())
			}
			continue
		}
		row := logRow{contextID: ctxID.String, connectionID: conn.String, queryID: qid.String,
			timestamp: ts.Time.UTC().Truncate(time.Microsecond), typ: typ.String, message: msg.String, pos: pos}
		if err := d.emit(SourceDB, row, emit, bad); err != nil {
			return errors.Join(err, rows.Close())
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}
