package spark

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is how floe reaches one Spark Connect server.
type Config struct {
	// Name is the engine's name in floe.yaml (the key under engines).
	Name string
	// Remote is the Spark Connect connection string,
	// sc://host[:port][/;param=value;…] (port 15002 by default). The
	// parameters are Spark Connect's: user_id (default "floe"),
	// user_agent, use_ssl (true or false), token; any other becomes a
	// header sent with every request. A token in Remote is allowed but
	// Token wins; neither is ever printed.
	Remote string
	// Token is the bearer token (floe reads it from
	// FLOE_ENGINE__<NAME>__TOKEN). A token implies TLS, as Spark Connect's
	// connection strings specify.
	Token string
	// Timeout bounds each statement; when it passes, the statement is
	// interrupted as if ctx had ended. Zero: no bound but ctx.
	Timeout time.Duration
	// Now is the clock the reports' durations are measured with.
	// Default: time.Now.
	Now func() time.Time
	// TLS is the client TLS configuration when TLS is used (a token or
	// use_ssl=true): a private CA's pool in RootCAs, say. Default: the
	// system roots.
	TLS *tls.Config
}

// String prints the config with its secrets redacted.
func (c Config) String() string {
	tok := ""
	if c.Token != "" {
		tok = " token=REDACTED"
	}
	return fmt.Sprintf("spark.Config{name=%s remote=%s%s timeout=%s}", c.Name, redactRemote(c.Remote), tok, c.Timeout)
}

// GoString is String, so that %#v does not print the token either.
func (c Config) GoString() string { return c.String() }

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("spark engine: name is empty"))
	}
	if _, err := parseRemote(c.Remote); err != nil {
		errs = append(errs, fmt.Errorf("spark engine %q: remote: %w", c.Name, err))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("spark engine %q: timeout must be >= 0, got %s", c.Name, c.Timeout))
	}
	if strings.ContainsAny(c.Token, "\x00\r\n") {
		errs = append(errs, fmt.Errorf("spark engine %q: token contains a control character", c.Name))
	}
	return errors.Join(errs...)
}

// remote is a parsed connection string.
type remote struct {
	host      string
	port      int
	user      string
	userAgent string
	token     string
	useSSL    bool
	headers   map[string]string
}

// parseRemote parses a Spark Connect connection string. Its errors never
// quote a parameter's value, so a token in the string is never printed.
func parseRemote(s string) (remote, error) {
	r := remote{port: 15002, user: "floe", headers: map[string]string{}}
	rest, ok := strings.CutPrefix(s, "sc://")
	if !ok {
		return r, errors.New("must start with sc://")
	}
	hostport, params, _ := strings.Cut(rest, "/")
	if hostport == "" {
		return r, errors.New("host is empty")
	}
	r.host = hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		port, err := strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return r, fmt.Errorf("port %q is not a port number", p)
		}
		r.host, r.port = h, port
	} else if strings.Contains(hostport, ":") && !strings.HasPrefix(hostport, "[") {
		return r, fmt.Errorf("host %q: %w", hostport, err)
	}
	r.host = strings.Trim(r.host, "[]")
	if r.host == "" || strings.ContainsAny(r.host, "@/?#;= ") {
		return r, fmt.Errorf("host %q is not a host name", r.host)
	}
	if params == "" {
		return r, nil
	}
	if !strings.HasPrefix(params, ";") {
		return r, errors.New("parameters must follow the host as /;name=value;…")
	}
	for _, p := range strings.Split(params[1:], ";") {
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return r, fmt.Errorf("parameter %q has no name=value form", redactParam(p))
		}
		uv, err := url.PathUnescape(v)
		if err != nil {
			return r, fmt.Errorf("parameter %s: bad escape", k)
		}
		switch k {
		case "token":
			r.token = uv
		case "user_id":
			r.user = uv
		case "user_agent":
			r.userAgent = uv
		case "session_id":
			// The client picks its own session id per engine.
		case "use_ssl":
			b, err := strconv.ParseBool(uv)
			if err != nil {
				return r, fmt.Errorf("use_ssl %q is not true or false", uv)
			}
			r.useSSL = b
		default:
			r.headers[strings.ToLower(k)] = uv
		}
	}
	return r, nil
}

// redactRemote is s with a token parameter's value replaced.
func redactRemote(s string) string {
	head, params, ok := strings.Cut(s, "/;")
	if !ok {
		return s
	}
	parts := strings.Split(params, ";")
	for i, p := range parts {
		parts[i] = redactParam(p)
	}
	return head + "/;" + strings.Join(parts, ";")
}

func redactParam(p string) string {
	if k, _, ok := strings.Cut(p, "="); ok && strings.EqualFold(k, "token") {
		return k + "=REDACTED"
	}
	if strings.HasPrefix(strings.ToLower(p), "token") {
		return "token…REDACTED"
	}
	return p
}
