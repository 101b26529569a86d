package server_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/server"
)

// The fuzz targets below feed every input the server parses from a
// request — path segments (table names, plan and run ids), query
// parameters, form values, JSON and telemetry bodies, the Authorization
// header — through the real handler over a real warehouse and state
// store. Whatever the input: no panic, no 5xx (bad input is the client's
// to fix: 4xx), and no redirect that leads a browser off this server.
// Their seeds are in testdata/fuzz/<target>, and a failure the fuzzer
// finds is kept there as a seed. Run one with
//
//	go test -tags duckdb ./control/server -run '^$' -fuzz '^FuzzAPIRequests$' -fuzztime 1m

// serve sends req to the handler as if from a browser at floe.test and
// checks what every answer must hold.
func serve(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Less(t, rec.Code, 500, "%s %s: %s", req.Method, req.URL, rec.Body.String())
	if loc := rec.Header().Get("Location"); loc != "" {
		u := browserResolve(t, "http://floe.test/a/b", loc)
		require.NotNil(t, u, "Location %q", loc)
		require.Equal(t, "floe.test", u.Host, "Location %q leads off this server", loc)
	}
	if strings.HasPrefix(req.URL.Path, "/api/") && (rec.Code < 300 || rec.Code >= 400) {
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%s %s", req.Method, req.URL)
	}
	return rec
}

