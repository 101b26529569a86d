package store

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pool sizes of a PostgreSQL store: a floe process runs a few statements
// at a time (the daemon's passes, the API), so a small pool is plenty and
// keeps replicas from exhausting the server's max_connections.
const (
	postgresMaxOpenConns = 10
	postgresMaxIdleConns = 4
	postgresConnMaxIdle  = 5 * time.Minute
)

func openPostgres(cfg Config) (*Store, error) {
	if cfg.DSN == "" {
		return nil, errors.New("open state store: the postgres driver needs a dsn")
	}
	if cfg.Path != "" {
		return nil, errors.New("open state store: a path is for the sqlite driver; postgres takes a dsn")
	}
	cc, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		// The parser's message quotes the DSN, redacting it on a best-effort
		// basis only: do not repeat it.
		return nil, fmt.Errorf("open state store: parse postgres dsn %s: not a valid connection string (a URL postgres://user@host:5432/db?sslmode=require, or key=value pairs)", RedactDSN(cfg.DSN))
	}
	if cfg.Password != "" {
		cc.Password = cfg.Password
	}
	db := stdlib.OpenDB(*cc)
	db.SetMaxOpenConns(postgresMaxOpenConns)
	db.SetMaxIdleConns(postgresMaxIdleConns)
	db.SetConnMaxIdleTime(postgresConnMaxIdle)
	s := newStore(db, postgresDialect, describePostgres(cc), "")
	s.secrets = nonEmpty(cc.Password, cfg.Password)
	return s, nil
}

// describePostgres is postgres://user@host:port/db, never the password.
func describePostgres(cc *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))), Path: "/" + cc.Database}
	if cc.User != "" {
		u.User = url.User(cc.User)
	}
	if strings.HasPrefix(cc.Host, "/") {
		// A Unix socket directory.
		u.Host = ""
		u.RawQuery = url.Values{"host": {cc.Host}}.Encode()
	}
	return u.String()
}

// RedactDSN returns dsn with its password replaced by "xxxxx", for
// messages: a URL's userinfo password or query parameter password, or a
// key=value password. A DSN it cannot read comes back as "(unreadable
// dsn)", since its password cannot be found.
func RedactDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(unreadable dsn)"
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	fields := strings.Fields(dsn)
	for i, f := range fields {
		if k, _, ok := strings.Cut(f, "="); ok && strings.EqualFold(strings.TrimSpace(k), "password") {
			fields[i] = k + "=xxxxx"
		}
	}
	if strings.Contains(dsn, "'") {
		return "(unreadable dsn)" // a quoted value may hide a password with spaces
	}
	return strings.Join(fields, " ")
}

// redact returns err with every occurrence of the store's password in its
// message replaced, still matching what err matches under errors.Is and
// errors.As. Drivers do not put passwords in their errors on purpose; this
// makes sure of it.
func (s *Store) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, p := range s.secrets {
		if strings.Contains(msg, p) {
			return &redactedError{err: err, secrets: s.secrets}
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
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }
