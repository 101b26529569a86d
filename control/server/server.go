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
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// EnqueueFunc queues a run of one table by its policy, asked for by by,
// and returns the queued run at once; the daemon's run queue starts it
// when a run slot is free (server.max_concurrent_runs) and reports it to
// the [Metrics]. [control.Scheduler.Enqueue] is one.
type EnqueueFunc func(ctx context.Context, id lake.Ident, by string) (control.Run, error)

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
	// Enqueue queues a run of a table (POST
	// /api/v1/tables/{table}/optimize). Nil: that route answers 503.
	Enqueue EnqueueFunc
	// Changed is told of each table a commit was reported for (POST
	// /api/v1/tables/{table}/changed, and Iceberg commit reports posted to
	// /ingest/iceberg/…/metrics). Nil: that route answers 503 and commit
	// reports are only counted.
	Changed ChangedFunc
	// Checks are readiness checks besides the state store and the
	// catalogs, by name; /readyz fails when one returns an error.
	Checks map[string]func(ctx context.Context) error
	// Metrics are served on /metrics. Default: [NewMetrics].
	Metrics *Metrics
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Logger receives a line per failed request. Default: discard.
	Logger *slog.Logger
	// Service is the control plane's use cases: a table's health and last
	// success are its. Default: a service over Config, Store and Catalog.
	Service *control.Service
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
	// AuthFailures is how many wrong tokens one client address may send
	// (bearer tokens and sign-ins alike) before it must wait between
	// attempts. Default: 5.
	AuthFailures int
	// AuthBackoff is the first wait after AuthFailures wrong tokens; it
	// doubles with each further one, up to AuthBackoffMax. While it lasts
	// the address's attempts are answered 429 with Retry-After, unchecked.
	// Defaults: 1s and 15m.
	AuthBackoff, AuthBackoffMax time.Duration
	// ReportCacheSize is how many tables' report workloads (the costly
	// part of a table page and of GET …/report: every collected query of
	// the table read, ranked and replayed) are kept. Default: 32.
	ReportCacheSize int
	// ReportCacheMaxAge is how long a kept report workload is served when
	// nothing it depends on changed: queries' weights decay with the
	// clock. Default: 10m.
	ReportCacheMaxAge time.Duration
	// ReportComputations is how many report workloads are computed at
	// once; requests for others wait. Default: 2.
	ReportComputations int
	// TableIndexMaxAge is how old the table index (what GET
	// /api/v1/tables and the overview read: every table's health) may be
	// before a request starts measuring the lake again, in the background;
	// tables floe ran are measured again at the next request regardless.
	// Default: 1m.
	TableIndexMaxAge time.Duration
	// TableIndexWait is how long the first request after start waits for
	// the first measuring of the lake before it answers with the tables
	// measured so far (and says how many). Default: 10s.
	TableIndexWait time.Duration
	// TableIndexWorkers is how many tables the index measures at once.
	// Default: 4.
	TableIndexWorkers int
}

// Option defaults.
const (
	DefaultCheckTimeout = 5 * time.Second
	DefaultRecentRuns   = 10
	DefaultMaxBodyBytes = 1 << 20
	DefaultSessionTTL   = 12 * time.Hour

	DefaultAuthFailures   = 5
	DefaultAuthBackoff    = time.Second
	DefaultAuthBackoffMax = 15 * time.Minute

	DefaultReportCacheSize    = 32
	DefaultReportCacheMaxAge  = 10 * time.Minute
	DefaultReportComputations = 2

	DefaultTableIndexMaxAge  = time.Minute
	DefaultTableIndexWait    = 10 * time.Second
	DefaultTableIndexWorkers = 4
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
	// attempts slows down the guessing of tokens.
	attempts *attempts
	// readsNeedToken is server.ReadsNeedToken: reads need a token or a
	// session.
	readsNeedToken bool
	// workloads are the tables' report workloads, computed once per change.
	workloads *memo[control.ReportWorkload]
	// index is every table's summary, what the table views read.
	index *tableIndex
}

