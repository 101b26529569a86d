package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/lake"
)

// TestReportedCommitWakesTheDaemon: floe serve with hour-long passes and
// poll intervals. An Iceberg commit report posted to the metrics endpoint,
// with the token, wakes the scheduler at once: the next pass decides the
// committed table whatever its poll interval, reading it (once, for the
// decision, the alerts and the gauges) and nothing else; so does a POST to
// /api/v1/tables/{table}/changed. Without the token, or for a table that
// does not exist, nothing is marked.
func TestReportedCommitWakesTheDaemon(t *testing.T) {
	l := newChangeLake(t, "  default: {layout: none, poll_interval: 1h, enabled: {expire: false, orphans: false, compact: false, deletes: false, manifests: false}}\n")
	ctx, cancel := context.WithCancel(t.Context())
	h, err := server.New(ctx, server.Deps{Config: l.cfg, Store: l.st, Catalog: l.svc.OpenCatalog, Enqueue: l.sched.Enqueue, Changed: l.sched.Changed,
		Metrics: l.metrics, Now: l.clock, Service: l.svc}, server.Options{})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	passes := make(chan control.Pass, 16)
	d, err := control.NewDaemon(control.DaemonOptions{Scheduler: l.sched, Interval: time.Hour, WakeDelay: 10 * time.Millisecond, WakeGap: 10 * time.Millisecond,
		Handler: h, Listener: ln, OnPass: func(p control.Pass, _ error) { passes <- p },
		Observe: func(ctx context.Context, p control.Pass) error { return l.metrics.ObservePass(ctx, l.svc, p) }})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	base := "http://" + ln.Addr().String()
	post := func(path, token, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(body))
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	next := func() control.Pass {
		t.Helper()
		select {
		case p := <-passes:
			return p
		case <-time.After(20 * time.Second):
			t.Fatal("no pass: the report did not wake the scheduler")
			return control.Pass{}
		}
	}
	// gauged waits until the gauges show local.db.<name> with n data files.
	gauged := func(name string, n int) {
		t.Helper()
		require.Eventually(t, func() bool { return l.dataFiles(t, name) == n }, 20*time.Second, 10*time.Millisecond)
	}
	first := next()
	require.Len(t, first.Decisions, 3)
	gauged("b", 2)

	// A commit to db.b, reported as Iceberg's RESTMetricsReporter posts it.
	l.commit(t, "b")
	tbl, err := lake.LoadTable(t.Context(), l.w.Catalog, lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "b"})
	require.NoError(t, err)
	snap := tbl.CurrentSnapshot()
	report := fmt.Sprintf(`{"report-type":"commit-report","table-name":"local.db.b","snapshot-id":%d,"sequence-number":%d,"operation":"append",`+
		`"metrics":{"added-data-files":{"unit":"count","value":1}},"metadata":{"engine-name":"spark"}}`, snap.SnapshotID, snap.SequenceNumber)
	const metricsPath = "/ingest/iceberg/v1/namespaces/db/tables/b/metrics"
	require.Equal(t, http.StatusUnauthorized, post(metricsPath, "", report))
	select {
	case p := <-passes:
		t.Fatalf("a report without the token woke a pass: %v", reasons(p))
	case <-time.After(200 * time.Millisecond):
	}
	l.counted.Reset()
	require.Equal(t, http.StatusNoContent, post(metricsPath, changeToken, report))
	p := next()
	r := reasons(p)
	require.Equal(t, "no trigger fired", r["local.db.b"], "decided at once, whatever its poll interval")
	require.Contains(t, r["local.db.a"], "polled")
	require.Contains(t, r["local.db.c"], "polled")
	gauged("b", 3)
	reads := l.counted.Reads()
	require.Len(t, reads, 1, "%v", reads)
	require.Equal(t, int64(1), reads["db.b"].Metadata, "one read for the decision, the alerts and the gauges")

	// The webhook route, for anything else that knows of a commit.
	l.commit(t, "a")
	require.Equal(t, http.StatusUnauthorized, post("/api/v1/tables/db.a/changed", "", ""))
	require.Equal(t, http.StatusNotFound, post("/api/v1/tables/db.nosuch/changed", changeToken, ""))
	require.Equal(t, http.StatusAccepted, post("/api/v1/tables/DB.A/changed", changeToken, ""))
	p = next()
	r = reasons(p)
	require.Equal(t, "no trigger fired", r["local.db.a"])
	require.Contains(t, r["local.db.b"], "polled")
	gauged("a", 3)
}
