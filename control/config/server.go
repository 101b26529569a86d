package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// Token; FLOE_SERVER_READ_TOKEN. Never printed. Without it reads are
	// open on a loopback address and need Token beyond loopback (see
	// [ServerConfig.ReadsNeedToken]).
	ReadToken Secret `yaml:"read_token"`
	// PublicRead opens reads (the API's GETs, /metrics, /readyz, the
	// dashboard's pages) to every host that can reach a daemon listening
	// beyond loopback; FLOE_SERVER_PUBLIC_READ. floe serve logs a warning
	// at start when it does. It cannot be set with ReadToken. Default:
	// false.
	PublicRead bool `yaml:"public_read"`
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
	// UnreachableAfter is how long a catalog may stay unlistable, or a
	// table's metadata unreadable, before the daemon's unreachable alert
	// fires, as a Go duration (see [ServerConfig.UnreachableAfterDuration]).
	// A blip shorter than this stays a log line. Default: 15m.
	UnreachableAfter string `yaml:"unreachable_after"`
	// RunLateAfter is how long after a scheduled table's run was due
	// (its cron schedule fired) the run may still not have started before
	// the daemon's late alert fires, as a Go duration (see
	// [ServerConfig.RunLateAfterDuration]). A table with a maintenance
	// window has until the end of the first window that opens once the
	// run is due, when that is later. Default: 1h.
	RunLateAfter string `yaml:"run_late_after"`
	// RunRetention is how long the daemon keeps the record of a run that
	// ended, as a duration ("90d", "2160h"; see
	// [ServerConfig.RunRetentionDuration]): its hourly prune deletes older
	// runs, except those a table's history needs whatever their age (its
	// last success, its failures in a row, the last run of each step; see
	// control.PruneRuns). Default: 90d; at least 7d, at most 3650d.
	RunRetention string `yaml:"run_retention"`
}

// Loopback reports whether Listen's host is a loopback address
// (127.0.0.0/8, ::1, localhost): only this machine can reach the daemon.
// An empty host, an unspecified address (0.0.0.0, ::), any other address
// and any other host name count as reachable from other hosts.
func (s ServerConfig) Loopback() bool {
	host, _, err := splitListen(s.Listen)
	return err == nil && isLoopback(host)
}

// ReadsNeedToken reports whether a read needs a token (ReadToken or
// Token): always when ReadToken is set; beyond loopback unless PublicRead
// opens reads; on loopback, never otherwise.
func (s ServerConfig) ReadsNeedToken() bool {
	return s.ReadToken != "" || (!s.Loopback() && !s.PublicRead)
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

// UnreachableAfterDuration is the parsed server.unreachable_after
// (validated when the configuration loads; its default if it does not
// parse).
func (s ServerConfig) UnreachableAfterDuration() time.Duration {
	return parseDurationOr(s.UnreachableAfter, DefaultServerUnreachableAfter)
}

// RunLateAfterDuration is the parsed server.run_late_after (validated when
// the configuration loads; its default if it does not parse).
func (s ServerConfig) RunLateAfterDuration() time.Duration {
	return parseDurationOr(s.RunLateAfter, DefaultServerRunLateAfter)
}

// RunRetentionDuration is the parsed server.run_retention (validated when
// the configuration loads; its default if it does not parse).
func (s ServerConfig) RunRetentionDuration() time.Duration {
	d, err := policy.ParseDuration(strings.TrimSpace(s.RunRetention))
	if err != nil {
		return DefaultServerRunRetention
	}
	return d
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
	DefaultServerUnreachableAfter  = 15 * time.Minute
	DefaultServerRunLateAfter      = time.Hour
	DefaultServerRunRetention      = 90 * 24 * time.Hour
)

// Bounds of server.run_retention: a week of runs at least, for floe runs
// and the dashboard to show; at most ten years.
const (
	MinServerRunRetention = 7 * 24 * time.Hour
	MaxServerRunRetention = 3650 * 24 * time.Hour
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
	if s.UnreachableAfter == "" {
		s.UnreachableAfter = DefaultServerUnreachableAfter.String()
	}
	if s.RunLateAfter == "" {
		s.RunLateAfter = DefaultServerRunLateAfter.String()
	}
	if strings.TrimSpace(s.RunRetention) == "" {
		s.RunRetention = policy.FormatDuration(DefaultServerRunRetention)
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
		{"unreachable_after", s.UnreachableAfter, "15m", time.Nanosecond, 7 * 24 * time.Hour},
		{"run_late_after", s.RunLateAfter, "1h", time.Nanosecond, 7 * 24 * time.Hour},
	} {
		if v, err := time.ParseDuration(strings.TrimSpace(d.v)); err != nil || v < d.min || v > d.max {
			low := "a positive duration"
			if d.min > time.Nanosecond {
				low = "a duration of at least " + d.min.String()
			}
			bad(key("server", d.name), "%q: want %s and at most %s, such as %s", d.v, low, policy.FormatDuration(d.max), d.example)
		}
	}
	if d, err := policy.ParseDuration(strings.TrimSpace(s.RunRetention)); err != nil {
		bad(key("server", "run_retention"), "%q: %v", s.RunRetention, err)
	} else if d < MinServerRunRetention || d > MaxServerRunRetention {
		bad(key("server", "run_retention"), "%s: want at least 7d and at most 3650d", s.RunRetention)
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
	if s.PublicRead && s.ReadToken != "" {
		bad(key("server", "public_read"), "true with server.read_token set: reads cannot be both open and need a token; unset one of them")
	}
}

// MinTokenBits and MinTokenChars are the least strength of server.token
// and server.read_token on an address other hosts can reach (see
// [TokenBits]): 32 random hexadecimal characters (openssl rand -hex 16)
// carry 128 bits.
const (
	MinTokenBits  = 128
	MinTokenChars = 32
)

// minTokenDistinct is the least number of different characters a token
// beyond loopback has: fewer is a pattern, not a random string.
const minTokenDistinct = 8

// TokenBits estimates a token's strength in bits from its shape: its
// length times log2 of the alphabet its character classes span (lower
// case 26, upper case 26, digits 10, anything else 33). A token of fewer
// than 8 different characters, or one short string repeated, is 0. It is
// an upper bound, not a measure: a word a person made up scores as high as
// a random string of its shape, so floe asks for a random token.
func TokenBits(token string) float64 {
	distinct := map[rune]bool{}
	var lower, upper, digit, other bool
	n := 0
	for _, r := range token {
		n++
		distinct[r] = true
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			other = true
		}
	}
	if len(distinct) < minTokenDistinct || repeated(token) {
		return 0
	}
	alphabet := 0
	for _, c := range []struct {
		in   bool
		size int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}} {
		if c.in {
			alphabet += c.size
		}
	}
	return float64(n) * math.Log2(float64(alphabet))
}

