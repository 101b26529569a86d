package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
)

// StoreConfig is the [store.Config] of the configuration's state: section.
func StoreConfig(st config.StateConfig) store.Config {
	if st.IsPostgres() {
		return store.Config{Driver: store.DriverPostgres, DSN: st.DSN, Password: st.Password.Reveal()}
	}
	return store.Config{Driver: store.DriverSQLite, Path: st.Path}
}

// OpenStore opens the state store the configuration names, as every verb
// does: a SQLite file is created with its directory on first use; a
// PostgreSQL database must exist, and its tables are created. Errors never
// hold the PostgreSQL password.
func OpenStore(ctx context.Context, st config.StateConfig) (*store.Store, error) {
	if !st.IsPostgres() {
		if err := os.MkdirAll(filepath.Dir(st.Path), 0o755); err != nil {
			return nil, fmt.Errorf("create state directory: %w", err)
		}
	}
	s, err := store.OpenConfig(ctx, StoreConfig(st))
	if err != nil {
		return nil, redactState(err, st)
	}
	return s, nil
}

// MissingLocalStore reports whether st is a SQLite state store whose file
// does not exist yet (opening it would create it).
func MissingLocalStore(st config.StateConfig) bool {
	if st.IsPostgres() || st.Path == "" || st.Path == ":memory:" {
		return false
	}
	_, err := os.Stat(st.Path)
	return errors.Is(err, fs.ErrNotExist)
}

// redactState keeps the state's passwords out of err's message, as a
// second guard behind the store's own.
func redactState(err error, st config.StateConfig) error {
	msg := err.Error()
	for _, p := range st.Secrets() {
		if p != "" && strings.Contains(msg, p) {
			return &redactedError{err: err, secrets: st.Secrets()}
		}
	}
	return err
}

type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, p := range e.secrets {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, "****")
		}
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }
