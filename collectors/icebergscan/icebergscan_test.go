package icebergscan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/floe-project/floe/expr"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/icebergscan"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

const fixtures = "../../testdata/logs/icebergscan"

var received = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type result struct {
	events []collectors.QueryEvent
	bad    []collectors.BadRecord
}

func parse(t testing.TB, p *icebergscan.Parser, name string, data []byte) result {
	t.Helper()
	var res result
	require.NoError(t, p.Parse(context.Background(), name, bytes.NewReader(data),
		func(e collectors.QueryEvent) error { res.events = append(res.events, e); return nil },
		func(b collectors.BadRecord) error { res.bad = append(res.bad, b); return nil }))
	return res
}

func fixedParser() *icebergscan.Parser {
	return &icebergscan.Parser{Now: func() time.Time { return received }}
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	require.NoError(t, err)
	return data
}

func pred(col, transform string, op expr.Op, vals ...expr.Value) *expr.Node {
	if vals == nil {
		vals = []expr.Value{}
	}
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "demo.sales.orders", Column: col, Transform: transform, Op: op, Values: vals}}
}

func masked(s string) expr.Value { return expr.Value{Kind: expr.KindUnknown, Text: s} }

func roles(ta collectors.TableAccess) map[string][]collectors.Role {
	m := map[string][]collectors.Role{}
	for _, c := range ta.Columns {
		if c.Evidence != collectors.EvidenceScanReport {
			panic("evidence " + c.Evidence)
		}
		m[c.Name] = c.Roles
	}
	return m
}

func TestReferenceReport(t *testing.T) {
	p := fixedParser()
	data := read(t, "scan_report.json")
	require.True(t, p.Detect("scan_report.json", data))
	res := parse(t, p, "scan_report.json", data)
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
	ev := res.events[0]
	require.Equal(t, "iceberg-scanreport", ev.Source)
	require.Equal(t, collectors.EngineIceberg, ev.Engine)
	require.Equal(t, "spark 3.5.3", ev.EngineVersion)
	require.Equal(t, received, ev.StartTime)
	require.Equal(t, collectors.StateUnknown, ev.State)
	require.Equal(t, "SELECT", ev.StatementType)
	require.Empty(t, ev.SQL)
	require.Len(t, ev.QueryID, 24)
	require.Equal(t, int64(73400320), ev.Metrics.BytesScanned)

	require.Len(t, ev.Tables, 1)
	ta := ev.Tables[0]
	require.Equal(t, "demo", ta.Catalog)
	require.Equal(t, "sales", ta.Namespace)
	require.Equal(t, "orders", ta.Name)
	require.True(t, ta.Direct)
	require.Equal(t, collectors.EvidenceScanReport, ta.Evidence)
	require.NotNil(t, ta.SnapshotID)
	require.Equal(t, int64(3053316373432432132), *ta.SnapshotID)
	require.Equal(t, &expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
		pred("order_date", "", expr.OpGtEq, masked("(date-30-days-ago)")),
		pred("customer_id", "", expr.OpEq, masked("(2-digit-int)")),
	}}, ta.Filter)
	require.Equal(t, map[string][]collectors.Role{
		"order_date":  {collectors.RoleFilter, collectors.RoleProjection},
		"customer_id": {collectors.RoleFilter, collectors.RoleProjection},
		"order_id":    {collectors.RoleProjection},
		"amount":      {collectors.RoleProjection},
	}, roles(ta))
	require.Equal(t, "order_date", ta.Columns[0].Name, "filter columns first")
	require.Equal(t, collectors.TableMetrics{
		BytesScanned: 73400320, ResultDataFiles: 3, SkippedDataFiles: 41,
		ScannedManifests: 2, SkippedManifests: 10, PlanningNanos: 2644235116,
	}, ta.Metrics)

	// The id hashes the body, not its formatting.
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, data))
	again := parse(t, fixedParser(), "x.ndjson", compact.Bytes())
	require.Len(t, again.events, 1)
	require.Equal(t, ev.QueryID, again.events[0].QueryID)
}

