package store_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

func TestRedactDSN(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://floe@db:5432/floe?sslmode=require", "postgres://floe@db:5432/floe?sslmode=require"},
		{"postgres://floe:hunter2@db:5432/floe", "postgres://floe:xxxxx@db:5432/floe"},
		{"postgresql://floe@db/floe?password=hunter2&sslmode=disable", "postgresql://floe@db/floe?password=xxxxx&sslmode=disable"},
		{"host=db user=floe password=hunter2 dbname=floe", "host=db user=floe password=xxxxx dbname=floe"},
		{"host=db password='hunter 2'", "(unreadable dsn)"},
		{"postgres://floe:hun%zzter2@db/floe", "(unreadable dsn)"},
		{"", ""},
	} {
		require.Equal(t, tc.want, store.RedactDSN(tc.in), tc.in)
	}
}

// TestOpenPostgresKeepsPasswordOut: neither the store's description nor
// the errors of a failed open show the password, from the DSN or from
// Config.Password.
func TestOpenPostgresKeepsPasswordOut(t *testing.T) {
	dsn := store.NewTestDB(t, store.DriverPostgres).Cfg.DSN
	withPassword := strings.Replace(dsn, "floe@", "floe:hunter2@", 1)
	s, err := store.OpenConfig(t.Context(), store.Config{Driver: store.DriverPostgres, DSN: withPassword, Password: "s3cret"})
	require.NoError(t, err, "the test server trusts local connections")
	require.NotContains(t, s.Describe(), "hunter2")
	require.True(t, strings.HasPrefix(s.Describe(), "postgres://floe@127.0.0.1:"), s.Describe())
	require.Empty(t, s.Path())
	require.Equal(t, store.DriverPostgres, s.Driver())
	require.NoError(t, s.Close())

	for _, tc := range []struct {
		name string
		cfg  store.Config
		want string
	}{
		{"no such database", store.Config{Driver: store.DriverPostgres, DSN: withPassword[:strings.LastIndex(withPassword, "/")] + "/nope?sslmode=disable", Password: "s3cret"},
			`database "nope" does not exist`},
		{"unparseable", store.Config{Driver: store.DriverPostgres, DSN: "postgres://floe:hunter2@db:notaport/floe"}, "not a valid connection string"},
		{"no dsn", store.Config{Driver: store.DriverPostgres}, "needs a dsn"},
		{"path with postgres", store.Config{Driver: store.DriverPostgres, DSN: withPassword, Path: "/tmp/x.db"}, "a path is for the sqlite driver"},
		{"dsn with sqlite", store.Config{Driver: store.DriverSQLite, DSN: withPassword, Path: "/tmp/x.db"}, "a dsn is for the postgres driver"},
		{"unknown driver", store.Config{Driver: "mysql"}, `unknown driver "mysql"`},
	} {
		_, err := store.OpenConfig(t.Context(), tc.cfg)
		require.ErrorContains(t, err, tc.want, tc.name)
		require.NotContains(t, err.Error(), "hunter2", tc.name)
		require.NotContains(t, err.Error(), "s3cret", tc.name)
	}
}