// repeated reports whether s is a shorter string repeated.
func repeated(s string) bool {
	for p := 1; p <= len(s)/2; p++ {
		if len(s)%p == 0 && strings.Repeat(s[:p], len(s)/p) == s {
			return true
		}
	}
	return false
}

// weakToken says why token is too weak for an address other hosts can
// reach, or "" when it is strong enough. It never quotes the token.
func weakToken(token string) string {
	n, bits := utf8.RuneCountInString(token), TokenBits(token)
	if n >= MinTokenChars && bits >= MinTokenBits {
		return ""
	}
	return fmt.Sprintf("too weak for an address other hosts can reach: length %d, about %.0f bits; want at least %d characters and %d bits, such as the 64 that openssl rand -hex 32 prints",
		n, bits, MinTokenChars, MinTokenBits)
}

// CheckServerListen refuses to serve on an address other hosts can reach
// (see [ServerConfig.Loopback]) without a strong server.token: anyone who
// can reach it could approve plans and start rewrites, and a short token
// falls to guessing. There, server.token and server.read_token need at
// least [MinTokenChars] characters and [MinTokenBits] bits ([TokenBits]).
// Every problem is reported at once, each naming its key and where it was
// set; a token is never quoted. floe serve calls it before it listens.
func (c *Config) CheckServerListen() error {
	host, _, err := splitListen(c.Server.Listen)
	if err != nil {
		return fmt.Errorf("%w: %s: server.listen: %q: %v", ErrInvalid, c.where("server", "listen"), c.Server.Listen, err)
	}
	if isLoopback(host) {
		return nil
	}
	if c.Server.Token == "" {
		return fmt.Errorf("%w: %s: server.listen: %s is reachable from other hosts and server.token is not set: set server.token (or FLOE_SERVER_TOKEN), or listen on 127.0.0.1",
			ErrInvalid, c.where("server", "listen"), c.Server.Listen)
	}
	var errs []error
	for _, k := range []struct {
		name string
		v    Secret
	}{{"token", c.Server.Token}, {"read_token", c.Server.ReadToken}} {
		if k.v == "" {
			continue
		}
		if why := weakToken(k.v.Reveal()); why != "" {
			errs = append(errs, fmt.Errorf("%s: server.%s: %s (server.listen %s)", c.where("server", k.name), k.name, why, c.Server.Listen))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
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