func TestNDJSON(t *testing.T) {
	p := fixedParser()
	res := parse(t, p, "scan_reports.ndjson", read(t, "scan_reports.ndjson"))
	require.Len(t, res.events, 4)
	require.Equal(t, int64(1), p.CommitReports())
	require.Len(t, res.bad, 3)
	require.Equal(t, []int{6, 7, 8}, []int{res.bad[0].Line, res.bad[1].Line, res.bad[2].Line})
	require.Contains(t, res.bad[1].Reason, `unknown report-type "metrics-v9"`)
	require.Contains(t, res.bad[2].Reason, "table-name")

	clicks := res.events[0].Tables[0]
	require.Equal(t, "demo.events.clicks", clicks.QualifiedName())
	at := func(col, tr string, op expr.Op, vals ...expr.Value) *expr.Node {
		n := pred(col, tr, op, vals...)
		n.Pred.Table = "demo.events.clicks"
		return n
	}
	require.Equal(t, &expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
		at("ts", "day", expr.OpGtEq, masked("(date-7-days-ago)")),
		at("tenant_id", "", expr.OpIn, masked("(2-digit-int)"), masked("(3-digit-int)")),
		{Kind: expr.NodeNot, Children: []*expr.Node{at("url", "", expr.OpLike, masked("(hash-27fa7cc0)"))}},
	}}, clicks.Filter)
	require.Equal(t, int64(1610612736), clicks.Metrics.BytesScanned, "OpenAPI spelling total-file-size-bytes")
	require.Equal(t, int64(85_000_000), clicks.Metrics.PlanningNanos)
	require.Equal(t, "flink 1.20.0", res.events[0].EngineVersion)

	nan := res.events[1].Tables[0]
	require.Equal(t, &expr.Node{Kind: expr.NodeOr, Children: []*expr.Node{
		at("referrer", "", expr.OpIsNull),
		{Kind: expr.NodeAnd, Children: []*expr.Node{
			at("country", "", expr.OpNotIn, masked("(hash-00ab12cd)"), masked("(hash-9f0e3d2c)")),
			{Kind: expr.NodeOpaque, Text: "not_nan(score)"},
		}},
	}}, nan.Filter)
	require.Equal(t, map[string][]collectors.Role{
		"referrer":  {collectors.RoleFilter, collectors.RoleProjection},
		"country":   {collectors.RoleFilter, collectors.RoleProjection},
		"score":     {collectors.RoleFilter, collectors.RoleProjection},
		"tenant_id": {collectors.RoleProjection},
	}, roles(nan))

	whole := res.events[2].Tables[0]
	require.Nil(t, whole.Filter, "filter true reads the whole table")
	require.Equal(t, map[string][]collectors.Role{"order_id": {collectors.RoleProjection}, "amount": {collectors.RoleProjection}}, roles(whole))

	env := res.events[3]
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 30, 500_000_000, time.UTC), env.StartTime)
	require.Equal(t, "lake", env.Tables[0].Catalog)
	require.Equal(t, "sales.eu", env.Tables[0].Namespace, "levels from the %1F-joined path")
	require.Equal(t, "orders", env.Tables[0].Name)

	seen := map[string]bool{}
	for _, e := range res.events {
		require.False(t, seen[e.QueryID])
		seen[e.QueryID] = true
	}
}

func body(filter string) string {
	return `{"report-type":"scan-report","table-name":"demo.sales.orders","snapshot-id":1,"filter":` + filter + `,"schema-id":0,"projected-field-ids":[],"projected-field-names":[],"metrics":{}}`
}

