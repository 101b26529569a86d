package trinolive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/trino"
	trinodriver "github.com/trinodb/trino-go-client/trino"
)

// runtimeQuery selects the finished queries; %s is the watermark clause.
// "user" and "end" are reserved words and must be quoted.
const runtimeQuery = `SELECT query_id, state, "user", source, query, queued_time_ms, created, "end", error_type, error_code
FROM system.runtime.queries
WHERE state IN ('FINISHED', 'FAILED')%s
ORDER BY "end", query_id`

// QueryRuntime returns the queries in system.runtime.queries that ended
// after since (all of them when since is zero), oldest end first, and the
// watermark to pass next time: the latest end time returned, or since
// when there was none. Queries still running are left for a later poll.
//
// db must be a database/sql handle of the trino-go-client driver. The
// watermark compares "end" at the table's millisecond precision, strictly,
// so a query ending in the same millisecond as the previous poll's last
// one but not yet visible then is missed; poll with the listener when
// completeness matters.
func QueryRuntime(ctx context.Context, db *sql.DB, since time.Time) ([]collectors.QueryEvent, time.Time, error) {
	where := ""
	if !since.IsZero() {
		// A literal, not a bind: the driver runs binds as EXECUTE …
		// USING, which the fixed text does not need.
		where = fmt.Sprintf(` AND "end" > TIMESTAMP '%s UTC'`, since.UTC().Truncate(time.Millisecond).Format("2006-01-02 15:04:05.000"))
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf(runtimeQuery, where))
	if err != nil {
		return nil, since, fmt.Errorf("query trino system.runtime.queries: %w", err)
	}
	var (
		events []collectors.QueryEvent
		next   = since
	)
	for rows.Next() {
		var (
			id, state, query      string
			user, source, errType sql.NullString
			errCode               sql.NullString
			queued                sql.NullInt64
			created, end          sql.NullTime
		)
		if err := rows.Scan(&id, &state, &user, &source, &query, &queued, &created, &end, &errType, &errCode); err != nil {
			return nil, since, errClose(fmt.Errorf("read trino system.runtime.queries row: %w", err), rows)
		}
		if !created.Valid {
			return nil, since, errClose(fmt.Errorf("read trino system.runtime.queries: query %s has no created time", id), rows)
		}
		ev := collectors.QueryEvent{
			Source:        trino.SourceRuntime,
			Engine:        collectors.EngineTrino,
			QueryID:       id,
			User:          user.String,
			StartTime:     created.Time.UTC(),
			State:         runtimeState(state, errCode.String),
			StatementType: collectors.ClassifyStatement(query),
			SQL:           query,
			SQLTemplate:   strings.HasPrefix(strings.ToUpper(strings.TrimSpace(query)), "EXECUTE "),
		}
		ev.Metrics.QueuedMs = queued.Int64
		if end.Valid {
			ev.EndTime = end.Time.UTC()
			ev.Metrics.ElapsedMs = ev.EndTime.Sub(ev.StartTime).Milliseconds()
			if ev.EndTime.After(next) {
				next = ev.EndTime
			}
		}
		if ev.State != collectors.StateSucceeded {
			ev.Error = strings.TrimSpace(errType.String + " " + errCode.String)
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, since, errClose(fmt.Errorf("read trino system.runtime.queries: %w", err), rows)
	}
	if err := rows.Close(); err != nil {
		return nil, since, fmt.Errorf("close trino system.runtime.queries rows: %w", err)
	}
	return events, next, nil
}

// errClose closes rows after a failure and joins a close error to err.
func errClose(err error, rows *sql.Rows) error {
	if cerr := rows.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("close rows: %w", cerr))
	}
	return err
}

// Open returns a database handle for the Trino coordinator at dsn, in
// trino-go-client's DSN form
// (http[s]://user[:password]@host:port?catalog=…&schema=…&source=floe).
// The driver is used directly, not through its database/sql registration.
func Open(dsn string) (*sql.DB, error) {
	cfg, err := trinodriver.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse trino dsn: %w", err)
	}
	conn, err := trinodriver.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("configure trino connection: %w", err)
	}
	return sql.OpenDB(conn), nil
}

func runtimeState(state, code string) collectors.State {
	switch strings.ToUpper(state) {
	case "FINISHED":
		return collectors.StateSucceeded
	case "FAILED":
		if code == "USER_CANCELED" || code == "ADMINISTRATIVELY_KILLED" {
			return collectors.StateCancelled
		}
		return collectors.StateFailed
	}
	return collectors.StateUnknown
}
