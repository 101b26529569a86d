package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
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

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// racingCatalog is a catalog beside which a streaming writer appends to
// table racy just before each compaction (a replace snapshot) commits, so
// that every compaction of racy loses its commit race. Tables it loads
// commit through it.
type racingCatalog struct {
	catalog.Catalog
	racy   table.Identifier
	writer func(ctx context.Context) error
	races  int
}

func (c *racingCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func (c *racingCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if slices.Equal(id, c.racy) {
		js, err := json.Marshal(updates)
		if err != nil {
			return nil, "", err
		}
		if strings.Contains(string(js), `"operation":"replace"`) {
			c.races++
			if err := c.writer(ctx); err != nil {
				return nil, "", fmt.Errorf("the racing writer: %w", err)
			}
		}
	}
	return c.Catalog.CommitTable(ctx, id, reqs, updates)
}

// TestDaemonLiveness is seed 2 on a controllable clock: nothing that stops
// maintenance stays silent. Passes of the daemon's scheduler over a local
// warehouse, with the alerts on a webhook receiver and the metrics read
// from /metrics:
//
//   - a manual table never compacted, past its SLA, fires freshness;
//   - a table whose compactions all lose their commit race (a writer
//     appends before each) records failed runs and fires failures;
//   - a table whose policy layout names a column since renamed records a
//     failed run and fires failures;
//   - a static table (compacted, nothing written since) stays quiet;
//   - every listed table has the backlog series, never-compacted ones too,
//     and the heartbeat moves with each pass;
//   - the catalog unlistable fires unreachable only once the outage lasts
//     server.unreachable_after, and resolves when the catalog returns;
//   - a scheduled table whose run cannot start fires late after
//     server.run_late_after, naming why, and resolves when the run starts;
//   - a corrupted state store turns /readyz and doctor red.
func TestDaemonLiveness(t *testing.T) {
	ctx := t.Context()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})
	ident := func(name string) lake.Ident {
		return lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: name}
	}
	next := int64(0)
	rows := func(tbl *table.Table, n int) *table.Table {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
		defer b.Release()
		for j := range n {
			b.Field(0).(*array.Int64Builder).Append(next)
			b.Field(1).(*array.Int64Builder).Append(int64(j % 7))
			next++
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		return testlake.Append(t, tbl, rec)
	}
	create := func(name string, files int) *table.Table {
		tbl := w.CreateTable(t, "db", name, schema, nil, nil, nil)
		for range files {
			tbl = rows(tbl, 50)
		}
		return tbl
	}
	create("manual", 6)
	create("racy", 6)
	create("nightly", 6)
	renamed := create("renamed", 6)
	tx := renamed.NewTransaction()
	us := tx.UpdateSchema(true, false)
	us.RenameColumn([]string{"v"}, "value")
	require.NoError(t, us.Commit())
	_, err := tx.Commit(ctx)
	require.NoError(t, err)
	static := create("static", 6)
	sst, err := lake.LoadState(ctx, ident("static"), static, lake.LoadOptions{})
	require.NoError(t, err)
	cplan, err := rewriter.PlanCompaction(sst, rewriter.CompactOptions{})
	require.NoError(t, err)
	_, err = rewriter.Compact(ctx, sst, cplan, rewriter.CompactOptions{})
	require.NoError(t, err)

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
	// sent returns the alerts received since the last call.
	seen := 0
	sent := func() []alert.Alert {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(received[seen:])
		seen = len(received)
		return out
	}
	type key struct {
		kind  alert.Kind
		key   string
		state alert.State
	}
	keys := func(as []alert.Alert) []key {
		var out []key
		for _, a := range as {
			out = append(out, key{a.Kind, a.Key, a.State})
		}
		return out
	}

	cfg := configtest.Load(t, w, fmt.Sprintf(`server: {unreachable_after: 10m, run_late_after: 30m}
alerts:
  webhooks: [{name: test, url: %q, format: json}]
policies:
  default: {layout: none, mode: manual, freshness_sla: 1h, alert_after_failures: 1}
  tables:
    local.db.racy: {mode: adaptive, poll_interval: 1m, freshness_sla: 0}
    local.db.renamed: {mode: adaptive, poll_interval: 1m, layout: "sort(v)", freshness_sla: 0}
    local.db.nightly: {mode: scheduled, schedule: "0 2 * * *", freshness_sla: 0}
`, hook.URL))
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg.State.Path), 0o755))
	st, err := store.Open(ctx, cfg.State.Path)
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			require.NoError(t, st.Close())
		}
	})

	// The daemon's clock is three hours past the wall clock that stamps
	// the snapshots (iceberg-go takes no clock): the never-compacted tables
	// have three hours of history. Every deadline below is relative to it.
	var clockMu sync.Mutex
	now := time.Now().UTC().Add(3 * time.Hour)
	t0 := now
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }

	racing := &racingCatalog{Catalog: w.Catalog, racy: table.Identifier{"db", "racy"}}
	racing.writer = func(ctx context.Context) error {
		tbl, err := w.Catalog.LoadTable(ctx, table.Identifier{"db", "racy"})
		if err != nil {
			return err
		}
		rows(tbl, 5)
		return nil
	}
	var down error
	catalogOf := func(context.Context, string) (catalog.Catalog, error) {
		clockMu.Lock()
		defer clockMu.Unlock()
		if down != nil {
			return nil, down
		}
		return racing, nil
	}
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Catalog: catalogOf, Now: clock})
	require.NoError(t, err)
	metrics := server.NewMetrics()
	sinks, err := alert.Sinks(cfg.Alerts, alert.WebhookOptions{Attempts: 1})
	require.NoError(t, err)
	notifier, err := alert.New(alert.Options{Store: st, Sinks: sinks, Repeat: cfg.AlertRepeat(), Now: clock,
		OnNotify: func(a alert.Alert) { metrics.AlertSent(string(a.Kind)) }})
	require.NoError(t, err)
	sched := control.NewScheduler(control.SchedulerOptions{Service: svc, Alerts: notifier, OnRun: metrics.ObserveRun,
		UnreachableAfter: cfg.Server.UnreachableAfterDuration(), RunLateAfter: cfg.Server.RunLateAfterDuration()})
	h, err := server.New(ctx, server.Deps{Config: cfg, Store: st, Catalog: catalogOf, Enqueue: sched.Enqueue, Metrics: metrics, Now: clock,
		Service: svc}, server.Options{})
	require.NoError(t, err)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", path, nil))
		return rec
	}
	// pass runs one scheduling pass and hands it to the metrics as the
	// daemon does (the heartbeat as it ends, then the health observer).
	pass := func() control.Pass {
		t.Helper()
		p, err := sched.RunPass(ctx)
		require.NoError(t, err)
		metrics.PassEnded(p, err)
		_ = metrics.ObservePass(ctx, svc, p) // a dead catalog fails it; the series keep their values
		return p
	}
	runOf := func(p control.Pass, table string) control.Run {
		for _, r := range p.Runs {
			if r.Table == table {
				return r.Run
			}
		}
		t.Fatalf("no run of %s in the pass: %+v", table, p.Decisions)
		return control.Run{}
	}

	// Another replica holds nightly's lease: its scheduled run cannot start.
	other := "replica-b"
	got, err := st.ClaimTables(ctx, other, []string{ident("nightly").String()}, 1, t0.Add(24*time.Hour), t0)
	require.NoError(t, err)
	require.Len(t, got, 1)

	// Pass 1.
	p := pass()
	racy := runOf(p, ident("racy").String())
	require.Equal(t, control.StatusFailed, racy.Status)
	require.Contains(t, racy.Error, "nothing committed")
	require.Positive(t, racing.races, "the writer raced the compaction")
	renamedRun := runOf(p, ident("renamed").String())
	require.Equal(t, control.StatusFailed, renamedRun.Status)
	require.Contains(t, renamedRun.Error, "v")
	as := sent()
	require.ElementsMatch(t, []key{
		{alert.KindFreshness, ident("manual").String(), alert.Firing},
		{alert.KindFailures, ident("racy").String(), alert.Firing},
		{alert.KindFailures, ident("renamed").String(), alert.Firing},
	}, keys(as), "%+v", as)
	for _, a := range as {
		require.Contains(t, a.Summary, "look further: floe health "+a.Table)
		if a.Kind == alert.KindFailures {
			require.NotEmpty(t, a.RunID)
			require.NotEmpty(t, a.Error)
		}
	}
	scrape := get("/metrics").Body.String()
	for _, name := range []string{"manual", "racy", "renamed", "nightly", "static"} {
		require.Contains(t, scrape, fmt.Sprintf(`floe_compaction_backlog_age_seconds{table="%s"}`, ident(name)), name)
		require.Contains(t, scrape, fmt.Sprintf(`floe_freshness_sla_seconds{table="%s"}`, ident(name)), name)
	}
	require.Contains(t, scrape, fmt.Sprintf(`floe_last_compaction_timestamp_seconds{table="%s"} 0`, ident("manual")), "never compacted: 0, not absent")
	require.Contains(t, scrape, fmt.Sprintf(`floe_compaction_backlog_age_seconds{table="%s"} 0`, ident("static")), "nothing written since its compaction")
	require.Contains(t, scrape, fmt.Sprintf("floe_scheduler_last_pass_timestamp_seconds %s", promFloat(p.EndedAt)))

	// Pass 2: the catalog cannot be reached; a blip stays a log line.
	advance(11 * time.Minute)
	clockMu.Lock()
	down = errors.New("dial tcp 10.0.0.7:8181: connect: connection refused")
	clockMu.Unlock()
	p = pass()
	require.Contains(t, strings.Join(p.Errors, "\n"), "connection refused")
	for _, a := range sent() {
		require.NotEqual(t, alert.KindUnreachable, a.Kind, "%+v", a)
		require.NotEqual(t, ident("static").String(), a.Table, "%+v", a)
	}
	require.Contains(t, get("/metrics").Body.String(), fmt.Sprintf("floe_scheduler_last_pass_timestamp_seconds %s", promFloat(p.EndedAt)),
		"the heartbeat beats while a catalog is down")

	// Pass 3: down for 11 minutes, past unreachable_after.
	advance(11 * time.Minute)
	pass()
	as = sent()
	i := slices.IndexFunc(as, func(a alert.Alert) bool { return a.Kind == alert.KindUnreachable })
	require.GreaterOrEqual(t, i, 0, "%+v", as)
	require.Equal(t, "catalog local", as[i].Key)
	require.Equal(t, alert.Firing, as[i].State)
	require.Contains(t, as[i].Summary, "catalog local: cannot be listed for 11m0s (unreachable_after 10m0s)")
	require.Contains(t, as[i].Summary, "connection refused")

	// Pass 4: the catalog is back: unreachable resolves. Nightly's run was
	// due at the first pass and has not started 33 minutes on: late,
	// saying why.
	advance(11 * time.Minute)
	clockMu.Lock()
	down = nil
	clockMu.Unlock()
	pass()
	as = sent()
	byKey := map[key]alert.Alert{}
	for _, a := range as {
		byKey[key{a.Kind, a.Key, a.State}] = a
	}
	require.Contains(t, byKey, key{alert.KindUnreachable, "catalog local", alert.Resolved}, "%+v", as)
	late, ok := byKey[key{alert.KindLate, ident("nightly").String(), alert.Firing}]
	require.True(t, ok, "%+v", as)
	require.Contains(t, late.Summary, `the run scheduled "0 2 * * *", due at `+t0.Format(time.RFC3339))
	require.Contains(t, late.Summary, "another run holds it")
	for _, a := range as {
		require.NotEqual(t, ident("static").String(), a.Table, "%+v", a)
	}

	// Pass 5: the other replica lets go; the run starts and late resolves.
	require.NoError(t, st.ReleaseLease(ctx, other, ident("nightly").String()))
	advance(time.Minute)
	p = pass()
	require.Equal(t, control.StatusDone, runOf(p, ident("nightly").String()).Status)
	as = sent()
	require.Contains(t, keys(as), key{alert.KindLate, ident("nightly").String(), alert.Resolved}, "%+v", as)
	require.Contains(t, get("/metrics").Body.String(), `floe_alerts_total{kind="unreachable"} 2`)

	// The state file damaged under the daemon: /readyz and doctor turn red.
	require.Equal(t, http.StatusOK, get("/readyz").Code)
	// Pages enough of query events, which opening the store does not read
	// (it reads the schema, the migrations and the runs), for the damage
	// to land in.
	filler := make([]collectors.QueryEvent, 200)
	for i := range filler {
		filler[i] = collectors.QueryEvent{Source: "filler", QueryID: fmt.Sprintf("filler-%04d", i), Engine: collectors.EngineTrino,
			StartTime: t0, State: collectors.StateSucceeded, SQL: "SELECT 1 -- " + strings.Repeat("x", 400)}
	}
	_, _, err = st.InsertEvents(ctx, filler)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	closed = true
	damage(t, cfg.State.Path)
	st, err = store.Open(ctx, cfg.State.Path)
	require.NoError(t, err)
	closed = false
	h, err = server.New(ctx, server.Deps{Config: cfg, Store: st, Catalog: catalogOf, Enqueue: sched.Enqueue, Metrics: metrics, Now: clock},
		server.Options{})
	require.NoError(t, err)
	ready := get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, ready.Code, ready.Body.String())
	require.Contains(t, ready.Body.String(), "integrity check")
	require.Contains(t, get("/metrics").Body.String(), `floe_check_up{check="store"} 0`)
	var stateCheck *control.Check
	checks := control.Doctor(ctx, cfg, control.DoctorOptions{Now: clock})
	for i := range checks {
		if checks[i].Name == control.CheckStateStore {
			stateCheck = &checks[i]
		}
	}
	require.NotNil(t, stateCheck, "%+v", checks)
	require.False(t, stateCheck.OK, "%+v", *stateCheck)
	require.Contains(t, stateCheck.Error, "integrity check")
}

// damage overwrites a page in the middle of the SQLite file at path.
func damage(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = 0x5a
	}
	// A page among the last ones written (the filler events the test just
	// stored), not one the store reads when it opens (the schema, the
	// migrations, the runs): the middle of the file moved onto those as
	// migrations added tables.
	_, err = f.WriteAt(junk, (fi.Size()-3*4096)&^4095)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// promFloat is t as the exposition format prints a gauge of Unix seconds.
func promFloat(t time.Time) string {
	return strings.TrimSuffix(fmt.Sprintf("%g", float64(t.UnixNano())/1e9), ".0")
}