func TestFilterConversion(t *testing.T) {
	str := func(s string) expr.Value { return expr.Value{Kind: expr.KindString, Text: s} }
	num := func(s string) expr.Value { return expr.Value{Kind: expr.KindNumber, Text: s} }
	tests := []struct {
		name, filter string
		want         *expr.Node
	}{
		{"eq", `{"type":"eq","term":"a","value":"(2-digit-int)"}`, pred("a", "", expr.OpEq, masked("(2-digit-int)"))},
		{"not-eq number", `{"type":"not-eq","term":"a","value":5}`, pred("a", "", expr.OpNotEq, num("5"))},
		{"lt", `{"type":"lt","term":"a","value":"(date)"}`, pred("a", "", expr.OpLt, masked("(date)"))},
		{"lt-eq", `{"type":"lt-eq","term":"a","value":"x"}`, pred("a", "", expr.OpLtEq, str("x"))},
		{"gt", `{"type":"gt","term":"a","value":-1.5}`, pred("a", "", expr.OpGt, num("-1.5"))},
		{"not-null", `{"type":"not-null","term":"a"}`, pred("a", "", expr.OpIsNotNull)},
		{"starts-with plain", `{"type":"starts-with","term":"a","value":"abc"}`, pred("a", "", expr.OpLike, str("abc%"))},
		{"not-starts-with masked", `{"type":"not-starts-with","term":"a","value":"(hash-1a2b3c4d)"}`, pred("a", "", expr.OpNotLike, masked("(hash-1a2b3c4d)"))},
		{"bucket transform", `{"type":"eq","term":{"type":"transform","transform":"bucket[16]","term":{"type":"reference","term":"id"}},"value":"(1-digit-int)"}`, pred("id", "bucket[16]", expr.OpEq, masked("(1-digit-int)"))},
		{"identity transform", `{"type":"eq","term":{"type":"transform","transform":"identity","term":"id"},"value":1}`, pred("id", "", expr.OpEq, num("1"))},
		{"nested field", `{"type":"eq","term":"loc.city","value":true}`, pred("loc.city", "", expr.OpEq, expr.Value{Kind: expr.KindBool, Text: "true"})},
		{"is-nan", `{"type":"is-nan","term":"f"}`, &expr.Node{Kind: expr.NodeOpaque, Text: "is_nan(f)"}},
		{"false", `false`, &expr.Node{Kind: expr.NodeOpaque, Text: "false"}},
		{"true string", `"true"`, nil},
		{"not true", `{"type":"not","child":true}`, &expr.Node{Kind: expr.NodeOpaque, Text: "false"}},
		{"or with true", `{"type":"or","left":{"type":"eq","term":"a","value":1},"right":true}`, nil},
		{"and with true", `{"type":"and","left":true,"right":{"type":"is-null","term":"a"}}`, pred("a", "", expr.OpIsNull)},
		{"unknown op", `{"type":"st-within","term":"geom","value":"(bounding-box)"}`, &expr.Node{Kind: expr.NodeOpaque, Text: `{"term":"geom","type":"st-within","value":"(bounding-box)"}`}},
		{"no term", `{"type":"eq","value":1}`, &expr.Node{Kind: expr.NodeOpaque, Text: `{"type":"eq","value":1}`}},
		{"not json object", `42`, &expr.Node{Kind: expr.NodeOpaque, Text: `42`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := parse(t, fixedParser(), "f", []byte(body(tt.filter)))
			require.Empty(t, res.bad)
			require.Len(t, res.events, 1)
			require.Equal(t, tt.want, res.events[0].Tables[0].Filter)
		})
	}

	t.Run("long or chain", func(t *testing.T) {
		// Iceberg nests a chain of ORs left-deep.
		leaf := `{"type":"eq","term":"a","value":"(1-digit-int)"}`
		f := strings.Repeat(`{"type":"or","left":`, 3000) + leaf + strings.Repeat(`,"right":`+leaf+`}`, 3000)
		res := parse(t, fixedParser(), "f", []byte(body(f)))
		require.Len(t, res.events, 1)
		got := res.events[0].Tables[0].Filter
		require.Equal(t, expr.NodeOr, got.Kind)
		require.Len(t, got.Children, 3001)
	})
	t.Run("nesting past the JSON limit", func(t *testing.T) {
		f := strings.Repeat(`{"type":"not","child":`, 12000) + `{"type":"is-null","term":"a"}` + strings.Repeat(`}`, 12000)
		res := parse(t, fixedParser(), "f", []byte(body(f)))
		require.Empty(t, res.events)
		require.Len(t, res.bad, 1)
	})
}

