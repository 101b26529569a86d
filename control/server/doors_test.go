package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/internal/testlake"
)

// beyondYAML listens where other hosts can reach the daemon.
const beyondYAML = "server:\n  listen: 0.0.0.0:8080\n  token: " + writeToken + "\n"

// doFrom sends one request from the client address remote; token "" sends
// no Authorization header.
func (e *env) doFrom(remote, method, path, token string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequestWithContext(e.t.Context(), method, path, nil)
	req.RemoteAddr = remote
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// Beyond loopback reads need a token (the read token or the write token)
// unless server.public_read opens them; on loopback they stay open.
func TestReadsBeyondLoopbackNeedAToken(t *testing.T) {
	e := newEnv(t, envOptions{server: beyondYAML})
	for _, path := range []string{"/api/v1/tables", "/api/v1/tables/db.p", "/api/v1/plans", "/api/v1/runs", "/metrics", "/readyz"} {
		rec := e.do("GET", path, "", "")
		require.Equal(t, http.StatusUnauthorized, rec.Code, "%s: %s", path, rec.Body.String())
		require.Equal(t, `Bearer realm="floe"`, rec.Header().Get("WWW-Authenticate"))
		require.Contains(t, errorOf(t, rec), "beyond loopback", path)
		require.Contains(t, errorOf(t, rec), "server.public_read", path)
		require.Equal(t, http.StatusOK, e.do("GET", path, writeToken, "").Code, path)
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/healthz", "", "").Code, "/healthz is always open")

	// The dashboard sends a browser without a session to sign in.
	b := e.browser()
	for _, path := range []string{"/", "/tables/db.p", "/runs/x"} {
		rec := b.do("GET", path, nil)
		require.Equal(t, http.StatusSeeOther, rec.Code, path)
		require.Equal(t, "/signin?next="+url.QueryEscape(path), rec.Header().Get("Location"))
	}
	require.Equal(t, http.StatusSeeOther, b.signIn(writeToken).Code)
	require.Contains(t, textOf(b.page("/")), "local.db.p")

	// A read token reads, and only reads.
	e = newEnv(t, envOptions{server: beyondYAML + "  read_token: " + readToken + "\n"})
	require.Equal(t, http.StatusOK, e.do("GET", "/api/v1/tables", readToken, "").Code)
	require.Equal(t, http.StatusUnauthorized, e.do("POST", "/api/v1/tables/db.p/plans", readToken, "").Code)

	// server.public_read opens reads beyond loopback, says so at start,
	// and leaves writes shut.
	var logs bytes.Buffer
	e = newEnv(t, envOptions{server: beyondYAML + "  public_read: true\n", log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.Contains(t, logs.String(), "level=WARN")
	require.Contains(t, logs.String(), "reads are open to every host that can reach the daemon")
	require.Contains(t, logs.String(), "listen=0.0.0.0:8080")
	require.Equal(t, http.StatusOK, e.do("GET", "/api/v1/tables", "", "").Code)
	require.Equal(t, http.StatusOK, e.do("GET", "/metrics", "", "").Code)
	require.Equal(t, http.StatusOK, e.browser().do("GET", "/", nil).Code)
	require.Equal(t, http.StatusUnauthorized, e.do("POST", "/api/v1/tables/db.p/plans", "", "").Code)

	// On loopback nothing changes: reads are open, and no warning.
	logs.Reset()
	e = newEnv(t, envOptions{server: tokenYAML + "  public_read: true\n", log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.Equal(t, http.StatusOK, e.do("GET", "/api/v1/tables", "", "").Code)
	require.NotContains(t, logs.String(), "reads are open")
}

// Wrong tokens from one address are slowed: after AuthFailures of them the
// address waits, the wait doubling with each further one; while it waits
// every attempt is 429 with Retry-After, even with the right token, so a
// guess tells nothing. A right token clears the count; other addresses
// are not slowed; the sign-in form says so.
func TestWrongTokensAreSlowed(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML + "  read_token: " + readToken + "\n",
		opts: server.Options{AuthFailures: 3, AuthBackoff: time.Second, AuthBackoffMax: 4 * time.Second}})
	const mallory, alice = "203.0.113.9:40000", "198.51.100.7:5555"
	guess := func(remote, token string) *httptest.ResponseRecorder {
		t.Helper()
		return e.doFrom(remote, "GET", "/api/v1/plans", token)
	}
	limited := func(rec *httptest.ResponseRecorder, retry string) {
		t.Helper()
		require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
		require.Equal(t, retry, rec.Header().Get("Retry-After"))
		require.Contains(t, errorOf(t, rec), "too many wrong tokens from this address: try again in "+retry+"s")
	}

	for i := range 3 {
		require.Equal(t, http.StatusUnauthorized, guess(mallory, fmt.Sprintf("guess-%d", i)).Code, "the first wrong tokens are answered")
	}
	require.Equal(t, http.StatusUnauthorized, guess(mallory, "guess-3").Code, "the fourth is answered; the address waits after it")
	limited(guess(mallory, "guess-4"), "1")
	limited(guess(mallory, readToken), "1")
	limited(e.doFrom(mallory, "POST", "/api/v1/tables/db.p/plans", writeToken), "1")
	require.Equal(t, http.StatusUnauthorized, e.doFrom(mallory, "GET", "/api/v1/plans", "").Code, "no token is no guess: 401, not 429")
	require.Equal(t, http.StatusOK, guess(alice, readToken).Code, "another address is not slowed")
	require.Equal(t, http.StatusOK, guess("[2001:db8::1]:1", readToken).Code)

	// The wait doubles with each further wrong token, up to its maximum.
	for _, want := range []string{"2", "4", "4"} {
		e.now = e.now.Add(5 * time.Second)
		require.Equal(t, http.StatusUnauthorized, guess(mallory, "again").Code)
		limited(guess(mallory, "again"), want)
	}
	// After the wait the right token is let through and clears the count.
	e.now = e.now.Add(4 * time.Second)
	require.Equal(t, http.StatusOK, guess(mallory, readToken).Code)
	for range 3 {
		require.Equal(t, http.StatusUnauthorized, guess(mallory, "fresh").Code)
	}
	require.Equal(t, http.StatusUnauthorized, guess(mallory, "fresh").Code)
	limited(guess(mallory, "fresh"), "1")

	// An IPv6 client is counted by its /64: hopping addresses within it
	// does not help.
	for i := range 4 {
		require.Equal(t, http.StatusUnauthorized, guess(fmt.Sprintf("[2001:db8:1:2::%x]:1", i+1), "v6").Code)
	}
	limited(guess("[2001:db8:1:2:ffff::1]:1", readToken), "1")
	require.Equal(t, http.StatusOK, guess("[2001:db8:1:3::1]:1", readToken).Code, "another /64")

	// The sign-in form counts its wrong tokens with the API's and says
	// when to try again.
	e.now = e.now.Add(time.Hour)
	b := e.browser()
	signIn := func(token string) *httptest.ResponseRecorder {
		t.Helper()
		form := one(t, b.page("/signin"), "form", "id", "signin")
		req := httptest.NewRequestWithContext(t.Context(), "POST", "http://floe.test/signin",
			strings.NewReader(url.Values{"csrf": {inputValue(t, form, "csrf")}, "token": {token}, "next": {"/"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = "192.0.2.50:1234"
		for _, c := range b.jar.Cookies(req.URL) {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	for range 3 {
		require.Equal(t, http.StatusUnauthorized, signIn("nope").Code)
	}
	rec := signIn("nope")
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.Contains(t, textOf(one(t, parsePage(t, rec), "p", "id", "signin-error")), "Too many wrong tokens from this address: try again in 1s.")
	rec = signIn(writeToken)
	require.Equal(t, http.StatusTooManyRequests, rec.Code, "the right token waits too")
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.Contains(t, textOf(one(t, parsePage(t, rec), "p", "id", "signin-error")), "Too many wrong tokens from this address: try again in 1s.")
	require.Empty(t, sessionOf(rec), "no session")
	e.now = e.now.Add(time.Second)
	rec = signIn(writeToken)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.NotEmpty(t, sessionOf(rec))
}

func sessionOf(rec *httptest.ResponseRecorder) string {
	for _, c := range rec.Result().Cookies() {
		if c.Name == "floe_session" && c.MaxAge >= 0 {
			return c.Value
		}
	}
	return ""
}

// browserResolve resolves a Location header as a browser does (the WHATWG
// URL parser): it drops tabs and line breaks anywhere, trims leading and
// trailing control characters and spaces, and reads a backslash as a
// slash in an http URL.
func browserResolve(t testing.TB, base, loc string) *url.URL {
	t.Helper()
	loc = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, loc)
	loc = strings.TrimFunc(loc, func(r rune) bool { return r <= ' ' })
	b, err := url.Parse(base)
	require.NoError(t, err)
	u, err := url.Parse(loc)
	if err != nil {
		return nil
	}
	return b.ResolveReference(u)
}

// hostileNext are sign-in targets that lead off this server, as written
// or as a browser (or a proxy decoding once) reads them.
var hostileNext = []string{
	"/\t/evil.example", "/\n/evil.example", "/\r\n/evil.example", "/\t\t/evil.example/path", "\t//evil.example",
	"//evil.example", "///evil.example", "////evil.example", "//evil.example/tables/x", "//\tevil.example",
	`/\evil.example`, `\\evil.example`, `/\/evil.example`, `\/evil.example`, `/\\evil.example`,
	"http://evil.example", "https://evil.example/x", "HTTP://evil.example", "http:evil.example", "http:/evil.example",
	"javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<script>alert(1)</script>", "mailto:x@evil.example",
	"evil.example", "evil.example/x", "", " ", " //evil.example", " /\t/evil.example", "\x00//evil.example",
	"/\x00/evil.example", "/\x0b/evil.example", "/\x7f/evil.example", "/\u00a0/evil.example", "/\u3000/evil.example",
	"/\u2028/evil.example", "\uff0f\uff0fevil.example", "/\uff0fevil.example", "/\uff3cevil.example",
	"/%09/evil.example", "/%0a/evil.example", "/%0d%0aSet-Cookie:%20x=y", "/%00/evil.example",
	"/%2F/evil.example", "/%2f%2fevil.example", "/%2F%2Fevil.example", "%2F%2Fevil.example",
	"/%5Cevil.example", "/%5c%5cevil.example", "/%5C/evil.example",
	"/%252F%252Fevil.example", "/%25252F%25252Fevil.example", "/%2525252525252F%2F", "/%zz", "/%",
	"/x?\tnext=1", strings.Repeat("/a", 2000),
}

// Sign-in sends the browser back only to a path of this server: every
// hostile target becomes the overview, a safe one is kept.
func TestSigninNextStaysOnThisServer(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML})
	check := func(t *testing.T, next, want string) {
		t.Helper()
		b := e.browser()
		form := one(t, b.page("/signin?next="+url.QueryEscape(next)), "form", "id", "signin")
		require.Equal(t, want, inputValue(t, form, "next"), "the form's next")
		rec := b.do("POST", "/signin", url.Values{"csrf": {inputValue(t, form, "csrf")}, "token": {writeToken}, "next": {next}})
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		loc := rec.Header().Get("Location")
		require.Equal(t, want, loc)
		u := browserResolve(t, "http://floe.test/signin", loc)
		require.NotNil(t, u)
		require.Equal(t, "floe.test", u.Host, "%q goes to %s", next, u)
	}
	for _, next := range hostileNext {
		t.Run(fmt.Sprintf("%q", next), func(t *testing.T) { check(t, next, "/") })
	}
	for _, tc := range []struct{ next, want string }{
		{"/", "/"},
		{"/tables/local.db.p", "/tables/local.db.p"},
		{"/tables/db.p?x=1&y=%2F%2F", "/tables/db.p?x=1&y=%2F%2F"},
		{"/tables/a%20b", "/tables/a%20b"},
		{"/tables/local.db.p#plan-abc", "/tables/local.db.p#plan-abc"},
		{"/runs/", "/runs/"},
		{"/.//evil.example", "/evil.example"},
		{"/x/../..//evil.example", "/evil.example"},
		{"/@evil.example", "/@evil.example"},
	} {
		t.Run(fmt.Sprintf("%q", tc.next), func(t *testing.T) { check(t, tc.next, tc.want) })
	}
}

// closedPortURI is a REST catalog URI on a loopback port nothing listens
// on.
func closedPortURI(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// One catalog that is down and one whose file is not a database hide no
// healthy catalog's tables: the API lists them beside each dead catalog's
// error, and the dashboard shows a banner above them.
func TestDeadCatalogBesideHealthyOnes(t *testing.T) {
	broken := filepath.Join(t.TempDir(), "catalog.db")
	require.NoError(t, os.WriteFile(broken, bytes.Repeat([]byte("not a database "), 100), 0o644))
	extra := fmt.Sprintf("  dead:\n    type: rest\n    uri: %s\n    floe.timeout: 2s\n"+
		"  broken:\n    type: sql\n    sql.driver: sqlite\n    sql.dialect: sqlite\n    uri: 'file:%s'\n    warehouse: 'file://%s'\n",
		closedPortURI(t), broken, filepath.Dir(broken))
	e := newEnv(t, envOptions{extraCatalogs: extra})

	rec := e.do("GET", "/api/v1/tables", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	require.ElementsMatch(t, []string{"tables", "catalog_errors", "total"}, keys(raw), "one page, the last: no next_page_token")
	list := decode[server.TableList](t, rec)
	require.Len(t, list.Tables, 1)
	require.Equal(t, "local.db.p", list.Tables[0].Table)
	require.NotNil(t, list.Tables[0].Health, "the healthy catalog's table is measured")
	require.Len(t, list.CatalogErrors, 2)
	require.Equal(t, "broken", list.CatalogErrors[0].Catalog)
	require.Contains(t, list.CatalogErrors[0].Error, "broken")
	require.Equal(t, "dead", list.CatalogErrors[1].Catalog)
	require.Contains(t, list.CatalogErrors[1].Error, "dead")
	var errsRaw []map[string]any
	require.NoError(t, json.Unmarshal(raw["catalog_errors"], &errsRaw))
	require.ElementsMatch(t, []string{"catalog", "error"}, keys(errsRaw[0]))

	doc := e.browser().page("/")
	banner := one(t, doc, "div", "id", "catalog-errors")
	require.Contains(t, textOf(banner), "2 catalogs could not be listed")
	items := elements(banner, "li", "class", "catalog-error")
	require.Len(t, items, 2)
	require.Equal(t, "broken", attrOf(items[0], "data-catalog"))
	require.Equal(t, "dead", attrOf(items[1], "data-catalog"))
	require.Contains(t, textOf(items[1]), list.CatalogErrors[1].Error)
	rows := elements(one(t, doc, "table", "id", "tables"), "tr", "", "")
	require.Len(t, rows, 2, "a header and the healthy catalog's table")
	require.Equal(t, "local.db.p", textOf(elements(rows[1], "td", "", "")[0]))

	// A catalog's secrets stay out of its error, here and in /readyz.
	e = newEnv(t, envOptions{extraCatalogs: "  dead:\n    type: rest\n    uri: " + closedPortURI(t) + "/api?token=s3cr3t-in-uri\n" +
		"    credential: client:s3cr3t-credential\n    floe.timeout: 2s\n"})
	for _, path := range []string{"/api/v1/tables", "/readyz", "/"} {
		body := e.do("GET", path, "", "").Body.String()
		require.Contains(t, body, "dead", path)
		require.NotContains(t, body, "s3cr3t", path)
	}

	// With every catalog healthy there is no banner, and the list is [].
	e = newEnv(t, envOptions{})
	require.JSONEq(t, `[]`, string(decodeRaw(t, e.do("GET", "/api/v1/tables", "", ""))["catalog_errors"]))
	require.Empty(t, elements(e.browser().page("/"), "div", "id", "catalog-errors"))
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func decodeRaw(t testing.TB, rec *httptest.ResponseRecorder) map[string]json.RawMessage {
	t.Helper()
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw), rec.Body.String())
	return raw
}

// insertQuery stores one more query of the table filtering id = 42.
func (e *env) insertQuery(id string) {
	e.t.Helper()
	ts := e.now.Add(-time.Minute)
	filter := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: e.id.String(), Column: "id", Op: expr.OpEq,
		Values: []expr.Value{{Kind: expr.KindNumber, Text: "42"}}}}
	_, _, err := e.st.InsertEvents(context.Background(), []collectors.QueryEvent{{
		Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id, User: "bob",
		StartTime: ts, EndTime: ts.Add(time.Second), State: collectors.StateSucceeded,
		StatementType: "SELECT", SQL: "SELECT * FROM db.p WHERE id = 42",
		Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "db", Name: "p", Direct: true, Filter: filter, Evidence: collectors.EvidenceSQL}},
	}})
	require.NoError(e.t, err)
}

// A table page and its report are computed once per change: concurrent
// GETs share one computation, later ones are served from the cache, and a
// new query, a new snapshot or the cache's age each cost one more.
func TestReportComputedOncePerChange(t *testing.T) {
	e := newEnv(t, envOptions{opts: server.Options{ReportCacheMaxAge: time.Hour}})
	e.collected(200)
	counts := func() (computed, hits float64) {
		t.Helper()
		m := scrape(t, e)
		return m["floe_server_report_computations_total"], m["floe_server_report_cache_hits_total"]
	}
	get := func(n int) {
		t.Helper()
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			codes = make([]int, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				path := "/tables/db.p"
				if i%2 == 1 {
					path = "/api/v1/tables/db.p/report"
				}
				req := httptest.NewRequestWithContext(t.Context(), "GET", path, nil)
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, req)
				codes[i] = rec.Code
			})
		}
		close(start)
		wg.Wait()
		for i, c := range codes {
			require.Equal(t, http.StatusOK, c, "request %d", i)
		}
	}

	get(8)
	computed, hits := counts()
	require.Equal(t, 1.0, computed, "eight concurrent GETs, one computation")
	require.Equal(t, 7.0, hits)
	get(4)
	computed, _ = counts()
	require.Equal(t, 1.0, computed, "nothing changed: served from the cache")

	e.insertQuery("new-1")
	get(4)
	computed, _ = counts()
	require.Equal(t, 2.0, computed, "a new query changes the answer")
	rep := decode[map[string]any](t, e.do("GET", "/api/v1/tables/db.p/report", "", ""))
	require.InDelta(t, 201, rep["tables"].([]any)[0].(map[string]any)["queries"], 0, "the new query is counted")

	tbl, err := e.w.Catalog.LoadTable(t.Context(), []string{"db", "p"})
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	b.Field(0).(*array.Int64Builder).Append(1 << 40)
	b.Field(1).(*array.Int64Builder).Append(1)
	rec := b.NewRecordBatch()
	b.Release()
	testlake.Append(t, tbl, rec)
	rec.Release()
	get(4)
	computed, _ = counts()
	require.Equal(t, 3.0, computed, "a new snapshot changes the answer")

	e.now = e.now.Add(time.Hour)
	get(2)
	computed, _ = counts()
	require.Equal(t, 4.0, computed, "an answer older than ReportCacheMaxAge is computed again")
}
