package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// TableSummary is one table of GET /api/v1/tables.
type TableSummary struct {
	Table string `json:"table"`
	// Health is nil when the table could not be measured (see Error).
	Health *lake.Health `json:"health,omitempty"`
	// LastSuccessAt is when the table's last successful run ended; absent
	// when it never had one.
	LastSuccessAt time.Time `json:"last_success_at,omitzero"`
	// Error says why the table could not be measured.
	Error string `json:"error,omitempty"`
	// ExpectedGainPP is the gain of the table's newest pending plan
	// (proposed, approved or running), in percentage points of files
	// skipped; absent when no plan projects one.
	ExpectedGainPP *float64 `json:"expected_gain_pp,omitempty"`
	// Measuring says the table is listed but not measured yet (see
	// TableList.Measuring).
	Measuring bool `json:"measuring,omitempty"`
}

// TableList is GET /api/v1/tables.
type TableList struct {
	// Tables are the tables of every catalog that could be listed, each
	// with its health or the error that kept it from being measured.
	Tables []TableSummary `json:"tables"`
	// CatalogErrors are the catalogs that could not be listed (down, or
	// not answering within their floe.timeout), each with why; [] when
	// every catalog was listed. One dead catalog hides no other's tables.
	CatalogErrors []control.CatalogError `json:"catalog_errors"`
	// Total is how many tables match the query's search and filters, on
	// every page.
	Total int `json:"total"`
	// NextPageToken, passed as page_token, asks for the next page; absent
	// on the last page.
	NextPageToken string `json:"next_page_token,omitempty"`
	// Measuring, present only while some listed tables are not measured
	// yet — the server's first measuring of the lake after it started, or
	// tables created since the last — says how far it got: those tables are
	// listed with "measuring": true.
	Measuring *IndexProgress `json:"measuring,omitempty"`
}

// IndexProgress is how far the server's first measuring of the lake got.
type IndexProgress struct {
	// Measured of Tables are measured.
	Measured int `json:"measured"`
	Tables   int `json:"tables"`
}

// TableDetail is GET /api/v1/tables/{table}.
type TableDetail struct {
	Table         string      `json:"table"`
	Health        lake.Health `json:"health"`
	LastSuccessAt time.Time   `json:"last_success_at,omitzero"`
	// Policy is the table's effective policy, each setting with where it
	// came from ([control.ResolvePolicy]).
	Policy policy.Effective `json:"policy"`
	// LastPlan is the table's newest plan with its projection; nil when
	// it has none.
	LastPlan *control.Plan `json:"last_plan"`
	// Runs are the table's most recent runs, newest first.
	Runs []control.Run `json:"runs"`
	// Hold is the table's hold when a run of it failed an invariant check
	// and floe runs nothing on it until a person resumes it; null when it
	// is not halted.
	Hold *control.Hold `json:"hold"`
}

// ProposeRequest is the optional body of POST /api/v1/tables/{table}/plans.
type ProposeRequest struct {
	// By is who proposes. Default: "api".
	By string `json:"by"`
	// Layouts are the candidates to project (layout specs such as
	// "sort(tenant_id, ts)"); none: the analyzer's candidates from the
	// collected queries.
	Layouts []string `json:"layouts"`
	// Force proposes the best candidate even without enough gain.
	Force bool `json:"force"`
	// MinGainPP is the least gain in percentage points of files skipped.
	// Default: floe.yaml's plan.min_gain_pp.
	MinGainPP *float64 `json:"min_gain_pp"`
}

// ProposeResponse is the answer of POST /api/v1/tables/{table}/plans.
type ProposeResponse struct {
	Table string `json:"table"`
	// Proposed says a plan was proposed (or was stored already for this
	// snapshot and layout).
	Proposed bool          `json:"proposed"`
	Plan     *control.Plan `json:"plan,omitempty"`
	// Reason says why no plan was proposed, or what --force overrode.
	Reason string `json:"reason,omitempty"`
	// Best is the candidate that skips the most files, the layout object
	// every JSON output of floe prints.
	Best              layout.Layout `json:"best"`
	BestSkippedPct    float64       `json:"best_skipped_pct"`
	CurrentSkippedPct float64       `json:"current_skipped_pct"`
	GainPP            float64       `json:"gain_pp"`
	MinGainPP         float64       `json:"min_gain_pp"`
}

