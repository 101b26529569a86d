package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

//go:embed templates/*.html
var templateFS embed.FS

// The dashboard's own style, after the report's (report.Style), which
// styles the embedded report sections and the health badges.
const dashStyle template.CSS = `
header.top{display:flex;gap:1em;align-items:baseline;border-bottom:1px solid #ddd;margin-bottom:1em;padding-bottom:.4em}
header.top a.home{font-weight:700;font-size:1.2em;color:#1a1a1a;text-decoration:none}
header.top .who{margin-left:auto;font-size:.9em;color:#444}
form.inline{display:inline;margin:0}
button{font:inherit;padding:1px 10px;cursor:pointer}
button.approve{background:#2f855a;color:#fff;border:1px solid #276749}
button.reject{background:#fff;color:#c53030;border:1px solid #c53030}
.err{color:#c53030}
.flash{border-left:4px solid #c53030;background:#fff5f5;padding:.4em .8em}
#catalog-errors{margin-bottom:1em}
pre{background:#fff;border:1px solid #ddd;padding:.5em;overflow:auto;max-height:24em;font-size:.85em}
`

// Cookie names; the session cookie holds a random id, never a token.
const (
	sessionCookie = "floe_session"
	signinCookie  = "floe_signin"
)

// decidedBy is who the store records as deciding a plan in the browser.
const decidedBy = "dashboard"

// contentSecurityPolicy allows nothing outside the page: no script at
// all, styles only inline, forms only to this server.
const contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// viewer is who is looking at a page.
type viewer struct {
	// SessionID is "" when the browser is not signed in.
	SessionID string
	SignedIn  bool
	// CanWrite says the viewer may approve and reject (signed in with
	// server.token).
	CanWrite bool
	// CSRF is the session's form token.
	CSRF string
	// Bearer says the request carried a valid Authorization header
	// instead of a session (curl, a probe).
	Bearer bool
}

// page is what every template is executed with.
type page struct {
	Title  string
	Style  template.CSS
	Viewer viewer
	// Writable says server.token is set: without it the dashboard is
	// read-only and offers no sign-in for writing.
	Writable bool
	Data     any
}

func (s *server) parseTemplates() (*template.Template, error) {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return t.UTC().Format(time.RFC3339)
		},
		"ago": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return agoText(s.now().Sub(t))
		},
		"ageSeconds": func(sec int64) string {
			if sec < 0 {
				return "never compacted"
			}
			return agoText(time.Duration(sec) * time.Second)
		},
		"duration":     func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"bytes":        report.FormatBytes,
		"tablePath":    func(table string) string { return "/tables/" + url.PathEscape(table) },
		"runPath":      func(id string) string { return "/runs/" + url.PathEscape(id) },
		"planPath":     func(id, action string) string { return "/plans/" + url.PathEscape(id) + "/" + action },
		"report":       reportText,
		"count":        countText,
		"stateOptions": func() []string { return tableStates },
		"backlog": func(sec int64) string {
			if sec <= 0 {
				return "none"
			}
			return (time.Duration(sec) * time.Second).String()
		},
		"pp": func(v *float64) string {
			if v == nil {
				return "-"
			}
			return strconv.FormatFloat(*v, 'f', 1, 64) + " pp"
		},
		"shellArg": control.ShellArg,
		// treeHTML explains a tree plan's tree as the report does.
		"treeHTML": func(id, name string, e *layout.TreeExplanation) template.HTML {
			if e == nil {
				return ""
			}
			return report.TreeHTML(id, name, *e)
		},
	}
	t, err := template.New("dashboard").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("server: dashboard templates: %w", err)
	}
	return t, nil
}

// reportText is a step report as indented JSON, for a run page.
func reportText(r control.StepReport) string {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "report cannot be shown: " + err.Error()
	}
	return string(b)
}

