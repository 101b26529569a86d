package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/ingest"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// RunFunc runs one table now, with trigger recorded on the run; the
// scheduler provides it (bounded by server.max_concurrent_runs). It is
// expected to report the run to the [Metrics] itself, for every trigger.
type RunFunc func(ctx context.Context, id lake.Ident, trigger control.Trigger) (control.Run, error)

// Deps is what the server needs from the daemon.
type Deps struct {
	// Config is floe's configuration: its catalogs, default catalog,
	// policies and server tokens. Required.
	Config *config.Config
	// Store is the state store. Required.
	Store *store.Store
	// Catalog opens (or returns the open) floe catalog called name.
	// Required.
	Catalog func(ctx context.Context, name string) (catalog.Catalog, error)
	// Tables lists the tables GET /api/v1/tables shows. Default: every
	// table of every configured catalog.
	Tables func(ctx context.Context) ([]lake.Ident, error)
	// Run runs a table now (POST /api/v1/tables/{table}/optimize). Nil:
	// that route answers 503.
	Run RunFunc
	// Checks are readiness checks besides the state store and the
	// catalogs, by name; /readyz fails when one returns an error.
	Checks map[string]func(ctx context.Context) error
	// Metrics are served on /metrics. Default: [NewMetrics].
	Metrics *Metrics
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Logger receives a line per failed request. Default: discard.
	Logger *slog.Logger
}

// Options tune the server. The zero value uses the defaults.
type Options struct {
	// CheckTimeout bounds each readiness check. Default: 5s.
	CheckTimeout time.Duration
	// RecentRuns is how many runs GET /api/v1/tables/{table} shows.
	// Default: 10.
	RecentRuns int
	// MaxBodyBytes bounds a JSON request body or a dashboard form.
	// Default: 1 MiB.
	MaxBodyBytes int64
	// SessionTTL is how long a dashboard sign-in lasts. Default: 12h.
	SessionTTL time.Duration
}

// Option defaults.
const (
	DefaultCheckTimeout = 5 * time.Second
	DefaultRecentRuns   = 10
	DefaultMaxBodyBytes = 1 << 20
	DefaultSessionTTL   = 12 * time.Hour
)

type server struct {
	deps Deps
	opts Options
	log  *slog.Logger
	now  func() time.Time
	m    *Metrics
	// tmpl are the dashboard's pages; sessions its signed-in browsers.
	tmpl     *template.Template
	sessions *sessions
}

// New returns the daemon's HTTP handler (see the package documentation for
// the routes). ctx bounds the telemetry endpoints' normalization and
// storage of events: pass the daemon's context. It returns an error when a
// required dependency is missing.
func New(ctx context.Context, deps Deps, opts Options) (http.Handler, error) {
	var missing []string
	if deps.Config == nil {
		missing = append(missing, "Config")
	}
	if deps.Store == nil {
		missing = append(missing, "Store")
	}
	if deps.Catalog == nil {
		missing = append(missing, "Catalog")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("server: missing dependencies: %s", strings.Join(missing, ", "))
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = DefaultCheckTimeout
	}
	if opts.RecentRuns <= 0 {
		opts.RecentRuns = DefaultRecentRuns
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	s := &server{deps: deps, opts: opts, log: deps.Logger, now: deps.Now, m: deps.Metrics}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.m == nil {
		s.m = NewMetrics()
	}
	s.sessions = newSessions(opts.SessionTTL, s.now)
	var err error
	if s.tmpl, err = s.parseTemplates(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.metrics())

	mux.HandleFunc("GET /api/v1/tables", s.api(s.listTables))
	mux.HandleFunc("GET /api/v1/tables/{table}", s.api(s.getTable))
	mux.HandleFunc("GET /api/v1/tables/{table}/report", s.api(s.tableReport))
	mux.HandleFunc("POST /api/v1/tables/{table}/plans", s.api(s.proposePlan))
	mux.HandleFunc("POST /api/v1/tables/{table}/optimize", s.api(s.optimize))
	mux.HandleFunc("GET /api/v1/plans", s.api(s.listPlans))
	mux.HandleFunc("GET /api/v1/plans/{id}", s.api(s.getPlan))
	mux.HandleFunc("POST /api/v1/plans/{id}/approve", s.api(s.decide("approve")))
	mux.HandleFunc("POST /api/v1/plans/{id}/reject", s.api(s.decide("reject")))
	mux.HandleFunc("GET /api/v1/runs", s.api(s.listRuns))
	mux.HandleFunc("GET /api/v1/runs/{id}", s.api(s.getRun))
	mux.HandleFunc("GET /api/v1/leases", s.api(s.listLeases))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; see docs/api.md", r.Method, r.URL.Path))
	})

	norm := ingest.NewNormalizer(deps.Config, ingest.NewCatalogResolver(deps.Config, deps.Catalog))
	for _, ep := range []struct{ pattern, endpoint string }{
		{"/ingest/trino", ingest.EndpointTrino},
		{"/ingest/iceberg/", ingest.EndpointIceberg},
	} {
		h, err := ingest.Handler(ctx, deps.Store, ingest.ServeOptions{Endpoint: ep.endpoint, Normalizer: norm, Logger: s.log,
			Stored: func(source string) { s.m.AddEvents(source, 1) }})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		mux.Handle(ep.pattern, h)
	}
	// The dashboard authenticates by session and CSRF token (a browser
	// sends no bearer token); everything else goes through auth.
	root := http.NewServeMux()
	s.routeDashboard(root)
	root.Handle("/", s.auth(mux))
	return root, nil
}

