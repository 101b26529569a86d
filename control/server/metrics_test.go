package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// scrape reads /metrics into series → value (Go and process series left
// out).
func scrape(t *testing.T, e *env) map[string]float64 {
	t.Helper()
	rec := e.do("GET", "/metrics", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := map[string]float64{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if !strings.HasPrefix(line, "floe_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	return out
}

// The scrape holds every named series, with the values of the table's
// health as the API measured it.
func TestMetricsMatchHealth(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML, run: true})
	e.collected(2)
	plan := e.proposed()

	run := e.optimize("db.p")
	// The scheduler's OnRun reports runs; here the test does.
	e.metrics.ObserveRun(run)
	e.metrics.AlertSent("freshness")
	e.metrics.AlertSent("freshness")
	e.metrics.SetCheck("scheduler", true)

	rec := e.do("GET", "/api/v1/tables/db.p", "", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	h := decode[struct {
		Health lake.Health `json:"health"`
	}](t, rec).Health

	m := scrape(t, e)
	tl := `table="local.db.p"`
	for _, s := range []lake.Status{lake.Healthy, lake.Warning, lake.Critical} {
		want := 0.0
		if s == h.Status {
			want = 1
		}
		require.Equal(t, want, m[`floe_table_health_status{status="`+string(s)+`",`+tl+`}`], s)
	}
	require.Equal(t, float64(h.Metrics.DataFiles), m[`floe_table_data_files{`+tl+`}`])
	require.Equal(t, 8.0, m[`floe_table_data_files{`+tl+`}`])
	require.InDelta(t, h.Metrics.SmallFileRatio, m[`floe_table_small_file_ratio{`+tl+`}`], 1e-12)
	require.Equal(t, float64(h.Metrics.Snapshots), m[`floe_table_snapshots{`+tl+`}`])
	require.Nil(t, h.Metrics.LayoutDrift, "no tree recorded")
	require.NotContains(t, m, `floe_table_layout_drift_ratio{`+tl+`}`, "no tree recorded: no drift series")
	require.Equal(t, float64(h.Metrics.DeleteFiles), m[`floe_table_delete_files{`+tl+`}`])
	require.Equal(t, float64(e.now.Unix()), m[`floe_last_successful_run_timestamp_seconds{`+tl+`}`])
	if h.Metrics.LastCompactionAgeSec >= 0 {
		require.InDelta(t, float64(h.Metrics.LastCompactionAgeSec)/3600, m[`floe_last_compaction_age_hours{`+tl+`}`], 1e-9)
	} else {
		require.NotContains(t, m, `floe_last_compaction_age_hours{`+tl+`}`, "never compacted: no age")
	}

	require.Equal(t, 1.0, m[`floe_runs_total{status="done",step="all",`+tl+`}`])
	require.Len(t, run.Steps, 5, "expire, orphans, compact, deletes, manifests")
	for _, st := range run.Steps {
		require.Equal(t, 1.0, m[`floe_runs_total{status="`+string(st.Status)+`",step="`+st.Name+`",`+tl+`}`], st.Name)
	}
	require.Equal(t, 1.0, m[`floe_runs_total{status="skipped",step="compact",`+tl+`}`], "the policy compacts nothing")
	require.Equal(t, 1.0, m[`floe_run_duration_seconds_count{step="all"}`])
	require.Equal(t, 1.0, m[`floe_plans{state="proposed"}`])
	require.Equal(t, 0.0, m[`floe_plans{state="approved"}`])
	require.Equal(t, 2.0, m[`floe_alerts_total{kind="freshness"}`])
	require.Equal(t, 1.0, m[`floe_check_up{check="scheduler"}`])

	// Plans are refreshed from the store on each scrape.
	_, err := control.RejectPlan(context.Background(), e.st, plan.ID, "bob", time.Time{})
	require.NoError(t, err)
	m = scrape(t, e)
	require.Equal(t, 0.0, m[`floe_plans{state="proposed"}`])
	require.Equal(t, 1.0, m[`floe_plans{state="rejected"}`])

	// A table that was compacted gets its age; a forgotten one has none.
	// A table that records a tree gets its drift, and loses the series
	// when the drift cannot be measured.
	h.Metrics.LastCompactionAgeSec = 3 * 3600
	h.Metrics.LayoutDrift = &lake.LayoutDrift{Layout: "tree(a, b)", Files: 3, Rows: 120, RowsRatio: 0.25}
	e.metrics.ObserveHealth(h, time.Time{})
	m = scrape(t, e)
	require.Equal(t, 3.0, m[`floe_last_compaction_age_hours{`+tl+`}`])
	require.Equal(t, 0.25, m[`floe_table_layout_drift_ratio{`+tl+`}`])
	h.Metrics.LayoutDrift.Problem = `the tree's column "b" is gone`
	e.metrics.ObserveHealth(h, time.Time{})
	require.NotContains(t, scrape(t, e), `floe_table_layout_drift_ratio{`+tl+`}`)
	require.Equal(t, float64(e.now.Unix()), m[`floe_last_successful_run_timestamp_seconds{`+tl+`}`], "a zero time keeps the last success")
	e.metrics.ForgetTable("local.db.p")
	m = scrape(t, e)
	require.NotContains(t, m, `floe_table_data_files{`+tl+`}`)
}

// The telemetry endpoints of floe collect --listen are mounted too, and
// count what they store.
func TestIngestMounted(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML})
	body := `{"report-type":"scan-report","table-name":"db.p","snapshot-id":1,"schema-id":0,"projected-field-ids":[2],
	  "filter":{"type":"eq","term":"id","value":42},
	  "projected-field-names":["v"],
	  "metrics":{"result-data-files":{"unit":"count","value":1},"skipped-data-files":{"unit":"count","value":7}}}`
	for range 2 {
		rec := e.do("POST", "/ingest/iceberg/v1/local/namespaces/db/tables/p/metrics", writeToken, body)
		require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	}
	evs, err := e.st.Queries(context.Background(), store.QueryFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	require.Equal(t, "p", evs[0].Tables[0].Name)
	m := scrape(t, e)
	require.Equal(t, 2.0, m[`floe_telemetry_events_total{source="`+evs[0].Source+`"}`], "each event received and stored counts")

	rec := e.do("GET", "/ingest/trino", writeToken, "")
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code, "a GET is a read: let through, but the listener only takes POST")
}

