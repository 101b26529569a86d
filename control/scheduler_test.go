package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type schedFixture struct {
	w     *testlake.Warehouse
	id    lake.Ident
	st    *store.Store
	s     *control.Scheduler
	clock *clock
}

// newScheduler is setup's table (8 small files) under policies, with a
// scheduler on a test clock that starts at the wall clock (snapshot times
// follow it).
func newScheduler(t *testing.T, policies string) *schedFixture {
	t.Helper()
	w, id, st := setup(t)
	return newSchedulerOn(t, w, id, st, policies)
}

// newSchedulerOn is a scheduler over w's table id under policies, on a
// test clock that starts at the wall clock.
func newSchedulerOn(t *testing.T, w *testlake.Warehouse, id lake.Ident, st *store.Store, policies string) *schedFixture {
	t.Helper()
	set, err := policy.ParseFile("floe.yaml", []byte(policies))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, Policies: set}
	c := &clock{t: time.Now().UTC()}
	s := control.NewScheduler(control.SchedulerOptions{Config: cfg, Store: st, Now: c.Now,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})
	return &schedFixture{w: w, id: id, st: st, s: s, clock: c}
}

func (f *schedFixture) pass(t *testing.T) control.Pass {
	t.Helper()
	p, err := f.s.RunPass(t.Context())
	require.NoError(t, err)
	require.Len(t, p.Decisions, 1)
	return p
}

