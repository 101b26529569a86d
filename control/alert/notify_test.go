package alert_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
)

const secretPath = "/services/T0AAAA/B0BBBB/SECRETsecretSECRET"

// receiver is a webhook endpoint that records what it received and
// answers fail[i] (a status) to its i-th request, 200 after them.
type receiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	fail   []int
	always int // answer every request with this status, when not 0
	retry  string
	bodies [][]byte
	reqs   int
	header http.Header
}

func newReceiver(t *testing.T, fail ...int) *receiver {
	t.Helper()
	r := &receiver{fail: fail}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.reqs++
		r.header = req.Header.Clone()
		status := http.StatusOK
		switch {
		case r.always != 0:
			status = r.always
		case len(r.fail) > 0:
			status, r.fail = r.fail[0], r.fail[1:]
		}
		if status != http.StatusOK {
			if r.retry != "" {
				w.Header().Set("Retry-After", r.retry)
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte("no_service"))
			return
		}
		r.bodies = append(r.bodies, b)
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string { return r.srv.URL + secretPath }

func (r *receiver) got() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

func (r *receiver) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs
}

func (r *receiver) setAlways(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.always = status
}

// rig is a notifier on a file-backed store with an injected clock, fast
// retries whose waits are recorded, and a JSON log in a buffer.
type rig struct {
	t     *testing.T
	path  string
	st    *store.Store
	now   time.Time
	sinks []alert.Sink
	log   bytes.Buffer
	waits []time.Duration
	sent  []alert.Alert
	n     *alert.Notifier
	tr    *http.Transport
}

func newRig(t *testing.T, hooks ...config.Webhook) *rig {
	t.Helper()
	r := &rig{t: t, path: filepath.Join(t.TempDir(), "state.db"), now: t0, tr: &http.Transport{}}
	t.Cleanup(r.tr.CloseIdleConnections)
	wo := alert.WebhookOptions{Client: &http.Client{Transport: r.tr}, Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 5 * time.Second,
		Timeout: 5 * time.Second, Now: func() time.Time { return r.now },
		Sleep: func(ctx context.Context, d time.Duration) error { r.waits = append(r.waits, d); return ctx.Err() }}
	sinks, err := alert.Sinks(config.AlertsConfig{Webhooks: hooks}, wo)
	require.NoError(t, err)
	r.sinks = sinks
	r.open()
	t.Cleanup(func() { require.NoError(t, r.st.Close()) })
	return r
}

// open (re)opens the store and builds a new notifier on it, as a
// restarted process would.
func (r *rig) open() {
	st, err := store.Open(r.t.Context(), r.path)
	require.NoError(r.t, err)
	r.st = st
	n, err := alert.New(alert.Options{Store: st, Sinks: r.sinks, Repeat: 6 * time.Hour, Now: func() time.Time { return r.now },
		Logger:   slog.New(slog.NewJSONHandler(&r.log, nil)),
		OnNotify: func(a alert.Alert) { r.sent = append(r.sent, a) }})
	require.NoError(r.t, err)
	r.n = n
}

func (r *rig) reopen() {
	require.NoError(r.t, r.st.Close())
	r.open()
}

func (r *rig) notify(as ...alert.Alert) ([]alert.Alert, error) {
	return r.n.Notify(r.t.Context(), as...)
}

func stale(lastAgo time.Duration, now time.Time) []alert.Alert {
	return alert.Evaluate(alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: now.Add(-lastAgo)}, now)
}

func decode(t *testing.T, b []byte) alert.Alert {
	t.Helper()
	var a alert.Alert
	require.NoError(t, json.Unmarshal(b, &a))
	return a
}

