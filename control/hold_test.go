package control_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/rewriter"
)

// webhook is a webhook receiver that keeps the alerts it got.
type webhook struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []alert.Alert
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	h := &webhook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a alert.Alert
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, a)
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// of returns the alerts of kind received, in order.
func (h *webhook) of(kind alert.Kind) []alert.Alert {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []alert.Alert
	for _, a := range h.got {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return slices.Clone(out)
}

// TestInvariantFailureHaltsTheTable: a compaction whose commit fails floe's
// content check (rewriter.ErrInvariant) is not retried with backoff like a
// transient failure: the table is halted — the next passes do not run it,
// a verb's run and dry run are refused saying how to resume, the halted
// alert fires on the webhook — until a person resumes it; then it runs
// again and the alert resolves.
func TestInvariantFailureHaltsTheTable(t *testing.T) {
	ctx := t.Context()
	w, id, st := setup(t)
	hook := newWebhook(t)
	set, err := policy.ParseFile("floe.yaml", []byte("default: {layout: none, engine: cluster, poll_interval: 1m}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, DefaultCatalog: w.Name, Policies: set}
	c := &clock{t: time.Now().UTC()}
	eng := &clusterEngine{corrupt: true}
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Now: c.Now, Engines: clusterEngines(eng),
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})
	require.NoError(t, err)
	sinks, err := alert.Sinks(config.AlertsConfig{Webhooks: []config.Webhook{{Name: "test", URL: hook.srv.URL, Format: config.FormatJSON}}}, alert.WebhookOptions{})
	require.NoError(t, err)
	n, err := alert.New(alert.Options{Store: st, Sinks: sinks, Now: c.Now})
	require.NoError(t, err)
	s := control.NewScheduler(control.SchedulerOptions{Service: svc, Alerts: n})

	p, err := s.RunPass(ctx)
	require.NoError(t, err)
	require.Len(t, p.Runs, 1)
	failed := p.Runs[0].Run
	require.Equal(t, control.StatusFailed, failed.Status)
	require.Contains(t, failed.Error, "values differ in column name")
	hold, halted, err := svc.Halted(ctx, id)
	require.NoError(t, err)
	require.True(t, halted, "an invariant failure halts the table")
	require.Equal(t, failed.ID, hold.RunID)
	fired := hook.of(alert.KindHalted)
	require.Len(t, fired, 1)
	require.Equal(t, alert.Firing, fired[0].State)
	require.Equal(t, id.String(), fired[0].Table)
	require.Equal(t, failed.ID, fired[0].RunID)
	require.Contains(t, fired[0].Summary, "floe resume "+id.String())

	// Past the backoff a transient failure would wait out, the next
	// passes do not run it, and say why.
	for range 2 {
		c.Add(control.BackoffBase + time.Hour)
		p, err = s.RunPass(ctx)
		require.NoError(t, err)
		require.Empty(t, p.Runs, "a halted table is not retried")
		require.Len(t, p.Decisions, 1)
		require.False(t, p.Decisions[0].Due)
		require.Contains(t, p.Decisions[0].Reason, "halted since")
		require.Contains(t, p.Decisions[0].Reason, "floe resume "+id.String())
	}
	require.Len(t, hook.of(alert.KindHalted), 1, "notified once while it stays halted")

	// A person's run is refused too, saying why and how to resume.
	rr, err := svc.Run(ctx, control.Request{Table: id, User: "ana"})
	require.ErrorIs(t, err, control.ErrHalted)
	require.ErrorContains(t, err, "floe resume "+id.String())
	require.ErrorContains(t, err, failed.ID)
	require.Empty(t, rr.Run.ID, "no run recorded")
	_, err = svc.DryRun(ctx, control.Request{Table: id, User: "ana"})
	require.ErrorIs(t, err, control.ErrHalted, "the dry run says what the run does")
	_, err = s.Enqueue(ctx, id, "ana")
	require.Error(t, err, "no run queue runs here, and the table is halted")
	_, err = svc.Queue(ctx, control.Request{Table: id, Trigger: control.TriggerAPI, User: "ana"})
	require.ErrorIs(t, err, control.ErrHalted)
	runs, err := control.ListRuns(ctx, st, id.String(), 0)
	require.NoError(t, err)
	require.Len(t, runs, 1, "only the failed run")

	// Resumed (the engine repaired), it runs again and the alert resolves.
	eng.corrupt = false
	resumed, err := svc.Resume(ctx, id, "ana", "engine fixed; table checked")
	require.NoError(t, err)
	require.Equal(t, "ana", resumed.ResumedBy)
	require.Equal(t, "engine fixed; table checked", resumed.Note)
	_, err = svc.Resume(ctx, id, "bob", "")
	require.ErrorIs(t, err, control.ErrNotHalted)
	c.Add(time.Hour)
	p, err = s.RunPass(ctx)
	require.NoError(t, err)
	require.Len(t, p.Runs, 1, p.Decisions)
	require.Equal(t, control.StatusDone, p.Runs[0].Run.Status, p.Runs[0].Run.Error)
	got := hook.of(alert.KindHalted)
	require.Len(t, got, 2)
	require.Equal(t, alert.Resolved, got[1].State)
	all, err := svc.Holds(ctx, true)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "ana", all[0].ResumedBy, "the record of who resumed it is kept")
}

// A transient failure is not an invariant failure: it backs off and the
// table is not halted (TestSchedulerApprovedPlanAndBackoff has the
// backoff); an invariant failure from any step is.
func TestIsInvariantFailure(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{rewriter.ErrMissingOutput, true},
		{rewriter.ErrInputMismatch, true},
		{rewriter.ErrLeaseLost, true},
		{rewriter.ErrConflict, false},
		{context.Canceled, false},
	} {
		require.Equal(t, tc.want, control.IsInvariantFailure(tc.err), tc.err)
	}
}