// DecideRequest is the body of POST /api/v1/plans/{id}/approve and
// …/reject.
type DecideRequest struct {
	// By is who decides. Default: "api".
	By string `json:"by"`
	// Note says why; it is logged with the decision.
	Note string `json:"note"`
}

// ident parses the {table} path value: catalog.namespace.name, or
// namespace.name in the default catalog.
func (s *server) ident(name string) (lake.Ident, error) {
	cfg := s.deps.Config
	id, err := lake.ParseIdent(name, cfg.CatalogNames(), cfg.DefaultCatalog)
	if err != nil {
		return lake.Ident{}, badRequestError{err}
	}
	return id, nil
}

// state loads the table's catalog and state.
func (s *server) state(ctx context.Context, id lake.Ident) (catalog.Catalog, *lake.State, error) {
	cat, err := s.deps.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return nil, nil, err
	}
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	return cat, st, nil
}

// pathTable resolves the request's {table} and loads its catalog and
// state.
func (s *server) pathTable(r *http.Request) (lake.Ident, catalog.Catalog, *lake.State, error) {
	id, err := s.ident(r.PathValue("table"))
	if err != nil {
		return id, nil, nil, err
	}
	cat, state, err := s.state(r.Context(), id)
	return id, cat, state, err
}

// health measures the table as floe health does (its policy's thresholds,
// freshness SLA and target file size, floe's last compaction) and records
// it in the metrics.
func (s *server) health(ctx context.Context, id lake.Ident, state *lake.State) (lake.Health, policy.Effective, time.Time, error) {
	eff, err := s.deps.Service.Policy(ctx, id)
	if err != nil {
		return lake.Health{}, eff, time.Time{}, err
	}
	h, err := s.deps.Service.HealthOf(ctx, state, control.HealthRequest{})
	if err != nil {
		return lake.Health{}, eff, time.Time{}, err
	}
	last, err := s.deps.Service.LastSuccess(ctx, id.String())
	if err != nil {
		return h, eff, time.Time{}, err
	}
	s.m.ObserveHealth(h, last)
	return h, eff, last, nil
}

// tables lists the tables GET /api/v1/tables shows, and the catalogs that
// could not be listed ([control.ListTables]).
func (s *server) tables(ctx context.Context) ([]lake.Ident, []control.CatalogError, error) {
	if s.deps.Tables != nil {
		ids, err := s.deps.Tables(ctx)
		return ids, nil, err
	}
	ids, errs := control.ListTables(ctx, s.deps.Config.CatalogNames(), s.deps.Catalog)
	if err := ctx.Err(); err != nil {
		// The client is gone: the catalogs' errors only say so.
		return nil, nil, err
	}
	return ids, errs, nil
}

// redactCatalog keeps the secrets of catalog name's properties (a
// credential, a token in its URI) out of msg, a library's error that may
// echo them.
func (s *server) redactCatalog(name, msg string) string {
	for _, secret := range s.deps.Config.Catalogs[name].Secrets() {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "****")
		}
	}
	return msg
}

// listTables is GET /api/v1/tables: one page of the table index, searched,
// filtered and sorted by the query ([parseTableQuery]).
func (s *server) listTables(r *http.Request) (int, any, error) {
	ctx := r.Context()
	tq, err := parseTableQuery(r.URL.Query(), DefaultPageLimit)
	if err != nil {
		return 0, nil, err
	}
	page, view, _, err := s.pageOfTables(ctx, tq)
	if err != nil {
		return 0, nil, err
	}
	out := TableList{Tables: make([]TableSummary, 0, len(page.Rows)), CatalogErrors: view.CatalogErrors, Total: page.Total, NextPageToken: page.Next}
	for _, row := range page.Rows {
		out.Tables = append(out.Tables, row.summary())
	}
	if !view.Complete() {
		out.Measuring = &IndexProgress{Measured: view.Measured, Tables: view.Listed}
	}
	return http.StatusOK, out, nil
}