// requests builds method path?query with body, once with the segment
// escaped as a client library would and once as written, when that is a
// valid request target.
func requests(t *testing.T, method, prefix, seg, suffix, query, body string) []*http.Request {
	var out []*http.Request
	for _, p := range []string{prefix + url.PathEscape(seg) + suffix, prefix + seg + suffix} {
		target := "http://floe.test" + p
		if query != "" {
			target += "?" + query
		}
		req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
		if err != nil {
			continue
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		out = append(out, req)
	}
	return out
}

// FuzzAPIRequests: table names, plan and run ids in the path, and the
// query parameters of the API's routes.
func FuzzAPIRequests(f *testing.F) {
	e := newEnv(f, envOptions{server: tokenYAML})
	e.collected(3)
	for _, s := range [][2]string{
		{"db.p", "proposed"}, {"local.db.p", "approved"}, {"LOCAL.DB.P", "5"}, {"p", "-1"}, {"db.nosuch", "x"},
		{"nosuch.db.p", "0"}, {"..", "%zz"}, {"db..p", "999999999999999999999"}, {"a.b.c.d.e", "state"},
		{"db.p\x00", "\x00"}, {"`db`.\"p\"", "'1'"}, {"%2e%2e", "%00"}, {"db.p/report", ""}, {strings.Repeat("a.", 500) + "b", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, seg, q string) {
		var reqs []*http.Request
		for _, route := range []struct{ method, prefix, suffix, query, body string }{
			{"GET", "/api/v1/tables/", "", "", ""},
			{"GET", "/api/v1/tables/", "/report", "", ""},
			{"GET", "/api/v1/plans/", "", "", ""},
			{"GET", "/api/v1/runs/", "", "", ""},
			{"GET", "/api/v1/plans", "", "state=" + url.QueryEscape(q) + "&table=" + url.QueryEscape(seg), ""},
			{"GET", "/api/v1/runs", "", "table=" + url.QueryEscape(seg) + "&limit=" + url.QueryEscape(q), ""},
			{"GET", "/api/v1/", "", q, ""},
			{"POST", "/api/v1/plans/", "/reject", "", ""},
			{"POST", "/api/v1/tables/", "/plans", "", `{"layouts":["sort(id)"]}`},
		} {
			if route.prefix == "/api/v1/plans" || route.prefix == "/api/v1/runs" {
				req, err := http.NewRequestWithContext(t.Context(), route.method, "http://floe.test"+route.prefix+"?"+route.query, nil)
				require.NoError(t, err)
				reqs = append(reqs, req)
				continue
			}
			reqs = append(reqs, requests(t, route.method, route.prefix, seg, route.suffix, route.query, route.body)...)
		}
		for _, req := range reqs {
			if req.Method == "POST" {
				req.Header.Set("Authorization", "Bearer "+writeToken)
			}
			serve(t, e.h, req)
		}
	})
}

// FuzzDashboardRequests: table names and run and plan ids in the
// dashboard's paths, read and posted from a signed-in session.
func FuzzDashboardRequests(f *testing.F) {
	e := newEnv(f, envOptions{server: tokenYAML})
	b := e.browser()
	require.Equal(f, http.StatusSeeOther, b.signIn(writeToken).Code)
	csrf := inputValue(f, one(f, b.page("/"), "form", "action", "/signout"), "csrf")
	cookies := b.jar.Cookies(&url.URL{Scheme: "http", Host: "floe.test", Path: "/"})
	for _, s := range []string{"db.p", "local.db.p", "p", "db.nosuch", "nope", "..", "%2e%2e", "a/b", "x\x00y", "<script>", strings.Repeat("z", 3000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seg string) {
		var reqs []*http.Request
		for _, route := range []struct{ method, prefix, suffix string }{
			{"GET", "/tables/", ""}, {"GET", "/runs/", ""}, {"GET", "/", ""},
			{"POST", "/plans/", "/approve"}, {"POST", "/plans/", "/reject"},
		} {
			reqs = append(reqs, requests(t, route.method, route.prefix, seg, route.suffix, "", "")...)
		}
		for _, req := range reqs {
			for _, c := range cookies {
				req.AddCookie(c)
			}
			if req.Method == "POST" {
				form := url.Values{"csrf": {csrf}}.Encode()
				req.Body, req.ContentLength = io.NopCloser(strings.NewReader(form)), int64(len(form))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			serve(t, e.h, req)
		}
	})
}

// FuzzSigninNext: the sign-in's next, as the form's query parameter and as
// the posted form value.
func FuzzSigninNext(f *testing.F) {
	e := newEnv(f, envOptions{server: tokenYAML})
	for _, s := range hostileNext {
		f.Add(s)
	}
	for _, s := range []string{"/", "/tables/local.db.p", "/runs/x?y=1#z", "/a/./b/../c/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), "GET", "http://floe.test/signin?next="+url.QueryEscape(next), nil)
		require.NoError(t, err)
		rec := serve(t, e.h, req)
		require.Equal(t, http.StatusOK, rec.Code)
		jar.SetCookies(req.URL, rec.Result().Cookies())
		form := one(t, parsePage(t, rec), "form", "id", "signin")
		kept := inputValue(t, form, "next")
		require.True(t, kept == "/" || (strings.HasPrefix(kept, "/") && !strings.HasPrefix(kept, "//")), "next %q kept as %q", next, kept)

		post, err := http.NewRequestWithContext(t.Context(), "POST", "http://floe.test/signin",
			strings.NewReader(url.Values{"csrf": {inputValue(t, form, "csrf")}, "token": {writeToken}, "next": {next}}.Encode()))
		require.NoError(t, err)
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, c := range jar.Cookies(post.URL) {
			post.AddCookie(c)
		}
		rec = serve(t, e.h, post)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		require.Equal(t, kept, rec.Header().Get("Location"), "the form and the post keep the same next")
	})
}

// FuzzFormBodies: whole form bodies posted to sign-in, sign-out and the
// plan buttons, with and without a session. A plan changes only from its
// session's form with the session's CSRF token.
func FuzzFormBodies(f *testing.F) {
	e := newEnv(f, envOptions{server: tokenYAML})
	e.collected(2)
	plan := e.proposed()
	b := e.browser()
	require.Equal(f, http.StatusSeeOther, b.signIn(writeToken).Code)
	cookies := b.jar.Cookies(&url.URL{Scheme: "http", Host: "floe.test", Path: "/"})
	for _, s := range []string{
		"", "csrf=x", "csrf=&token=" + writeToken, "token=" + writeToken + "&next=//evil.example", "csrf=%zz", "a=1&a=2&a=3",
		strings.Repeat("x=y&", 1000), "csrf=" + strings.Repeat("A", 1<<12), "next=/%09/evil.example&token=t&csrf=c", "\x00=\x00",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, body string, session bool) {
		for _, path := range []string{"/signin", "/signout", "/plans/" + plan.ID + "/approve", "/plans/" + plan.ID + "/reject"} {
			req, err := http.NewRequestWithContext(t.Context(), "POST", "http://floe.test"+path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if session {
				for _, c := range cookies {
					if c.Name == "floe_session" {
						req.AddCookie(c)
					}
				}
			}
			serve(t, e.h, req)
		}
		require.Equal(t, control.PlanProposed, planState(t, e, plan.ID), "no form without the session's CSRF token changes a plan")
	})
}

// FuzzJSONBodies: the API's JSON bodies (proposing a plan, deciding one).
func FuzzJSONBodies(f *testing.F) {
	e := newEnv(f, envOptions{server: tokenYAML})
	e.collected(2)
	plan := e.proposed()
	for _, s := range []string{
		`{}`, `{"by":"x","layouts":["sort(id)"],"force":true}`, `{"layouts":["zorder(id, v)"]}`, `{"layouts":["sort(nope)"]}`,
		`{"layouts":["current"]}`, `{"layouts":[""]}`, `{"layouts":["sort(id) target 1"]}`, `{"min_gain_pp":-1}`, `{"min_gain_pp":1e309}`,
		`{"by":"` + strings.Repeat("b", 1<<12) + `"}`, `{"note":"\u0000"}`, `[]`, `null`, `{"by":1}`, `{} {}`, `{`, "\xff",
		`{"layouts":["hilbert(id,v) target 1048576"],"force":true}`, `{"layouts":["sort(id desc nulls last)"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/api/v1/tables/db.p/plans", "/api/v1/plans/" + plan.ID + "/reject", "/api/v1/plans/nope/approve"} {
			req, err := http.NewRequestWithContext(t.Context(), "POST", "http://floe.test"+path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+writeToken)
			req.Header.Set("Content-Type", "application/json")
			serve(t, e.h, req)
		}
	})
}

// FuzzIngestBodies: telemetry posted to the daemon's ingest endpoints,
// and the Iceberg endpoint's namespace and table in its path.
func FuzzIngestBodies(f *testing.F) {
	e := newEnv(f, envOptions{server: tokenYAML})
	for _, s := range []string{
		"", "{}", "[]", "null", `{"metadata":{"queryId":"q1","query":"SELECT * FROM db.p WHERE id = 1","queryState":"FINISHED"}}`,
		`{"metadata":{"queryId":"q2"},"context":{"catalog":"local","schema":"db"},"ioMetadata":{"inputs":[{"catalogName":"local","schema":"db","table":"p"}]}}`,
		`{"report-type":"scan-report","table-name":"local.db.p","snapshot-id":1,"filter":{"type":"eq","term":"id","value":42},"schema-id":0,"projected-field-ids":[1],"projected-field-names":["id"],"metrics":{}}`,
		`{"report-type":"commit-report"}`, `{"report-type":"scan-report","filter":true}`, `{"report-type":"scan-report","filter":{"type":"and"}}`,
		"\x00\x01", strings.Repeat("[", 10000), `{"metadata":{"queryId":"` + strings.Repeat("q", 1<<14) + `"}}`,
	} {
		f.Add(s, "db", "p")
	}
	f.Add(`{"report-type":"scan-report"}`, "", "")
	f.Add(`{"report-type":"scan-report"}`, "a\x1fb", "..")
	f.Add(`{"report-type":"scan-report"}`, "%2F", "p%00")
	f.Fuzz(func(t *testing.T, body, ns, tbl string) {
		paths := []string{"/ingest/trino"}
		for _, p := range []string{
			"/ingest/iceberg/v1/namespaces/" + url.PathEscape(ns) + "/tables/" + url.PathEscape(tbl) + "/metrics",
			"/ingest/iceberg/v1/namespaces/" + ns + "/tables/" + tbl + "/metrics",
		} {
			if _, err := url.ParseRequestURI(p); err == nil {
				paths = append(paths, p)
			}
		}
		for _, p := range paths {
			req, err := http.NewRequestWithContext(t.Context(), "POST", "http://floe.test"+p, strings.NewReader(body))
			if err != nil {
				continue
			}
			req.Header.Set("Authorization", "Bearer "+writeToken)
			req.Header.Set("Content-Type", "application/json")
			serve(t, e.h, req)
		}
	})
}

// FuzzAuthorization: the Authorization header, on a daemon beyond loopback
// where reads need a token too. Only the exact tokens are let in; the read
// token never writes; nothing is a 5xx.
func FuzzAuthorization(f *testing.F) {
	e := newEnv(f, envOptions{server: beyondYAML + "  read_token: " + readToken + "\n",
		opts: server.Options{AuthFailures: 1 << 30}})
	e.collected(2)
	plan := e.proposed()
	for _, s := range []string{
		"", "Bearer", "Bearer ", "Bearer " + writeToken, "bearer " + writeToken, "BEARER  " + readToken + " ", "Bearer " + writeToken + "x",
		"Basic dXNlcjpwYXNz", "Bearer " + strings.ToUpper(writeToken), "Bearer\t" + writeToken, "Bearer " + writeToken[:len(writeToken)-1],
		"Bearer \x00", "Bearer " + readToken + "," + writeToken, strings.Repeat("Bearer ", 1000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token := ""
		if scheme, rest, ok := strings.Cut(header, " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(rest)
		}
		read := token == readToken || token == writeToken
		for _, tc := range []struct{ method, path string }{
			{"GET", "/api/v1/plans"}, {"GET", "/metrics"}, {"GET", "/"}, {"POST", "/api/v1/plans/nope/approve"},
		} {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, "http://floe.test"+tc.path, http.NoBody)
			require.NoError(t, err)
			if header != "" {
				req.Header["Authorization"] = []string{header}
			}
			rec := serve(t, e.h, req)
			switch {
			case tc.method == "GET" && read:
				require.Equal(t, http.StatusOK, rec.Code, "%s with %q", tc.path, header)
			case tc.method == "GET" && tc.path == "/":
				require.Equal(t, http.StatusSeeOther, rec.Code, "%s with %q", tc.path, header)
			case tc.method == "GET":
				require.Equal(t, http.StatusUnauthorized, rec.Code, "%s with %q", tc.path, header)
			case token == writeToken:
				require.Equal(t, http.StatusNotFound, rec.Code, "%s with %q", tc.path, header)
			default:
				require.Equal(t, http.StatusUnauthorized, rec.Code, "%s with %q", tc.path, header)
			}
		}
		require.Equal(t, control.PlanProposed, planState(t, e, plan.ID))
	})
}

func planState(t *testing.T, e *env, id string) control.PlanState {
	t.Helper()
	p, err := control.GetPlan(t.Context(), e.st, id)
	require.NoError(t, err)
	return p.State
}
