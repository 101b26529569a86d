package trinofake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Query is one row of the fake's system.runtime.queries.
type Query struct {
	ID, State, User, SQL string
	Created, End         time.Time
}

// Server is a fake coordinator. Add queries with [Server.Add]; take it
// down with [Server.SetDown].
type Server struct {
	tb  testing.TB
	srv *httptest.Server

	mu      sync.Mutex
	rows    []Query
	pages   map[string][]any
	down    bool
	queries int
	// Statements are the SQL texts received, in order.
	statements []string
}

// New starts a fake coordinator, stopped when tb ends.
func New(tb testing.TB) *Server {
	s := &Server{tb: tb, pages: map[string][]any{}}
	s.srv = httptest.NewServer(s)
	tb.Cleanup(s.srv.Close)
	return s
}

// DSN is a trino-go-client DSN of the fake for user. It sends each
// request once: the client retries a 503 for two minutes by default, and
// a test of a coordinator that is down wants the failure at once.
func (s *Server) DSN(user string) string {
	return strings.Replace(s.srv.URL, "http://", "http://"+user+"@", 1) + "?request_retry_max_attempts=1"
}

// Add appends finished queries to system.runtime.queries.
func (s *Server) Add(q ...Query) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, q...)
}

// SetDown makes every request fail with 503 (a coordinator that went
// away) while down.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Statements are the statements received so far.
func (s *Server) Statements() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statements)
}

var endClause = regexp.MustCompile(`"end" > TIMESTAMP '([0-9: .-]+) UTC'`)

func column(name, typ string) map[string]any {
	sig := map[string]any{"rawType": typ, "arguments": []any{}}
	switch typ {
	case "varchar":
		sig["arguments"] = []any{map[string]any{"kind": "LONG", "value": 2147483647}}
	case "timestamp with time zone":
		typ = "timestamp(3) with time zone"
		sig["arguments"] = []any{map[string]any{"kind": "LONG", "value": 3}}
	}
	return map[string]any{"name": name, "type": typ, "typeSignature": sig}
}

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
}

func nullable(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// ServeHTTP answers the client protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.down {
		http.Error(w, "coordinator shutting down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/statement":
		stmt := string(body)
		s.statements = append(s.statements, stmt)
		s.queries++
		id := fmt.Sprintf("20240501_000000_%05d_fake", s.queries)
		if !strings.Contains(stmt, "FROM system.runtime.queries") {
			s.write(w, map[string]any{"id": id, "stats": map[string]any{"state": "FAILED"},
				"error": map[string]any{"message": "fake: unexpected statement " + stmt, "errorName": "SYNTAX_ERROR", "errorType": "USER_ERROR"}})
			return
		}
		var since time.Time
		if m := endClause.FindStringSubmatch(stmt); m != nil {
			since, err = time.Parse("2006-01-02 15:04:05.000", m[1])
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		rows := slices.Clone(s.rows)
		slices.SortStableFunc(rows, func(a, b Query) int { return a.End.Compare(b.End) })
		data := []any{}
		for _, q := range rows {
			if (q.State != "FINISHED" && q.State != "FAILED") || (!since.IsZero() && !q.End.Truncate(time.Millisecond).After(since)) {
				continue
			}
			data = append(data, []any{q.ID, q.State, nullable(q.User), nil, q.SQL, 0, stamp(q.Created), stamp(q.End), nil, nil})
		}
		columns := []any{column("query_id", "varchar"), column("state", "varchar"), column("user", "varchar"), column("source", "varchar"),
			column("query", "varchar"), column("queued_time_ms", "bigint"), column("created", "timestamp with time zone"),
			column("end", "timestamp with time zone"), column("error_type", "varchar"), column("error_code", "varchar")}
		s.pages[id] = []any{map[string]any{"id": id, "columns": columns, "data": data, "stats": map[string]any{"state": "FINISHED"}}}
		s.write(w, map[string]any{"id": id, "nextUri": "http://" + r.Host + "/v1/statement/executing/" + id + "/0",
			"stats": map[string]any{"state": "QUEUED"}})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/statement/executing/"):
		id, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/statement/executing/"), "/")
		pages, ok := s.pages[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		delete(s.pages, id)
		s.write(w, pages[0])
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) write(w http.ResponseWriter, v any) {
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.tb.Errorf("trinofake: write response: %v", err)
	}
}
