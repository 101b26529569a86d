package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/scalelake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// scaleEnv is a generated lake of many small real tables
// ([scalelake.Generate]) and the server over it.
type scaleEnv struct {
	t    testing.TB
	w    *testlake.Warehouse
	ids  []lake.Ident
	opts scalelake.Options
	st   *store.Store
	h    http.Handler
	// now is the server's clock: it moves a second a reading, so that an
	// index older than its max age is measured again.
	now atomic.Int64
}

func newScaleEnv(t testing.TB, n int, opts server.Options) *scaleEnv {
	t.Helper()
	w := testlake.NewLocal(t)
	lo := scalelake.Options{Tables: n, Namespaces: 5}
	start := time.Now()
	ids, err := scalelake.Generate(t.Context(), w.Catalog, "local", lo)
	require.NoError(t, err)
	t.Logf("generated %d tables in %s", n, time.Since(start).Round(time.Millisecond))
	st, err := store.Open(t.Context(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	e := &scaleEnv{t: t, w: w, ids: ids, opts: lo, st: st}
	e.now.Store(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	deps := server.Deps{Config: configtest.Load(t, w, ""), Store: st,
		Now: func() time.Time { return time.Unix(0, e.now.Add(int64(time.Second))).UTC() },
		Catalog: func(ctx context.Context, name string) (catalog.Catalog, error) {
			if name != "local" {
				return nil, fmt.Errorf("catalog %q is not configured", name)
			}
			return w.Catalog, nil
		}}
	if opts.TableIndexWait == 0 {
		opts.TableIndexWait = time.Minute
	}
	e.h, err = server.New(t.Context(), deps, opts)
	require.NoError(t, err)
	return e
}

// get answers GET path.
func (e *scaleEnv) get(path string) *httptest.ResponseRecorder {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec
}

// tables is GET /api/v1/tables?query, which must be 200.
func (e *scaleEnv) tables(query url.Values) server.TableList {
	e.t.Helper()
	rec := e.get("/api/v1/tables?" + query.Encode())
	require.Equal(e.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[server.TableList](e.t, rec)
}

// names are the tables' names.
func names(list server.TableList) []string {
	out := make([]string, 0, len(list.Tables))
	for _, s := range list.Tables {
		out = append(out, s.Table)
	}
	return out
}

// GET /api/v1/tables pages the lake by a keyset token: following
// next_page_token sees every table once, in order, while new tables are
// created between the pages (the index measures the lake again at every
// request here, so they join it mid-way); q searches the name, catalog,
// namespace and state filter, sort orders, and bad parameters are one 400
// naming each.
func TestTablePages(t *testing.T) {
	e := newScaleEnv(t, 60, server.Options{TableIndexMaxAge: time.Nanosecond})
	all := make([]string, len(e.ids))
	for i, id := range e.ids {
		all[i] = id.String()
	}

	t.Run("every table once across pages, with tables created meanwhile", func(t *testing.T) {
		var seen []string
		q := url.Values{"limit": {"7"}}
		made := 0
		for pages := 0; ; pages++ {
			require.Less(t, pages, 50, "the pages end")
			list := e.tables(q)
			require.LessOrEqual(t, len(list.Tables), 7)
			seen = append(seen, names(list)...)
			if list.NextPageToken == "" {
				break
			}
			// New tables, before and after the cursor in name order.
			for _, name := range []string{fmt.Sprintf("aaa_new_%02d", made), fmt.Sprintf("zzz_new_%02d", made)} {
				e.w.CreateTable(t, "ns00", name, iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64}), nil, nil, nil)
			}
			made++
			q.Set("page_token", list.NextPageToken)
		}
		require.Equal(t, 8, made, "60 tables, 7 a page")
		var old []string
		for _, n := range seen {
			if !strings.Contains(n, "_new_") {
				old = append(old, n)
			}
		}
		require.Equal(t, slices.Sorted(slices.Values(all)), old, "every table that was there once, in name order")
		require.Len(t, seen, len(slices.Compact(slices.Sorted(slices.Values(seen)))), "no table twice")
		require.True(t, slices.IsSortedFunc(seen, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }))
	})

	t.Run("search, filters and sorts", func(t *testing.T) {
		// The tables created above are listed and measured by a refresh.
		require.Eventually(t, func() bool {
			list := e.tables(nil)
			return list.Total == len(all)+16 && list.Measuring == nil
		}, time.Minute, 20*time.Millisecond)
		list := e.tables(url.Values{"q": {"ORDERS"}, "limit": {"1000"}})
		var want []string
		for _, n := range all {
			if strings.Contains(n, "orders") {
				want = append(want, n)
			}
		}
		require.Equal(t, slices.Sorted(slices.Values(want)), names(list))
		require.Equal(t, len(want), list.Total)

		list = e.tables(url.Values{"namespace": {"NS03"}, "catalog": {"local"}, "limit": {"1000"}})
		require.NotEmpty(t, list.Tables)
		for _, s := range list.Tables {
			require.True(t, strings.HasPrefix(s.Table, "local.ns03."), s.Table)
		}
		require.Empty(t, e.tables(url.Values{"catalog": {"other"}}).Tables)

		// Every tenth table has a streaming writer's small files: not
		// healthy. The states split the lake.
		byState := map[string][]string{}
		total := 0
		for _, state := range []string{"healthy", "warning", "critical", "error"} {
			list := e.tables(url.Values{"state": {state}, "limit": {"1000"}})
			for _, s := range list.Tables {
				if state == "error" {
					require.NotEmpty(t, s.Error)
				} else {
					require.Equal(t, state, string(s.Health.Status), s.Table)
				}
			}
			byState[state] = names(list)
			total += list.Total
		}
		require.Equal(t, e.tables(nil).Total, total)
		require.NotEmpty(t, byState["healthy"])
		unhealthy := append(byState["warning"], byState["critical"]...)
		require.Contains(t, unhealthy, e.ids[10].String())

		// Worst first, then by name.
		list = e.tables(url.Values{"sort": {"-health"}, "limit": {"1000"}})
		rank := map[lake.Status]int{lake.Healthy: 0, lake.Warning: 1, lake.Critical: 2}
		for i := 1; i < len(list.Tables); i++ {
			a, b := list.Tables[i-1], list.Tables[i]
			require.GreaterOrEqual(t, rank[a.Health.Status], rank[b.Health.Status], "%s before %s", a.Table, b.Table)
		}
		require.NotEqual(t, lake.Healthy, list.Tables[0].Health.Status)
		list = e.tables(url.Values{"sort": {"-backlog"}, "limit": {"1000"}})
		for i := 1; i < len(list.Tables); i++ {
			require.GreaterOrEqual(t, list.Tables[i-1].Health.Metrics.BacklogAgeSec, list.Tables[i].Health.Metrics.BacklogAgeSec)
		}
		// Paging a sort by health sees every table once too.
		var seen []string
		q := url.Values{"sort": {"-health"}, "limit": {"9"}}
		for {
			list := e.tables(q)
			seen = append(seen, names(list)...)
			if list.NextPageToken == "" {
				break
			}
			q.Set("page_token", list.NextPageToken)
		}
		require.Equal(t, names(e.tables(url.Values{"sort": {"-health"}, "limit": {"1000"}})), seen)
	})

	t.Run("sort by expected gain", func(t *testing.T) {
		// Pending plans project gains for two tables; a rejected one's
		// does not count.
		for i, p := range []struct {
			table, state string
			skipped      float64
		}{{e.ids[3].String(), "proposed", 40}, {e.ids[7].String(), "approved", 75}, {e.ids[9].String(), "rejected", 99}} {
			_, err := e.st.InsertPlan(t.Context(), store.PlanRecord{ID: fmt.Sprintf("gain%d", i), Table: p.table, Layout: "sort(id)", State: p.state,
				CreatedAt: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Projection: json.RawMessage(fmt.Sprintf(`{"skipped_pct": %g, "current_skipped_pct": 5}`, p.skipped))})
			require.NoError(t, err)
		}
		list := e.tables(url.Values{"sort": {"-gain"}, "limit": {"3"}})
		require.Equal(t, []string{e.ids[7].String(), e.ids[3].String()}, names(list)[:2])
		require.InDelta(t, 70, *list.Tables[0].ExpectedGainPP, 1e-9)
		require.InDelta(t, 35, *list.Tables[1].ExpectedGainPP, 1e-9)
		require.Nil(t, list.Tables[2].ExpectedGainPP, "tables without a gain come after, by name")
		require.Equal(t, e.tables(url.Values{"limit": {"1"}}).Tables[0].Table, list.Tables[2].Table)
		list = e.tables(url.Values{"sort": {"gain"}, "limit": {"2"}})
		require.Equal(t, []string{e.ids[3].String(), e.ids[7].String()}, names(list), "ascending, the gainless still last")
	})

	t.Run("bad parameters", func(t *testing.T) {
		token := e.tables(url.Values{"limit": {"2"}}).NextPageToken
		require.NotEmpty(t, token)
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"sort=size&state=meh&limit=0", []string{`sort "size": want name, gain, health or backlog`, `state "meh": want healthy, warning, critical or error`, `limit "0": want a whole number from 1 to 1000`}},
			{"limit=5000", []string{`limit "5000"`}},
			{"limit=ten", []string{`limit "ten"`}},
			{"page_token=garbage", []string{`page_token "garbage": not a page token of tables`}},
			{"sort=-gain&page_token=" + token, []string{"page_token: it continues another query"}},
		} {
			rec := e.get("/api/v1/tables?" + tc.query)
			require.Equal(t, http.StatusBadRequest, rec.Code, tc.query)
			msg := errorOf(t, rec)
			for _, w := range tc.want {
				require.Contains(t, msg, w, tc.query)
			}
		}
	})
}

