package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

const (
	writeToken = "w-token-123"
	readToken  = "r-token-456"
)

// env is a real local warehouse with one table whose eight files each span
// the whole id range, a real state store, and the server over them.
type env struct {
	t       testing.TB
	w       *testlake.Warehouse
	id      lake.Ident
	st      *store.Store
	cfg     *config.Config
	now     time.Time
	metrics *server.Metrics
	h       http.Handler
}

type envOptions struct {
	// server is floe.yaml's server: section.
	server string
	// extraCatalogs are more catalogs: entries, in YAML.
	extraCatalogs string
	// run starts a daemon whose run queue runs the API's runs (its
	// passes run nothing: the tables' mode is manual, and their policy
	// compacts nothing, so the table keeps its files).
	run bool
	// policy, with run, replaces the default policy's keys (YAML flow
	// mapping body); the maintenance window stays.
	policy string
	// opts are the server's options (CheckTimeout defaults to 3s).
	opts server.Options
	// log receives the server's log lines. Default: discard.
	log *slog.Logger
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	tbl := w.CreateTable(t, "db", "p", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "16384"}, nil)
	for i := range 8 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
		for j := range 1000 {
			b.Field(0).(*array.Int64Builder).Append(int64(j*8 + i))
			b.Field(1).(*array.Int64Builder).Append(int64(j % 7))
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	st, err := store.Open(ctx, ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })

	now := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	more := o.extraCatalogs + o.server
	if o.run {
		// A maintenance window twelve hours away: the daemon's passes run
		// nothing, the API's runs (which no window holds back) run.
		h := (now.Hour() + 12) % 24
		pol := o.policy
		if pol == "" {
			pol = "layout: none, enabled: {compact: false}"
		}
		more += fmt.Sprintf("policies:\n  default: {%s, window: \"%02d:00-%02d:00\"}\n", pol, h, (h+1)%24)
	}
	cfg := configtest.Load(t, w, more)

	e := &env{t: t, w: w, id: lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "p"}, st: st, cfg: cfg,
		now: now, metrics: server.NewMetrics()}
	deps := server.Deps{
		Config: cfg, Store: st, Metrics: e.metrics, Now: func() time.Time { return e.now }, Logger: o.log,
		Catalog: func(ctx context.Context, name string) (catalog.Catalog, error) {
			if name == "local" {
				return w.Catalog, nil
			}
			props, ok := cfg.Catalogs[name]
			if !ok {
				return nil, fmt.Errorf("catalog %q is not configured", name)
			}
			cat, err := lake.OpenCatalog(ctx, name, props)
			if c, ok := cat.(catalog.Closer); ok && err == nil {
				// A SQL catalog's pool would outlive the test.
				t.Cleanup(func() { require.NoError(t, c.Close()) })
			}
			return cat, err
		},
	}
	if o.run {
		svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Catalog: deps.Catalog, Now: deps.Now, Logger: o.log})
		require.NoError(t, err)
		deps.Service = svc
		sched := control.NewScheduler(control.SchedulerOptions{Service: svc, MaxConcurrentRuns: 1})
		deps.Enqueue = sched.Enqueue
		d, err := control.NewDaemon(control.DaemonOptions{Scheduler: sched, Tick: make(chan time.Time)})
		require.NoError(t, err)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		t.Cleanup(func() {
			stop()
			require.NoError(t, <-done)
		})
	}
	if o.opts.CheckTimeout == 0 {
		o.opts.CheckTimeout = 3 * time.Second
	}
	e.h, err = server.New(t.Context(), deps, o.opts)
	require.NoError(t, err)
	return e
}

// do sends one request; token "" sends no Authorization header.
func (e *env) do(method, path, token, body string) *httptest.ResponseRecorder {
	e.t.Helper()
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequestWithContext(e.t.Context(), method, path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// optimize asks for a run of table through the API: 202 with the queued
// run, which it then follows through GET /api/v1/runs/{id} until it ends.
func (e *env) optimize(table string) control.Run {
	e.t.Helper()
	rec := e.do("POST", "/api/v1/tables/"+table+"/optimize", writeToken, "")
	require.Equal(e.t, http.StatusAccepted, rec.Code, rec.Body.String())
	queued := decode[control.Run](e.t, rec)
	require.NotEmpty(e.t, queued.ID)
	return e.waitRun(queued.ID)
}

// waitRun follows run id through the API until it ends.
func (e *env) waitRun(id string) control.Run {
	e.t.Helper()
	var run control.Run
	require.Eventually(e.t, func() bool {
		rec := e.do("GET", "/api/v1/runs/"+id, writeToken, "")
		require.Equal(e.t, http.StatusOK, rec.Code, rec.Body.String())
		run = decode[control.Run](e.t, rec)
		return run.Status != control.StatusQueued && run.Status != control.StatusRunning
	}, time.Minute, 10*time.Millisecond, "run %s ends", id)
	return run
}

func decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v), rec.Body.String())
	return v
}

