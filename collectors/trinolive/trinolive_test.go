package trinolive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/trinolive"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runtimeRow is one row of the fake's system.runtime.queries.
type runtimeRow struct {
	id, state, user, source, query string
	queued                         int64
	created, end                   time.Time
	errType, errCode               string
}

// fakeTrino serves Trino's client protocol (POST /v1/statement, then GET
// nextUri pages) for system.runtime.queries, filtering its rows by the
// state list and "end" watermark in the statement it receives.
type fakeTrino struct {
	t    *testing.T
	srv  *httptest.Server
	mu   sync.Mutex
	rows []runtimeRow
	// statements are the SQL texts received.
	statements []string
	users      []string
	pages      map[string][]map[string]any
	failWith   string
}

var endClause = regexp.MustCompile(`"end" > TIMESTAMP '([0-9: .-]+) UTC'`)

func newFakeTrino(t *testing.T, rows []runtimeRow) *fakeTrino {
	f := &fakeTrino{t: t, rows: rows, pages: map[string][]map[string]any{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTrino) dsn() string {
	return strings.Replace(f.srv.URL, "http://", "http://floe@", 1) + "?source=floe-test"
}

func varcharCol(name string) map[string]any {
	return map[string]any{"name": name, "type": "varchar", "typeSignature": map[string]any{
		"rawType": "varchar", "arguments": []any{map[string]any{"kind": "LONG", "value": 2147483647}}}}
}

func tsCol(name string) map[string]any {
	return map[string]any{"name": name, "type": "timestamp(3) with time zone", "typeSignature": map[string]any{
		"rawType": "timestamp with time zone", "arguments": []any{map[string]any{"kind": "LONG", "value": 3}}}}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
}

func (f *fakeTrino) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	require.NoError(f.t, err)
	w.Header().Set("Content-Type", "application/json")
	base := f.srv.URL
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/statement":
		stmt := string(body)
		f.statements = append(f.statements, stmt)
		f.users = append(f.users, r.Header.Get("X-Trino-User"))
		id := fmt.Sprintf("20240501_125130_%05d_fake1", len(f.statements))
		if f.failWith != "" {
			writeJSON(f.t, w, map[string]any{"id": id, "infoUri": base + "/ui/" + id, "stats": map[string]any{"state": "FAILED"},
				"error": map[string]any{"message": f.failWith, "errorCode": 4, "errorName": "PERMISSION_DENIED", "errorType": "USER_ERROR"}})
			return
		}
		if !strings.Contains(stmt, "FROM system.runtime.queries") || !strings.Contains(stmt, `state IN ('FINISHED', 'FAILED')`) {
			writeJSON(f.t, w, map[string]any{"id": id, "stats": map[string]any{"state": "FAILED"},
				"error": map[string]any{"message": "fake: unexpected statement " + stmt, "errorName": "SYNTAX_ERROR", "errorType": "USER_ERROR"}})
			return
		}
		var since time.Time
		if m := endClause.FindStringSubmatch(stmt); m != nil {
			since, err = time.Parse("2006-01-02 15:04:05.000", m[1])
			require.NoError(f.t, err)
		}
		var data [][]any
		for _, row := range f.rows {
			if row.state != "FINISHED" && row.state != "FAILED" {
				continue
			}
			if !since.IsZero() && !row.end.After(since) {
				continue
			}
			data = append(data, []any{row.id, row.state, nullable(row.user), nullable(row.source), row.query, row.queued,
				ts(row.created), ts(row.end), nullable(row.errType), nullable(row.errCode)})
		}
		// Rows come in "end" order, as the ORDER BY asks.
		for i := 1; i < len(data); i++ {
			for j := i; j > 0 && data[j][7].(string) < data[j-1][7].(string); j-- {
				data[j], data[j-1] = data[j-1], data[j]
			}
		}
		columns := []any{varcharCol("query_id"), varcharCol("state"), varcharCol("user"), varcharCol("source"), varcharCol("query"),
			map[string]any{"name": "queued_time_ms", "type": "bigint", "typeSignature": map[string]any{"rawType": "bigint", "arguments": []any{}}},
			tsCol("created"), tsCol("end"), varcharCol("error_type"), varcharCol("error_code")}
		half := len(data) / 2
		f.pages[id] = []map[string]any{
			{"id": id, "columns": columns, "data": data[:half], "stats": map[string]any{"state": "RUNNING"}},
			{"id": id, "columns": columns, "data": data[half:], "stats": map[string]any{"state": "FINISHED"}},
		}
		writeJSON(f.t, w, map[string]any{"id": id, "infoUri": base + "/ui/" + id,
			"nextUri": base + "/v1/statement/executing/" + id + "/0", "stats": map[string]any{"state": "QUEUED"}})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/statement/executing/"):
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/statement/executing/"), "/")
		pages := f.pages[parts[0]]
		n := 0
		if parts[1] == "1" {
			n = 1
		}
		page := map[string]any{}
		for k, v := range pages[n] {
			page[k] = v
		}
		if n == 0 {
			page["nextUri"] = base + "/v1/statement/executing/" + parts[0] + "/1"
		}
		writeJSON(f.t, w, page)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func writeJSON(t *testing.T, w http.ResponseWriter, v any) {
	require.NoError(t, json.NewEncoder(w).Encode(v))
}

var t0 = time.Date(2024, 5, 1, 12, 51, 30, 123_000_000, time.UTC)

func history() []runtimeRow {
	return []runtimeRow{
		{id: "q1", state: "FINISHED", user: "alice", source: "trino-cli", query: "SELECT order_id FROM lake.sales.orders WHERE customer_id = 42",
			queued: 4, created: t0, end: t0.Add(3377 * time.Millisecond)},
		{id: "q2", state: "FAILED", user: "bob", source: "superset", query: "SELECT * FROM lake.sales.nope",
			queued: 1, created: t0.Add(time.Second), end: t0.Add(1100 * time.Millisecond), errType: "USER_ERROR", errCode: "TABLE_NOT_FOUND"},
		{id: "q3", state: "FAILED", user: "carol", query: "INSERT INTO lake.sales.daily SELECT * FROM lake.sales.orders",
			created: t0.Add(2 * time.Second), end: t0.Add(9 * time.Second), errType: "USER_ERROR", errCode: "USER_CANCELED"},
		{id: "q4", state: "RUNNING", user: "dave", query: "SELECT count(*) FROM lake.events.clicks", created: t0.Add(3 * time.Second)},
		{id: "q5", state: "FINISHED", query: "EXECUTE stmt1 USING 42", created: t0.Add(4 * time.Second), end: t0.Add(5 * time.Second)},
	}
}

func TestQueryRuntime(t *testing.T) {
	fake := newFakeTrino(t, history())
	db, err := trinolive.Open(fake.dsn())
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()

	events, mark, err := trinolive.QueryRuntime(ctx, db, time.Time{})
	require.NoError(t, err)
	require.Len(t, events, 4, "the running query is left for later")
	ids := []string{}
	for _, e := range events {
		ids = append(ids, e.QueryID)
	}
	require.Equal(t, []string{"q2", "q1", "q5", "q3"}, ids, "oldest end first")
	require.Equal(t, t0.Add(9*time.Second), mark)
	require.NotContains(t, fake.statements[0], `"end" >`)
	require.Equal(t, "floe", fake.users[0])

	byID := map[string]collectors.QueryEvent{}
	for _, e := range events {
		byID[e.QueryID] = e
	}
	q1 := byID["q1"]
	require.Equal(t, "trino-runtime", q1.Source)
	require.Equal(t, collectors.EngineTrino, q1.Engine)
	require.Equal(t, "alice", q1.User)
	require.Equal(t, t0, q1.StartTime)
	require.Equal(t, time.UTC, q1.StartTime.Location())
	require.Equal(t, t0.Add(3377*time.Millisecond), q1.EndTime)
	require.Equal(t, collectors.StateSucceeded, q1.State)
	require.Equal(t, "SELECT", q1.StatementType)
	require.Equal(t, collectors.QueryMetrics{ElapsedMs: 3377, QueuedMs: 4}, q1.Metrics)
	require.Empty(t, q1.Error)

	require.Equal(t, collectors.StateFailed, byID["q2"].State)
	require.Equal(t, "USER_ERROR TABLE_NOT_FOUND", byID["q2"].Error)
	require.Equal(t, collectors.StateCancelled, byID["q3"].State)
	require.Equal(t, "INSERT", byID["q3"].StatementType)
	require.Empty(t, byID["q5"].User)
	require.True(t, byID["q5"].SQLTemplate)

	t.Run("watermark", func(t *testing.T) {
		events, next, err := trinolive.QueryRuntime(ctx, db, t0.Add(3377*time.Millisecond))
		require.NoError(t, err)
		require.Contains(t, fake.statements[len(fake.statements)-1], `"end" > TIMESTAMP '2024-05-01 12:51:33.500 UTC'`)
		require.Len(t, events, 2)
		require.Equal(t, "q5", events[0].QueryID)
		require.Equal(t, "q3", events[1].QueryID)
		require.Equal(t, t0.Add(9*time.Second), next)

		events, next, err = trinolive.QueryRuntime(ctx, db, next)
		require.NoError(t, err)
		require.Empty(t, events)
		require.Equal(t, t0.Add(9*time.Second), next, "nothing new keeps the watermark")
	})

	t.Run("server error", func(t *testing.T) {
		fake.mu.Lock()
		fake.failWith = "Access Denied: Cannot select from table system.runtime.queries"
		fake.mu.Unlock()
		defer func() { fake.mu.Lock(); fake.failWith = ""; fake.mu.Unlock() }()
		mark := t0
		events, next, err := trinolive.QueryRuntime(ctx, db, mark)
		require.ErrorContains(t, err, "query trino system.runtime.queries")
		require.ErrorContains(t, err, "Access Denied")
		require.Nil(t, events)
		require.Equal(t, mark, next)
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := trinolive.QueryRuntime(cctx, db, time.Time{})
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestOpenBadDSN(t *testing.T) {
	_, err := trinolive.Open("://nope")
	require.ErrorContains(t, err, "parse trino dsn")
}

// completedEvent is the reference QueryCompletedEvent as the HTTP event
// listener posts it: no Kafka wrapper, instants as decimal epoch seconds.
const completedEvent = `{
  "metadata":{"queryId":"20240501_125130_00042_q7k3m","transactionId":"0b7e1c1e-5b9e-4d7e-9d2a-2f0c1f3c7a11",
    "query":"SELECT o.order_id, o.amount FROM lake.sales.orders o WHERE o.order_date >= DATE '2024-04-01' AND o.customer_id = 42",
    "queryState":"FINISHED","uri":"http://coordinator:8080/v1/query/20240501_125130_00042_q7k3m",
    "tables":[{"catalog":"lake","schema":"sales","table":"orders","authorization":"etl","filters":[],
      "columns":[{"column":"order_id"},{"column":"amount"},{"column":"order_date"},{"column":"customer_id"}],
      "directlyReferenced":true,"referenceChain":[]}],
    "routines":[]},
  "statistics":{"cpuTime":1.212000000,"wallTime":3.377000000,"queuedTime":0.004000000,
    "peakUserMemoryBytes":5242880,"physicalInputBytes":73400320,"physicalInputRows":1250000,"totalBytes":73400320,"totalRows":1250000,"outputRows":17,"completedSplits":24,"complete":true,"cumulativeMemory":1.2E9,"failedCumulativeMemory":0.0,"stageGcStatistics":[],"cpuTimeDistribution":[],"operatorSummaries":[]},
  "context":{"user":"alice","originalUser":"alice","enabledRoles":[],"groups":[],"source":"trino-go-client","timezone":"UTC",
    "catalog":"lake","schema":"sales","clientTags":[],"clientCapabilities":[],"sessionProperties":{},"resourceEstimates":{},
    "serverAddress":"10.0.0.5","serverVersion":"478","environment":"prod","queryType":"SELECT","retryPolicy":"NONE"},
  "ioMetadata":{"inputs":[{"catalogName":"lake","schema":"sales","table":"orders","columns":["order_id","amount","customer_id"],
    "connectorInfo":{"snapshotId":3053316373432432132},"connectorMetrics":{"metrics":{}},"physicalInputBytes":73400320,"physicalInputRows":1250000}]},
  "warnings":[],
  "createTime":1714567890.123000000,"executionStartTime":1714567890.410000000,"endTime":1714567893.512000000}`

const createdEvent = `{"metadata":{"queryId":"20240501_125130_00043_q7k3m","query":"SELECT 1","queryState":"QUEUED","uri":"http://c/v1/query/x","tables":[],"routines":[]},
  "context":{"user":"alice","serverVersion":"478"},"createTime":1714567890.123000000}`

type sink struct {
	mu     sync.Mutex
	events []collectors.QueryEvent
	err    error
}

func (s *sink) put(e collectors.QueryEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.events = append(s.events, e)
	return nil
}

func TestListenerHandler(t *testing.T) {
	s := &sink{}
	h := trinolive.NewListenerHandler(s.put)
	h.MaxBodyBytes = 1 << 20
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/ingest/trino", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(raw)
	}

	t.Run("completed event", func(t *testing.T) {
		code, _ := post(completedEvent)
		require.Equal(t, http.StatusNoContent, code)
		require.Len(t, s.events, 1)
		ev := s.events[0]
		require.Equal(t, "trino-event", ev.Source)
		require.Equal(t, "20240501_125130_00042_q7k3m", ev.QueryID)
		require.Equal(t, time.Date(2024, 5, 1, 12, 51, 30, 123_000_000, time.UTC), ev.StartTime)
		require.Equal(t, collectors.StateSucceeded, ev.State)
		require.Equal(t, "lake", ev.DefaultCatalog)
		require.NotEmpty(t, ev.Tables)
		require.Equal(t, int64(1), h.Completed())
	})
	t.Run("created event is accepted and skipped", func(t *testing.T) {
		code, _ := post(createdEvent)
		require.Equal(t, http.StatusNoContent, code)
		require.Len(t, s.events, 1)
		require.Equal(t, int64(1), h.Skipped())
	})
	t.Run("bad body", func(t *testing.T) {
		code, body := post(`{"metadata":`)
		require.Equal(t, http.StatusBadRequest, code)
		var e map[string]string
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		require.Contains(t, e["error"], "invalid JSON")
		code, _ = post(`{"hello":"world"}`)
		require.Equal(t, http.StatusBadRequest, code)
		code, _ = post(" ")
		require.Equal(t, http.StatusBadRequest, code)
	})
	t.Run("too large", func(t *testing.T) {
		code, body := post(`{"pad":"` + strings.Repeat("x", 2<<20) + `"}`)
		require.Equal(t, http.StatusRequestEntityTooLarge, code)
		require.Contains(t, body, "exceeds")
	})
	t.Run("wrong method", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/ingest/trino")
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
	t.Run("sink failure asks for a retry", func(t *testing.T) {
		s.mu.Lock()
		s.err = errors.New("disk full")
		s.mu.Unlock()
		code, body := post(completedEvent)
		require.Equal(t, http.StatusInternalServerError, code)
		require.Contains(t, body, "disk full")
	})
}