// summary is the row as the API lists it.
func (r tableRow) summary() TableSummary {
	sum := r.sum
	sum.ExpectedGainPP = r.Gain
	sum.Measuring = !r.measured
	return sum
}

// pageOfTables is the page of tables tq asks for, from the index, the
// index's view it was cut from, and the pending plans by lower-cased table
// ([pendingPlans]).
func (s *server) pageOfTables(ctx context.Context, tq tableQuery) (tablePage, indexView, map[string][]control.Plan, error) {
	view, err := s.index.view(ctx)
	if err != nil {
		return tablePage{}, view, nil, err
	}
	// Only the pending plans: the decided ones are history, which grows.
	var plans []control.Plan
	for _, st := range []control.PlanState{control.PlanProposed, control.PlanApproved, control.PlanRunning} {
		more, err := control.ListPlans(ctx, s.deps.Store, control.PlanFilter{State: st})
		if err != nil {
			return tablePage{}, view, nil, err
		}
		plans = append(plans, more...)
	}
	// Newest first, as pendingPlans wants them.
	slices.SortStableFunc(plans, func(a, b control.Plan) int { return b.CreatedAt.Compare(a.CreatedAt) })
	pending, gains := pendingPlans(plans)
	return pageTables(view, gains, tq), view, pending, nil
}

// listIndex lists the tables for the index, the catalogs that could not
// be listed named with their secrets redacted.
func (s *server) listIndex(ctx context.Context) ([]lake.Ident, []control.CatalogError, error) {
	ids, catErrs, err := s.tables(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]control.CatalogError, 0, len(catErrs))
	for _, ce := range catErrs {
		ce.Error = s.redactCatalog(ce.Catalog, ce.Error)
		s.log.Warn("catalog not listed; its tables are left out", "catalog", ce.Catalog, "err", ce.Error)
		out = append(out, ce)
	}
	return ids, out, nil
}

// measureSummary measures one table for the index ([control.Service.Health],
// which reads its manifests only when its metadata moved) and records it in
// the metrics; a table that cannot be measured says why in its Error.
func (s *server) measureSummary(ctx context.Context, id lake.Ident) TableSummary {
	sum := TableSummary{Table: id.String()}
	h, err := s.deps.Service.Health(ctx, id, control.HealthRequest{})
	if err == nil {
		sum.LastSuccessAt, err = s.deps.Service.LastSuccess(ctx, id.String())
	}
	if err != nil {
		// One table that cannot be measured does not hide the others; it
		// says why.
		sum.Error = err.Error()
		return sum
	}
	s.m.ObserveHealth(h, sum.LastSuccessAt)
	sum.Health = &h
	return sum
}

