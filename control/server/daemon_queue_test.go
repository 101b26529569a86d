package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
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
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// testEngine stands in for a distributed engine: its compaction is floe's
// own rewriter (the engine's effect), reported as a distributed engine
// does. gate, while set, holds each compaction until the gate is closed
// (then it runs) or the run's context ends (then it stops): a slow run,
// deterministically. lossy makes the compaction commit a replace of two
// data files by nothing — rows lost, which floe's check of what the engine
// committed fails with rewriter.ErrInvariant.
type testEngine struct {
	name    string
	mu      sync.Mutex
	gate    chan struct{}
	lossy   bool
	started chan string
}

func (e *testEngine) Name() string                  { return e.name }
func (e *testEngine) Kind() string                  { return rewriter.KindTrino }
func (e *testEngine) CanWrite(layout.Strategy) bool { return true }
func (e *testEngine) Ping(context.Context) error    { return nil }
func (e *testEngine) Close() error                  { return nil }
func (e *testEngine) set(gate chan struct{}, lossy bool) {
	e.mu.Lock()
	e.gate, e.lossy = gate, lossy
	e.mu.Unlock()
}

func (e *testEngine) report(step string) rewriter.StepReport {
	return rewriter.StepReport{Engine: &rewriter.EngineReport{Engine: e.name, Kind: rewriter.KindTrino, Step: step,
		Statements: []rewriter.EngineStatement{{SQL: step}}, Metrics: map[string]int64{}}}
}

func (e *testEngine) Compact(ctx context.Context, job rewriter.CompactJob) (rewriter.StepReport, error) {
	e.mu.Lock()
	gate, lossy := e.gate, e.lossy
	e.mu.Unlock()
	select {
	case e.started <- job.Table.Name:
	default:
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return rewriter.StepReport{}, ctx.Err()
		}
	}
	if lossy {
		files := job.State.DataFiles
		tx := job.State.Table.NewTransaction()
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{files[0].DataFile, files[1].DataFile}, nil, nil); err != nil {
			return rewriter.StepReport{}, err
		}
		if _, err := tx.Commit(ctx); err != nil {
			return rewriter.StepReport{}, err
		}
		return e.report("compact"), nil
	}
	if _, err := rewriter.Compact(ctx, job.State, job.Plan, job.Options); err != nil {
		return rewriter.StepReport{}, err
	}
	return e.report("compact"), nil
}

func (e *testEngine) Expire(context.Context, rewriter.ExpireJob) (rewriter.StepReport, error) {
	return e.report("expire"), nil
}

func (e *testEngine) RemoveOrphans(context.Context, rewriter.OrphanJob) (rewriter.StepReport, error) {
	return e.report("orphans"), nil
}

func (e *testEngine) RewriteManifests(context.Context, rewriter.ManifestJob) (rewriter.StepReport, error) {
	return e.report("manifests"), nil
}

