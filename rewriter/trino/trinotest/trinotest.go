// Package trinotest is an in-process fake of Trino's HTTP statement
// protocol, for testing clients of a Trino coordinator (the Trino engine of
// floe's rewriter) with the real trino-go-client.
//
// A [Server] is told, per test, which statements to expect and what to
// answer each with: rows (with columns), an update count, a failure with
// Trino's error fields, or a statement that never finishes until it is
// cancelled. It records every statement it receives, exactly as sent, and
// every DELETE (the protocol's cancellation). The protocol it speaks:
// POST /v1/statement answers QUEUED with a nextUri; GET on that nextUri
// answers the result page (columns, data, FINISHED) or FAILED with
// error{message, errorCode, errorName, errorType}; a slow statement's pages
// stay RUNNING, each with a new nextUri; DELETE on a nextUri or on
// /v1/query/<id> cancels the query. A statement nobody expected fails with
// SYNTAX_ERROR, so a test sees what it did not plan for.
package trinotest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Column is one result column: its name and Trino type ("bigint",
// "varchar", "double", "boolean").
type Column struct {
	Name string
	Type string
}

// Error is a failure as Trino reports it.
type Error struct {
	Message string
	Code    int
	Name    string
	Type    string
}

// Response is the fake's answer to one statement.
type Response struct {
	// Columns and Rows are the result. Values are JSON-encoded as given.
	Columns []Column
	Rows    [][]any
	// UpdateType and UpdateCount, when UpdateType is set, mark the
	// statement as an update, as Trino does for DDL and EXECUTE.
	UpdateType  string
	UpdateCount int64
	// Error, when set, fails the statement.
	Error *Error
	// Slow never finishes: every page is RUNNING until the query is
	// cancelled.
	Slow bool
}

// Statement is one statement received.
type Statement struct {
	SQL     string
	QueryID string
	// User is the X-Trino-User header.
	User string
	// Header holds every request header of the POST.
	Header http.Header
}

// Delete is one DELETE received.
type Delete struct {
	Path    string
	QueryID string
}

// Server is the fake coordinator.
type Server struct {
	// URL is the server's base URL, http:// or https://.
	URL string

	srv      *httptest.Server
	user     string
	password string

	mu         sync.Mutex
	expect     map[string]Response
	queries    map[string]*query
	statements []Statement
	deletes    []Delete
}

type query struct {
	id        string
	resp      Response
	cancelled chan struct{}
}

// Option configures a [Server].
type Option func(*Server)

// WithPassword makes the server require HTTP basic auth of user and
// password on every request, as a coordinator with password
// authentication does (the client sends it over https only; pair with
// [WithTLS]).
func WithPassword(user, password string) Option {
	return func(s *Server) { s.user, s.password = user, password }
}

// WithTLS serves https with a self-signed certificate; [Server.CertPEM]
// is the certificate to trust.
func WithTLS() Option { return func(s *Server) { s.srv = httptest.NewUnstartedServer(s) } }

// New starts a fake coordinator, closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{expect: map[string]Response{}, queries: map[string]*query{}}
	for _, o := range opts {
		o(s)
	}
	if s.srv != nil {
		s.srv.StartTLS()
	} else {
		s.srv = httptest.NewServer(s)
	}
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close cancels every query in flight and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	for _, q := range s.queries {
		q.cancel()
	}
	s.mu.Unlock()
	s.srv.Close()
}

// CertPEM is the TLS certificate of a [WithTLS] server, PEM-encoded.
func (s *Server) CertPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw}))
}

// DSN is a trino-go-client DSN for user at this server, with params (say
// "catalog=iceberg") appended; a TLS server's DSN trusts its certificate.
func (s *Server) DSN(user string, params ...string) string {
	u, _ := url.Parse(s.URL) // httptest URLs always parse
	u.User = url.User(user)
	q := url.Values{}
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		q.Set(k, v)
	}
	if u.Scheme == "https" {
		q.Set("SSLCert", s.CertPEM())
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Expect sets the answer to statement sql, matched exactly.
func (s *Server) Expect(sql string, r Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expect[sql] = r
}

// Statements are the statements received, in order.
func (s *Server) Statements() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.statements))
	for i, st := range s.statements {
		out[i] = st.SQL
	}
	return out
}

// Received are the statements received with their query ids and headers.
func (s *Server) Received() []Statement {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Statement(nil), s.statements...)
}

// Deletes are the DELETEs received, in order.
func (s *Server) Deletes() []Delete {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delete(nil), s.deletes...)
}

