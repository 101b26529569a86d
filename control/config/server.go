package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
)

// ServerConfig configures floe serve's HTTP server (floe.yaml server:).
type ServerConfig struct {
	// Listen is the address the daemon serves on, host:port. A host that is
	// not a loopback address needs a Token (see [Config.CheckServerListen]).
	// Default: 127.0.0.1:8080 ([DefaultServerListen]).
	Listen string `yaml:"listen"`
	// Token is the bearer token every state-changing request must present
	// (Authorization: Bearer <token>); FLOE_SERVER_TOKEN. Without it the
	// server refuses every state-changing request. Never printed.
	Token Secret `yaml:"token"`
	// ReadToken, when set, makes reads need a token too: ReadToken or
	// Token; FLOE_SERVER_READ_TOKEN. Default: reads are open. Never printed.
	ReadToken Secret `yaml:"read_token"`
	// MaxConcurrentRuns bounds the optimize runs the daemon runs at once,
	// at least 1. Default: 2.
	MaxConcurrentRuns int `yaml:"max_concurrent_runs"`
	// ShutdownGrace is how long the daemon lets running work finish on
	// shutdown before it cancels it, as a Go duration such as "2m" (see
	// [ServerConfig.ShutdownGraceDuration]). Default: 2m.
	ShutdownGrace string `yaml:"shutdown_grace"`
	// CheckInterval is how often the daemon checks the tables' health and
	// triggers, as a Go duration such as "5m" (see
	// [ServerConfig.CheckIntervalDuration]). Default: 5m.
	CheckInterval string `yaml:"check_interval"`
	// LeaseTTL is how long a replica's lease of a table lasts without
	// renewal, as a Go duration (see [ServerConfig.LeaseTTLDuration]); it
	// is renewed every quarter of that while the run lasts, and a replica
	// that dies loses its tables this long after its last renewal.
	// Default: 2m.
	LeaseTTL string `yaml:"lease_ttl"`
}

// LeaseTTLDuration is the parsed server.lease_ttl (validated when the
// configuration loads; its default if it does not parse).
func (s ServerConfig) LeaseTTLDuration() time.Duration {
	return parseDurationOr(s.LeaseTTL, DefaultServerLeaseTTL)
}

// ShutdownGraceDuration is the parsed server.shutdown_grace (validated when
// the configuration loads; its default if it does not parse).
func (s ServerConfig) ShutdownGraceDuration() time.Duration {
	return parseDurationOr(s.ShutdownGrace, DefaultServerShutdownGrace)
}

// CheckIntervalDuration is the parsed server.check_interval (validated when
// the configuration loads; its default if it does not parse).
func (s ServerConfig) CheckIntervalDuration() time.Duration {
	return parseDurationOr(s.CheckInterval, DefaultServerCheckInterval)
}

func parseDurationOr(s string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return d
}

// MaxServerConcurrentRuns is the most server.max_concurrent_runs may be:
// each run holds a rewrite's memory.
const MaxServerConcurrentRuns = 64

// Server defaults.
const (
	DefaultServerListen            = "127.0.0.1:8080"
	DefaultServerMaxConcurrentRuns = 2
	DefaultServerShutdownGrace     = 2 * time.Minute
	DefaultServerCheckInterval     = 5 * time.Minute
	DefaultServerLeaseTTL          = 2 * time.Minute
)

// Secret is a value that is never printed or logged: its String, GoString
// and text/JSON encodings are "****" when it is set. Compare it with
// [Secret.Reveal] in constant time (crypto/subtle).
type Secret string

const redacted = "****"

// String is "****" for a set secret, "" for an empty one.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the secret.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalText keeps encoders (JSON, YAML, slog) from printing the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reveal returns the secret's value, for the one place that needs it (the
// server's token check).
func (s Secret) Reveal() string { return string(s) }

// serverDefaults fills what server: leaves unset.
func (c *Config) serverDefaults() {
	s := &c.Server
	if s.Listen == "" {
		s.Listen = DefaultServerListen
	}
	if s.MaxConcurrentRuns == 0 && !c.hasKey("server", "max_concurrent_runs") {
		s.MaxConcurrentRuns = DefaultServerMaxConcurrentRuns
	}
	if s.ShutdownGrace == "" {
		s.ShutdownGrace = DefaultServerShutdownGrace.String()
	}
	if s.CheckInterval == "" {
		s.CheckInterval = DefaultServerCheckInterval.String()
	}
	if s.LeaseTTL == "" {
		s.LeaseTTL = DefaultServerLeaseTTL.String()
	}
}

// validateServer reports what is wrong with server:.
func (c *Config) validateServer(bad func(segs []string, format string, args ...any)) {
	s := c.Server
	key := func(segs ...string) []string { return segs }
	if _, _, err := splitListen(s.Listen); err != nil {
		bad(key("server", "listen"), "%q: %v", s.Listen, err)
	}
	if s.MaxConcurrentRuns < 1 || s.MaxConcurrentRuns > MaxServerConcurrentRuns {
		bad(key("server", "max_concurrent_runs"), "%d: want at least 1 and at most %d", s.MaxConcurrentRuns, MaxServerConcurrentRuns)
	}
	for _, d := range []struct {
		name, v, example string
		min, max         time.Duration
	}{
		{"shutdown_grace", s.ShutdownGrace, "2m", time.Nanosecond, 24 * time.Hour},
		{"check_interval", s.CheckInterval, "5m", time.Second, 24 * time.Hour},
		{"lease_ttl", s.LeaseTTL, "2m", time.Second, time.Hour},
	} {
		if v, err := time.ParseDuration(strings.TrimSpace(d.v)); err != nil || v < d.min || v > d.max {
			low := "a positive duration"
			if d.min > time.Nanosecond {
				low = "a duration of at least " + d.min.String()
			}
			bad(key("server", d.name), "%q: want %s and at most %s, such as %s", d.v, low, policy.FormatDuration(d.max), d.example)
		}
	}
	for _, k := range []struct {
		name string
		v    Secret
	}{{"token", s.Token}, {"read_token", s.ReadToken}} {
		if v := k.v.Reveal(); v != "" && (v != strings.TrimSpace(v) || strings.ContainsAny(v, " \t\r\n")) {
			// The value is not echoed: it is a secret.
			bad(key("server", k.name), "contains white space; a bearer token is one word")
		}
	}
	if s.ReadToken != "" && s.Token == "" {
		bad(key("server", "read_token"), "set without server.token: every state-changing request would be refused; set server.token (FLOE_SERVER_TOKEN) too")
	}
}

// CheckServerListen refuses to serve on an address other hosts can reach
// without server.token: anyone who can reach it could approve plans and
// start rewrites. floe serve calls it before it listens. An empty host, an
// unspecified address (0.0.0.0, ::) and a host name other than localhost
// count as reachable.
func (c *Config) CheckServerListen() error {
	host, _, err := splitListen(c.Server.Listen)
	if err != nil {
		return fmt.Errorf("%w: %s: server.listen: %q: %v", ErrInvalid, c.where("server", "listen"), c.Server.Listen, err)
	}
	if c.Server.Token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%w: %s: server.listen: %s is reachable from other hosts and server.token is not set: set server.token (or FLOE_SERVER_TOKEN), or listen on 127.0.0.1",
		ErrInvalid, c.where("server", "listen"), c.Server.Listen)
}

func splitListen(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("want host:port such as %s", DefaultServerListen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", "", fmt.Errorf("port %q: want 0 to 65535", port)
	}
	return host, port, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