// GET /api/v1/runs and /api/v1/plans page by a token in X-Next-Page-Token
// (and a Link rel="next"), their bodies still the JSON arrays they were:
// every run and plan is seen once while new ones are recorded between the
// pages.
func TestRunAndPlanPages(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	record := func() {
		n++
		when := at.Add(time.Duration(n/2) * time.Minute) // pairs share a time
		require.NoError(t, e.st.StartRun(ctx, store.RunRecord{ID: fmt.Sprintf("r%03d", n), Table: "local.db.p", Status: "done", StartedAt: when, EndedAt: when}))
		_, err := e.st.InsertPlan(ctx, store.PlanRecord{ID: fmt.Sprintf("p%03d", n), Table: "local.db.p", Layout: "sort(id)", State: "rejected", CreatedAt: when,
			Projection: json.RawMessage(`{}`)})
		require.NoError(t, err)
	}
	for range 11 {
		record()
	}
	for _, list := range []string{"/api/v1/runs?table=db.p", "/api/v1/plans?table=local.db.p"} {
		rec := e.do("GET", list+"&limit=1000", "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		want := ids(t, rec)
		require.Len(t, want, n)
		require.Empty(t, rec.Header().Get(server.NextPageHeader), "one page: no next")

		var seen []string
		path := list + "&limit=4"
		for pages := 0; ; pages++ {
			require.Less(t, pages, 20)
			rec := e.do("GET", path, "", "")
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			page := ids(t, rec)
			require.LessOrEqual(t, len(page), 4)
			seen = append(seen, page...)
			next := rec.Header().Get(server.NextPageHeader)
			if next == "" {
				break
			}
			require.Contains(t, rec.Header().Get("Link"), "page_token="+url.QueryEscape(next))
			require.Contains(t, rec.Header().Get("Link"), `rel="next"`)
			record() // newer than every page so far
			path = list + "&limit=4&page_token=" + url.QueryEscape(next)
		}
		require.Equal(t, want, seen, list)
	}
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/runs?limit=0", `limit "0": want a whole number from 1 to 1000`},
		{"/api/v1/runs?table=db.p&page_token=x", `page_token "x": not a page token of runs`},
		{"/api/v1/plans?state=pending&limit=-1", `limit "-1"`},
		{"/api/v1/holds?all=maybe&limit=2000", `all "maybe": want true or false; limit "2000"`},
		{"/api/v1/leases?limit=x", `limit "x"`},
	} {
		rec := e.do("GET", tc.path, "", "")
		require.Equal(t, http.StatusBadRequest, rec.Code, tc.path)
		require.Contains(t, errorOf(t, rec), tc.want, tc.path)
	}
	// A runs token is no plans token.
	rec := e.do("GET", "/api/v1/runs?limit=1", "", "")
	rec = e.do("GET", "/api/v1/plans?page_token="+url.QueryEscape(rec.Header().Get(server.NextPageHeader)), "", "")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, errorOf(t, rec), "not a page token of plans")
}