func TestMetadataTableScansSkipped(t *testing.T) {
	report := func(name string) string {
		return `{"report-type":"scan-report","table-name":"` + name + `","snapshot-id":1,"filter":{"type":"eq","term":"snapshot_id","value":"(19-digit-long)"},"schema-id":0,"projected-field-ids":[],"projected-field-names":[],"metrics":{}}`
	}
	p := fixedParser()
	data := report("demo.sales.orders.snapshots") + "\n" + report("demo.sales.orders.all_data_files") + "\n" + report("demo.sales.files") + "\n"
	res := parse(t, p, "f", []byte(data))
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1, "a 3-part name ending in files is a table")
	require.Equal(t, "files", res.events[0].Tables[0].Name)
	require.Equal(t, int64(2), p.MetadataTableReports())

	h := icebergscan.NewHandler(func(collectors.QueryEvent) error { t.Fatal("metadata scan passed on"); return nil })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/namespaces/sales/tables/orders/metrics", strings.NewReader(report("lake.sales.orders.files"))))
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, int64(1), h.MetadataTableReports())
}

func TestDetect(t *testing.T) {
	p := icebergscan.NewParser()
	tests := []struct {
		name, head string
		want       bool
	}{
		{"scan", `{"report-type":"scan-report"}`, true},
		{"commit only", `{"report-type":"commit-report"}`, true},
		{"array", `[{"report-type":"scan-report"}]`, true},
		{"text log", `ScanReport{tableName=demo.sales.orders, filter=ref(name="data") == "(hash-27fa7cc0)"}`, false},
		{"athena", `{"QueryExecutionId":"x"}`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, p.Detect("f", []byte(tt.head)))
		})
	}
}

func TestConformance(t *testing.T) {
	collectortest.Run(t, fixedParser(), filepath.Join(fixtures, "scan_report.json"), filepath.Join(fixtures, "scan_reports.ndjson"),
		filepath.Join(fixtures, "scan_report_bare.json"))
}

func TestDefaultNowIsCollectionTime(t *testing.T) {
	before := time.Now()
	res := parse(t, icebergscan.NewParser(), "f", []byte(body("true")))
	require.Len(t, res.events, 1)
	require.False(t, res.events[0].StartTime.Before(before.Truncate(time.Second)))
	require.Equal(t, time.UTC, res.events[0].StartTime.Location())
}

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