// lockedBuffer collects log lines written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the log lines holding every one of parts.
func (l *lockedBuffer) lines(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.SplitSeq(l.b.String(), "\n") {
		ok := line != ""
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// daemonLake is the daemon's world for TestDaemonQueuesHaltsAndStops: a
// warehouse of three tables of small files, its state store, a webhook,
// the scheduler (one run slot) and the HTTP handler, on a test clock.
type daemonLake struct {
	w       *testlake.Warehouse
	st      *store.Store
	svc     *control.Service
	sched   *control.Scheduler
	handler http.Handler
	metrics *server.Metrics
	gate    *testEngine
	lossy   *testEngine
	logs    *lockedBuffer
	advance func(time.Duration)

	hookMu sync.Mutex
	hooked []alert.Alert
}

func newDaemonLake(t *testing.T) *daemonLake {
	t.Helper()
	ctx := t.Context()
	dl := &daemonLake{w: testlake.New(t), logs: &lockedBuffer{}}
	if c, ok := dl.w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	for _, name := range []string{"slow", "fast", "bad"} {
		tbl := dl.w.CreateTable(t, "db", name, schema, nil, iceberg.Properties{"write.target-file-size-bytes": "65536"}, nil)
		appendSmall(t, tbl, 0, 6)
	}
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var a alert.Alert
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		dl.hookMu.Lock()
		dl.hooked = append(dl.hooked, a)
		dl.hookMu.Unlock()
	}))
	t.Cleanup(hook.Close)
	// The engines' DSNs are never dialled: the opener below returns the
	// test engines.
	cfg := configtest.Load(t, dl.w, fmt.Sprintf(`server: {token: %s, max_concurrent_runs: 1}
alerts:
  webhooks: [{name: test, url: %q, format: json}]
engines:
  gate: {type: trino, dsn: "http://floe@127.0.0.1:1?catalog=iceberg", catalogs: {local: iceberg}}
  lossy: {type: trino, dsn: "http://floe@127.0.0.1:1?catalog=iceberg", catalogs: {local: iceberg}}
policies:
  default: {layout: none, mode: manual, poll_interval: 1m, enabled: {expire: false, orphans: false, manifests: false}}
  tables:
    local.db.slow: {engine: gate}
    local.db.bad: {engine: lossy, mode: adaptive}
`, writeToken, hook.URL))
	var err error
	dl.st, err = store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dl.st.Close()) })

	var clockMu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	dl.advance = func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }
	dl.gate = &testEngine{name: "gate", started: make(chan string, 4)}
	dl.lossy = &testEngine{name: "lossy", lossy: true, started: make(chan string, 4)}
	engines := control.NewEngines(cfg, func(_ context.Context, name string, _ config.EngineConfig) (rewriter.Engine, error) {
		if name == "gate" {
			return dl.gate, nil
		}
		return dl.lossy, nil
	})
	log := slog.New(slog.NewTextHandler(dl.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	catalogOf := func(context.Context, string) (catalog.Catalog, error) { return dl.w.Catalog, nil }
	dl.svc, err = control.NewService(control.Deps{Config: cfg, Catalog: catalogOf, Store: dl.st, Engines: engines, Now: clock, Logger: log})
	require.NoError(t, err)
	dl.metrics = server.NewMetrics()
	sinks, err := alert.Sinks(cfg.Alerts, alert.WebhookOptions{Attempts: 1})
	require.NoError(t, err)
	notifier, err := alert.New(alert.Options{Store: dl.st, Sinks: sinks, Repeat: cfg.AlertRepeat(), Now: clock, Logger: log})
	require.NoError(t, err)
	dl.sched = control.NewScheduler(control.SchedulerOptions{Service: dl.svc, Alerts: notifier, OnRun: dl.metrics.ObserveRun,
		MaxConcurrentRuns: cfg.Server.MaxConcurrentRuns})
	dl.handler, err = server.New(ctx, server.Deps{Config: cfg, Store: dl.st, Catalog: catalogOf, Enqueue: dl.sched.Enqueue,
		Metrics: dl.metrics, Now: clock, Logger: log, Service: dl.svc}, server.Options{})
	require.NoError(t, err)
	return dl
}

// halted are the halted alerts the webhook received.
func (dl *daemonLake) halted() []alert.Alert {
	dl.hookMu.Lock()
	defer dl.hookMu.Unlock()
	var out []alert.Alert
	for _, a := range dl.hooked {
		if a.Kind == alert.KindHalted {
			out = append(out, a)
		}
	}
	return slices.Clone(out)
}

// running is one run of the daemon, over real HTTP.
type running struct {
	t      *testing.T
	base   string
	client *http.Client
	stop   context.CancelFunc
	done   chan error
	passes chan control.Pass
	tick   chan time.Time
}

// start runs the daemon with grace until stop, serving HTTP on a free
// loopback port; passes run at start and on each tick.
func (dl *daemonLake) start(t *testing.T, grace time.Duration) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &running{t: t, base: "http://" + ln.Addr().String(), client: &http.Client{Transport: &http.Transport{}},
		done: make(chan error, 1), passes: make(chan control.Pass, 8), tick: make(chan time.Time)}
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: dl.sched, Grace: grace, Tick: r.tick, Handler: dl.handler, Listener: ln,
		Observe: func(ctx context.Context, p control.Pass) error { return dl.metrics.ObservePass(ctx, dl.svc, p) },
		OnPass:  func(p control.Pass, _ error) { r.passes <- p }})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-r.done
		r.client.CloseIdleConnections()
	})
	return r
}

