package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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

func (s *server) listTables(r *http.Request) (int, any, error) {
	out, err := s.summaries(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

// summaries measures every table; one that cannot be measured says why in
// its Error, and a catalog that cannot be listed in CatalogErrors.
func (s *server) summaries(ctx context.Context) (TableList, error) {
	ids, catErrs, err := s.tables(ctx)
	if err != nil {
		return TableList{}, err
	}
	out := TableList{Tables: make([]TableSummary, 0, len(ids)), CatalogErrors: []control.CatalogError{}}
	for _, ce := range catErrs {
		ce.Error = s.redactCatalog(ce.Catalog, ce.Error)
		s.log.Warn("catalog not listed; its tables are left out", "catalog", ce.Catalog, "err", ce.Error)
		out.CatalogErrors = append(out.CatalogErrors, ce)
	}
	for _, id := range ids {
		sum := TableSummary{Table: id.String()}
		_, state, err := s.state(ctx, id)
		if err == nil {
			var h lake.Health
			if h, _, sum.LastSuccessAt, err = s.health(ctx, id, state); err == nil {
				sum.Health = &h
			}
		}
		if err != nil {
			// One table that cannot be measured does not hide the others;
			// it says why.
			sum.Error = err.Error()
		}
		out.Tables = append(out.Tables, sum)
	}
	return out, nil
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

func (s *server) listPlans(r *http.Request) (int, any, error) {
	var f control.PlanFilter
	q := r.URL.Query()
	if v := q.Get("state"); v != "" {
		st, err := control.ParsePlanState(v)
		if err != nil {
			return 0, nil, badRequestError{err}
		}
		f.State = st
	}
	if v := q.Get("table"); v != "" {
		id, err := s.ident(v)
		if err != nil {
			return 0, nil, err
		}
		f.Table = id.String()
	}
	plans, err := control.ListPlans(r.Context(), s.deps.Store, f)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, plans, nil
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
// resumed holds, the record of who resumed what.
func (s *server) listHolds(r *http.Request) (int, any, error) {
	all := false
	if v := r.URL.Query().Get("all"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return 0, nil, badRequest("all %q: want true or false", v)
		}
		all = b
	}
	holds, err := s.deps.Service.Holds(r.Context(), all)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, holds, nil
}

func (s *server) listRuns(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	table := ""
	if v := q.Get("table"); v != "" {
		id, err := s.ident(v)
		if err != nil {
			return 0, nil, err
		}
		table = id.String()
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, nil, badRequest("limit %q: want a whole number, 0 for all", v)
		}
		limit = n
	}
	runs, err := control.ListRuns(r.Context(), s.deps.Store, table, limit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, runs, nil
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
// which table now.
func (s *server) listLeases(r *http.Request) (int, any, error) {
	leases, err := s.deps.Store.TableLeases(r.Context())
	if err != nil {
		return 0, nil, err
	}
	if leases == nil {
		leases = []store.TableLease{}
	}
	return http.StatusOK, leases, nil
}