func (q *query) cancel() {
	select {
	case <-q.cancelled:
	default:
		close(q.cancelled)
	}
}

// slowPoll is how long a slow query's page is held, as a coordinator
// long-polls a running query.
const slowPoll = 20 * time.Millisecond

// ServeHTTP speaks the statement protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.password != "" {
		if u, p, ok := r.BasicAuth(); !ok || u != s.user || p != s.password {
			w.Header().Set("WWW-Authenticate", `Basic realm="Trino"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/statement":
		s.post(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/statement/executing/"):
		s.get(w, r)
	case r.Method == http.MethodDelete:
		s.delete(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	id := fmt.Sprintf("20260101_000000_%05d_trino", len(s.statements)+1)
	sql := string(body)
	resp, ok := s.expect[sql]
	if !ok {
		resp = Response{Error: &Error{Message: "trinotest: unexpected statement: " + sql, Code: 1, Name: "SYNTAX_ERROR", Type: "USER_ERROR"}}
	}
	s.statements = append(s.statements, Statement{SQL: sql, QueryID: id, User: r.Header.Get("X-Trino-User"), Header: r.Header.Clone()})
	s.queries[id] = &query{id: id, resp: resp, cancelled: make(chan struct{})}
	s.mu.Unlock()
	s.write(w, map[string]any{
		"id": id, "infoUri": s.URL + "/ui/query.html?" + id,
		"nextUri": s.pageURI(id, 1),
		"stats":   map[string]any{"state": "QUEUED"},
	})
}

func (s *Server) pageURI(id string, n int) string {
	return s.URL + "/v1/statement/executing/" + id + "/" + strconv.Itoa(n)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id, n, ok := pagePath(r.URL.Path)
	s.mu.Lock()
	q := s.queries[id]
	s.mu.Unlock()
	if !ok || q == nil {
		http.NotFound(w, r)
		return
	}
	page := map[string]any{"id": id, "infoUri": s.URL + "/ui/query.html?" + id}
	if q.resp.Slow {
		select {
		case <-q.cancelled:
		case <-r.Context().Done():
			return
		case <-time.After(slowPoll):
			page["nextUri"] = s.pageURI(id, n+1)
			page["stats"] = map[string]any{"state": "RUNNING"}
			s.write(w, page)
			return
		}
	}
	select {
	case <-q.cancelled:
		page["stats"] = map[string]any{"state": "FAILED"}
		page["error"] = map[string]any{"message": "Query was canceled", "errorCode": 3, "errorName": "USER_CANCELED", "errorType": "USER_ERROR"}
		s.write(w, page)
		return
	default:
	}
	if e := q.resp.Error; e != nil {
		page["stats"] = map[string]any{"state": "FAILED"}
		page["error"] = map[string]any{"message": e.Message, "errorCode": e.Code, "errorName": e.Name, "errorType": e.Type}
		s.write(w, page)
		return
	}
	page["stats"] = map[string]any{"state": "FINISHED"}
	if len(q.resp.Columns) > 0 {
		cols := make([]any, len(q.resp.Columns))
		for i, c := range q.resp.Columns {
			cols[i] = column(c)
		}
		page["columns"] = cols
		data := q.resp.Rows
		if data == nil {
			data = [][]any{}
		}
		page["data"] = data
	}
	if q.resp.UpdateType != "" {
		page["updateType"] = q.resp.UpdateType
		page["updateCount"] = q.resp.UpdateCount
	}
	s.write(w, page)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	var id string
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/query/"):
		id = strings.TrimPrefix(r.URL.Path, "/v1/query/")
	case strings.HasPrefix(r.URL.Path, "/v1/statement/executing/"):
		id, _, _ = pagePath(r.URL.Path)
	}
	s.mu.Lock()
	s.deletes = append(s.deletes, Delete{Path: r.URL.Path, QueryID: id})
	if q := s.queries[id]; q != nil {
		q.cancel()
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func pagePath(p string) (id string, n int, ok bool) {
	id, rest, ok := strings.Cut(strings.TrimPrefix(p, "/v1/statement/executing/"), "/")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest)
	return id, n, err == nil
}

func column(c Column) map[string]any {
	sig := map[string]any{"rawType": c.Type, "arguments": []any{}}
	if c.Type == "varchar" {
		sig["arguments"] = []any{map[string]any{"kind": "LONG", "value": 2147483647}}
	}
	return map[string]any{"name": c.Name, "type": c.Type, "typeSignature": sig}
}

func (s *Server) write(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // the client sees a cut-short body as its own error
}