// pass waits for the daemon's next pass.
func (r *running) pass() control.Pass {
	r.t.Helper()
	select {
	case p := <-r.passes:
		return p
	case <-time.After(time.Minute):
		r.t.Fatal("no scheduling pass within a minute")
	}
	return control.Pass{}
}

// do sends a request with the write token and returns the status and body.
func (r *running) do(method, path, body string) (int, string) {
	r.t.Helper()
	return get(r.t, r.client, method, r.base+path, writeToken, body)
}

// run reads run id through the API.
func (r *running) run(id string) control.Run {
	r.t.Helper()
	code, body := r.do("GET", "/api/v1/runs/"+id, "")
	require.Equal(r.t, http.StatusOK, code, body)
	var run control.Run
	require.NoError(r.t, json.Unmarshal([]byte(body), &run), body)
	return run
}

// optimize asks for a run of table through the API and returns the
// queued run of the 202.
func (r *running) optimize(table string) control.Run {
	r.t.Helper()
	code, body := r.do("POST", "/api/v1/tables/"+table+"/optimize", `{"by": "ana"}`)
	require.Equal(r.t, http.StatusAccepted, code, body)
	var run control.Run
	require.NoError(r.t, json.Unmarshal([]byte(body), &run), body)
	require.NotEmpty(r.t, run.ID, "the run id is known at once")
	require.Equal(r.t, control.StatusQueued, run.Status)
	return run
}