func errorOf(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return decode[map[string]any](t, rec)["error"].(string)
}

// collected stores queries of the table filtering id = 42.
func (e *env) collected(n int) {
	e.t.Helper()
	var evs []collectors.QueryEvent
	for i := range n {
		ts := e.now.Add(-time.Duration(i+1) * time.Hour)
		filter := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: e.id.String(), Column: "id", Op: expr.OpEq,
			Values: []expr.Value{{Kind: expr.KindNumber, Text: "42"}}}}
		evs = append(evs, collectors.QueryEvent{
			Source: "trino-event", Engine: collectors.EngineTrino, QueryID: fmt.Sprintf("q%d", i), User: "alice",
			StartTime: ts, EndTime: ts.Add(time.Second), State: collectors.StateSucceeded,
			StatementType: "SELECT", SQL: "SELECT * FROM db.p WHERE id = 42",
			Metrics: collectors.QueryMetrics{ElapsedMs: 1000, BytesScanned: 1 << 20},
			Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "db", Name: "p", Direct: true, Filter: filter,
				Evidence: collectors.EvidenceSQL,
				Columns:  []collectors.ColumnUse{{Name: "id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL}}}},
		})
	}
	_, _, err := e.st.InsertEvents(context.Background(), evs)
	require.NoError(e.t, err)
}

// proposed proposes sort(id) through the API and returns the plan.
func (e *env) proposed() control.Plan {
	e.t.Helper()
	rec := e.do("POST", "/api/v1/tables/db.p/plans", writeToken, `{"by":"carol","layouts":["sort(id)"],"force":true}`)
	require.Equal(e.t, http.StatusCreated, rec.Code, rec.Body.String())
	resp := decode[server.ProposeResponse](e.t, rec)
	require.True(e.t, resp.Proposed)
	require.NotNil(e.t, resp.Plan)
	// best and the plan's layout are the layout object every verb prints.
	var raw struct {
		Best map[string]any `json:"best"`
		Plan struct {
			Layout map[string]any `json:"layout"`
		} `json:"plan"`
	}
	require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), &raw))
	want := map[string]any{"spec": "sort(id)", "strategy": "sort", "target_file_size_bytes": float64(0),
		"columns": []any{map[string]any{"name": "id", "desc": false, "nulls_last": false}}}
	require.Equal(e.t, want, raw.Best, rec.Body.String())
	require.Equal(e.t, want, raw.Plan.Layout, rec.Body.String())
	return *resp.Plan
}

func (e *env) planState(id string) control.PlanState {
	e.t.Helper()
	p, err := control.GetPlan(context.Background(), e.st, id)
	require.NoError(e.t, err)
	return p.State
}

const tokenYAML = "server:\n  token: " + writeToken + "\n"