// ids are the ids of a JSON array of runs or plans.
func ids(t testing.TB, rec *httptest.ResponseRecorder) []string {
	t.Helper()
	var items []struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &items), rec.Body.String())
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// The first request after start waits for the first measuring of the lake
// only so long, then answers with the tables measured so far, says how
// many, and lists the others as measuring; concurrent requests share one
// measuring, and a later request sees every table measured.
func TestFirstRequestSaysHowFarMeasuringGot(t *testing.T) {
	e := newScaleEnv(t, 40, server.Options{TableIndexWait: time.Millisecond, TableIndexWorkers: 1})
	var wg sync.WaitGroup
	lists := make([]server.TableList, 4)
	for i := range lists {
		wg.Go(func() { lists[i] = e.tables(url.Values{"limit": {"1000"}}) })
	}
	wg.Wait()
	partial := 0
	for _, list := range lists {
		require.Len(t, list.Tables, 40, "every listed table, measured or not")
		if list.Measuring != nil {
			partial++
			require.Equal(t, 40, list.Measuring.Tables)
			require.Less(t, list.Measuring.Measured, 40)
			measuring := 0
			for _, s := range list.Tables {
				if s.Measuring {
					measuring++
					require.Nil(t, s.Health)
				}
			}
			require.Equal(t, 40-list.Measuring.Measured, measuring)
		}
	}
	require.Positive(t, partial, "40 tables take longer than a millisecond")
	require.Eventually(t, func() bool { return e.tables(nil).Measuring == nil }, time.Minute, 50*time.Millisecond)
	for _, s := range e.tables(url.Values{"limit": {"1000"}}).Tables {
		require.False(t, s.Measuring)
		require.NotNil(t, s.Health, s.Table)
	}
}