// appendSmall appends n small files of 300 rows to tbl, ids from
// first*300 on, and returns the table as committed.
func appendSmall(t *testing.T, tbl *table.Table, first, n int) *table.Table {
	t.Helper()
	for i := first; i < first+n; i++ {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
		for j := range 300 {
			b.Field(0).(*array.Int64Builder).Append(int64(i*300 + j))
			b.Field(1).(*array.Int64Builder).Append(int64(j % 7))
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	return tbl
}

func (dl *daemonLake) checksum(t *testing.T, name string) oracle.Sum {
	t.Helper()
	tb, err := lake.LoadTable(t.Context(), dl.w.Catalog, lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: name})
	require.NoError(t, err)
	sum, err := oracle.ChecksumIceberg(t.Context(), tb)
	require.NoError(t, err)
	return sum
}

// TestDaemonQueuesHaltsAndStops runs the daemon in-process — the actors
// together, a real state store, real HTTP, real tables:
//
//  1. a run that fails floe's check of what its engine committed
//     (rewriter.ErrInvariant) halts its table: the halted alert reaches the
//     webhook, the API says so, the next pass does not run it, and
//     resuming it through the API clears it;
//  2. an API-triggered run answers 202 with its id; with
//     max_concurrent_runs 1 and a slow run in flight, the next one waits
//     queued, visible through GET; on shutdown the queued run is recorded
//     cancelled at once, and the slow one gets the grace, then is
//     cancelled, the table intact;
//  3. a run that ends within the grace ends done;
//  4. each run is logged at info with its table, trigger, steps and
//     outcome.
func TestDaemonQueuesHaltsAndStops(t *testing.T) {
	dl := newDaemonLake(t)
	ctx := t.Context()
	bad := lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "bad"}

	// 1. The first pass runs the adaptive table; its engine loses rows.
	r := dl.start(t, 300*time.Millisecond)
	p := r.pass()
	require.Len(t, p.Runs, 1, p.Decisions)
	failed := p.Runs[0].Run
	require.Equal(t, "local.db.bad", failed.Table)
	require.Equal(t, control.StatusFailed, failed.Status)
	halted := dl.halted()
	require.Len(t, halted, 1, "the halted alert reaches the webhook")
	require.Equal(t, alert.Firing, halted[0].State)
	require.Equal(t, "local.db.bad", halted[0].Table)
	require.Equal(t, failed.ID, halted[0].RunID)

	code, body := r.do("GET", "/api/v1/tables/db.bad", "")
	require.Equal(t, http.StatusOK, code, body)
	var detail server.TableDetail
	require.NoError(t, json.Unmarshal([]byte(body), &detail))
	require.NotNil(t, detail.Hold, "the table's page says it is halted")
	require.Equal(t, failed.ID, detail.Hold.RunID)
	code, body = r.do("GET", "/api/v1/holds", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"table": "local.db.bad"`)
	code, body = r.do("POST", "/api/v1/tables/db.bad/optimize", "")
	require.Equal(t, http.StatusConflict, code, body)
	require.Contains(t, body, "floe resume local.db.bad")
	require.Eventually(t, func() bool {
		_, m := r.do("GET", "/metrics", "")
		return strings.Contains(m, `floe_table_halted{table="local.db.bad"} 1`)
	}, 10*time.Second, 10*time.Millisecond)

	dl.advance(control.BackoffBase + time.Minute)
	r.tick <- time.Now()
	p = r.pass()
	require.Empty(t, p.Runs, "a halted table is not retried")
	require.Contains(t, decisionOf(t, p, "local.db.bad").Reason, "halted since")

	dl.lossy.set(nil, false) // repaired
	code, body = r.do("POST", "/api/v1/tables/db.bad/resume", `{"by": "ana", "note": "engine repaired"}`)
	require.Equal(t, http.StatusOK, code, body)
	var hold control.Hold
	require.NoError(t, json.Unmarshal([]byte(body), &hold))
	require.Equal(t, "ana", hold.ResumedBy, "recorded as who resumed it")
	code, body = r.do("POST", "/api/v1/tables/db.bad/resume", "")
	require.Equal(t, http.StatusConflict, code, "resumed once: %s", body)
	// The halting run committed what its engine wrote (one file): writers
	// append small files again, and the table is due once more.
	tbl, err := lake.LoadTable(ctx, dl.w.Catalog, bad)
	require.NoError(t, err)
	appendSmall(t, tbl, 6, 6)
	dl.advance(2 * time.Minute)
	r.tick <- time.Now()
	p = r.pass()
	require.Len(t, p.Runs, 1, p.Decisions)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status, p.Runs[0].Run.Error)
	halted = dl.halted()
	require.Len(t, halted, 2)
	require.Equal(t, alert.Resolved, halted[1].State, "resuming resolves the alert")
	_, held, err := dl.svc.Halted(ctx, bad)
	require.NoError(t, err)
	require.False(t, held)

	// 2. A slow run takes the one run slot; the next waits queued.
	gate := make(chan struct{})
	dl.gate.set(gate, false)
	want := dl.checksum(t, "slow")
	slow := r.optimize("db.slow")
	require.Equal(t, "ana", slow.StartedBy)
	require.Equal(t, control.TriggerAPI, slow.Trigger)
	select {
	case <-dl.gate.started:
	case <-time.After(time.Minute):
		t.Fatal("the slow run did not reach its compaction")
	}
	require.Equal(t, control.StatusRunning, r.run(slow.ID).Status)
	fast := r.optimize("db.fast")
	require.Equal(t, control.StatusQueued, r.run(fast.ID).Status, "behind the concurrency limit")
	code, body = r.do("POST", "/api/v1/tables/db.slow/optimize", "")
	require.Equal(t, http.StatusConflict, code, "one run per table: %s", body)
	require.Equal(t, control.StatusQueued, r.run(fast.ID).Status, "still waiting for the slot")

	// Shutdown: the queued run is cancelled unstarted; the slow one gets
	// the grace, then is cancelled.
	began := time.Now()
	r.stop()
	select {
	case err := <-r.done:
		require.NoError(t, err)
		r.done <- err // for the cleanup
	case <-time.After(time.Minute):
		t.Fatal("the daemon did not stop within a minute")
	}
	require.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond, "the run in flight got its grace")
	got, err := control.GetRun(ctx, dl.st, fast.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusCancelled, got.Status)
	require.Contains(t, got.Error, "not started: floe serve stopped")
	require.Empty(t, got.Steps, "nothing of it ran")
	got, err = control.GetRun(ctx, dl.st, slow.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusCancelled, got.Status, got.Error)
	require.Equal(t, want, dl.checksum(t, "slow"), "the cancelled run left the table intact")
	_, err = r.client.Get(r.base + "/healthz")
	require.Error(t, err, "the HTTP server stopped with the daemon")

	// 3. With a longer grace, a run that ends within it ends done, while
	// the queued one is cancelled at once.
	r = dl.start(t, time.Minute)
	r.pass()
	slow = r.optimize("db.slow")
	<-dl.gate.started
	fast = r.optimize("db.fast")
	r.stop()
	require.Eventually(t, func() bool {
		got, err := control.GetRun(ctx, dl.st, fast.ID)
		require.NoError(t, err)
		return got.Status == control.StatusCancelled
	}, 10*time.Second, 10*time.Millisecond, "the queued run is cancelled at once")
	got, err = control.GetRun(ctx, dl.st, slow.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusRunning, got.Status, "the run in flight goes on in the grace")
	close(gate)
	select {
	case err := <-r.done:
		require.NoError(t, err)
		r.done <- err
	case <-time.After(time.Minute):
		t.Fatal("the daemon did not stop once its run ended")
	}
	got, err = control.GetRun(ctx, dl.st, slow.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, got.Status, got.Error)
	require.Equal(t, want, dl.checksum(t, "slow"))

	// 4. Nothing silent at info: the decision to run, the run's start and
	// end, each one line with the table, trigger, steps and outcome.
	require.NotEmpty(t, dl.logs.lines("msg=\"run due\"", "table=local.db.bad", "trigger=adaptive", "reason="))
	require.NotEmpty(t, dl.logs.lines("msg=\"run decided\"", "table=local.db.bad", "trigger=adaptive", "steps=", "run_id="+failed.ID))
	require.NotEmpty(t, dl.logs.lines("msg=\"run failed\"", "table=local.db.bad", "status=failed", "steps=", "run_id="+failed.ID))
	require.NotEmpty(t, dl.logs.lines("msg=\"table halted", "table=local.db.bad", "run_id="+failed.ID))
	require.NotEmpty(t, dl.logs.lines("msg=\"table resumed", "table=local.db.bad", "by=ana"))
	require.NotEmpty(t, dl.logs.lines("msg=\"run queued\"", "table=local.db.slow", "trigger=api", "by=ana", "run_id="+slow.ID))
	require.NotEmpty(t, dl.logs.lines("msg=\"run done\"", "table=local.db.slow", "trigger=api", "status=done", "run_id="+slow.ID))
	require.NotEmpty(t, dl.logs.lines("msg=\"queued run cancelled", "table=local.db.fast", "run_id="+fast.ID))
}

func decisionOf(t *testing.T, p control.Pass, table string) control.TableDecision {
	t.Helper()
	for _, d := range p.Decisions {
		if d.Table == table {
			return d
		}
	}
	t.Fatalf("no decision for %s in %v", table, p.Decisions)
	return control.TableDecision{}
}