func (s *server) getTable(r *http.Request) (int, any, error) {
	ctx := r.Context()
	id, _, state, err := s.pathTable(r)
	if err != nil {
		return 0, nil, err
	}
	d := TableDetail{Table: id.String()}
	if d.Health, d.Policy, d.LastSuccessAt, err = s.health(ctx, id, state); err != nil {
		return 0, nil, err
	}
	measured := d.Health
	s.index.observe(id, TableSummary{Table: id.String(), Health: &measured, LastSuccessAt: d.LastSuccessAt})
	plans, err := control.ListPlans(ctx, s.deps.Store, control.PlanFilter{Table: id.String()})
	if err != nil {
		return 0, nil, err
	}
	if len(plans) > 0 {
		d.LastPlan = &plans[0]
	}
	if d.Runs, err = control.ListRuns(ctx, s.deps.Store, id.String(), s.opts.RecentRuns); err != nil {
		return 0, nil, err
	}
	h, halted, err := s.deps.Service.Halted(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	if halted {
		d.Hold = &h
	}
	return http.StatusOK, d, nil
}

func (s *server) tableReport(r *http.Request) (int, any, error) {
	ctx := r.Context()
	_, _, state, err := s.pathTable(r)
	if err != nil {
		return 0, nil, err
	}
	rep, err := s.report(ctx, state)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, rep, nil
}

// report is the recommendation report of the one table, as floe report
// makes it, its costly part from [server.reportWorkload].
func (s *server) report(ctx context.Context, state *lake.State) (report.Report, error) {
	cfg := s.deps.Config
	return control.Report(ctx, s.deps.Store, []*lake.State{state}, control.ReportOptions{
		Since: control.DefaultQueryWindow, Now: s.now, HealthTargetFileSizeBytes: cfg.TargetFileSizeBytes(), MinGainPP: cfg.MinGainPP(),
		Policy: func(id lake.Ident) (policy.Policy, error) {
			eff, err := control.ResolvePolicy(ctx, cfg, id)
			return eff.Policy, err
		},
		Workload: s.reportWorkload,
	})
}

// reportWorkload answers a table's report workload once per change: it is
// kept under a key of everything it depends on — the table's metadata file
// and snapshot (which carry its data files and properties) and the mark of
// its collected queries ([store.Store.EventsMark]); the clock is bounded
// by Options.ReportCacheMaxAge, the projection settings are the daemon's.
// Concurrent requests for one key share one computation.
func (s *server) reportWorkload(ctx context.Context, state *lake.State, compute func(context.Context) (control.ReportWorkload, error)) (control.ReportWorkload, error) {
	mark, err := s.deps.Store.EventsMark(ctx, store.QueryFilter{Table: state.Ident.String()})
	if err != nil {
		return control.ReportWorkload{}, err
	}
	loc, snap := "", int64(0)
	if state.Table != nil {
		loc = state.Table.MetadataLocation()
	}
	if state.Current != nil {
		snap = state.Current.SnapshotID
	}
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d.%d.%d", state.Ident, loc, snap, mark.Events, mark.Ended, mark.MaxID)
	return s.workloads.do(ctx, key, compute)
}

func (s *server) proposePlan(r *http.Request) (int, any, error) {
	ctx := r.Context()
	id, err := s.ident(r.PathValue("table"))
	if err != nil {
		return 0, nil, err
	}
	var req ProposeRequest
	if err := s.decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	po := control.ProjectOptions{Workload: control.WorkloadOptions{Since: control.DefaultQueryWindow, Now: s.now}}
	for _, spec := range req.Layouts {
		l, err := layout.Parse(spec)
		if err != nil {
			return 0, nil, badRequest("layouts: %v", err)
		}
		po.Layouts = append(po.Layouts, l)
	}
	minGain := s.deps.Config.MinGainPP()
	if req.MinGainPP != nil {
		if g := *req.MinGainPP; g < 0 || g > 100 {
			return 0, nil, badRequest("min_gain_pp %v: want 0 to 100 percentage points", g)
		}
		minGain = *req.MinGainPP
	}
	if req.By == "" {
		req.By = "api"
	}
	prop, err := s.deps.Service.Propose(ctx, id, control.ProposeRequest{Project: po, By: req.By, Force: req.Force, MinGainPP: &minGain})
	if len(req.Layouts) > 0 && errors.Is(err, rewriter.ErrInvalidOptions) {
		// A layout the request named that cannot order this table (a
		// column it lacks, a type the strategy cannot key on): the
		// request's to fix.
		return 0, nil, badRequest("layouts: %v", err)
	}
	if err != nil {
		return 0, nil, err
	}
	c := prop.Choice
	out := ProposeResponse{Table: id.String(), Plan: prop.Plan, Proposed: prop.Plan != nil, Reason: c.Reason(id.String()),
		Best: c.Best.Layout, BestSkippedPct: c.Best.SkippedPct, CurrentSkippedPct: c.Current.SkippedPct, GainPP: c.GainPP, MinGainPP: c.MinGainPP}
	if prop.Plan == nil {
		return http.StatusOK, out, nil
	}
	s.log.Info("plan proposed", "table", id.String(), "plan_id", prop.Plan.ID, "by", req.By)
	return http.StatusCreated, out, nil
}

// listPlans is GET /api/v1/plans: a page of the plans, newest first, by
// state and table.
func (s *server) listPlans(r *http.Request) (int, any, error) {
	var f control.PlanFilter
	var problems []string
	q := r.URL.Query()
	if v := q.Get("state"); v != "" {
		st, err := control.ParsePlanState(v)
		if err != nil {
			problems = append(problems, err.Error())
		}
		f.State = st
	}
	if v := q.Get("table"); v != "" {
		id, err := s.ident(v)
		if err != nil {
			problems = append(problems, err.Error())
		}
		f.Table = id.String()
	}
	page, more := parsePage(q, "plans", url.Values{"state": {string(f.State)}, "table": {strings.ToLower(f.Table)}}.Encode(), DefaultPageLimit)
	if err := problemsError(append(problems, more...)); err != nil {
		return 0, nil, err
	}
	var after *store.PlanCursor
	if t := page.After; t != nil {
		after = &store.PlanCursor{CreatedAt: time.Unix(0, t.Nanos).UTC(), ID: t.Str}
	}
	// One more than the page says whether another follows.
	plans, err := control.ListPlansPage(r.Context(), s.deps.Store, f, after, page.Limit+1)
	if err != nil {
		return 0, nil, err
	}
	out := pagedList{items: plans}
	if len(plans) > page.Limit {
		last := plans[page.Limit-1]
		out = pagedList{items: plans[:page.Limit], next: pageToken{Kind: "plans", Query: page.query, Nanos: last.CreatedAt.UnixNano(), Str: last.ID}.encode()}
	}
	return http.StatusOK, out, nil
}

func (s *server) getPlan(r *http.Request) (int, any, error) {
	p, err := control.GetPlan(r.Context(), s.deps.Store, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, p, nil
}

// decide approves or rejects a plan; one in the wrong state is a
// [*control.PlanStateError], answered 409.
func (s *server) decide(action string) handlerFunc {
	return func(r *http.Request) (int, any, error) {
		var req DecideRequest
		if err := s.decodeBody(r, &req); err != nil {
			return 0, nil, err
		}
		if req.By == "" {
			req.By = "api"
		}
		id := r.PathValue("id")
		var (
			p   control.Plan
			err error
		)
		p, err = s.deps.Service.DecidePlan(r.Context(), action, id, req.By)
		if err != nil {
			return 0, nil, err
		}
		s.log.Info("plan "+string(p.State), "plan_id", p.ID, "table", p.Table, "by", req.By, "note", req.Note)
		return http.StatusOK, p, nil
	}
}

// OptimizeRequest is the optional body of POST
// /api/v1/tables/{table}/optimize.
type OptimizeRequest struct {
	// By is who asks, recorded as the run's started_by. Default: "api".
	By string `json:"by"`
}

// optimize queues a run of the table by its policy and answers 202 with
// the queued run at once: the daemon's run queue starts it when a run slot
// is free, under the shutdown grace; GET /api/v1/runs/{id} follows it.
func (s *server) optimize(r *http.Request) (int, any, error) {
	if s.deps.Enqueue == nil {
		return 0, nil, errors.Join(errUnavailable, errors.New("this server runs no tables: it was started without a scheduler"))
	}
	id, err := s.ident(r.PathValue("table"))
	if err != nil {
		return 0, nil, err
	}
	var req OptimizeRequest
	if err := s.decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.By == "" {
		req.By = "api"
	}
	// A table that does not exist is 404 now, not a failed run later.
	cat, err := s.deps.Catalog(r.Context(), id.Catalog)
	if err != nil {
		return 0, nil, err
	}
	if _, err := lake.LoadTable(r.Context(), cat, id); err != nil {
		return 0, nil, err
	}
	run, err := s.deps.Enqueue(r.Context(), id, req.By)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, run, nil
}

// ResumeRequest is the optional body of POST /api/v1/tables/{table}/resume.
type ResumeRequest struct {
	// By is who resumes the table, recorded with the hold. Default: "api".
	By string `json:"by"`
	// Note says what was checked or repaired; it is recorded with the hold.
	Note string `json:"note"`
}

// resume lifts a halted table's hold ([control.Service.Resume]); a table
// that is not halted is 409.
func (s *server) resume(r *http.Request) (int, any, error) {
	id, err := s.ident(r.PathValue("table"))
	if err != nil {
		return 0, nil, err
	}
	var req ResumeRequest
	if err := s.decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.By == "" {
		req.By = "api"
	}
	h, err := s.deps.Service.Resume(r.Context(), id, req.By, req.Note)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, h, nil
}

// listHolds is GET /api/v1/holds: the halted tables; ?all=true adds the
// resumed holds, the record of who resumed what. By table, then newest
// first; paged in memory, as there are at most as many active holds as
// tables.
func (s *server) listHolds(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	all, problems := false, []string(nil)
	if v := q.Get("all"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("all %q: want true or false", v))
		}
		all = b
	}
	page, more := parsePage(q, "holds", strconv.FormatBool(all), DefaultPageLimit)
	if err := problemsError(append(problems, more...)); err != nil {
		return 0, nil, err
	}
	holds, err := s.deps.Service.Holds(r.Context(), all)
	if err != nil {
		return 0, nil, err
	}
	// The store's order: by table key, then newest first, then the newer
	// of two holds placed in the same nanosecond (the higher id).
	key := func(h control.Hold) pageToken {
		return pageToken{Kind: "holds", Query: page.query, Str: strings.ToLower(h.Table), Nanos: h.HeldAt.UnixNano(), Num: float64(h.ID)}
	}
	after := func(h control.Hold, t pageToken) bool {
		k := key(h)
		switch {
		case k.Str != t.Str:
			return k.Str > t.Str
		case k.Nanos != t.Nanos:
			return k.Nanos < t.Nanos
		}
		return k.Num < t.Num
	}
	return http.StatusOK, pageSlice(holds, page, key, after), nil
}