// TestLifecycle: fire → one delivery per sink; within repeat → none;
// after repeat → one repeat; fresh again → one resolved; then quiet.
func TestLifecycle(t *testing.T) {
	js, sl := newReceiver(t), newReceiver(t)
	r := newRig(t, config.Webhook{Name: "ops-json", URL: js.url(), Format: config.FormatJSON, Headers: map[string]string{"Authorization": "Bearer tok"}},
		config.Webhook{Name: "ops-slack", URL: sl.url(), Format: config.FormatSlack})
	last := t0.Add(-63 * time.Hour)
	at := func(d time.Duration) []alert.Alert {
		r.now = t0.Add(d)
		return alert.Evaluate(alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: last}, r.now)
	}

	out, err := r.notify(at(0)...)
	require.NoError(t, err)
	require.Len(t, out, 1, "the freshness alert; the failures alert never fired")
	require.Len(t, js.got(), 1)
	require.Len(t, sl.got(), 1)
	require.Equal(t, "Bearer tok", js.header.Get("Authorization"))
	require.Equal(t, "application/json", js.header.Get("Content-Type"))

	var raw map[string]any
	require.NoError(t, json.Unmarshal(js.got()[0], &raw))
	for _, k := range []string{"kind", "key", "table", "state", "summary", "age_hours", "sla_hours", "error", "run_id", "failures", "since", "at", "repeat"} {
		require.Contains(t, raw, k, "json body field")
	}
	a := decode(t, js.got()[0])
	require.Equal(t, alert.Alert{Kind: alert.KindFreshness, Key: table, Table: table, State: alert.Firing,
		Summary: "local.web.events: last compaction 63 h ago, SLA 48 h (floe never ran on it); look further: floe health local.web.events; floe runs local.web.events", AgeHours: 63, SLAHours: 48,
		Since: t0.Add(-15 * time.Hour), At: t0}, a)
	require.JSONEq(t, `{"text": "[firing] local.web.events: last compaction 63 h ago, SLA 48 h (floe never ran on it); look further: floe health local.web.events; floe runs local.web.events"}`, string(sl.got()[0]))

	for _, d := range []time.Duration{time.Minute, time.Hour, 6*time.Hour - time.Second} {
		out, err = r.notify(at(d)...)
		require.NoError(t, err)
		require.Empty(t, out, "within repeat, at %s", d)
	}
	require.Len(t, js.got(), 1)

	out, err = r.notify(at(6 * time.Hour)...)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Len(t, js.got(), 2)
	a = decode(t, js.got()[1])
	require.True(t, a.Repeat)
	require.Equal(t, t0, a.LastSent)
	require.Equal(t, "local.web.events: last compaction 69 h ago, SLA 48 h (floe never ran on it); look further: floe health local.web.events; floe runs local.web.events", a.Summary)
	require.Contains(t, string(sl.got()[1]), "[still firing]")

	out, err = r.notify(at(7 * time.Hour)...)
	require.NoError(t, err)
	require.Empty(t, out, "the repeat clock restarted at the repeat")

	last = t0.Add(7 * time.Hour)
	out, err = r.notify(at(8 * time.Hour)...)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Len(t, js.got(), 3)
	a = decode(t, js.got()[2])
	require.Equal(t, alert.Resolved, a.State)
	require.Equal(t, t0.Add(8*time.Hour), a.Since)
	require.Equal(t, t0.Add(6*time.Hour), a.LastSent)
	require.Contains(t, string(sl.got()[2]), "[resolved] local.web.events: fresh: last compaction 1 h ago")

	for _, d := range []time.Duration{9 * time.Hour, 30 * time.Hour} {
		out, err = r.notify(at(d)...)
		require.NoError(t, err)
		require.Empty(t, out)
	}
	require.Len(t, js.got(), 3)
	require.Len(t, sl.got(), 3)
	require.Len(t, r.sent, 3, "OnNotify once per notification, not per sink")

	active, err := r.n.Active(t.Context())
	require.NoError(t, err)
	require.Empty(t, active)
}

// TestFailuresAlert: the failures alert fires after the policy's count of
// failed runs in a row and resolves at the next good run.
func TestFailuresAlert(t *testing.T) {
	rc := newReceiver(t)
	r := newRig(t, config.Webhook{Name: "ops", URL: rc.url(), Format: config.FormatJSON})
	var runs []alert.Run
	eval := func() []alert.Alert {
		return alert.Evaluate(alert.Input{Table: table, Policy: pol(0, 3), Runs: runs}, r.now)
	}
	for i, id := range []string{"r1", "r2", "r3"} {
		r.now = t0.Add(time.Duration(i) * time.Hour)
		runs = append([]alert.Run{{ID: id, Status: alert.StatusFailed, Error: "compact: commit conflict", EndedAt: r.now}}, runs...)
		_, err := r.notify(eval()...)
		require.NoError(t, err)
		if i < 2 {
			require.Empty(t, rc.got(), "%d failures", i+1)
		}
	}
	require.Len(t, rc.got(), 1)
	a := decode(t, rc.got()[0])
	require.Equal(t, alert.KindFailures, a.Kind)
	require.Equal(t, 3, a.Failures)
	require.Equal(t, "r3", a.RunID)
	require.Equal(t, "compact: commit conflict", a.Error)
	require.Equal(t, t0, a.Since)

	active, err := r.n.Active(t.Context())
	require.NoError(t, err)
	require.Len(t, active, 1)
	require.Equal(t, "r3", active[0].RunID)

	r.now = t0.Add(4 * time.Hour)
	runs = append([]alert.Run{{ID: "r4", Status: alert.StatusDone, EndedAt: r.now}}, runs...)
	_, err = r.notify(eval()...)
	require.NoError(t, err)
	require.Len(t, rc.got(), 2)
	require.Equal(t, alert.Resolved, decode(t, rc.got()[1]).State)
}