func TestHandler(t *testing.T) {
	s := &sink{}
	h := icebergscan.NewHandler(s.put)
	h.Now = func() time.Time { return received }
	h.MaxBodyBytes = 64 << 10
	srv := httptest.NewServer(h)
	defer srv.Close()

	report := string(read(t, "scan_report.json"))
	commit := strings.Split(string(read(t, "scan_reports.ndjson")), "\n")[1]
	post := func(path, body string) (int, map[string]map[string]any) {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var e map[string]map[string]any
		if len(raw) > 0 {
			require.NoError(t, json.Unmarshal(raw, &e), string(raw))
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, e
	}
	const path = "/v1/warehouse/namespaces/sales/tables/orders/metrics"

	t.Run("scan report", func(t *testing.T) {
		code, e := post(path, report)
		require.Equal(t, http.StatusNoContent, code)
		require.Nil(t, e)
		require.Len(t, s.events, 1)
		ev := s.events[0]
		require.Equal(t, received, ev.StartTime)
		require.Equal(t, "demo.sales.orders", ev.Tables[0].QualifiedName(), "catalog from table-name, rest from the path")
		require.Equal(t, int64(41), ev.Tables[0].Metrics.SkippedDataFiles)
		require.Equal(t, int64(1), h.ScanReports())
	})
	t.Run("multi-level namespace", func(t *testing.T) {
		code, _ := post("/v1/namespaces/a%1Fb/tables/t%20x/metrics", body("true"))
		require.Equal(t, http.StatusNoContent, code)
		ev := s.events[len(s.events)-1]
		require.Equal(t, "a.b", ev.Tables[0].Namespace)
		require.Equal(t, "t x", ev.Tables[0].Name)
		require.Empty(t, ev.Tables[0].Catalog)
	})
	t.Run("commit report", func(t *testing.T) {
		n := len(s.events)
		code, _ := post(path, commit)
		require.Equal(t, http.StatusNoContent, code)
		require.Len(t, s.events, n)
		require.Equal(t, int64(1), h.CommitReports())
	})
	t.Run("bad body", func(t *testing.T) {
		code, e := post(path, `{"report-type":"scan-report",`)
		require.Equal(t, http.StatusBadRequest, code)
		require.Equal(t, "BadRequestException", e["error"]["type"])
		require.EqualValues(t, 400, e["error"]["code"])
		require.Contains(t, e["error"]["message"], "decode report")
	})
	t.Run("too large", func(t *testing.T) {
		code, e := post(path, `{"report-type":"scan-report","pad":"`+strings.Repeat("x", 70<<10)+`"}`)
		require.Equal(t, http.StatusRequestEntityTooLarge, code)
		require.Contains(t, e["error"]["message"], "exceeds")
	})
	t.Run("wrong path", func(t *testing.T) {
		code, e := post("/v1/namespaces/sales/tables/orders", report)
		require.Equal(t, http.StatusNotFound, code)
		require.Equal(t, "NoSuchEndpointException", e["error"]["type"])
	})
	t.Run("wrong method", func(t *testing.T) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
		require.Equal(t, "POST", resp.Header.Get("Allow"))
	})
	t.Run("sink failure", func(t *testing.T) {
		s.mu.Lock()
		s.err = errors.New("state store is read-only")
		s.mu.Unlock()
		code, e := post(path, report)
		require.Equal(t, http.StatusInternalServerError, code)
		require.Contains(t, e["error"]["message"], "state store is read-only")
	})
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"scan_report.json", "scan_reports.ndjson", "scan_report_bare.json"} {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Bare and incomplete reports, and a bare one in an envelope.
	f.Add([]byte(`{"table-name":"a.b","snapshot-id":1,"filter":true,"schema-id":0,"projected-field-ids":[],"projected-field-names":[],"metrics":{}}`))
	f.Add([]byte(`{"report-type":"scan-report","table-name":"x"}` + "\n" + `{"table-name":"x","snapshot-id":null}`))
	f.Add([]byte(`{"path":"/v1/namespaces/n/tables/t/metrics","body":{"table-name":"c.n.t","snapshot-id":2,"filter":false,"schema-id":1,"projected-field-ids":[1],"projected-field-names":["a"],"metrics":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fixedParser()
		_ = p.Detect("f", data)
		err := p.Parse(context.Background(), "f", bytes.NewReader(data),
			func(e collectors.QueryEvent) error {
				if e.QueryID == "" || e.StartTime.IsZero() || len(e.Tables) != 1 {
					t.Fatalf("bad event %+v", e)
				}
				return nil
			},
			func(collectors.BadRecord) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		icebergscan.NewHandler(func(collectors.QueryEvent) error { return nil }).ServeHTTP(rec,
			httptest.NewRequest(http.MethodPost, "/v1/namespaces/n/tables/t/metrics", bytes.NewReader(data)))
		if rec.Code != http.StatusNoContent && rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d", rec.Code)
		}
	})
}