// listRuns is GET /api/v1/runs: a page of the runs, newest first, of one
// table or all.
func (s *server) listRuns(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	table, problems := "", []string(nil)
	if v := q.Get("table"); v != "" {
		id, err := s.ident(v)
		if err != nil {
			problems = append(problems, err.Error())
		}
		table = id.String()
	}
	page, more := parsePage(q, "runs", strings.ToLower(table), DefaultPageLimit)
	if err := problemsError(append(problems, more...)); err != nil {
		return 0, nil, err
	}
	var after *store.RunCursor
	if t := page.After; t != nil {
		after = &store.RunCursor{StartedAt: time.Unix(0, t.Nanos).UTC(), ID: t.Str}
	}
	runs, err := control.ListRunsPage(r.Context(), s.deps.Store, table, after, page.Limit+1)
	if err != nil {
		return 0, nil, err
	}
	out := pagedList{items: runs}
	if len(runs) > page.Limit {
		last := runs[page.Limit-1]
		out = pagedList{items: runs[:page.Limit], next: pageToken{Kind: "runs", Query: page.query, Nanos: last.StartedAt.UnixNano(), Str: last.ID}.encode()}
	}
	return http.StatusOK, out, nil
}

func (s *server) getRun(r *http.Request) (int, any, error) {
	run, err := control.GetRun(r.Context(), s.deps.Store, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, run, nil
}

// listLeases is GET /api/v1/leases: every table lease, live or lapsed,
// with its holder (replica and run) and expiry — which replica maintains
// which table now. By table; paged in memory, as there is at most one
// lease per table.
func (s *server) listLeases(r *http.Request) (int, any, error) {
	page, problems := parsePage(r.URL.Query(), "leases", "", DefaultPageLimit)
	if err := problemsError(problems); err != nil {
		return 0, nil, err
	}
	leases, err := s.deps.Store.TableLeases(r.Context())
	if err != nil {
		return 0, nil, err
	}
	if leases == nil {
		leases = []store.TableLease{}
	}
	key := func(l store.TableLease) pageToken { return pageToken{Kind: "leases", Str: l.Table} }
	after := func(l store.TableLease, t pageToken) bool { return l.Table > t.Str }
	return http.StatusOK, pageSlice(leases, page, key, after), nil
}