// TestRetries: a receiver that fails twice then succeeds gets the alert
// within one send, after two backoff waits; a 429's Retry-After sets the
// wait.
func TestRetries(t *testing.T) {
	rc := newReceiver(t, http.StatusInternalServerError, http.StatusBadGateway)
	r := newRig(t, config.Webhook{Name: "ops", URL: rc.url(), Format: config.FormatSlack})
	_, err := r.notify(stale(63*time.Hour, r.now)...)
	require.NoError(t, err)
	require.Len(t, rc.got(), 1)
	require.Equal(t, 3, rc.requests())
	require.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, r.waits, "exponential backoff")

	limited := newReceiver(t, http.StatusTooManyRequests)
	limited.retry = "2"
	r = newRig(t, config.Webhook{Name: "ops", URL: limited.url(), Format: config.FormatSlack})
	_, err = r.notify(stale(63*time.Hour, r.now)...)
	require.NoError(t, err)
	require.Len(t, limited.got(), 1)
	require.Equal(t, []time.Duration{2 * time.Second}, r.waits, "Retry-After honoured")

	// A receiver asking for more than MaxBackoff is left for the next
	// evaluation instead of holding this one.
	long := newReceiver(t, http.StatusTooManyRequests)
	long.retry = "3600"
	r = newRig(t, config.Webhook{Name: "ops", URL: long.url(), Format: config.FormatSlack})
	_, err = r.notify(stale(63*time.Hour, r.now)...)
	require.ErrorContains(t, err, "retry after 1h0m0s")
	require.Equal(t, 1, long.requests())
	require.Empty(t, r.waits)

	// A 4xx other than 408 and 429 is not retried.
	bad := newReceiver(t, http.StatusNotFound)
	r = newRig(t, config.Webhook{Name: "ops", URL: bad.url(), Format: config.FormatSlack})
	_, err = r.notify(stale(63*time.Hour, r.now)...)
	require.ErrorContains(t, err, "404")
	require.Equal(t, 1, bad.requests())
}

// TestFailingSink: a sink that keeps failing is an error and a log line,
// the other sink is not held up, and the failed one gets the alert at the
// next evaluation once it answers, without a duplicate to the other. The
// webhook's secret path appears in no error and no log line.
func TestFailingSink(t *testing.T) {
	good, down := newReceiver(t), newReceiver(t)
	down.setAlways(http.StatusInternalServerError)
	r := newRig(t, config.Webhook{Name: "good", URL: good.url(), Format: config.FormatJSON},
		config.Webhook{Name: "down", URL: down.url(), Format: config.FormatSlack})
	var failures []string
	n, err := alert.New(alert.Options{Store: r.st, Sinks: r.sinks, Now: func() time.Time { return r.now }, Logger: slog.New(slog.NewJSONHandler(&r.log, nil)),
		OnDeliveryError: func(sink string, _ alert.Alert, _ error) { failures = append(failures, sink) }})
	require.NoError(t, err)
	r.n = n

	_, err = r.notify(append(stale(63*time.Hour, r.now), alert.Check("catalog prod", errors.New("401 Unauthorized")))...)
	require.Error(t, err)
	var se *alert.SinkError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "down", se.Sink)
	require.Equal(t, 3, se.Attempts)
	require.Contains(t, err.Error(), "/services/****")
	require.Contains(t, err.Error(), "500")
	require.Contains(t, err.Error(), "failed earlier in this evaluation", "the second alert does not wait for the dead sink again")
	require.Equal(t, 3, down.requests(), "one send's attempts, for both alerts")
	require.Len(t, good.got(), 2)
	require.Equal(t, []string{"down"}, failures)
	require.Contains(t, r.log.String(), "alert not delivered")

	// Still down at the next evaluation: an error again, nothing new to good.
	r.now = t0.Add(time.Minute)
	_, err = r.notify(stale(63*time.Hour, r.now)...)
	require.Error(t, err)
	require.Len(t, good.got(), 2)

	// Up again: the owed notifications are delivered, once.
	down.setAlways(0)
	r.now = t0.Add(2 * time.Minute)
	out, err := r.notify(append(stale(63*time.Hour, r.now), alert.Check("catalog prod", errors.New("401 Unauthorized")))...)
	require.NoError(t, err)
	require.Len(t, out, 2)
	require.Len(t, down.got(), 2)
	require.Len(t, good.got(), 2, "no duplicate to the sink that had it")
	require.Contains(t, string(down.got()[0]), "[firing]", "a delivery owed is the first firing, not a repeat")
	out, err = r.notify(stale(63*time.Hour, r.now.Add(time.Minute))...)
	require.NoError(t, err)
	require.Empty(t, out)

	// A network error quotes the URL: it is redacted too.
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + secretPath
	closed.Close()
	w, err := alert.NewWebhook(config.Webhook{Name: "gone", URL: closedURL, Format: config.FormatJSON},
		alert.WebhookOptions{Client: &http.Client{Transport: r.tr}, Attempts: 2, Backoff: time.Millisecond})
	require.NoError(t, err)
	err = w.Send(t.Context(), alert.Check("x", errors.New("y")))
	require.Error(t, err)
	require.Contains(t, err.Error(), "/services/****")
	require.NotContains(t, err.Error(), "SECRET")

	require.NotContains(t, r.log.String(), "SECRET", "the webhook secret in a log line")
	require.NotContains(t, err.Error(), "SECRET")
}