// dashboardTables is how many tables the dashboard's browser test
// generates: FLOE_DASHBOARD_TABLES (10000 for the benchmark's screenshot),
// else 200.
func dashboardTables(t testing.TB) int {
	t.Helper()
	v := os.Getenv("FLOE_DASHBOARD_TABLES")
	if v == "" {
		return 200
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "FLOE_DASHBOARD_TABLES")
	require.Positive(t, n, "FLOE_DASHBOARD_TABLES")
	return n
}

// GET /api/v1/holds?all=true pages through every hold once, even holds of
// one table placed in the same nanosecond (a hold resumed and the next one
// placed at once), which the page token tells apart by their order.
func TestHoldPagesKeepSameInstantHolds(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, table := range []string{"local.db.p", "local.db.p", "local.db.p", "local.db.q", "local.db.q"} {
		_, placed, err := e.st.HoldTable(ctx, store.HoldRecord{Table: table, RunID: fmt.Sprintf("r%d", i), Reason: "invariant", HeldAt: at})
		require.NoError(t, err)
		require.True(t, placed)
		if i != 2 && i != 4 {
			_, err = e.st.ResumeTable(ctx, table, "alice", "looked", at)
			require.NoError(t, err)
		}
	}
	runIDs := func(rec *httptest.ResponseRecorder) []string {
		var holds []struct {
			RunID string `json:"run_id"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &holds), rec.Body.String())
		var out []string
		for _, h := range holds {
			out = append(out, h.RunID)
		}
		return out
	}
	rec := e.do("GET", "/api/v1/holds?all=true&limit=1000", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	want := runIDs(rec)
	require.Equal(t, []string{"r2", "r1", "r0", "r4", "r3"}, want, "by table, newest first: the later id first at one instant")

	var seen []string
	path := "/api/v1/holds?all=true&limit=1"
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		rec := e.do("GET", path, "", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		seen = append(seen, runIDs(rec)...)
		next := rec.Header().Get(server.NextPageHeader)
		if next == "" {
			break
		}
		path = "/api/v1/holds?all=true&limit=1&page_token=" + url.QueryEscape(next)
	}
	require.Equal(t, want, seen)
}