// New returns the daemon's HTTP handler (see the package documentation for
// the routes). ctx bounds the telemetry endpoints' normalization and
// storage of events and the table index's background measuring of the
// lake: pass the daemon's context. It returns an error when a required
// dependency is missing.
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
	defaultTo(&opts.CheckTimeout, DefaultCheckTimeout)
	defaultTo(&opts.RecentRuns, DefaultRecentRuns)
	defaultTo(&opts.MaxBodyBytes, DefaultMaxBodyBytes)
	defaultTo(&opts.SessionTTL, DefaultSessionTTL)
	defaultTo(&opts.AuthFailures, DefaultAuthFailures)
	defaultTo(&opts.AuthBackoff, DefaultAuthBackoff)
	defaultTo(&opts.AuthBackoffMax, DefaultAuthBackoffMax)
	defaultTo(&opts.ReportCacheSize, DefaultReportCacheSize)
	defaultTo(&opts.ReportCacheMaxAge, DefaultReportCacheMaxAge)
	defaultTo(&opts.ReportComputations, DefaultReportComputations)
	defaultTo(&opts.TableIndexMaxAge, DefaultTableIndexMaxAge)
	defaultTo(&opts.TableIndexWait, DefaultTableIndexWait)
	defaultTo(&opts.TableIndexWorkers, DefaultTableIndexWorkers)
	if deps.Service == nil {
		svc, err := control.NewService(control.Deps{Config: deps.Config, Store: deps.Store, Catalog: deps.Catalog, Now: deps.Now, Logger: deps.Logger})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		deps.Service = svc
	}
	s := &server{deps: deps, opts: opts, log: deps.Logger, now: deps.Now, m: deps.Metrics, readsNeedToken: deps.Config.Server.ReadsNeedToken()}
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
	s.attempts = newAttempts(opts.AuthFailures, opts.AuthBackoff, opts.AuthBackoffMax, s.now)
	s.workloads = newMemo[control.ReportWorkload](opts.ReportComputations, opts.ReportCacheSize, opts.ReportCacheMaxAge, s.now)
	s.workloads.computed, s.workloads.hit = s.m.reportComputed, s.m.reportCacheHit
	// The index's refreshes outlive the request that starts them: they
	// run under ctx, the daemon's.
	s.index = newTableIndex(ctx, indexDeps{list: s.listIndex, measure: s.measureSummary, ranSince: deps.Store.TablesRunSince,
		now: s.now, maxAge: opts.TableIndexMaxAge, wait: opts.TableIndexWait, workers: opts.TableIndexWorkers})
	if sc := deps.Config.Server; sc.PublicRead && !sc.Loopback() {
		s.log.Warn("reads are open to every host that can reach the daemon: server.public_read is true; writes still need server.token",
			"listen", sc.Listen)
	}
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
	mux.HandleFunc("POST /api/v1/tables/{table}/resume", s.api(s.resume))
	mux.HandleFunc("POST /api/v1/tables/{table}/changed", s.api(s.changed))
	mux.HandleFunc("GET /api/v1/holds", s.api(s.listHolds))
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
		opts := ingest.ServeOptions{Endpoint: ep.endpoint, Normalizer: norm, Logger: s.log,
			Stored: func(source string) { s.m.AddEvents(source, 1) }}
		if deps.Changed != nil {
			opts.Commit = s.committed
		}
		h, err := ingest.Handler(ctx, deps.Store, opts)
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

// defaultTo sets *v to def when it is not positive: an option's zero
// value means its default.
func defaultTo[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// auth lets a request through when it carries the token its kind needs:
// server.token for a state-changing one, either token for a read when
// reads need one ([config.ServerConfig.ReadsNeedToken]). /healthz needs
// none. A client address that sent too many wrong tokens is answered 429
// with Retry-After, its token unchecked.
func (s *server) auth(next http.Handler) http.Handler {
	cfg := s.deps.Config.Server
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reading := r.Method == http.MethodGet || r.Method == http.MethodHead
		if r.URL.Path == "/healthz" || (reading && !s.readsNeedToken) {
			next.ServeHTTP(w, r)
			return
		}
		cred, err := s.bearer(r)
		var tm *tooManyError
		if errors.As(err, &tm) {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter(tm.wait)))
			s.writeError(w, http.StatusTooManyRequests, err.Error())
			return
		}
		if (reading && cred != credNone) || cred == credWrite {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
		msg := "this request needs Authorization: Bearer <server.token>"
		switch {
		case !reading && cfg.Token == "":
			msg = "state-changing requests are refused: server.token (FLOE_SERVER_TOKEN) is not set"
		case reading && cfg.ReadToken != "":
			msg = "reads need Authorization: Bearer <server.read_token or server.token>"
		case reading:
			msg = "reads need Authorization: Bearer <server.token>: the daemon listens on " + cfg.Listen +
				", beyond loopback (server.read_token adds a read-only token; server.public_read: true opens reads)"
		}
		s.writeError(w, http.StatusUnauthorized, msg)
	})
}

