package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// addTable creates ident (namespace levels…, name) in e's warehouse with
// files appends of 100 rows.
func (e *env) addTable(ident table.Identifier, files int) lake.Ident {
	e.t.Helper()
	ctx := context.Background()
	ns := ident[:len(ident)-1]
	ok, err := e.w.Catalog.CheckNamespaceExists(ctx, ns)
	require.NoError(e.t, err)
	if !ok {
		require.NoError(e.t, e.w.Catalog.CreateNamespace(ctx, ns, nil))
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	tbl, err := e.w.Catalog.CreateTable(ctx, ident, schema)
	require.NoError(e.t, err)
	for i := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(e.t, tbl))
		for j := range 100 {
			b.Field(0).(*array.Int64Builder).Append(int64(j*files + i))
			b.Field(1).(*array.Int64Builder).Append(int64(j % 7))
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(e.t, tbl, rec)
		rec.Release()
	}
	return lake.Ident{Catalog: "local", Namespace: ns, Name: ident[len(ident)-1]}
}

// collectedFor stores n queries of id filtering id = 42.
func (e *env) collectedFor(id lake.Ident, n int) {
	e.t.Helper()
	var evs []collectors.QueryEvent
	for i := range n {
		ts := e.now.Add(-time.Duration(i+1) * time.Hour)
		filter := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: id.String(), Column: "id", Op: expr.OpEq,
			Values: []expr.Value{{Kind: expr.KindNumber, Text: "42"}}}}
		evs = append(evs, collectors.QueryEvent{
			Source: "trino-event", Engine: collectors.EngineTrino, QueryID: fmt.Sprintf("%s-q%d", id, i), User: "alice",
			StartTime: ts, EndTime: ts.Add(time.Second), State: collectors.StateSucceeded, StatementType: "SELECT",
			Metrics: collectors.QueryMetrics{ElapsedMs: 1000, BytesScanned: 1 << 20},
			Tables: []collectors.TableAccess{{Catalog: id.Catalog, Namespace: id.NamespaceString(), Name: id.Name, Direct: true,
				Filter: filter, Evidence: collectors.EvidenceSQL,
				Columns: []collectors.ColumnUse{{Name: "id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL}}}},
		})
	}
	_, _, err := e.st.InsertEvents(context.Background(), evs)
	require.NoError(e.t, err)
}

// get sends a real HTTP request to srv and returns the status and body.
func get(t *testing.T, c *http.Client, method, u, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer func() { require.NoError(t, resp.Body.Close()) }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestDottedNamesOverHTTP: tables whose names hold a dot, URL-special
// characters or a dotted namespace level are addressed by the API and the
// dashboard with their canonical names path-escaped, over real HTTP; the
// dashboard's links reach each table's own page; nothing is confused with
// the table whose dotted path reads the same (local.db.a.b).
func TestDottedNamesOverHTTP(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML, run: true})
	dotted := e.addTable(table.Identifier{"db", "a.b"}, 4)
	nested := e.addTable(table.Identifier{"db", "a", "b"}, 2)
	dottedNS := e.addTable(table.Identifier{"x.y", "t"}, 3)
	odd := e.addTable(table.Identifier{"db", `what? "#1"`}, 5)
	require.Equal(t, `local.db."a.b"`, dotted.String())
	require.Equal(t, `local.db."what? ""#1"""`, odd.String())
	files := map[string]int{dotted.String(): 4, nested.String(): 2, dottedNS.String(): 3, odd.String(): 5, e.id.String(): 8}
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	c := srv.Client()
	path := func(p string, id lake.Ident) string { return srv.URL + p + url.PathEscape(id.String()) }

	code, body := get(t, c, "GET", srv.URL+"/api/v1/tables", "", "")
	require.Equal(t, http.StatusOK, code, body)
	var list server.TableList
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.Empty(t, list.CatalogErrors)
	got := map[string]int{}
	for _, s := range list.Tables {
		require.Empty(t, s.Error, s.Table)
		got[s.Table] = s.Health.Metrics.DataFiles
	}
	require.Equal(t, files, got)

	for _, id := range []lake.Ident{dotted, nested, dottedNS, odd} {
		code, body := get(t, c, "GET", path("/api/v1/tables/", id), "", "")
		require.Equal(t, http.StatusOK, code, body)
		var d server.TableDetail
		require.NoError(t, json.Unmarshal([]byte(body), &d))
		require.Equal(t, id.String(), d.Table)
		require.Equal(t, id.String(), d.Health.Table)
		require.Equal(t, id.String(), d.Policy.Table)
		require.Equal(t, files[id.String()], d.Health.Metrics.DataFiles, id.String())
	}
	// The short form, written by hand with the quotes escaped.
	code, body = get(t, c, "GET", srv.URL+`/api/v1/tables/db.%22a.b%22`, "", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"table": "local.db.\"a.b\""`)
	// A bad name is a 400 that says why; a slash survives the route as
	// part of the name.
	code, body = get(t, c, "GET", srv.URL+`/api/v1/tables/db.%22a.b`, "", "")
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "unbalanced quote")
	code, body = get(t, c, "GET", srv.URL+"/api/v1/tables/"+url.PathEscape(`db."s/lash"`), "", "")
	require.Equal(t, http.StatusNotFound, code, body)
	require.Contains(t, body, "no such table: local.db.s/lash")

	// A plan and a run of the dotted table, through the API.
	e.collectedFor(dotted, 3)
	code, body = get(t, c, "POST", path("/api/v1/tables/", dotted)+"/plans", writeToken, `{"layouts":["sort(id)"],"force":true}`)
	require.Equal(t, http.StatusCreated, code, body)
	var prop server.ProposeResponse
	require.NoError(t, json.Unmarshal([]byte(body), &prop))
	require.Equal(t, dotted.String(), prop.Table)
	require.Equal(t, dotted.String(), prop.Plan.Table)
	code, body = get(t, c, "POST", path("/api/v1/tables/", dotted)+"/optimize", writeToken, "")
	require.Equal(t, http.StatusAccepted, code, body)
	var run control.Run
	require.NoError(t, json.Unmarshal([]byte(body), &run))
	require.Equal(t, dotted.String(), run.Table)
	run = e.waitRun(run.ID)
	require.Equal(t, control.StatusDone, run.Status, run.Error)
	for q, want := range map[string]int{`db."a.b"`: 1, "db.a.b": 0, `local.db."a.b"`: 1} {
		code, body = get(t, c, "GET", srv.URL+"/api/v1/runs?table="+url.QueryEscape(q), "", "")
		require.Equal(t, http.StatusOK, code, body)
		var runs []control.Run
		require.NoError(t, json.Unmarshal([]byte(body), &runs))
		require.Len(t, runs, want, q)
		code, body = get(t, c, "GET", srv.URL+"/api/v1/plans?table="+url.QueryEscape(q), "", "")
		require.Equal(t, http.StatusOK, code, body)
		var plans []control.Plan
		require.NoError(t, json.Unmarshal([]byte(body), &plans))
		require.Len(t, plans, want, q)
	}

	// The dashboard: follow each table's link from the overview.
	page := func(u string) *html.Node {
		t.Helper()
		code, body := get(t, c, "GET", u, "", "")
		require.Equal(t, http.StatusOK, code, body)
		doc, err := html.Parse(strings.NewReader(body))
		require.NoError(t, err)
		return doc
	}
	follow := func(from, href string) string {
		t.Helper()
		base, err := url.Parse(from)
		require.NoError(t, err)
		ref, err := url.Parse(href)
		require.NoError(t, err, href)
		return base.ResolveReference(ref).String()
	}
	overview := page(srv.URL + "/")
	rows := elements(one(t, overview, "table", "id", "tables"), "tr", "", "")
	require.Len(t, rows, 1+len(files))
	seen := map[string]bool{}
	var pending string
	for _, row := range rows[1:] {
		cells := elements(row, "td", "", "")
		name := textOf(cells[0])
		href := attrOf(one(t, cells[0], "a", "", ""), "href")
		doc := page(follow(srv.URL+"/", href))
		require.Equal(t, name, textOf(one(t, one(t, doc, "h1", "", ""), "code", "", "")), "the link of %s leads to its page", name)
		seen[name] = true
		if name == dotted.String() {
			pending = attrOf(one(t, cells[6], "a", "", ""), "href")
		}
	}
	require.Len(t, seen, len(files))
	// The pending plan's link reaches the plan's row on the table's page.
	require.NotEmpty(t, pending)
	u := follow(srv.URL+"/", pending)
	doc := page(u)
	frag, err := url.Parse(u)
	require.NoError(t, err)
	require.Equal(t, "plan-"+prop.Plan.ID, frag.Fragment)
	require.Contains(t, textOf(one(t, doc, "tr", "id", frag.Fragment)), "sort(id)")
	// The table page's hint is a command a shell passes back unchanged.
	require.Contains(t, textOf(page(path("/tables/", nested))), "floe plan local.db.a.b")
	require.Contains(t, textOf(page(path("/tables/", dottedNS))), `floe plan 'local."x.y".t'`)
	// The run's page links back to the dotted table.
	runPage := page(srv.URL + "/runs/" + url.PathEscape(run.ID))
	var back string
	for _, a := range elements(runPage, "a", "", "") {
		if textOf(a) == dotted.String() {
			back = attrOf(a, "href")
		}
	}
	require.NotEmpty(t, back, "the run page links to its table")
	doc = page(follow(srv.URL+"/runs/"+run.ID, back))
	require.Equal(t, dotted.String(), textOf(one(t, one(t, doc, "h1", "", ""), "code", "", "")))
	require.Contains(t, textOf(one(t, doc, "section", "id", "runs")), run.ID)

	// Metrics carry the canonical name as the table label.
	code, body = get(t, c, "GET", srv.URL+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `table="local.db.\"a.b\""`)
}
