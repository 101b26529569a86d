package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
)

// Store is an open state database. It is safe for concurrent use by
// several goroutines; several processes may share it: a SQLite file (WAL
// journal, writers wait up to the busy timeout for each other) or a
// PostgreSQL database.
type Store struct {
	db handle
	d  dialect
	// desc names the database for messages: the SQLite path, or the
	// PostgreSQL DSN without its password.
	desc string
	path string
	now  func() time.Time
	// secrets are the passwords that must not appear in errors.
	secrets []string
	// integrity is the last SQLite integrity check (see Check).
	integrity struct {
		mu  sync.Mutex
		at  time.Time
		err error
	}
}

// Drivers of [Config].
const (
	// DriverSQLite keeps the state in one SQLite file ([Config.Path]).
	DriverSQLite = "sqlite"
	// DriverPostgres keeps the state in a PostgreSQL database
	// ([Config.DSN]), which several floe processes on several machines
	// can share.
	DriverPostgres = "postgres"
)

// Config says which database to open.
type Config struct {
	// Driver is [DriverSQLite] or [DriverPostgres]. Default: sqlite.
	Driver string
	// Path is the SQLite database file, or ":memory:" for a private
	// in-memory database. SQLite only.
	Path string
	// DSN is the PostgreSQL connection string, as a URL
	// (postgres://user@host:5432/floe?sslmode=require) or in key=value
	// form. PostgreSQL only.
	DSN string
	// Password, when set, replaces the DSN's password. PostgreSQL only.
	Password string
}

// String describes c without its password.
func (c Config) String() string {
	if c.Driver == DriverPostgres {
		return "postgres " + RedactDSN(c.DSN)
	}
	return c.Path
}

// BusyTimeout is how long a writer waits for another writer's lock before
// the statement fails with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// Open opens (creating it if needed) the SQLite state database at path and
// migrates it to [SchemaVersion]; see [OpenConfig].
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenConfig(ctx, Config{Driver: DriverSQLite, Path: path})
}

// OpenConfig opens the state database cfg names and migrates it to
// [SchemaVersion]: a SQLite file (created if needed; path ":memory:" opens
// a private in-memory database) or a PostgreSQL database (which must
// exist; its tables are created). A database with a schema newer than
// this binary is refused with [ErrSchemaTooNew]. Errors never contain the
// PostgreSQL password.
//
// Opening also recovers the runs that a killed process left running (see
// [Store.RecoverAbandoned]).
func OpenConfig(ctx context.Context, cfg Config) (*Store, error) {
	s, err := openTo(ctx, cfg, SchemaVersion())
	if err != nil {
		return nil, err
	}
	if _, err := s.RecoverAbandoned(ctx, s.now()); err != nil {
		return nil, errors.Join(s.redact(fmt.Errorf("open state store %s: %w", s.desc, err)), s.db.Close())
	}
	return s, nil
}

// openTo opens cfg's database and migrates it to version target (tests
// use it to build databases of older versions).
func openTo(ctx context.Context, cfg Config, target int) (*Store, error) {
	var (
		s   *Store
		err error
	)
	switch cfg.Driver {
	case "", DriverSQLite:
		s, err = openSQLite(cfg)
	case DriverPostgres:
		s, err = openPostgres(cfg)
	default:
		return nil, fmt.Errorf("open state store: unknown driver %q; use %s or %s", cfg.Driver, DriverSQLite, DriverPostgres)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrateRetrying(ctx, target); err != nil {
		return nil, errors.Join(s.redact(fmt.Errorf("open state store %s: %w", s.desc, err)), s.db.Close())
	}
	return s, nil
}

// migrateRetrying migrates, retrying for up to [BusyTimeout] while SQLite
// answers SQLITE_BUSY. Processes opening a new SQLite file at the same
// moment race to switch it to WAL, and SQLite reports that race as BUSY at
// once, without waiting on the busy timeout; the loser's retry finds the
// file in WAL mode and the schema migrated or being migrated.
func (s *Store) migrateRetrying(ctx context.Context, target int) error {
	deadline := time.Now().Add(BusyTimeout)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := s.migrate(ctx, target)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != 5 || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func openSQLite(cfg Config) (*Store, error) {
	path := cfg.Path
	if path == "" {
		return nil, errors.New("open state store: empty path")
	}
	if cfg.DSN != "" {
		return nil, errors.New("open state store: a dsn is for the postgres driver; sqlite takes a path")
	}
	memory := path == ":memory:"
	if !memory {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("open state store %s: %w", path, err)
			}
		}
	}
	db := sql.OpenDB(connector{dsn: dsn(path, memory)})
	if memory {
		// Every connection to ":memory:" is a new database: keep one.
		db.SetMaxOpenConns(1)
	}
	return newStore(db, sqliteDialect, path, path), nil
}

func newStore(db *sql.DB, d dialect, desc, path string) *Store {
	return &Store{db: handle{DB: db, rb: &rebinder{d: d}}, d: d, desc: desc, path: path, now: time.Now}
}

// dsn builds the modernc.org/sqlite data source name: WAL journal, a busy
// timeout, foreign keys, and write transactions that take the write lock
// when they begin (BEGIN IMMEDIATE), so two writers queue on the busy
// timeout instead of failing when one upgrades a read lock.
func dsn(path string, memory bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if !memory {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Set("_txlock", "immediate")
	name := path
	if !memory {
		name = "file:" + path
	}
	return name + "?" + q.Encode()
}

// connector opens modernc.org/sqlite connections without going through the
// global driver registry.
type connector struct{ dsn string }

// Connect opens one connection with the store's DSN.
func (c connector) Connect(context.Context) (driver.Conn, error) {
	return (&sqlite.Driver{}).Open(c.dsn)
}

// Driver returns the modernc.org/sqlite driver.
func (c connector) Driver() driver.Driver { return &sqlite.Driver{} }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return s.redact(fmt.Errorf("close state store %s: %w", s.desc, err))
	}
	return nil
}