// countText writes n with thousands separated: 10,000.
func countText(n int) string {
	digits := strconv.Itoa(n)
	if n < 0 {
		return "-" + countText(-n)
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func agoText(d time.Duration) string {
	switch {
	case d < 0:
		return "in " + (-d).Round(time.Second).String()
	case d < time.Minute:
		return d.Round(time.Second).String() + " ago"
	case d < 48*time.Hour:
		return d.Round(time.Minute).String() + " ago"
	}
	return fmt.Sprintf("%.1f days ago", d.Hours()/24)
}

// routeDashboard registers the dashboard's pages and forms on mux. They
// do their own authentication (sessions and CSRF tokens) rather than the
// API's bearer tokens, which a browser cannot send.
func (s *server) routeDashboard(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", s.page("overview.html", s.overview))
	mux.HandleFunc("GET /tables/{table}", s.page("table.html", s.tablePage))
	mux.HandleFunc("GET /runs/{id}", s.page("run.html", s.runPage))
	mux.HandleFunc("GET /signin", s.signinForm)
	mux.HandleFunc("POST /signin", s.signin)
	mux.HandleFunc("POST /signout", s.form(false, s.signout))
	mux.HandleFunc("POST /plans/{id}/approve", s.form(true, s.decidePage("approve")))
	mux.HandleFunc("POST /plans/{id}/reject", s.form(true, s.decidePage("reject")))
}

// viewerOf finds r's session. A bearer token is checked only where it
// counts, by [server.page].
func (s *server) viewerOf(r *http.Request) viewer {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if sess, ok := s.sessions.get(c.Value); ok {
			return viewer{SessionID: c.Value, SignedIn: true, CanWrite: sess.write, CSRF: sess.csrf}
		}
	}
	return viewer{}
}

// pageFunc gathers a page's data.
type pageFunc func(r *http.Request) (title string, data any, err error)

// page serves a read-only page. When reads need a token
// ([config.ServerConfig.ReadsNeedToken]), reading needs a session (or a
// bearer token, slowed like the API's): a browser without one is sent to
// sign in.
func (s *server) page(name string, h pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := s.viewerOf(r)
		if s.readsNeedToken && !v.SignedIn {
			cred, err := s.bearer(r)
			var tm *tooManyError
			if errors.As(err, &tm) {
				w.Header().Set("Retry-After", strconv.Itoa(retryAfter(tm.wait)))
				s.errorPage(w, r, v, http.StatusTooManyRequests, err)
				return
			}
			if cred == credNone {
				http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			v.Bearer = true
		}
		title, data, err := h(r)
		if err != nil {
			s.errorPage(w, r, v, statusOf(err), err)
			return
		}
		s.render(w, r, http.StatusOK, name, page{Title: title, Viewer: v, Data: data})
	}
}

// render executes the template into a buffer first, so that a template
// error is a clean 500 rather than half a page.
func (s *server) render(w http.ResponseWriter, r *http.Request, code int, name string, p page) {
	p.Style = report.Style() + dashStyle
	p.Writable = s.deps.Config.Server.Token.Reveal() != ""
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		s.log.Error("render page", "path", r.URL.Path, "template", name, "err", err)
		http.Error(w, "render page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	// Pages carry the session's CSRF token: no cache keeps them.
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if _, err := w.Write(b.Bytes()); err != nil {
		s.log.Warn("write page; the client got a partial body", "path", r.URL.Path, "err", err)
	}
}

// errorView is the error page's data.
type errorView struct {
	Status  int
	Message string
	// SignIn offers the sign-in form.
	SignIn bool
}

func (s *server) errorPage(w http.ResponseWriter, r *http.Request, v viewer, code int, err error) {
	if code >= 500 {
		s.log.Error("dashboard request", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	}
	s.render(w, r, code, "error.html", page{Title: http.StatusText(code), Viewer: v,
		Data: errorView{Status: code, Message: err.Error(), SignIn: code == http.StatusForbidden && !v.SignedIn}})
}

// form serves a state-changing form post: it needs a session whose CSRF
// token the form carries, and when write, a session of server.token.
// Anything else is 403 and changes nothing.
func (s *server) form(write bool, h func(w http.ResponseWriter, r *http.Request, v viewer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		v := s.viewerOf(r)
		// A bearer token does not count here: the dashboard's forms are for
		// browsers, and the API takes the token.
		v.Bearer = false
		var err error
		switch {
		case r.ParseForm() != nil:
			err = badRequest("a form post that cannot be read")
		case !v.SignedIn:
			err = errors.New("sign in first: changes from the dashboard need a session")
		case !equalSecret(r.PostFormValue("csrf"), v.CSRF):
			err = errors.New("the form's CSRF token does not match this session: reload the page and try again")
		case write && !v.CanWrite:
			err = errors.New("signed in with server.read_token: approving and rejecting need server.token")
		}
		if err != nil {
			code := http.StatusForbidden
			if errors.As(err, new(badRequestError)) {
				code = http.StatusBadRequest
			}
			s.log.Warn("dashboard form refused; nothing changed", "path", r.URL.Path, "reason", err.Error())
			s.errorPage(w, r, v, code, err)
			return
		}
		if err := h(w, r, v); err != nil {
			s.errorPage(w, r, v, statusOf(err), err)
		}
	}
}

// overviewRow is one table of the overview.
type overviewRow struct {
	TableSummary
	LastRun *control.Run
	// Pending are the table's plans waiting or going: proposed, approved,
	// running.
	Pending []control.Plan
	// Next says when the table runs next, or by what rule.
	Next string
}

// overviewView is the overview's data: one page of the tables, searched,
// filtered and sorted, and the catalogs that could not be listed, shown in
// a banner above them.
type overviewView struct {
	Rows          []overviewRow
	CatalogErrors []control.CatalogError
	// Query is the page's search, filters and sort, for the form and the
	// links.
	Query tableQuery
	// Catalogs are the configured catalogs, for the catalog filter.
	Catalogs []string
	// First and Last number the page's rows among the Total that match
	// (1-based); Listed is every table the catalogs listed.
	First, Last, Total, Listed int
	// Measured says how many tables are measured while the first
	// measuring of the lake is under way; Measuring says it is.
	Measured  int
	Measuring bool
	// PrevURL and NextURL are the pages before and after; "" when none.
	PrevURL, NextURL string
	// Budget is the lake's maintenance budget and its spend over its
	// window; nil when none bounds the lake.
	Budget *control.BudgetUse
}

// SortURL is the overview sorted by column (name, gain, health, backlog)
// with the same search and filters, from its first page: ascending for
// the name, worst or largest first for the others, and the other way when
// the page is sorted so already.
func (v overviewView) SortURL(column string) string {
	desc := column != "name"
	if v.Query.Sort == column {
		desc = !v.Query.Desc
	}
	sort := column
	if desc {
		sort = "-" + column
	}
	return v.url(sort, "")
}

// SortMark is the arrow after a column's header: the way the page is
// sorted by it, or "".
func (v overviewView) SortMark(column string) string {
	switch {
	case v.Query.Sort != column:
		return ""
	case v.Query.Desc:
		return " ▼"
	}
	return " ▲"
}

// url is the overview with the page's search and filters, sorted by sort,
// at the page token (none: the first page).
func (v overviewView) url(sort, token string) string {
	q := url.Values{}
	for k, val := range map[string]string{"q": v.Query.Q, "catalog": v.Query.Catalog, "namespace": v.Query.Namespace,
		"state": v.Query.State, "page_token": token} {
		if val != "" {
			q.Set(k, val)
		}
	}
	if sort != "name" {
		q.Set("sort", sort)
	}
	if v.Query.Page.Limit != DashboardPageRows {
		q.Set("limit", strconv.Itoa(v.Query.Page.Limit))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// overview is one page of the table index; the runs, plans and next run
// are read only for the page's rows.
func (s *server) overview(r *http.Request) (string, any, error) {
	ctx := r.Context()
	tq, err := parseTableQuery(r.URL.Query(), DashboardPageRows)
	if err != nil {
		return "", nil, err
	}
	page, view, pending, err := s.pageOfTables(ctx, tq)
	if err != nil {
		return "", nil, err
	}
	out := overviewView{Rows: make([]overviewRow, 0, len(page.Rows)), CatalogErrors: view.CatalogErrors, Query: tq,
		Catalogs: s.deps.Config.CatalogNames(), Total: page.Total, Listed: view.Listed, Measured: view.Measured, Measuring: !view.Complete()}
	if len(page.Rows) > 0 {
		out.First, out.Last = page.Start+1, page.Start+len(page.Rows)
	}
	if page.Next != "" {
		out.NextURL = out.url(tq.SortParam(), page.Next)
	}
	if page.HasPrev {
		out.PrevURL = out.url(tq.SortParam(), page.Prev)
	}
	if out.Budget, err = s.deps.Service.LakeBudget(ctx); err != nil {
		return "", nil, err
	}
	for _, pr := range page.Rows {
		row := overviewRow{TableSummary: pr.summary(), Pending: pending[strings.ToLower(pr.sum.Table)]}
		runs, err := control.ListRuns(ctx, s.deps.Store, pr.sum.Table, 1)
		if err != nil {
			return "", nil, err
		}
		if len(runs) > 0 {
			row.LastRun = &runs[0]
		}
		row.Next = s.nextText(ctx, pr.id, row.LastRun, row.Pending)
		out.Rows = append(out.Rows, row)
	}
	return "floe", out, nil
}

func isPending(st control.PlanState) bool {
	return st == control.PlanProposed || st == control.PlanApproved || st == control.PlanRunning
}

// nextText resolves the table's policy for [nextRun]; a policy that does
// not resolve says so in the cell rather than hiding the table.
func (s *server) nextText(ctx context.Context, id lake.Ident, last *control.Run, pending []control.Plan) string {
	eff, err := control.ResolvePolicy(ctx, s.deps.Config, id)
	if err != nil {
		return "policy: " + err.Error()
	}
	return nextRun(eff.Policy, last, pending, s.now())
}

// nextRun says when the scheduler next runs the table, from the policy's
// mode alone. It follows [control.Scheduler]'s rules (an approved plan is
// due at once; scheduled mode is the cron time after the last run) but
// not its in-memory state — failure backoff and the adaptive poll clock
// live in the daemon's scheduler, not in the store — so for adaptive mode
// it shows the rule rather than a time.
func nextRun(p policy.Policy, last *control.Run, pending []control.Plan, now time.Time) string {
	text := func() string {
		if p.Mode == policy.ModeManual {
			return "manual: only when started"
		}
		for _, pl := range pending {
			if pl.State == control.PlanApproved {
				return "due at the next check: plan " + pl.ID + " is approved"
			}
		}
		if p.Mode == policy.ModeScheduled {
			sched, err := cron.ParseStandard(p.Schedule)
			if err != nil {
				return fmt.Sprintf("scheduled %q: %v", p.Schedule, err)
			}
			if last != nil {
				if next := sched.Next(last.StartedAt.UTC()); next.After(now) {
					return fmt.Sprintf("%s (scheduled %q)", next.Format(time.RFC3339), p.Schedule)
				}
			}
			return fmt.Sprintf("due at the next check (scheduled %q)", p.Schedule)
		}
		return fmt.Sprintf("adaptive: when a trigger fires, checked every %s", p.PollInterval)
	}()
	if p.Window != nil && p.Mode != policy.ModeManual {
		text += fmt.Sprintf("; window %s UTC", p.Window)
	}
	return text
}

// tableView is the table page's data.
type tableView struct {
	Table         string
	Health        lake.Health
	LastSuccessAt time.Time
	Mode          string
	Next          string
	// Report is the report's section of the table; ReportError says why
	// there is none.
	Report      template.HTML
	ReportError string
	Plans       []control.Plan
	Runs        []control.Run
}

func (s *server) tablePage(r *http.Request) (string, any, error) {
	ctx := r.Context()
	id, _, state, err := s.pathTable(r)
	if err != nil {
		return "", nil, err
	}
	d := tableView{Table: id.String()}
	var eff policy.Effective
	if d.Health, eff, d.LastSuccessAt, err = s.health(ctx, id, state); err != nil {
		return "", nil, err
	}
	d.Mode = eff.Policy.Mode
	if d.Plans, err = control.ListPlans(ctx, s.deps.Store, control.PlanFilter{Table: d.Table}); err != nil {
		return "", nil, err
	}
	if d.Runs, err = control.ListRuns(ctx, s.deps.Store, d.Table, s.opts.RecentRuns); err != nil {
		return "", nil, err
	}
	var last *control.Run
	if len(d.Runs) > 0 {
		last = &d.Runs[0]
	}
	var pending []control.Plan
	for _, p := range d.Plans {
		if isPending(p.State) {
			pending = append(pending, p)
		}
	}
	d.Next = nextRun(eff.Policy, last, pending, s.now())
	rep, err := s.report(ctx, state)
	switch {
	case err != nil:
		// The plans and runs are still worth showing without the report.
		s.log.Warn("dashboard table page without its report", "table", d.Table, "err", err)
		d.ReportError = err.Error()
	case len(rep.Tables) == 1:
		d.Report = report.TableHTML(rep.Tables[0])
	}
	return d.Table, d, nil
}

func (s *server) runPage(r *http.Request) (string, any, error) {
	run, err := control.GetRun(r.Context(), s.deps.Store, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	return "run " + run.ID, run, nil
}

// decidePage approves or rejects a plan from its form, then sends the
// browser back to the plan's table (303, so a reload does not post again).
func (s *server) decidePage(action string) func(w http.ResponseWriter, r *http.Request, v viewer) error {
	return func(w http.ResponseWriter, r *http.Request, _ viewer) error {
		ctx, id := r.Context(), r.PathValue("id")
		var (
			p   control.Plan
			err error
		)
		p, err = s.deps.Service.DecidePlan(ctx, action, id, decidedBy)
		if err != nil {
			return fmt.Errorf("%s plan %s: %w", action, id, err)
		}
		s.log.Info("plan "+string(p.State), "plan_id", p.ID, "table", p.Table, "by", decidedBy)
		http.Redirect(w, r, "/tables/"+url.PathEscape(p.Table), http.StatusSeeOther)
		return nil
	}
}

// signinView is the sign-in page's data.
type signinView struct {
	// CSRF is the sign-in form's token, the same as its cookie's.
	CSRF  string
	Next  string
	Error string
}

// signinForm serves the sign-in form. There is no session yet to bind
// its CSRF token to, so the token is also set in a short-lived cookie
// that the post must match (a double-submit cookie): another site cannot
// read it, so it cannot sign a browser in to an attacker's session.
func (s *server) signinForm(w http.ResponseWriter, r *http.Request) {
	csrf := rand.Text()
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: csrf, Path: "/signin", MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	s.render(w, r, http.StatusOK, "signin.html", page{Title: "sign in", Viewer: s.viewerOf(r),
		Data: signinView{CSRF: csrf, Next: safeNext(r.URL.Query().Get("next"))}})
}

func (s *server) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	v := s.viewerOf(r)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, v, http.StatusBadRequest, errors.New("a sign-in form that cannot be read"))
		return
	}
	c, err := r.Cookie(signinCookie)
	if err != nil || !equalSecret(r.PostFormValue("csrf"), c.Value) {
		s.log.Warn("dashboard sign-in refused: no or wrong CSRF token")
		s.errorPage(w, r, v, http.StatusForbidden, errors.New("the sign-in form's CSRF token does not match: open the sign-in page again"))
		return
	}
	cfg := s.deps.Config.Server
	next := safeNext(r.PostFormValue("next"))
	client := clientOf(r)
	if wait := s.attempts.wait(client); wait > 0 {
		// The token is not even compared: a guess made now tells nothing.
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
		s.render(w, r, http.StatusTooManyRequests, "signin.html", page{Title: "sign in", Viewer: v,
			Data: signinView{CSRF: c.Value, Next: next, Error: (&tooManyError{wait: wait}).sentence()}})
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	// Both comparisons always run, so the time does not say which token
	// was near.
	write, read := equalSecret(token, cfg.Token.Reveal()), equalSecret(token, cfg.ReadToken.Reveal())
	if !write && !read {
		wait := s.attempts.failed(client)
		s.log.Warn("dashboard sign-in refused: wrong token", "client", client, "retry_after_seconds", retryAfter(wait))
		msg := "That is not server.token or server.read_token."
		if wait > 0 {
			msg += " " + (&tooManyError{wait: wait}).sentence()
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
		}
		s.render(w, r, http.StatusUnauthorized, "signin.html", page{Title: "sign in", Viewer: v,
			Data: signinView{CSRF: c.Value, Next: next, Error: msg}})
		return
	}
	s.attempts.succeeded(client)
	if v.SessionID != "" {
		// A new id on every sign-in: a session id known before cannot be
		// reused after.
		s.sessions.end(v.SessionID)
	}
	id, _ := s.sessions.create(write)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", MaxAge: int(s.opts.SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Path: "/signin", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	s.log.Info("dashboard sign-in", "write", write)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *server) signout(w http.ResponseWriter, r *http.Request, v viewer) error {
	s.sessions.end(v.SessionID)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

// safeNext keeps a redirect target on this server: it returns next, a
// path of this server with its query, or "/" (the overview) for anything
// else. Browsers do not read a Location as written: they drop tabs and
// line breaks anywhere, trim control characters and spaces, and read a
// backslash as a slash, so "/\t/evil.example" goes to evil.example. So
// next is refused unless it is printable ASCII with no backslash, starts
// with one slash, has no scheme, host or user, and its path, unescaped
// (repeatedly, for double encodings), still starts with one slash and
// holds no control character, backslash or "//" at its start. What is
// kept is rebuilt from its parsed parts, its path cleaned.
func safeNext(next string) string {
	const home = "/"
	if next == "" || len(next) > 2048 || next[0] != '/' || (len(next) > 1 && (next[1] == '/' || next[1] == '\\')) {
		return home
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return home
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return home
	}
	p, stable := u.EscapedPath(), false
	for range 8 {
		dec, err := url.PathUnescape(p)
		if err != nil || strings.HasPrefix(dec, "//") || strings.ContainsFunc(dec, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\\' }) {
			return home
		}
		if stable = dec == p; stable {
			break
		}
		p = dec
	}
	if !stable {
		return home
	}
	clean := path.Clean(u.EscapedPath())
	if !strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "//") {
		return home
	}
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	out := clean
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out
}
