package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// cancelOn is a log handler that calls cancel when the orphans step of a
// run is done, that is as the compaction starts: the daemon's SIGTERM
// arriving mid-run.
type cancelOn struct {
	slog.Handler
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (h *cancelOn) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "optimize step done" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "step" && a.Value.String() == control.StepOrphans {
				h.mu.Lock()
				if h.cancel != nil {
					h.cancel()
				}
				h.mu.Unlock()
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

func (h *cancelOn) Enabled(context.Context, slog.Level) bool { return true }

func (h *cancelOn) WithAttrs(as []slog.Attr) slog.Handler {
	return &derived{h, h.Handler.WithAttrs(as)}
}

type derived struct {
	root *cancelOn
	slog.Handler
}

func (d *derived) Handle(ctx context.Context, r slog.Record) error {
	_ = d.root.Handle(ctx, r.Clone()) // the root checks the record; its own output is discarded
	return nil
}
func (d *derived) Enabled(context.Context, slog.Level) bool { return true }

func (d *derived) WithAttrs(as []slog.Attr) slog.Handler {
	return &derived{d.root, d.Handler.WithAttrs(as)}
}

// TestDaemonEndToEnd drives the daemon's parts together on a local
// warehouse with a controllable clock: a streaming writer makes small
// files, the adaptive trigger fires and the run is recorded; a layout plan
// is proposed and waits; approval through the API runs it; /metrics shows
// it; a failing step raises the freshness alert on a webhook receiver and
// a good run resolves it; requests without the token get 401 and change
// nothing; a shutdown during a compaction leaves the table consistent and
// the run recorded cancelled.
func TestDaemonEndToEnd(t *testing.T) {
	ctx := t.Context()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	tbl := w.CreateTable(t, "db", "events", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "65536"}, nil)
	next := int64(0)
	id := lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "events"}
	write := func(files int) { // the streaming writer: one small file per commit
		if next > 0 { // the daemon committed since: append to the current table
			var err error
			tbl, err = lake.LoadTable(ctx, w.Catalog, id)
			require.NoError(t, err)
		}
		for range files {
			b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
			for j := range 200 {
				b.Field(0).(*array.Int64Builder).Append(next*1000 + int64(j))
				b.Field(1).(*array.Int64Builder).Append(int64(j % 5))
			}
			rec := b.NewRecordBatch()
			b.Release()
			tbl = testlake.Append(t, tbl, rec)
			rec.Release()
			next++
		}
	}
	write(12)

	var (
		mu       sync.Mutex
		received []alert.Alert
	)
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var a alert.Alert
		require.NoError(t, json.NewDecoder(r.Body).Decode(&a))
		mu.Lock()
		received = append(received, a)
		mu.Unlock()
	}))
	defer hook.Close()
	alerts := func() []alert.Alert { mu.Lock(); defer mu.Unlock(); return slices.Clone(received) }

	cfg := configtest.Load(t, w, fmt.Sprintf(`server: {token: %s}
alerts:
  webhooks: [{name: test, url: %q, format: json}]
policies:
  default: {layout: "sort(id)", poll_interval: 1m, freshness_sla: 2h, alert_after_failures: 5}
`, writeToken, hook.URL))
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })

	var clockMu sync.Mutex
	// The daemon's clock starts an hour behind the wall clock that
	// iceberg-go stamps snapshots with, so that what the test writes after
	// a run lands after that run on the daemon's clock too.
	now := time.Now().UTC().Add(-time.Hour)
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }
	metrics := server.NewMetrics()
	sinks, err := alert.Sinks(cfg.Alerts, alert.WebhookOptions{Attempts: 1})
	require.NoError(t, err)
	notifier, err := alert.New(alert.Options{Store: st, Sinks: sinks, Repeat: cfg.AlertRepeat(), Now: clock,
		OnNotify: func(a alert.Alert) { metrics.AlertSent(string(a.Kind)) }})
	require.NoError(t, err)
	logs := &cancelOn{Handler: slog.DiscardHandler}
	catalogOf := func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }
	sched := control.NewScheduler(control.SchedulerOptions{Config: cfg, Store: st, Catalog: catalogOf, Now: clock,
		Alerts: notifier, OnRun: metrics.ObserveRun, Logger: slog.New(logs)})
	h, err := server.New(ctx, server.Deps{Config: cfg, Store: st, Catalog: catalogOf, Enqueue: sched.Enqueue, Metrics: metrics, Now: clock},
		server.Options{})
	require.NoError(t, err)
	do := func(method, path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(`{"by": "ana"}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	checksum := func() oracle.Sum {
		tb, err := lake.LoadTable(ctx, w.Catalog, id)
		require.NoError(t, err)
		sum, err := oracle.ChecksumIceberg(ctx, tb)
		require.NoError(t, err)
		return sum
	}
	pass := func() control.Pass {
		p, err := sched.RunPass(ctx)
		require.NoError(t, err)
		return p
	}

	// 1. Small files fire the adaptive trigger: a run is recorded; the
	// policy's layout is proposed as a plan, and the compaction waits.
	p := pass()
	require.Len(t, p.Runs, 1, p.Decisions)
	require.Equal(t, control.TriggerAdaptive, p.Runs[0].Run.Trigger)
	require.NotNil(t, p.Runs[0].Decision.Plan)
	plan := p.Runs[0].Decision.Plan.Plan
	require.Equal(t, control.PlanProposed, plan.State)

	// 2. Without the token nothing changes.
	require.Equal(t, http.StatusUnauthorized, do("POST", "/api/v1/plans/"+plan.ID+"/approve", "").Code)
	got, err := control.GetPlan(ctx, st, plan.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanProposed, got.State)

	// 3. Approved through the API, the plan runs at the next pass.
	require.Equal(t, http.StatusOK, do("POST", "/api/v1/plans/"+plan.ID+"/approve", writeToken).Code)
	want := checksum()
	advance(2 * time.Minute)
	p = pass()
	require.Len(t, p.Runs, 1)
	require.Equal(t, plan.ID, p.Runs[0].Run.PlanID)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status)
	require.Equal(t, want, checksum())
	got, err = control.GetPlan(ctx, st, plan.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, got.State)
	scrape := do("GET", "/metrics", "").Body.String()
	require.Contains(t, scrape, `floe_runs_total{status="done",step="compact",table="local.db.events"} 1`)

	// 4. More small files; a data file lost from storage fails the
	// compaction, and past the freshness SLA the alert fires on the webhook.
	write(12)
	tb, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	state, err := lake.LoadState(ctx, id, tb, lake.LoadOptions{})
	require.NoError(t, err)
	restore := w.Hide(t, smallest(state.DataFiles))
	advance(4 * time.Hour)
	p, err = sched.RunPass(ctx)
	require.NoError(t, err)
	require.Len(t, p.Runs, 1)
	require.Equal(t, control.StatusFailed, p.Runs[0].Run.Status)
	fired := alerts()
	require.NotEmpty(t, fired)
	last := fired[len(fired)-1]
	require.Equal(t, alert.KindFreshness, last.Kind)
	require.Equal(t, alert.Firing, last.State)
	require.Equal(t, id.String(), last.Table)
	require.Equal(t, p.Runs[0].Run.ID, last.RunID)
	require.Contains(t, do("GET", "/metrics", "").Body.String(), `floe_alerts_total{kind="freshness"} 1`)

	// 5. The file back, a good run resolves it.
	restore()
	want = checksum()
	advance(control.BackoffBase + time.Minute)
	p = pass()
	require.Len(t, p.Runs, 1)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status)
	require.Equal(t, want, checksum())
	last = alerts()[len(alerts())-1]
	require.Equal(t, alert.KindFreshness, last.Kind)
	require.Equal(t, alert.Resolved, last.State)

	// 6. Shutdown during a compaction: runs are cancelled after the grace,
	// the table keeps every row and the run is recorded cancelled.
	write(12)
	want = checksum()
	advance(2 * time.Minute)
	sctx, stop := context.WithCancel(ctx)
	logs.mu.Lock()
	logs.cancel = stop
	logs.mu.Unlock()
	var passes []control.Pass
	// The daemon returns when the cancelled pass ends (the tick never
	// comes).
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: sched, Grace: time.Nanosecond, Tick: make(chan time.Time),
		OnPass: func(p control.Pass, _ error) { passes = append(passes, p) }})
	require.NoError(t, err)
	require.NoError(t, d.Run(sctx))
	require.Len(t, passes, 1)
	require.Len(t, passes[0].Runs, 1)
	run := passes[0].Runs[0].Run
	require.Equal(t, control.StatusCancelled, run.Status, run.Error)
	stored, err := control.GetRun(ctx, st, run.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusCancelled, stored.Status)
	require.Equal(t, want, checksum())
}

// smallest is the path of the smallest data file (one the compaction
// reads).
func smallest(files []lake.File) string {
	best := files[0]
	for _, f := range files[1:] {
		if f.SizeBytes < best.SizeBytes {
			best = f
		}
	}
	return best.Path
}