// A run whose compaction checked its plan's projection sets the table's
// projection error and counts whether the projection held.
func TestMetricsProjectionCheck(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML})
	t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	run := func(delta float64, within bool) control.Run {
		return control.Run{ID: "r", Table: "local.db.p", Status: control.StatusDone, StartedAt: t0, EndedAt: t0.Add(time.Minute),
			Steps: []control.Step{{Name: control.StepCompact, Status: control.StatusDone, StartedAt: t0, EndedAt: t0.Add(time.Minute),
				Layout: &control.LayoutCheck{PlanID: "p1", Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}}, Queries: 3, ProjectedSkippedPct: 60, ErrorPP: 1,
					MeasuredSkippedPct: 60 + delta, DeltaPP: delta, WithinError: within}}}}
	}
	e.metrics.ObserveRun(run(-0.5, true))
	e.metrics.ObserveRun(run(-12.5, false))
	m := scrape(t, e)
	require.Equal(t, -12.5, m[`floe_projection_error_pp{table="local.db.p"}`], "the newest check")
	require.Equal(t, 1.0, m[`floe_projection_checks_total{within_error="true"}`])
	require.Equal(t, 1.0, m[`floe_projection_checks_total{within_error="false"}`])
}

// TestMetricsPrune: a telemetry pruning of the env's store is scraped as
// the store's size, its raw and folded events and shapes, and the raw and
// folded events pruned.
func TestMetricsPrune(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML})
	e.collected(3)
	m := scrape(t, e)
	require.Zero(t, m["floe_telemetry_pruned_events_total"])

	// Every collected query is older than a retention of a day, seen from
	// a year on.
	later := func() time.Time { return e.now.Add(365 * 24 * time.Hour) }
	r, err := control.PruneTelemetry(t.Context(), e.st, control.PruneOptions{Retention: 24 * time.Hour, Now: later})
	require.NoError(t, err)
	require.Equal(t, 3, r.Deleted)
	e.metrics.ObservePrune(r)
	r, err = control.PruneTelemetry(t.Context(), e.st, control.PruneOptions{Retention: 24 * time.Hour, Now: later})
	require.NoError(t, err)
	e.metrics.ObservePrune(r)

	m = scrape(t, e)
	require.Equal(t, 3.0, m["floe_telemetry_pruned_events_total"])
	require.Equal(t, 0.0, m[`floe_state_store_events{form="raw"}`])
	require.Equal(t, 3.0, m[`floe_state_store_events{form="folded"}`])
	require.Equal(t, float64(r.Size.Bytes), m["floe_state_store_bytes"])
	require.Positive(t, m["floe_state_store_bytes"])
	require.Equal(t, float64(r.Size.FoldedShapes), m["floe_state_store_shapes"])
	require.Positive(t, m["floe_state_store_shapes"])
	require.Zero(t, m["floe_telemetry_pruned_folded_events_total"], "within the history of 400 days")

	// Seen from two years on, the folded events are past the history.
	r, err = control.PruneTelemetry(t.Context(), e.st, control.PruneOptions{Retention: 24 * time.Hour, Now: func() time.Time { return e.now.Add(730 * 24 * time.Hour) }})
	require.NoError(t, err)
	e.metrics.ObservePrune(r)
	m = scrape(t, e)
	require.Equal(t, 3.0, m["floe_telemetry_pruned_folded_events_total"])
	require.Equal(t, 0.0, m[`floe_state_store_events{form="folded"}`])
	require.Equal(t, 0.0, m["floe_state_store_shapes"])
}

// TestMetricsRunPrune: the runs a pruning of the run history deleted are
// counted; a table's last success is kept and stays scraped.
func TestMetricsRunPrune(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML})
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Hour)
		require.NoError(t, e.st.StartRun(ctx, store.RunRecord{ID: "old" + strconv.Itoa(i), Table: "local.db.p", Status: "done", StartedAt: at, EndedAt: at.Add(time.Minute)}))
	}
	m := scrape(t, e)
	require.Zero(t, m["floe_runs_pruned_total"])
	r, err := control.PruneRuns(ctx, e.st, control.RunPruneOptions{Retention: 90 * 24 * time.Hour, Now: func() time.Time { return t0.AddDate(1, 0, 0) }})
	require.NoError(t, err)
	e.metrics.ObserveRunPrune(r)
	m = scrape(t, e)
	require.Equal(t, 2.0, m["floe_runs_pruned_total"], "the newest success is kept")
	runs, err := e.st.Runs(ctx, "local.db.p", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, "old2", runs[0].ID)
}