// auth lets a request through when it carries the token its kind needs:
// server.token for a state-changing one, either token for a read when
// server.read_token is set. /healthz needs none.
func (s *server) auth(next http.Handler) http.Handler {
	write := s.deps.Config.Server.Token.Reveal()
	read := s.deps.Config.Server.ReadToken.Reveal()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reading := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case r.URL.Path == "/healthz":
		case reading && read == "":
		case reading && (tokenIs(r, read) || tokenIs(r, write)):
		case !reading && write != "" && tokenIs(r, write):
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
			msg := "this request needs Authorization: Bearer <server.token>"
			switch {
			case !reading && write == "":
				msg = "state-changing requests are refused: server.token (FLOE_SERVER_TOKEN) is not set"
			case reading:
				msg = "reads need Authorization: Bearer <server.read_token or server.token>"
			}
			s.writeError(w, http.StatusUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenIs reports whether r carries Authorization: Bearer want. The
// tokens are hashed first so that the comparison takes the same time
// whatever their lengths.
func tokenIs(r *http.Request, want string) bool {
	if want == "" {
		return false
	}
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return equalSecret(strings.TrimSpace(got), want)
}

// handlerFunc is an API handler: it returns the status and value to
// answer with, or an error that [statusOf] maps to a status.
type handlerFunc func(r *http.Request) (int, any, error)

// api turns h into an http.HandlerFunc answering JSON.
func (s *server) api(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		code, v, err := h(r)
		if err != nil {
			code = statusOf(err)
			if code >= 500 {
				s.log.Error("api request", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
			}
			body := map[string]any{"error": err.Error()}
			var re *runError
			if errors.As(err, &re) && re.run.ID != "" {
				body["run"] = re.run
			}
			s.writeJSON(w, code, body)
			return
		}
		s.writeJSON(w, code, v)
	}
}

// badRequestError is input the caller has to fix: 400.
type badRequestError struct{ err error }

func (e badRequestError) Error() string { return e.err.Error() }
func (e badRequestError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) error {
	return badRequestError{fmt.Errorf(format, args...)}
}

// runError is a run that was recorded and failed: the answer carries the
// run's record beside the error.
type runError struct {
	run control.Run
	err error
}

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// errUnavailable is a route whose dependency the daemon did not give.
var errUnavailable = errors.New("unavailable")

// statusOf is the one place that maps an error to its HTTP status.
func statusOf(err error) int {
	var bad badRequestError
	switch {
	case errors.As(err, &bad), errors.Is(err, control.ErrNothingToPlan):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrNotFound), errors.Is(err, lake.ErrNoSuchTable):
		return http.StatusNotFound
	case errors.Is(err, store.ErrStateConflict), errors.Is(err, control.ErrStalePlan), errors.Is(err, control.ErrBusy):
		return http.StatusConflict
	case errors.Is(err, control.ErrNoQueries):
		return http.StatusUnprocessableEntity
	case errors.Is(err, errUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, lake.ErrCatalogTimeout), errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// writeJSON answers v as JSON with code. The status is sent before the
// body: an encoding or write error can only cut the body short, so it is
// logged.
func (s *server) writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		s.log.Warn("write response; the client got a partial body", "status", code, "err", err)
	}
}

func (s *server) writeError(w http.ResponseWriter, code int, msg string) {
	s.writeJSON(w, code, map[string]string{"error": msg})
}

// decodeBody reads r's JSON body into v strictly; an empty body leaves v
// as it is.
func (s *server) decodeBody(r *http.Request, v any) error {
	if r.Body == nil || r.ContentLength == 0 {
		return nil
	}
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, s.opts.MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return badRequest("request body: %v", err)
	}
	if dec.More() {
		return badRequest("request body: want one JSON object")
	}
	return nil
}
