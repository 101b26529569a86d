package store

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/pgtest"
)

// pg is the package's one PostgreSQL cluster, started by the first test
// that asks for a database and stopped by TestMain.
var pg pgtest.Shared

// SharedPostgres gives the external tests (package store_test) the
// cluster, for TestMain and their databases.
func SharedPostgres() *pgtest.Shared { return &pg }

// TestDB is one fresh database of one driver, which a test may open
// several Stores on (as several processes would).
type TestDB struct {
	Name string
	Cfg  Config
}

// Open opens a Store on db, closed when t ends.
func (db TestDB) Open(t testing.TB) *Store {
	t.Helper()
	s, err := OpenConfig(t.Context(), db.Cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// ForEachDriver runs fn as the subtests sqlite and postgres, each with a
// fresh database of its own.
func ForEachDriver(t *testing.T, fn func(t *testing.T, db TestDB)) {
	t.Helper()
	for _, name := range []string{DriverSQLite, DriverPostgres} {
		t.Run(name, func(t *testing.T) { fn(t, NewTestDB(t, name)) })
	}
}

// NewTestDB makes a fresh database of driver for t.
func NewTestDB(t testing.TB, driver string) TestDB {
	t.Helper()
	if driver == DriverPostgres {
		return TestDB{Name: driver, Cfg: Config{Driver: DriverPostgres, DSN: pg.NewDatabase(t)}}
	}
	return TestDB{Name: driver, Cfg: Config{Driver: DriverSQLite, Path: filepath.Join(t.TempDir(), "state", "state.db")}}
}

// Exec runs a statement on the database underneath s, for tests that
// tamper with it.
func Exec(t testing.TB, s *Store, query string, args ...any) {
	t.Helper()
	_, err := s.db.ExecContext(t.Context(), query, args...)
	require.NoError(t, err)
}

// hasTable reports whether the database has table name.
func (s *Store) hasTable(t testing.TB, name string) bool {
	t.Helper()
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if s.d == postgresDialect {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	var n int
	require.NoError(t, s.db.QueryRowContext(t.Context(), q, name).Scan(&n))
	return n == 1
}

// CountRows counts the rows of table, for tests that check what the store
// keeps beyond what its API shows.
func CountRows(t testing.TB, s *Store, table string) int {
	t.Helper()
	var n int
	require.NoError(t, s.db.QueryRowContext(t.Context(), `SELECT count(*) FROM `+table).Scan(&n))
	return n
}