// Every route's happy path and its error statuses.
func TestRoutes(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML, run: true})

	t.Run("healthz", func(t *testing.T) {
		rec := e.do("GET", "/healthz", "", "")
		require.Equal(t, http.StatusOK, rec.Code)
		require.JSONEq(t, `{"status":"ok"}`, rec.Body.String())
	})
	t.Run("readyz", func(t *testing.T) {
		rec := e.do("GET", "/readyz", "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		r := decode[server.Readiness](t, rec)
		require.True(t, r.Ready)
		require.Equal(t, []server.CheckResult{{Check: "catalog:local", OK: true}, {Check: "objectstore:local", OK: true}, {Check: "store", OK: true}}, r.Checks)
	})
	t.Run("tables", func(t *testing.T) {
		rec := e.do("GET", "/api/v1/tables", "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		list := decode[server.TableList](t, rec)
		require.Empty(t, list.CatalogErrors)
		ts := list.Tables
		require.Len(t, ts, 1)
		require.Equal(t, "local.db.p", ts[0].Table)
		require.Empty(t, ts[0].Error)
		require.NotNil(t, ts[0].Health)
		require.Equal(t, 8, ts[0].Health.Metrics.DataFiles)
	})

	// Without queries there is nothing to judge a layout by.
	rec := e.do("POST", "/api/v1/tables/db.p/plans", writeToken, `{"layouts":["sort(id)"]}`)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Contains(t, errorOf(t, rec), "no queries of local.db.p collected")
	e.collected(3)
	plan := e.proposed()
	require.Equal(t, control.PlanProposed, plan.State)
	require.Equal(t, "carol", plan.CreatedBy)
	require.Equal(t, "sort(id)", plan.Layout.String())

	for _, tc := range []struct {
		name, method, path, token, body string
		want                            int
		check                           func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{"table, default catalog", "GET", "/api/v1/tables/db.p", "", "", http.StatusOK, func(t *testing.T, rec *httptest.ResponseRecorder) {
			d := decode[server.TableDetail](t, rec)
			require.Equal(t, "local.db.p", d.Table)
			require.Equal(t, 8, d.Health.Metrics.DataFiles)
			require.Equal(t, "local.db.p", d.Policy.Table)
			require.NotEmpty(t, d.Policy.Settings)
			require.NotNil(t, d.LastPlan)
			require.Equal(t, plan.ID, d.LastPlan.ID)
			require.Equal(t, plan.Projection.SkippedPct, d.LastPlan.Projection.SkippedPct)
			require.NotNil(t, d.Runs)
		}},
		{"table, catalog named", "GET", "/api/v1/tables/local.db.p", "", "", http.StatusOK, nil},
		{"table, case-insensitive catalog", "GET", "/api/v1/tables/LOCAL.db.p", "", "", http.StatusOK, nil},
		{"no such table", "GET", "/api/v1/tables/db.nosuch", "", "", http.StatusNotFound, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Equal(t, "no such table: local.db.nosuch", errorOf(t, rec))
		}},
		{"JSON is not HTML-escaped", "GET", "/api/v1/tables/db.no%3Csuch%26", "", "", http.StatusNotFound, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, rec.Body.String(), `local.db.no<such&`)
		}},
		{"table name of one part", "GET", "/api/v1/tables/p", "", "", http.StatusBadRequest, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), "want namespace.table")
		}},
		{"report", "GET", "/api/v1/tables/db.p/report", "", "", http.StatusOK, func(t *testing.T, rec *httptest.ResponseRecorder) {
			r := decode[map[string]any](t, rec)
			tables := r["tables"].([]any)
			require.Len(t, tables, 1)
			tb := tables[0].(map[string]any)
			require.Equal(t, "local.db.p", tb["table"])
			require.InDelta(t, 3, tb["queries"], 0)
			require.Equal(t, e.now.Format(time.RFC3339), r["generated_at"])
			require.Contains(t, tb, "candidates")
			require.Contains(t, tb, "recommendation")
		}},
		{"report of no such table", "GET", "/api/v1/tables/db.nosuch/report", "", "", http.StatusNotFound, nil},
		{"propose, bad layout", "POST", "/api/v1/tables/db.p/plans", writeToken, `{"layouts":["sorted(id)"]}`, http.StatusBadRequest, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), "layouts:")
		}},
		{"propose, a column the table lacks", "POST", "/api/v1/tables/db.p/plans", writeToken, `{"layouts":["sort(nope)"]}`, http.StatusBadRequest, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), `no column "nope"`)
		}},
		{"propose, unknown field", "POST", "/api/v1/tables/db.p/plans", writeToken, `{"layout":"sort(id)"}`, http.StatusBadRequest, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), `unknown field "layout"`)
		}},
		{"propose, bad min gain", "POST", "/api/v1/tables/db.p/plans", writeToken, `{"min_gain_pp":101}`, http.StatusBadRequest, nil},
		{"propose, only current", "POST", "/api/v1/tables/db.p/plans", writeToken, `{"layouts":["current"]}`, http.StatusBadRequest, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), "nothing to plan")
		}},
		{"propose, no such table", "POST", "/api/v1/tables/db.nosuch/plans", writeToken, "", http.StatusNotFound, nil},
		{"propose again is the same plan", "POST", "/api/v1/tables/db.p/plans", writeToken, `{"layouts":["sort(id)"],"force":true}`, http.StatusCreated, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Equal(t, plan.ID, decode[server.ProposeResponse](t, rec).Plan.ID)
		}},
		{"plans", "GET", "/api/v1/plans", "", "", http.StatusOK, func(t *testing.T, rec *httptest.ResponseRecorder) {
			ps := decode[[]control.Plan](t, rec)
			require.Len(t, ps, 1)
			require.Equal(t, plan.ID, ps[0].ID)
		}},
		{"plans by state", "GET", "/api/v1/plans?state=proposed&table=db.p", "", "", http.StatusOK, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Len(t, decode[[]control.Plan](t, rec), 1)
		}},
		{"plans in another state", "GET", "/api/v1/plans?state=approved", "", "", http.StatusOK, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.JSONEq(t, `[]`, rec.Body.String())
		}},
		{"plans, bad state", "GET", "/api/v1/plans?state=pending", "", "", http.StatusBadRequest, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), `unknown plan state "pending"`)
		}},
		{"plans, bad table", "GET", "/api/v1/plans?table=p", "", "", http.StatusBadRequest, nil},
		{"plan", "GET", "/api/v1/plans/" + plan.ID, "", "", http.StatusOK, func(t *testing.T, rec *httptest.ResponseRecorder) {
			p := decode[control.Plan](t, rec)
			require.Equal(t, plan.ID, p.ID)
			require.Equal(t, plan.Projection, p.Projection)
		}},
		{"no such plan", "GET", "/api/v1/plans/nope", "", "", http.StatusNotFound, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Equal(t, "plan nope does not exist", errorOf(t, rec))
		}},
		{"approve no such plan", "POST", "/api/v1/plans/nope/approve", writeToken, "", http.StatusNotFound, nil},
		{"approve, bad body", "POST", "/api/v1/plans/" + plan.ID + "/approve", writeToken, `{"by":`, http.StatusBadRequest, nil},
		{"unknown route", "GET", "/api/v1/nope", "", "", http.StatusNotFound, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), "no route GET /api/v1/nope")
		}},
		{"wrong method", "DELETE", "/api/v1/plans/" + plan.ID, writeToken, "", http.StatusNotFound, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Contains(t, errorOf(t, rec), "no route DELETE /api/v1/plans/")
		}},
		{"runs, bad limit", "GET", "/api/v1/runs?limit=-1", "", "", http.StatusBadRequest, nil},
		{"no such run", "GET", "/api/v1/runs/nope", "", "", http.StatusNotFound, func(t *testing.T, rec *httptest.ResponseRecorder) {
			require.Equal(t, "run nope does not exist", errorOf(t, rec))
		}},
		{"optimize no such table", "POST", "/api/v1/tables/db.nosuch/optimize", writeToken, "", http.StatusNotFound, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, tc.token, tc.body)
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			if tc.check != nil {
				tc.check(t, rec)
			}
		})
	}
	require.Equal(t, control.PlanProposed, e.planState(plan.ID), "no failed request changed the plan")

	t.Run("reject, then approving is a conflict", func(t *testing.T) {
		rec := e.do("POST", "/api/v1/plans/"+plan.ID+"/reject", writeToken, `{"by":"bob","note":"not now"}`)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		p := decode[control.Plan](t, rec)
		require.Equal(t, control.PlanRejected, p.State)
		require.Equal(t, "bob", p.DecidedBy)
		require.Equal(t, e.now, p.DecidedAt)

		rec = e.do("POST", "/api/v1/plans/"+plan.ID+"/approve", writeToken, `{"by":"alice"}`)
		require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
		require.Contains(t, errorOf(t, rec), "it is rejected")
		require.Equal(t, control.PlanRejected, e.planState(plan.ID))
	})

	t.Run("optimize queues a run, then its run", func(t *testing.T) {
		rec := e.do("POST", "/api/v1/tables/db.p/optimize", writeToken, `{"by": "carol"}`)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		queued := decode[control.Run](t, rec)
		require.NotEmpty(t, queued.ID, "the run's id is known at once")
		require.Equal(t, control.StatusQueued, queued.Status)
		require.Equal(t, control.TriggerAPI, queued.Trigger)
		require.Equal(t, "carol", queued.StartedBy)
		require.Equal(t, e.now, queued.QueuedAt)
		run := e.waitRun(queued.ID)
		require.Equal(t, control.StatusDone, run.Status, run.Error)
		require.Equal(t, "carol", run.StartedBy)
		require.Equal(t, e.now, run.QueuedAt, "when it was asked for is kept")

		rec = e.do("GET", "/api/v1/runs/"+run.ID, "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		raw := decode[map[string]any](t, rec)
		for _, k := range []string{"id", "table", "status", "started_at", "ended_at", "trigger", "steps"} {
			require.Contains(t, raw, k)
		}
		require.Equal(t, "api", raw["trigger"])
		require.Equal(t, "local.db.p", raw["table"])
		_, err := time.Parse(time.RFC3339, raw["started_at"].(string))
		require.NoError(t, err)
		require.Equal(t, e.now.Format(time.RFC3339), raw["ended_at"])
		require.Len(t, raw["steps"], 5, "expire, orphans, compact, deletes, manifests")
		require.Equal(t, control.RunnerID(), raw["runner"], "a run names the replica that ran it")

		// The run's record is final before its lease is let go (the lease is
		// released on the way out of the run), so the lease may linger a moment.
		require.Eventually(t, func() bool {
			rec = e.do("GET", "/api/v1/leases", "", "")
			return strings.TrimSpace(rec.Body.String()) == `[]`
		}, 10*time.Second, 10*time.Millisecond, "the run released its table's lease")
		holder := control.RunnerID() + "/x"
		_, err = e.st.ClaimTables(t.Context(), holder, []string{"local.db.p"}, 1, e.now.Add(time.Minute), e.now)
		require.NoError(t, err)
		rec = e.do("GET", "/api/v1/leases", "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		leases := decode[[]map[string]any](t, rec)
		require.Len(t, leases, 1)
		require.Equal(t, "local.db.p", leases[0]["table"])
		require.Equal(t, holder, leases[0]["holder"])
		for _, k := range []string{"run_id", "acquired_at", "expires_at"} {
			require.Contains(t, leases[0], k)
		}
		rec = e.do("POST", "/api/v1/tables/db.p/optimize", writeToken, "")
		require.Equal(t, http.StatusConflict, rec.Code, "a table another replica holds is busy: %s", rec.Body.String())
		require.NoError(t, e.st.ReleaseLease(t.Context(), holder, "local.db.p"))

		rec = e.do("GET", "/api/v1/runs?table=db.p&limit=5", "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		runs := decode[[]control.Run](t, rec)
		require.Len(t, runs, 1)
		require.Equal(t, run.ID, runs[0].ID)
		rec = e.do("GET", "/api/v1/runs?table=db.other", "", "")
		require.JSONEq(t, `[]`, rec.Body.String())
	})
}

// A state-changing request without the token, or with a wrong one, is 401
// and changes nothing.
func TestWritesNeedTheToken(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML + "  read_token: " + readToken + "\n", run: true})
	e.collected(2)
	plan := e.proposed()
	for _, tc := range []struct {
		name, method, path, token string
	}{
		{"approve, no token", "POST", "/api/v1/plans/" + plan.ID + "/approve", ""},
		{"approve, wrong token", "POST", "/api/v1/plans/" + plan.ID + "/approve", "nope"},
		{"approve, a longer wrong token", "POST", "/api/v1/plans/" + plan.ID + "/approve", writeToken + "x"},
		{"approve, the read token", "POST", "/api/v1/plans/" + plan.ID + "/approve", readToken},
		{"reject, no token", "POST", "/api/v1/plans/" + plan.ID + "/reject", ""},
		{"propose, no token", "POST", "/api/v1/tables/db.p/plans", ""},
		{"optimize, no token", "POST", "/api/v1/tables/db.p/optimize", ""},
		{"ingest, no token", "POST", "/ingest/trino", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, tc.token, `{"by":"mallory"}`)
			require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
			require.Equal(t, `Bearer realm="floe"`, rec.Header().Get("WWW-Authenticate"))
			require.Contains(t, errorOf(t, rec), "Authorization: Bearer")
			require.NotContains(t, rec.Body.String(), writeToken)
		})
	}
	require.Equal(t, control.PlanProposed, e.planState(plan.ID))
	runs, err := control.ListRuns(context.Background(), e.st, "", 0)
	require.NoError(t, err)
	require.Empty(t, runs, "no run started")
	plans, err := control.ListPlans(context.Background(), e.st, control.PlanFilter{})
	require.NoError(t, err)
	require.Len(t, plans, 1, "no plan proposed")

	// With read_token set reads need either token; /healthz none.
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"nope", http.StatusUnauthorized}, {readToken, http.StatusOK}, {writeToken, http.StatusOK}} {
		for _, path := range []string{"/api/v1/plans", "/metrics", "/readyz"} {
			require.Equal(t, tc.want, e.do("GET", path, tc.token, "").Code, "%s with %q", path, tc.token)
		}
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/healthz", "", "").Code)

	rec := e.do("POST", "/api/v1/plans/"+plan.ID+"/approve", "  "+writeToken, `{"by":"alice"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, control.PlanApproved, e.planState(plan.ID))
}

// Without server.token every state-changing request is refused; reads stay
// open.
func TestNoTokenRefusesWrites(t *testing.T) {
	e := newEnv(t, envOptions{})
	rec := e.do("POST", "/api/v1/tables/db.p/plans", "anything", "")
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Contains(t, errorOf(t, rec), "server.token (FLOE_SERVER_TOKEN) is not set")
	require.Equal(t, http.StatusOK, e.do("GET", "/api/v1/plans", "", "").Code)
	// No scheduler: running now is unavailable.
	e2 := newEnv(t, envOptions{server: tokenYAML})
	rec = e2.do("POST", "/api/v1/tables/db.p/optimize", writeToken, "")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Contains(t, errorOf(t, rec), "without a scheduler")
}

// A catalog that does not answer fails readiness by name; the others pass.
func TestReadyzNamesADeadCatalog(t *testing.T) {
	e := newEnv(t, envOptions{extraCatalogs: "  dead:\n    type: rest\n    uri: http://127.0.0.1:1\n    floe.timeout: 1s\n"})
	rec := e.do("GET", "/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	r := decode[server.Readiness](t, rec)
	require.False(t, r.Ready)
	require.Equal(t, "not ready: catalog:dead", r.Error)
	require.Len(t, r.Checks, 4)
	require.Equal(t, "catalog:dead", r.Checks[0].Check)
	require.False(t, r.Checks[0].OK)
	require.NotEmpty(t, r.Checks[0].Error)
	require.True(t, r.Checks[1].OK, "catalog:local")
	require.Equal(t, "objectstore:local", r.Checks[2].Check, "the local warehouse's store")
	require.True(t, r.Checks[2].OK, "objectstore:local")
	require.True(t, r.Checks[3].OK, "store")

	m := scrape(t, e)
	require.Equal(t, 0.0, m[`floe_check_up{check="catalog:dead"}`])
	require.Equal(t, 1.0, m[`floe_check_up{check="catalog:local"}`])
	require.Equal(t, 1.0, m[`floe_check_up{check="store"}`])
}

// TestReadyzNamesADownObjectStore: /readyz checks the object store of each
// catalog whose warehouse is a location, not only the catalog: with the S3
// server down, the catalog still answers and floe is not ready (issue 42).
func TestReadyzNamesADownObjectStore(t *testing.T) {
	w := testlake.NewS3(t)
	var extra strings.Builder
	extra.WriteString("  lake:\n")
	for k, v := range w.Props {
		extra.WriteString("    " + k + ": " + strconv.Quote(v) + "\n")
	}
	e := newEnv(t, envOptions{extraCatalogs: extra.String()})
	rec := e.do("GET", "/readyz", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	w.S3.Down(true)
	rec = e.do("GET", "/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	r := decode[server.Readiness](t, rec)
	require.Equal(t, "not ready: objectstore:lake", r.Error)
	for _, c := range r.Checks {
		if c.Check == "objectstore:lake" {
			require.Contains(t, c.Error, "object store s3://floe/warehouse of catalog lake")
		}
	}
	require.Equal(t, 0.0, scrape(t, e)[`floe_check_up{check="objectstore:lake"}`])
	require.Equal(t, 1.0, scrape(t, e)[`floe_check_up{check="catalog:lake"}`])

	w.S3.Down(false)
	rec = e.do("GET", "/readyz", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
