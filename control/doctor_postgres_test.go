package control_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/pgtest"
)

// TestDoctorPostgresState checks a state store in PostgreSQL: the check
// connects and reads the schema version, and neither its target nor its
// error shows the password of the DSN or of FLOE_STATE_PASSWORD.
func TestDoctorPostgresState(t *testing.T) {
	pg := pgtest.Start(t)
	// The test server trusts every local connection: the passwords only
	// have to stay out of the output.
	withPassword := func(dsn string) string { return strings.Replace(dsn, "floe@", "floe:hunter2@", 1) }
	good := withPassword(pg.NewDatabase(t))
	missing := withPassword(pg.DSN("nope"))
	for _, tc := range []struct {
		name   string
		dsn    string
		ok     bool
		detail string
		errMsg string
	}{
		{"current schema", good, true, "schema version " + strconv.Itoa(store.SchemaVersion()) + " (current)", ""},
		{"again, nothing to migrate", good, true, "(current)", ""},
		{"no such database", missing, false, "", `database "nope" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := doctorConfig(t, "")
			cfg.State = config.StateConfig{Driver: config.StatePostgres, DSN: tc.dsn, Password: "s3cret"}
			checks := control.Doctor(t.Context(), cfg, control.DoctorOptions{Timeout: 20 * time.Second})
			var c control.Check
			for _, ch := range checks {
				if ch.Name == control.CheckStateStore {
					c = ch
				}
			}
			require.Equal(t, control.CheckStateStore, c.Name)
			require.Equal(t, tc.ok, c.OK, c.Error)
			require.Contains(t, c.Detail, tc.detail)
			require.Contains(t, c.Error, tc.errMsg)
			require.Contains(t, c.Target, "postgres")
			require.Contains(t, c.Target, "127.0.0.1")
			out, err := json.Marshal(checks)
			require.NoError(t, err)
			require.NotContains(t, string(out), "hunter2")
			require.NotContains(t, string(out), "s3cret")
		})
	}
}
