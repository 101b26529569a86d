package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// dialect is what differs between the SQL of SQLite and of PostgreSQL.
// Queries are written once, in SQLite's spelling with ? placeholders;
// [Store.q] turns them into the store's dialect, and the few fragments
// that differ are methods here.
type dialect int

const (
	sqliteDialect dialect = iota
	postgresDialect
)

func (d dialect) name() string {
	if d == postgresDialect {
		return DriverPostgres
	}
	return DriverSQLite
}

// placeholder is the n-th (from 1) bind parameter.
func (d dialect) placeholder(n int) string {
	if d == postgresDialect {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// rebind turns the ? placeholders of q (outside quoted strings,
// identifiers and -- comments) into $1, $2, … for PostgreSQL.
func (d dialect) rebind(q string) string {
	if d != postgresDialect || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			quote = '\n' // to the end of the line
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// copiesEvents says whether event batches go by COPY ([Store.copyRound])
// instead of by INSERTs ([Store.insertRound]).
func (d dialect) copiesEvents() bool { return d == postgresDialect }

// schemaMigrationsDDL creates the table of applied versions. SQLite's
// spelling stays the one released databases have.
func (d dialect) schemaMigrationsDDL() string {
	if d == postgresDialect {
		return `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    BIGINT PRIMARY KEY,
	name       TEXT   NOT NULL,
	applied_at BIGINT NOT NULL
)`
	}
	return `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
)`
}

// stepOrder orders a run's steps that started at the same nanosecond by
// insertion: SQLite's rowid, PostgreSQL's identity column step_seq
// (migration 2 adds it there; PostgreSQL tables have no rowid).
func (d dialect) stepOrder() string {
	if d == postgresDialect {
		return "step_seq"
	}
	return "rowid"
}

// distinctList aggregates the distinct values of col into one
// comma-separated string.
func (d dialect) distinctList(col string) string {
	if d == postgresDialect {
		return "string_agg(DISTINCT " + col + ", ',')"
	}
	return "group_concat(DISTINCT " + col + ")"
}

// textList renders vals as a table k of one column, value, with its one
// argument, however many vals there are: unnest of a text array for
// PostgreSQL (WITH ORDINALITY, numbering them in column pos), json_each of
// a JSON array for SQLite (whose statements take at most 32766
// parameters; its rows are numbered by key, from 0).
func (d dialect) textList(vals []string) (string, []any, error) {
	if d == postgresDialect {
		return "unnest(?::text[]) WITH ORDINALITY AS k(value, pos)", []any{vals}, nil
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return "", nil, fmt.Errorf("encode list: %w", err)
	}
	return "json_each(?) AS k", []any{string(b)}, nil
}

// rebindCacheMax bounds the cache: query texts built with literal limits
// or list lengths are many; past the bound they are rebound every time.
const rebindCacheMax = 1024

// rebinder turns query texts into its dialect's spelling (see
// [dialect.rebind]), remembering the result so that each fixed query is
// rebound once.
type rebinder struct {
	d  dialect
	mu sync.RWMutex
	m  map[string]string
}

func (r *rebinder) q(query string) string {
	if r.d != postgresDialect {
		return query
	}
	r.mu.RLock()
	out, ok := r.m[query]
	r.mu.RUnlock()
	if ok {
		return out
	}
	out = r.d.rebind(query)
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]string{}
	}
	if len(r.m) < rebindCacheMax {
		r.m[query] = out
	}
	r.mu.Unlock()
	return out
}

// handle is the store's *sql.DB with every query text rebound to its
// dialect, so the store's code has one spelling of each query.
type handle struct {
	*sql.DB
	rb *rebinder
}

func (h handle) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return h.DB.ExecContext(ctx, h.rb.q(query), args...)
}

func (h handle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return h.DB.QueryContext(ctx, h.rb.q(query), args...)
}

func (h handle) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return h.DB.QueryRowContext(ctx, h.rb.q(query), args...)
}

// BeginTx begins a transaction whose queries are rebound too.
func (h handle) BeginTx(ctx context.Context, opts *sql.TxOptions) (*txn, error) {
	tx, err := h.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &txn{Tx: tx, rb: h.rb}, nil
}

// BeginConnTx begins a transaction like [handle.BeginTx], on a
// connection reserved for it until it ends, so that its code can reach
// the driver's connection underneath ([txn.pgx]) and stay inside the
// transaction.
func (h handle) BeginConnTx(ctx context.Context, opts *sql.TxOptions) (*txn, error) {
	c, err := h.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := c.BeginTx(ctx, opts)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return &txn{Tx: tx, rb: h.rb, conn: c}, nil
}

// txn is a *sql.Tx with every query text rebound to its dialect.
type txn struct {
	*sql.Tx
	rb *rebinder
	// conn is the connection of a transaction begun with
	// [handle.BeginConnTx], given back to the pool when it ends.
	conn *sql.Conn
}

// Commit commits the transaction and gives back its connection.
func (t *txn) Commit() error { return t.release(t.Tx.Commit()) }

// Rollback rolls the transaction back and gives back its connection.
func (t *txn) Rollback() error { return t.release(t.Tx.Rollback()) }

func (t *txn) release(err error) error {
	if t.conn == nil {
		return err
	}
	c := t.conn
	t.conn = nil
	return errors.Join(err, c.Close())
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.rb.q(query), args...)
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.rb.q(query), args...)
}

func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.rb.q(query), args...)
}