func TestSchedulerAdaptive(t *testing.T) {
	f := newScheduler(t, "default:\n  layout: none\n  poll_interval: 10m\n")
	tbl, err := lake.LoadTable(t.Context(), f.w.Catalog, f.id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(t.Context(), tbl)
	require.NoError(t, err)

	p := f.pass(t)
	require.Empty(t, p.Errors)
	d := p.Decisions[0]
	require.True(t, d.Due, d.Reason)
	require.Equal(t, control.TriggerAdaptive, d.Trigger)
	require.Len(t, p.Runs, 1)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status)
	require.Equal(t, control.StatusDone, stepsOf(p.Runs[0].Run)[control.StepCompact].Status)
	tbl, err = lake.LoadTable(t.Context(), f.w.Catalog, f.id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(t.Context(), tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Within the poll interval the table is not read again.
	f.clock.Add(time.Minute)
	p = f.pass(t)
	require.False(t, p.Decisions[0].Due)
	require.Contains(t, p.Decisions[0].Reason, "poll_interval 10m")

	// Past it, the compacted table calls for nothing (orphans were listed
	// an hour ago at most).
	f.clock.Add(10 * time.Minute)
	p = f.pass(t)
	require.False(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Equal(t, "no trigger fired", p.Decisions[0].Reason)
	require.Empty(t, p.Runs)

	// A day later the orphan listing is due again.
	f.clock.Add(25 * time.Hour)
	p = f.pass(t)
	require.True(t, p.Decisions[0].Due)
	require.Contains(t, p.Decisions[0].Reason, "orphans:")
}

func TestSchedulerModes(t *testing.T) {
	tests := []struct {
		name, policies string
		due            bool
		reason         string
	}{
		{"manual", "default: {mode: manual}\n", false, "mode: manual"},
		{"window", "default: {window: \"%s\"}\n", false, "outside the maintenance window"},
		{"scheduled first", "default: {mode: scheduled, schedule: \"0 2 * * *\"}\n", true, `scheduled "0 2 * * *"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := tt.policies
			if strings.Contains(pol, "%s") {
				// A one-hour window that ends before now.
				h := (time.Now().UTC().Hour() + 12) % 24
				pol = strings.Replace(pol, "%s", twoDigits(h)+":00-"+twoDigits((h+1)%24)+":00", 1)
			}
			f := newScheduler(t, pol)
			p := f.pass(t)
			require.Equal(t, tt.due, p.Decisions[0].Due)
			require.Contains(t, p.Decisions[0].Reason, tt.reason)
		})
	}

	// A scheduled table runs once per cron tick.
	f := newScheduler(t, "default: {mode: scheduled, schedule: \"0 * * * *\", layout: none}\n")
	p := f.pass(t)
	require.True(t, p.Decisions[0].Due)
	require.Equal(t, control.TriggerScheduled, p.Decisions[0].Trigger)
	require.Len(t, p.Runs, 1)
	p = f.pass(t)
	require.False(t, p.Decisions[0].Due)
	require.Contains(t, p.Decisions[0].Reason, "next run at")
	f.clock.Add(61 * time.Minute)
	p = f.pass(t)
	require.True(t, p.Decisions[0].Due, p.Decisions[0].Reason)
}

// TestSchedulerApprovedPlanAndBackoff: an approved plan is due at once; a
// run that fails makes the table back off instead of failing every pass.
func TestSchedulerApprovedPlanAndBackoff(t *testing.T) {
	f := newScheduler(t, "default: {layout: \"sort(id)\", mode: manual}\ntables:\n  \"*\": {mode: adaptive}\n")
	p := f.pass(t)
	require.Len(t, p.Runs, 1)
	require.NotNil(t, p.Runs[0].Decision.Plan)
	pl := p.Runs[0].Decision.Plan.Plan
	require.Equal(t, control.PlanProposed, pl.State)
	_, err := control.ApprovePlan(t.Context(), f.st, pl.ID, "ana", f.clock.Now())
	require.NoError(t, err)
	p = f.pass(t)
	require.True(t, p.Decisions[0].Due)
	require.Equal(t, control.TriggerAdaptive, p.Decisions[0].Trigger)
	require.Len(t, p.Runs, 1)
	require.Equal(t, pl.ID, p.Runs[0].Run.PlanID)
	done, err := control.GetPlan(t.Context(), f.st, pl.ID)
	require.NoError(t, err)
	require.Equal(t, control.PlanDone, done.State)

	// Break the table: a data file gone from storage fails the next compaction.
	g := newScheduler(t, "default: {layout: none}\n")
	state, err := lake.LoadState(t.Context(), g.id, mustTable(t, g.w, g.id), lake.LoadOptions{})
	require.NoError(t, err)
	g.w.Remove(t, state.DataFiles[0].Path)
	p, err = g.s.RunPass(t.Context())
	require.NoError(t, err)
	require.Len(t, p.Errors, 1)
	require.Contains(t, p.Errors[0], g.id.String())
	require.Equal(t, control.StatusFailed, p.Runs[0].Run.Status)
	g.clock.Add(time.Minute)
	p = g.pass(t)
	require.False(t, p.Decisions[0].Due)
	require.Contains(t, p.Decisions[0].Reason, "1 failed runs in a row: backing off until")
	g.clock.Add(control.BackoffBase)
	p, err = g.s.RunPass(t.Context())
	require.NoError(t, err)
	require.True(t, p.Decisions[0].Due, "the backoff is over")
	g.clock.Add(time.Minute)
	p = g.pass(t)
	require.Contains(t, p.Decisions[0].Reason, "2 failed runs in a row", "the backoff doubles")
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// TestSchedulerAlerts: a table whose runs fail raises the failures alert on
// a webhook receiver, once, and a good run resolves it.
func TestSchedulerAlerts(t *testing.T) {
	var (
		mu   sync.Mutex
		got  []alert.Alert
		recv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var a alert.Alert
			require.NoError(t, json.NewDecoder(r.Body).Decode(&a))
			mu.Lock()
			got = append(got, a)
			mu.Unlock()
		}))
	)
	defer recv.Close()
	received := func() []alert.Alert {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	w, id, st := setup(t)
	set, err := policy.ParseFile("floe.yaml", []byte("default: {layout: none, alert_after_failures: 1}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, Policies: set}
	c := &clock{t: time.Now().UTC()}
	sinks, err := alert.Sinks(config.AlertsConfig{Webhooks: []config.Webhook{{Name: "test", URL: recv.URL, Format: config.FormatJSON}}}, alert.WebhookOptions{})
	require.NoError(t, err)
	n, err := alert.New(alert.Options{Store: st, Sinks: sinks, Repeat: 6 * time.Hour, Now: c.Now})
	require.NoError(t, err)
	s := control.NewScheduler(control.SchedulerOptions{Config: cfg, Store: st, Now: c.Now, Alerts: n,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})

	state, err := lake.LoadState(t.Context(), id, mustTable(t, w, id), lake.LoadOptions{})
	require.NoError(t, err)
	restore := w.Hide(t, state.DataFiles[0].Path)
	p, err := s.RunPass(t.Context())
	require.NoError(t, err)
	require.Equal(t, control.StatusFailed, p.Runs[0].Run.Status)
	alerts := received()
	require.Len(t, alerts, 1)
	require.Equal(t, alert.KindFailures, alerts[0].Kind)
	require.Equal(t, alert.Firing, alerts[0].State)
	require.Equal(t, id.String(), alerts[0].Table)
	require.Equal(t, p.Runs[0].Run.ID, alerts[0].RunID)

	c.Add(time.Minute) // backing off: no run, no second notification
	_, err = s.RunPass(t.Context())
	require.NoError(t, err)
	require.Len(t, received(), 1)

	restore()
	c.Add(control.BackoffBase)
	p, err = s.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Errors)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status)
	alerts = received()
	require.Len(t, alerts, 2)
	require.Equal(t, alert.Resolved, alerts[1].State)

	// The pass hands the gauges the table as its alerts measured it, after
	// the run: what the run recorded, not what the decision read before it.
	m := p.Decisions[0].Measured
	require.NotNil(t, m)
	require.True(t, m.LastSuccessKnown)
	require.Equal(t, p.Runs[0].Run.EndedAt, m.LastSuccess)
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Now: c.Now,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})
	require.NoError(t, err)
	h, err := svc.Health(t.Context(), id, control.HealthRequest{})
	require.NoError(t, err)
	require.Equal(t, h.Metrics.DataFiles, m.Health.Metrics.DataFiles, "the compacted table")
}

// TestDaemonServe: the daemon runs a pass at start and per tick, hands
// each to the health observer, runs the connection checks, and returns
// once its context ends.
func TestDaemonServe(t *testing.T) {
	f := newScheduler(t, "default: {layout: none}\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	tick := make(chan time.Time)
	var (
		mu       sync.Mutex
		passes   []control.Pass
		errs     []error
		checks   int
		observed int
	)
	checked := make(chan struct{}, 1)
	passed := make(chan struct{}, 2)
	seen := make(chan struct{}, 2)
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: f.s, Tick: tick,
		Checks: func(context.Context) []control.Check {
			return []control.Check{{Name: control.CheckStateStore, Target: "test", OK: true}}
		},
		OnCheck: func([]control.Check) {
			mu.Lock()
			checks++
			mu.Unlock()
			select {
			case checked <- struct{}{}:
			default:
			}
		},
		Observe: func(_ context.Context, p control.Pass) error {
			mu.Lock()
			observed++
			mu.Unlock()
			seen <- struct{}{}
			return nil
		},
		OnPass: func(p control.Pass, err error) {
			mu.Lock()
			passes, errs = append(passes, p), append(errs, err)
			mu.Unlock()
			passed <- struct{}{}
		}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	<-checked
	<-passed
	<-seen
	tick <- time.Now()
	<-passed
	<-seen
	cancel()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, passes, 2)
	for i, p := range passes {
		require.NoError(t, errs[i])
		require.Len(t, p.Decisions, 1)
	}
	require.GreaterOrEqual(t, checks, 1)
	require.Equal(t, 2, observed, "the observer saw each pass")
}

// The seed's silent weeks cannot happen: a table floe never ran on (mode:
// manual, never compacted) whose writes wait past its SLA fires the
// freshness alert, and the webhook gets it; a table nobody wrote since its
// last compaction stays quiet however long ago that was.
func TestSchedulerAlertsTablesFloeNeverRan(t *testing.T) {
	var (
		mu   sync.Mutex
		got  []alert.Alert
		recv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var a alert.Alert
			require.NoError(t, json.NewDecoder(r.Body).Decode(&a))
			mu.Lock()
			got = append(got, a)
			mu.Unlock()
		}))
	)
	defer recv.Close()
	w, id, st := setup(t)
	// A second table, compacted once and then left alone.
	static := lake.Ident{Catalog: id.Catalog, Namespace: id.Namespace, Name: "static"}
	tbl := w.CreateTable(t, "db", "static", mustTable(t, w, id).Schema(), nil, nil, nil)
	for i := range 6 {
		rec := rowsFor(t, tbl, i*10, 10)
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	sst, err := lake.LoadState(t.Context(), static, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	cplan, err := rewriter.PlanCompaction(sst, rewriter.CompactOptions{})
	require.NoError(t, err)
	_, err = rewriter.Compact(t.Context(), sst, cplan, rewriter.CompactOptions{})
	require.NoError(t, err)

	set, err := policy.ParseFile("floe.yaml", []byte("default: {layout: none, mode: manual, freshness_sla: 1h}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, Policies: set}
	c := &clock{t: time.Now().UTC().Add(3 * time.Hour)}
	sinks, err := alert.Sinks(config.AlertsConfig{Webhooks: []config.Webhook{{Name: "test", URL: recv.URL, Format: config.FormatJSON}}}, alert.WebhookOptions{})
	require.NoError(t, err)
	n, err := alert.New(alert.Options{Store: st, Sinks: sinks, Repeat: 6 * time.Hour, Now: c.Now})
	require.NoError(t, err)
	s := control.NewScheduler(control.SchedulerOptions{Config: cfg, Store: st, Now: c.Now, Alerts: n,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})

	p, err := s.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Runs, "mode: manual never runs by itself")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1, "%+v", got)
	a := got[0]
	require.Equal(t, alert.KindFreshness, a.Kind)
	require.Equal(t, alert.Firing, a.State)
	require.Equal(t, id.String(), a.Table, "the static table stays quiet")
	require.Contains(t, a.Summary, "for a compaction (never compacted), SLA 1 h (floe never ran on it)")
	require.Contains(t, a.Summary, "look further: floe health "+id.String())
	require.InDelta(t, 3, a.AgeHours, 0.2)
	require.InDelta(t, 1, a.SLAHours, 0.001)
}

// rowsFor builds n rows (id from start, name "row") in tbl's schema, that
// of setup's tables.
func rowsFor(t *testing.T, tbl *table.Table, start, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("row")
	}
	return b.NewRecordBatch()
}

// TestDaemonPrunes: the daemon prunes the state store's telemetry at start
// and every PruneInterval; a failed prune is logged and tried again, and
// the daemon goes on.
func TestDaemonPrunes(t *testing.T) {
	f := newScheduler(t, "default: {layout: none}\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var evs []collectors.QueryEvent
	for i := range 10 {
		at := now.Add(-time.Duration(i*7) * 24 * time.Hour) // weekly, back 63 days
		evs = append(evs, collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: fmt.Sprint("q", i),
			StartTime: at, EndTime: at.Add(time.Second), State: collectors.StateSucceeded,
			Tables: []collectors.TableAccess{{Catalog: f.id.Catalog, Namespace: f.id.NamespaceString(), Name: f.id.Name}}})
	}
	_, _, err := f.st.InsertEvents(ctx, evs)
	require.NoError(t, err)

	results := make(chan control.PruneResult, 10)
	calls := 0
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: f.s, Tick: make(chan time.Time), PruneInterval: 5 * time.Millisecond,
		Prune: func(ctx context.Context) error {
			calls++
			if calls == 1 {
				return errors.New("database is locked")
			}
			r, err := control.PruneTelemetry(ctx, f.st, control.PruneOptions{Now: func() time.Time { return now }})
			if err == nil {
				results <- r
			}
			return err
		}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	first, second := <-results, <-results
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, now.Add(-30*24*time.Hour), first.Before)
	require.Equal(t, 5, first.Deleted, "the events of days 35 to 63")
	require.Equal(t, 5, first.Folded)
	require.Equal(t, int64(5), first.Size.Events)
	require.Equal(t, int64(5), first.Size.FoldedEvents)
	require.Positive(t, first.Size.Bytes)
	require.Zero(t, second.Deleted, "pruning again finds nothing")
	raw, err := f.st.Queries(t.Context(), store.QueryFilter{Until: first.Before})
	require.NoError(t, err)
	require.Empty(t, raw)
}

// TestReportedCommitsWakeAtMostOncePerGap: a table reporting a commit
// every few milliseconds wakes the daemon, but its woken passes start no
// sooner than WakeGap after the previous one ended, so a busy lake is not
// passed over back to back.
func TestReportedCommitsWakeAtMostOncePerGap(t *testing.T) {
	f := newScheduler(t, "default: {layout: none, mode: manual}\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const gap = 300 * time.Millisecond
	var (
		mu   sync.Mutex
		ends []time.Time // when each pass ended, by the wall clock
	)
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: f.s, Interval: time.Hour, WakeDelay: time.Millisecond, WakeGap: gap,
		OnPass: func(control.Pass, error) {
			mu.Lock()
			defer mu.Unlock()
			ends = append(ends, time.Now())
		}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stop := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(stop) {
		f.s.Changed(f.id)
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(ends), 2, "the reports woke the daemon")
	require.LessOrEqual(t, len(ends), 1+int(1500*time.Millisecond/gap)+1, "at most one woken pass per gap")
	for i := 1; i < len(ends); i++ {
		require.GreaterOrEqual(t, ends[i].Sub(ends[i-1]), gap, "pass %d ended %s after pass %d", i, ends[i].Sub(ends[i-1]), i-1)
	}
}