// credential is what a request's bearer token proves.
type credential int

const (
	credNone credential = iota
	credRead
	credWrite
)

// tooManyError is a client address that sent too many wrong tokens and
// must wait before its next attempt.
type tooManyError struct{ wait time.Duration }

func (e *tooManyError) Error() string {
	return fmt.Sprintf("too many wrong tokens from this address: try again in %ds", retryAfter(e.wait))
}

// sentence is the error as the sign-in page says it.
func (e *tooManyError) sentence() string {
	return "T" + strings.TrimPrefix(e.Error(), "t") + "."
}

// bearer checks r's Authorization: Bearer token against server.token and
// server.read_token. Without the header it is credNone. A wrong token (or
// another scheme) counts against r's client address; once the address
// must wait, every attempt until then is a [*tooManyError], unchecked,
// so a guess made then tells nothing.
func (s *server) bearer(r *http.Request) (credential, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return credNone, nil
	}
	client := clientOf(r)
	if wait := s.attempts.wait(client); wait > 0 {
		return credNone, &tooManyError{wait: wait}
	}
	write, read := s.checkToken(h)
	switch {
	case write:
		s.attempts.succeeded(client)
		return credWrite, nil
	case read:
		s.attempts.succeeded(client)
		return credRead, nil
	}
	wait := s.attempts.failed(client)
	s.log.Warn("wrong bearer token", "client", client, "path", r.URL.Path, "retry_after_seconds", retryAfter(wait))
	return credNone, nil
}

// checkToken compares an Authorization header's bearer token with both
// tokens, always both, in constant time ([equalSecret]), so that the time
// does not say which one was near.
func (s *server) checkToken(header string) (write, read bool) {
	cfg := s.deps.Config.Server
	scheme, got, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		got = ""
	}
	got = strings.TrimSpace(got)
	return equalSecret(got, cfg.Token.Reveal()), equalSecret(got, cfg.ReadToken.Reveal())
}

// handlerFunc is an API handler: it returns the status and value to
// answer with, or an error that [statusOf] maps to a status.
type handlerFunc func(r *http.Request) (int, any, error)

// api turns h into an http.HandlerFunc answering JSON.
func (s *server) api(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		code, v, err := h(r)
		if pl, ok := v.(pagedList); ok && err == nil {
			setNextPage(w, r, pl.next)
			v = pl.items
		}
		if err != nil {
			code = statusOf(err)
			if code >= 500 {
				s.log.Error("api request", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
			}
			s.writeJSON(w, code, map[string]any{"error": err.Error()})
			return
		}
		s.writeJSON(w, code, v)
	}
}

// pagedList is an answer that is one page of a JSON array: api answers
// items and sets the next page's token in the headers ([setNextPage]).
type pagedList struct {
	items any
	next  string
}

// badRequestError is input the caller has to fix: 400.
type badRequestError struct{ err error }

func (e badRequestError) Error() string { return e.err.Error() }
func (e badRequestError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) error {
	return badRequestError{fmt.Errorf(format, args...)}
}

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
	case errors.Is(err, store.ErrStateConflict), errors.Is(err, control.ErrStalePlan), errors.Is(err, control.ErrBusy),
		errors.Is(err, control.ErrHalted), errors.Is(err, control.ErrNotHalted):
		return http.StatusConflict
	case errors.Is(err, control.ErrNoQueries):
		return http.StatusUnprocessableEntity
	case errors.Is(err, errUnavailable), errors.Is(err, control.ErrQueueStopped):
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
	// As the CLI's -o json: a predicate's >= reads as written (the
	// Content-Type and nosniff keep browsers from reading it as HTML).
	enc.SetEscapeHTML(false)
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