// TestStateSurvivesRestart: a notified alert is not sent again by a new
// process on the same store, and one owed to a failed sink is delivered
// by the next process.
func TestStateSurvivesRestart(t *testing.T) {
	rc := newReceiver(t)
	r := newRig(t, config.Webhook{Name: "ops", URL: rc.url(), Format: config.FormatJSON})
	_, err := r.notify(stale(63*time.Hour, r.now)...)
	require.NoError(t, err)
	require.Len(t, rc.got(), 1)

	r.reopen()
	r.now = t0.Add(time.Hour)
	out, err := r.notify(stale(64*time.Hour, r.now)...)
	require.NoError(t, err)
	require.Empty(t, out, "the restarted process knows it was sent")
	require.Len(t, rc.got(), 1)

	rc.setAlways(http.StatusServiceUnavailable)
	r.now = t0.Add(6 * time.Hour)
	_, err = r.notify(stale(69*time.Hour, r.now)...)
	require.Error(t, err)

	require.Len(t, r.sent, 2, "the first firing and the repeat")
	r.reopen()
	r.sent = nil
	rc.setAlways(0)
	r.now = t0.Add(7 * time.Hour)
	out, err = r.notify(stale(70*time.Hour, r.now)...)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Len(t, rc.got(), 2)
	a := decode(t, rc.got()[1])
	require.True(t, a.Repeat)
	require.Equal(t, t0, a.LastSent)
	require.Empty(t, r.sent, "the new process did not notify anew: it delivered what was owed")
}

// TestLogLines: each notification is one JSON log line, warn when firing
// and info when resolved, with the alert's fields.
func TestLogLines(t *testing.T) {
	r := newRig(t) // no sinks: alerts are only logged
	_, err := r.notify(alert.Evaluate(alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: t0.Add(-63 * time.Hour),
		Runs: []alert.Run{{ID: "r9", Status: alert.StatusFailed, Error: "dial tcp: refused", EndedAt: t0.Add(-time.Hour)}}}, t0)...)
	require.NoError(t, err)
	_, err = r.notify(alert.Evaluate(alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: t0.Add(-63 * time.Hour)}, t0.Add(time.Hour))...)
	require.NoError(t, err)
	r.now = t0.Add(2 * time.Hour)
	_, err = r.notify(alert.Evaluate(alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: r.now}, r.now)...)
	require.NoError(t, err)

	lines := strings.Split(strings.TrimSpace(r.log.String()), "\n")
	require.Len(t, lines, 2, "one line per notification: fired, resolved")
	var fired, resolved map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &fired))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &resolved))
	require.Equal(t, "WARN", fired["level"])
	require.Equal(t, "alert", fired["msg"])
	require.Equal(t, "freshness", fired["kind"])
	require.Equal(t, table, fired["table"])
	require.Equal(t, "firing", fired["state"])
	require.InDelta(t, 63.0, fired["age_hours"], 0.01)
	require.InDelta(t, 48.0, fired["sla_hours"], 0.01)
	require.Equal(t, "r9", fired["run_id"])
	require.Equal(t, "dial tcp: refused", fired["error"])
	require.Equal(t, "local.web.events: last compaction 63 h ago, SLA 48 h (run r9 failed: dial tcp: refused); look further: floe health local.web.events; floe runs local.web.events", fired["summary"])
	require.Equal(t, "INFO", resolved["level"])
	require.Equal(t, "resolved", resolved["state"])
}