// Path is the SQLite database file the store was opened on; "" for
// PostgreSQL (see [Store.Describe]).
func (s *Store) Path() string { return s.path }

// Driver is the store's driver, [DriverSQLite] or [DriverPostgres].
func (s *Store) Driver() string { return s.d.name() }

// Describe names the database for people: the SQLite file, or
// "postgres://user@host:port/db" without the password.
func (s *Store) Describe() string { return s.desc }

// Version returns the schema version recorded in the database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}

// migrationLockKey is the pg_advisory_xact_lock key of PostgreSQL
// migrations: "floe" in ASCII.
const migrationLockKey = 0x666c6f65

// migrate applies the migrations after the database's version up to
// target, in one transaction.
func (s *Store) migrate(ctx context.Context, target int) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	if s.d == postgresDialect {
		// Two processes opening a fresh database at once would both see
		// version 0 and both create the tables: one fails (CREATE TABLE IF
		// NOT EXISTS is not safe against a concurrent create either). The
		// transaction-scoped advisory lock queues the second until the
		// first commits, and the lock goes with the transaction, so no
		// connection is left holding it. SQLite needs none: the
		// transaction is BEGIN IMMEDIATE, which takes the write lock.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(migrationLockKey)+`)`); err != nil {
			return fmt.Errorf("lock for migration: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.d.schemaMigrationsDDL()); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var cur sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&cur); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if int(cur.Int64) > SchemaVersion() {
		return fmt.Errorf("%w: database is at version %d, this binary knows up to %d; upgrade floe", ErrSchemaTooNew, cur.Int64, SchemaVersion())
	}
	for _, m := range migrations {
		if m.version <= int(cur.Int64) || m.version > target {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.text(s.d)); err != nil {
			return fmt.Errorf("apply migration %d (%s): %w", m.version, m.name, err)
		}
		if m.convert != nil {
			if err := m.convert(ctx, s, tx); err != nil {
				return fmt.Errorf("apply migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, s.now().UTC().UnixNano()); err != nil {
			return fmt.Errorf("record migration %d: %w", m.version, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	return nil
}

func rollback(tx *txn) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("roll back: %w", err)
	}
	return nil
}

// nanos stores a time as UTC Unix nanoseconds; the zero time is NULL.
func nanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UTC().UnixNano(), Valid: true}
}

// fromNanos is the inverse of nanos.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AccessName is the name of the table a stored access read, in floe's
// identifier syntax (what [lake.Ident.String] writes for the table): the
// name the access is keyed by, before lower-casing.
func AccessName(t *collectors.TableAccess) string { return tableName(t.Catalog, t.Namespace, t.Name) }

// tableName is a table's name in floe's identifier syntax (see
// [lake.Ident.String]): catalog and name quoted when not plain, the
// namespace as stored, which normalization writes in that syntax already.
// A table "a.b" of namespace db is db."a.b", apart from the table b of
// namespace db.a.
func tableName(catalog, namespace, name string) string {
	parts := make([]string, 0, 3)
	if catalog != "" {
		parts = append(parts, lake.QuotePart(catalog))
	}
	if namespace != "" {
		parts = append(parts, namespace)
	}
	return strings.Join(append(parts, lake.QuotePart(name)), ".")
}

// tableKey is the case-insensitive key of catalog.namespace.name: the
// lower-cased [tableName], so the key of a resolved table is its
// lower-cased [lake.Ident.String].
func tableKey(catalog, namespace, name string) string {
	return strings.ToLower(tableName(catalog, namespace, name))
}

// filterKey is the key a table filter (QueryFilter.Table) is compared
// with, and the table_key runs and plans are stored and found by: the name
// rewritten in floe's identifier syntax, so "db"."t" finds db.t,
// lower-cased; text that is not a name is compared as given, lower-cased.
// It lowers in Go, not in SQL, so that a name in any script has one key on
// both databases (SQLite's lower() folds only ASCII).
func filterKey(table string) string {
	parts, err := lake.SplitParts(table)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(table))
	}
	return strings.ToLower(lake.JoinParts(parts...))
}

// convertTableKeysV11 fills the table_key of the runs and plans stored
// before version 12 from their table_name, one update per table.
func convertTableKeysV11(ctx context.Context, _ *Store, tx *txn) error {
	for _, tbl := range []string{"runs", "plans"} {
		names, err := distinctNames(ctx, tx, tbl)
		if err != nil {
			return err
		}
		for _, name := range names {
			if _, err := tx.ExecContext(ctx, `UPDATE `+tbl+` SET table_key = ? WHERE table_name = ?`, filterKey(name), name); err != nil {
				return fmt.Errorf("key the %s of %s: %w", tbl, name, err)
			}
		}
	}
	return nil
}

// distinctNames are the table names of the rows of tbl (runs or plans).
func distinctNames(ctx context.Context, tx *txn, tbl string) (names []string, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT table_name FROM `+tbl)
	if err != nil {
		return nil, fmt.Errorf("read the tables of the %s: %w", tbl, err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("read the tables of the %s: %w", tbl, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the tables of the %s: %w", tbl, err)
	}
	return names, nil
}
