package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
)

// browser sends requests to the handler the way a browser does: with the
// cookies it was given, following no redirect by itself.
type browser struct {
	t   testing.TB
	e   *env
	jar *cookiejar.Jar
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &browser{t: e.t, e: e, jar: jar}
}

// do sends method path, with form as the body when not nil.
func (b *browser) do(method, path string, form url.Values) *httptest.ResponseRecorder {
	b.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequestWithContext(b.t.Context(), method, "http://floe.test"+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range b.jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.e.h.ServeHTTP(rec, req)
	b.jar.SetCookies(req.URL, rec.Result().Cookies())
	return rec
}

// page GETs path, wants 200 and an HTML page, and parses it.
func (b *browser) page(path string) *html.Node {
	b.t.Helper()
	rec := b.do("GET", path, nil)
	require.Equal(b.t, http.StatusOK, rec.Code, rec.Body.String())
	return parsePage(b.t, rec)
}

func parsePage(t testing.TB, rec *httptest.ResponseRecorder) *html.Node {
	t.Helper()
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'")
	doc, err := html.Parse(strings.NewReader(rec.Body.String()))
	require.NoError(t, err)
	return doc
}

// signIn opens the sign-in form and posts token through it.
func (b *browser) signIn(token string) *httptest.ResponseRecorder {
	b.t.Helper()
	form := one(b.t, b.page("/signin"), "form", "id", "signin")
	return b.do("POST", "/signin", url.Values{"csrf": {inputValue(b.t, form, "csrf")}, "token": {token}, "next": {"/"}})
}

// elements are the elements under n named tag whose attribute key is val
// (any when key is "").
func elements(n *html.Node, tag, key, val string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag && (key == "" || attrOf(n, key) == val) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func one(t testing.TB, n *html.Node, tag, key, val string) *html.Node {
	t.Helper()
	els := elements(n, tag, key, val)
	require.Len(t, els, 1, "<%s %s=%q>", tag, key, val)
	return els[0]
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func inputValue(t testing.TB, form *html.Node, name string) string {
	t.Helper()
	return attrOf(one(t, form, "input", "name", name), "value")
}

// dashEnv is the server over the fixture table with queries, a proposed
// plan and one recorded run.
func dashEnv(t *testing.T, serverYAML string) (*env, control.Plan, control.Run) {
	t.Helper()
	e := newEnv(t, envOptions{server: serverYAML, run: true})
	e.collected(3)
	plan := e.proposed()
	return e, plan, e.optimize("db.p")
}

// The overview, table and run pages show what the API does.
func TestDashboardPages(t *testing.T) {
	e, plan, run := dashEnv(t, tokenYAML)
	tables := decode[server.TableList](t, e.do("GET", "/api/v1/tables", "", "")).Tables
	require.Len(t, tables, 1)
	health := string(tables[0].Health.Status)
	b := e.browser()

	t.Run("overview", func(t *testing.T) {
		doc := b.page("/")
		rows := elements(one(t, doc, "table", "id", "tables"), "tr", "", "")
		require.Len(t, rows, 2, "a header and the one table")
		cells := elements(rows[1], "td", "", "")
		require.Equal(t, "local.db.p", textOf(cells[0]))
		require.Equal(t, "/tables/local.db.p", attrOf(one(t, cells[0], "a", "", ""), "href"))
		require.Equal(t, health, textOf(cells[1]))
		// The table was written an hour before the server's clock, and
		// health counts that as its last compaction.
		require.InDelta(t, 3600, tables[0].Health.Metrics.LastCompactionAgeSec, 5)
		require.Equal(t, "1h0m0s ago", textOf(cells[3]), "freshness, to the minute")
		require.Equal(t, "/runs/"+run.ID, attrOf(one(t, cells[4], "a", "", ""), "href"), "last run")
		require.Contains(t, textOf(cells[4]), "done")
		require.Contains(t, textOf(cells[5]), "adaptive: when a trigger fires", "next run by the policy's mode")
		require.True(t, strings.HasPrefix(textOf(cells[6]), "1"), textOf(cells[6]))
		link := one(t, cells[6], "a", "", "")
		require.Equal(t, "/tables/local.db.p#plan-"+plan.ID, attrOf(link, "href"))
		require.Equal(t, "sort(id)", textOf(link))
		require.Contains(t, textOf(doc), "Sign in to approve and reject")
	})
	t.Run("table", func(t *testing.T) {
		doc := b.page("/tables/db.p")
		require.Equal(t, "local.db.p "+health, textOf(one(t, doc, "h1", "", "")))
		report := one(t, doc, "section", "id", "report")
		svgs := elements(report, "svg", "", "")
		require.GreaterOrEqual(t, len(svgs), 2, "the report's charts")
		for _, s := range svgs {
			require.Contains(t, attrOf(s, "class"), "chart")
			require.NotEmpty(t, elements(s, "title", "", ""), "every chart has a title")
		}
		row := one(t, doc, "tr", "id", "plan-"+plan.ID)
		require.Contains(t, textOf(row), "sort(id) proposed")
		require.Empty(t, elements(row, "form", "", ""), "no forms before signing in")
		require.Contains(t, textOf(row), "sign in to decide")
		runs := one(t, doc, "section", "id", "runs")
		require.Equal(t, "/runs/"+run.ID, attrOf(one(t, runs, "a", "", ""), "href"))
		require.Contains(t, textOf(runs), "compact: skipped")
	})
	t.Run("run", func(t *testing.T) {
		doc := b.page("/runs/" + run.ID)
		require.Contains(t, textOf(one(t, doc, "h1", "", "")), run.ID)
		steps := elements(one(t, doc, "table", "id", "steps"), "tr", "", "")
		require.Len(t, steps, 1+len(run.Steps))
		require.Contains(t, textOf(steps[1]), run.Steps[0].Name)
		require.Contains(t, textOf(doc), "8 → 8", "data files before and after")
	})
	t.Run("not found", func(t *testing.T) {
		for _, path := range []string{"/runs/nope", "/tables/db.nosuch"} {
			rec := b.do("GET", path, nil)
			require.Equal(t, http.StatusNotFound, rec.Code, path)
			require.Contains(t, textOf(one(t, parsePage(t, rec), "p", "id", "error")), "no")
		}
		require.Equal(t, http.StatusBadRequest, b.do("GET", "/tables/p", nil).Code)
	})
}

// A dashboard post changes a plan only from a signed-in session with its
// CSRF token; every other post is refused and changes nothing.
func TestDashboardDecideNeedsSessionAndCSRF(t *testing.T) {
	e, plan, _ := dashEnv(t, tokenYAML+"  read_token: "+readToken+"\n")
	approve := "/plans/" + plan.ID + "/approve"
	refused := func(t *testing.T, rec *httptest.ResponseRecorder, want int, msg string) {
		t.Helper()
		require.Equal(t, want, rec.Code, rec.Body.String())
		require.Contains(t, textOf(parsePage(t, rec)), msg)
		require.Equal(t, control.PlanProposed, e.planState(plan.ID), "nothing changed")
	}

	t.Run("no session", func(t *testing.T) {
		b := e.browser()
		refused(t, b.do("POST", approve, url.Values{"csrf": {"x"}}), http.StatusForbidden, "sign in first")
		refused(t, b.do("POST", "/plans/"+plan.ID+"/reject", url.Values{}), http.StatusForbidden, "sign in first")
	})
	t.Run("bearer token is not a session", func(t *testing.T) {
		req := httptest.NewRequestWithContext(t.Context(), "POST", approve, strings.NewReader(""))
		req.Header.Set("Authorization", "Bearer "+writeToken)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		refused(t, rec, http.StatusForbidden, "sign in first")
	})
	t.Run("wrong token", func(t *testing.T) {
		rec := e.browser().signIn("nope")
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		doc := parsePage(t, rec)
		require.Contains(t, textOf(one(t, doc, "p", "id", "signin-error")), "not server.token")
		one(t, doc, "form", "id", "signin")
		require.Empty(t, rec.Result().Cookies(), "no session")
	})
	t.Run("sign-in without its CSRF cookie", func(t *testing.T) {
		rec := e.browser().do("POST", "/signin", url.Values{"csrf": {"forged"}, "token": {writeToken}})
		refused(t, rec, http.StatusForbidden, "CSRF token does not match")
		require.Empty(t, rec.Result().Cookies(), "no session")
	})
	t.Run("session, wrong or no CSRF token", func(t *testing.T) {
		b := e.browser()
		require.Equal(t, http.StatusSeeOther, b.signIn(writeToken).Code)
		refused(t, b.do("POST", approve, url.Values{"csrf": {"forged"}}), http.StatusForbidden, "CSRF token does not match")
		refused(t, b.do("POST", approve, url.Values{}), http.StatusForbidden, "CSRF token does not match")
	})
	t.Run("read-only session", func(t *testing.T) {
		b := e.browser()
		require.Equal(t, http.StatusSeeOther, b.signIn(readToken).Code)
		doc := b.page("/tables/db.p")
		require.Empty(t, elements(one(t, doc, "tr", "id", "plan-"+plan.ID), "form", "", ""))
		csrf := inputValue(t, one(t, doc, "form", "action", "/signout"), "csrf")
		refused(t, b.do("POST", approve, url.Values{"csrf": {csrf}}), http.StatusForbidden, "need server.token")
	})
	t.Run("signed in: approve", func(t *testing.T) {
		b := e.browser()
		rec := b.signIn(writeToken)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		require.Equal(t, "/", rec.Header().Get("Location"))
		var sess *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == "floe_session" {
				sess = c
			}
		}
		require.NotNil(t, sess)
		require.True(t, sess.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, sess.SameSite)
		require.Equal(t, "/", sess.Path)
		require.NotContains(t, sess.Value, writeToken, "the cookie holds a session id, not the token")
		require.GreaterOrEqual(t, len(sess.Value), 20)

		doc := b.page("/tables/db.p")
		form := one(t, one(t, doc, "tr", "id", "plan-"+plan.ID), "form", "action", approve)
		rec = b.do("POST", approve, url.Values{"csrf": {inputValue(t, form, "csrf")}})
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		require.Equal(t, "/tables/local.db.p", rec.Header().Get("Location"))
		p, err := control.GetPlan(context.Background(), e.st, plan.ID)
		require.NoError(t, err)
		require.Equal(t, control.PlanApproved, p.State)
		require.Equal(t, "dashboard", p.DecidedBy)
		require.Contains(t, textOf(one(t, b.page("/tables/local.db.p"), "tr", "id", "plan-"+plan.ID)), "approved")

		// Rejecting it now is a conflict, answered as a page.
		rec = b.do("POST", "/plans/"+plan.ID+"/reject", url.Values{"csrf": {inputValue(t, form, "csrf")}})
		require.Equal(t, http.StatusConflict, rec.Code)
		require.Equal(t, control.PlanApproved, e.planState(plan.ID))

		// Signing out ends the session: its cookie and token no longer work.
		csrf := inputValue(t, form, "csrf")
		old := b.jar.Cookies(&url.URL{Scheme: "http", Host: "floe.test", Path: "/"})
		require.Equal(t, http.StatusSeeOther, b.do("POST", "/signout", url.Values{"csrf": {csrf}}).Code)
		b.jar.SetCookies(&url.URL{Scheme: "http", Host: "floe.test", Path: "/"}, old)
		rec = b.do("POST", "/plans/"+plan.ID+"/reject", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, control.PlanApproved, e.planState(plan.ID))
	})
}

// With server.read_token set the pages need a session; a session expires.
func TestDashboardReadsNeedASessionWithReadToken(t *testing.T) {
	e, _, _ := dashEnv(t, tokenYAML+"  read_token: "+readToken+"\n")
	b := e.browser()
	for _, path := range []string{"/", "/tables/db.p", "/runs/x"} {
		rec := b.do("GET", path, nil)
		require.Equal(t, http.StatusSeeOther, rec.Code, path)
		require.Equal(t, "/signin?next="+url.QueryEscape(path), rec.Header().Get("Location"))
	}
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/", nil)
	req.Header.Set("Authorization", "Bearer "+readToken)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, "a bearer token reads too")

	// Sign-in sends the browser back where it was going, on this server only.
	form := one(t, b.page("/signin?next=/tables/db.p"), "form", "id", "signin")
	require.Equal(t, "/tables/db.p", inputValue(t, form, "next"))
	rec = b.do("POST", "/signin", url.Values{"csrf": {inputValue(t, form, "csrf")}, "token": {readToken}, "next": {"//evil.example/"}})
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/", rec.Header().Get("Location"))
	b.page("/")

	e.now = e.now.Add(server.DefaultSessionTTL + time.Second)
	require.Equal(t, http.StatusSeeOther, b.do("GET", "/", nil).Code, "the session expired")
}

// Without read_token the pages are open, and unknown paths are still the
// API's 404.
func TestDashboardOpenReads(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := e.browser()
	doc := b.page("/")
	require.Contains(t, textOf(doc), "local.db.p")
	require.NotContains(t, textOf(doc), "to approve", "no server.token: nothing to sign in for")
	require.Contains(t, textOf(b.page("/signin")), "read-only")
	require.Equal(t, http.StatusNotFound, b.do("GET", "/nope", nil).Code)
	require.Equal(t, http.StatusUnauthorized, b.do("POST", "/", nil).Code, "a post elsewhere is the API's")
}

// A run of an approved layout plan shows, on its page, the plan's
// projection beside what the rewritten table measured.
func TestDashboardRunShowsProjectionCheck(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML, run: true, policy: "layout: auto"})
	e.collected(3)
	plan := e.proposed()
	rec := e.do("POST", "/api/v1/plans/"+plan.ID+"/approve", writeToken, `{"by":"bo"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	run := e.optimize("db.p")
	require.Equal(t, plan.ID, run.PlanID)
	var check *control.LayoutCheck
	for _, s := range run.Steps {
		if s.Layout != nil {
			check = s.Layout
		}
	}
	require.NotNil(t, check, "%+v", run.Steps)
	require.Empty(t, check.Error)
	doc := e.browser().page("/runs/" + run.ID)
	p := one(t, doc, "p", "id", "layout-check")
	require.Contains(t, textOf(p), "Projected vs measured. plan "+plan.ID+" (sort(id)): projected")
	require.Contains(t, textOf(p), fmt.Sprintf("measured %.1f%% on the rewritten table over 3 queries", check.MeasuredSkippedPct))
}

// The overview states the lake's budget on one line: its bounds, what the
// rewrites recorded in its window spent, and what is left; without a
// budget it says nothing of one.
func TestOverviewBudgetLine(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{run: true, policy: "layout: none, enabled: {compact: false}, budget: {bytes: 1GiB, window: 24h}"})
	// A compaction recorded an hour ago, its step reading 256 MiB.
	at := e.now.Add(-time.Hour)
	require.NoError(t, e.st.StartRun(ctx, store.RunRecord{ID: "r-spend", Table: e.id.String(), Status: string(control.StatusRunning), StartedAt: at}))
	require.NoError(t, e.st.PutRunStep(ctx, "r-spend", store.StepRecord{Step: control.StepCompact, Status: string(control.StatusDone),
		StartedAt: at, EndedAt: at.Add(time.Minute), RewrittenBytes: 256 << 20}))
	require.NoError(t, e.st.EndRun(ctx, "r-spend", string(control.StatusDone), "", at.Add(time.Minute)))

	rec := e.do("GET", "/", "", "")
	require.Equal(t, 200, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `<p id="budget">Maintenance lake budget 1GiB per 1d: 256MiB spent, 768MiB left`)

	plain := newEnv(t, envOptions{})
	rec = plain.do("GET", "/", "", "")
	require.Equal(t, 200, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), `id="budget"`)
}