// An alert the state store cannot record — the store is down or damaged,
// itself the failure an alert must report — is still sent and logged, once
// per repeat interval; a resolved one is not (floe cannot tell it fired).
func TestNotifyWithoutTheStore(t *testing.T) {
	js := newReceiver(t)
	r := newRig(t, config.Webhook{Name: "ops", URL: js.url(), Format: config.FormatJSON})
	// A notifier on a store of its own, closed under it.
	dead, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "dead.db"))
	require.NoError(t, err)
	r.n, err = alert.New(alert.Options{Store: dead, Sinks: r.sinks, Repeat: 6 * time.Hour, Now: func() time.Time { return r.now },
		Logger: slog.New(slog.NewJSONHandler(&r.log, nil))})
	require.NoError(t, err)
	require.NoError(t, dead.Close())

	out, err := r.notify(stale(63*time.Hour, r.now)...)
	require.Error(t, err, "the store's failure is still an error")
	require.Len(t, out, 1)
	require.Len(t, js.got(), 1, "sent though it could not be recorded")
	require.Contains(t, r.log.String(), "alert sent without the state store")

	r.now = r.now.Add(time.Hour)
	_, err = r.notify(stale(64*time.Hour, r.now)...)
	require.Error(t, err)
	require.Len(t, js.got(), 1, "not again within the repeat interval")

	r.now = r.now.Add(6 * time.Hour)
	_, err = r.notify(stale(70*time.Hour, r.now)...)
	require.Error(t, err)
	require.Len(t, js.got(), 2, "again after the repeat interval")

	_, err = r.notify(alert.Evaluate(alert.Input{Table: table, Policy: pol(48*time.Hour, 2), LastCompaction: r.now}, r.now)...)
	require.Error(t, err)
	require.Len(t, js.got(), 2, "a resolved alert is not sent without its state")
}

// TestNotifyALakeAtOnce: one call with every table's alerts, most of them
// resolved ones of tables that never alerted (what a daemon's pass hands
// over), notifies exactly the changes: the firing alert that resolved and
// the new one, and neither the never-stored nor the already-resolved.
func TestNotifyALakeAtOnce(t *testing.T) {
	js := newReceiver(t)
	r := newRig(t, config.Webhook{Name: "ops", URL: js.url(), Format: config.FormatJSON})
	fresh, stale := t0.Add(-time.Hour), t0.Add(-63*time.Hour)
	eval := func(name string, last time.Time) []alert.Alert {
		return alert.Evaluate(alert.Input{Table: name, Policy: pol(48*time.Hour, 2), LastCompaction: last}, r.now)
	}
	// a and b go stale; b is compacted again and said resolved.
	out, err := r.notify(append(eval("local.db.a", stale), eval("local.db.b", stale)...)...)
	require.NoError(t, err)
	require.Len(t, out, 2)
	r.now = t0.Add(time.Hour)
	out, err = r.notify(eval("local.db.b", fresh)...)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Len(t, js.got(), 3)

	r.now = t0.Add(2 * time.Hour)
	var lake []alert.Alert
	lake = append(lake, eval("local.db.a", fresh)...) // resolves
	lake = append(lake, eval("local.db.b", fresh)...) // resolved already
	for i := range 50 {
		lake = append(lake, eval(fmt.Sprintf("local.db.t%02d", i), fresh)...) // never alerted
	}
	lake = append(lake, eval("local.db.z", stale)...) // new
	out, err = r.notify(lake...)
	require.NoError(t, err)
	require.Len(t, out, 2)
	require.Len(t, js.got(), 5)
	got := []alert.Alert{decode(t, js.got()[3]), decode(t, js.got()[4])}
	require.ElementsMatch(t, []string{"local.db.a resolved", "local.db.z firing"},
		[]string{got[0].Table + " " + string(got[0].State), got[1].Table + " " + string(got[1].State)})
	active, err := r.n.Active(t.Context())
	require.NoError(t, err)
	require.Len(t, active, 1)
	require.Equal(t, "local.db.z", active[0].Table)
}
