package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/internal/trinofake"
)

// flatWarehouseDir is the data_dir of a warehouse holding db.flat.
func flatWarehouseDir(t *testing.T) string {
	t.Helper()
	w := testlake.New(t)
	writeFlatTable(t, w, "flat", 1, 10)
	return w.Dir
}

// sparkLog copies a Spark event log of the shared fixtures into dir.
func sparkLog(t *testing.T, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "logs", "spark", name))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
}

// collectedIDs are the query ids floe queries --events lists.
func collectedIDs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, dir, "queries", "--events", "--limit", "1000", "--output", "json"), errOut.String())
	var evs []struct {
		QueryID string `json:"query_id"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &evs))
	ids := map[string]bool{}
	for _, e := range evs {
		ids[e.QueryID] = true
	}
	return ids
}

// TestServeCollectsSources is the daemon end to end: floe serve with a
// growing Spark history directory and a Trino coordinator in floe.yaml
// collects both by itself — new queries are in floe queries within an
// interval or two, with no command run — and a source that stays silent
// longer than its silence shows in /metrics and fires its alert. A
// restart resumes the Trino poll from its stored watermark.
func TestServeCollectsSources(t *testing.T) {
	w := flatWarehouseDir(t)
	history := t.TempDir()
	sparkLog(t, history, "application_1714560000000_0042")
	trino := trinofake.New(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	trino.Add(trinofake.Query{ID: "tq1", State: "FINISHED", User: "ana", SQL: "SELECT * FROM iceberg.db.flat WHERE id = 1", Created: t0, End: t0.Add(time.Second)})
	dir := t.TempDir()
	writeLocalConfig(t, dir, w, `telemetry:
  sources:
    - {name: spark, kind: files, paths: ['`+history+`'], interval: 1s}
    - {name: trino, kind: trino, dsn: '`+trino.DSN("floe")+`', interval: 1s, silence: 1m}
`)
	var (
		clockMu sync.Mutex
		skew    time.Duration
	)
	now := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		return time.Now().Add(skew)
	}
	serve := func() (base string, stop func()) {
		errOut := &lockedBuffer{}
		f := newFactory(&IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: errOut})
		f.Now = now
		root := newRootCmd(f)
		root.SetArgs([]string{"--config", filepath.Join(dir, "floe.yaml"), "serve", "--listen", "127.0.0.1:0", "--interval", "1h"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			err := root.ExecuteContext(ctx)
			done <- errors.Join(err, f.Close())
		}()
		require.Eventually(t, func() bool {
			_, rest, ok := strings.Cut(errOut.String(), "listening on ")
			if ok {
				base = strings.Fields(rest)[0]
			}
			return ok
		}, time.Minute, 50*time.Millisecond, "floe serve did not start: %s", errOut.String())
		return base, func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err, errOut.String())
			case <-time.After(time.Minute):
				t.Fatal("floe serve did not stop")
			}
			require.Contains(t, errOut.String(), "collecting telemetry")
		}
	}
	base, stop := serve()
	require.Eventually(t, func() bool {
		ids := collectedIDs(t, dir)
		return ids["tq1"] && ids["application_1714560000000_0042/7"]
	}, 30*time.Second, 200*time.Millisecond, "the first collection stores both sources' queries")

	// The sources grow; no command is run.
	sparkLog(t, history, "local-1714650000000.inprogress")
	trino.Add(trinofake.Query{ID: "tq2", State: "FINISHED", User: "bob", SQL: "SELECT * FROM iceberg.db.flat WHERE id = 2", Created: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second)})
	require.Eventually(t, func() bool {
		ids := collectedIDs(t, dir)
		return ids["tq2"] && ids["local-1714650000000/0"]
	}, 10*time.Second, 100*time.Millisecond, "new queries are collected within an interval or two")

	metrics := func() string {
		rsp, err := http.Get(base + "/metrics")
		require.NoError(t, err)
		defer rsp.Body.Close()
		b, err := io.ReadAll(rsp.Body)
		require.NoError(t, err)
		return string(b)
	}
	m := metrics()
	require.Contains(t, m, `floe_telemetry_source_events_total{source="trino"} 2`)
	require.Contains(t, m, `floe_telemetry_source_errors_total{source="trino"} 0`)
	require.Contains(t, m, `floe_telemetry_source_silent{source="trino"} 0`)
	require.Contains(t, m, `floe_telemetry_source_last_event_timestamp_seconds{source="trino"}`)

	// Two minutes on: trino has been silent past its minute.
	clockMu.Lock()
	skew = 2 * time.Minute
	clockMu.Unlock()
	require.Eventually(t, func() bool {
		m := metrics()
		return strings.Contains(m, `floe_telemetry_source_silent{source="trino"} 1`) && strings.Contains(m, `floe_alerts_total{kind="silent"} 1`)
	}, 10*time.Second, 100*time.Millisecond, "the silent source shows in the metrics and alerts")
	require.Contains(t, metrics(), `floe_telemetry_source_silent{source="spark"} 0`, "a source without silence never alerts")
	stop()

	// A restart polls from the stored watermark.
	// (The daemon's connection checks ping the coordinator too, asking
	// for what ended after the year 9999.)
	before := len(trino.Statements())
	polls := func() []string {
		var out []string
		for _, s := range trino.Statements()[before:] {
			if !strings.Contains(s, "9999-01-01") {
				out = append(out, s)
			}
		}
		return out
	}
	_, stop = serve()
	require.Eventually(t, func() bool { return len(polls()) > 0 }, 10*time.Second, 50*time.Millisecond)
	stop()
	require.Contains(t, polls()[0], `"end" > TIMESTAMP '`+t0.Add(3*time.Second).Format("2006-01-02 15:04:05.000")+` UTC'`)
}

// TestCollectSources: floe collect without a PATH collects every source
// of floe.yaml once and says so; run again it finds nothing new; with no
// source configured it says how to configure one and exits 2.
func TestCollectSources(t *testing.T) {
	w := flatWarehouseDir(t)
	history := t.TempDir()
	sparkLog(t, history, "application_1714560000000_0042")
	trino := trinofake.New(t)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	trino.Add(trinofake.Query{ID: "tq1", State: "FINISHED", SQL: "SELECT * FROM iceberg.db.flat", Created: t0, End: t0.Add(time.Second)})
	dir := t.TempDir()
	writeLocalConfig(t, dir, w, `telemetry:
  sources:
    - {name: spark, kind: files, paths: ['`+history+`']}
    - {name: trino, kind: trino, dsn: '`+trino.DSN("floe")+`'}
`)
	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, dir, "collect"), errOut.String())
	require.Contains(t, errOut.String(), "collecting the telemetry sources of "+filepath.Join(dir, "floe.yaml")+": spark, trino")
	require.Regexp(t, `trino\s+trino\s+1\s+1\s+0\s+0`, out.String())
	require.Regexp(t, `spark\s+files\s+\d+\s+[1-9]\d*\s+0\s+0`, out.String())
	ids := collectedIDs(t, dir)
	require.True(t, ids["tq1"])
	require.True(t, ids["application_1714560000000_0042/7"], "%v", ids)

	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "collect", "--output", "json"), errOut.String())
	var reps []struct {
		Source   string
		Inserted int
		Skipped  int
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &reps))
	require.Len(t, reps, 2)
	require.Zero(t, reps[0].Inserted+reps[1].Inserted, "nothing new the second time")
	require.Equal(t, 1, reps[0].Skipped)

	trino.SetDown(true)
	io, _, errOut = testIO()
	require.Equal(t, exitError, runWith(t, io, dir, "collect"))
	require.Contains(t, errOut.String(), "1 of 2 telemetry sources not collected: trino")

	bare := t.TempDir()
	writeLocalConfig(t, bare, w, "")
	io, _, errOut = testIO()
	require.Equal(t, exitUsage, runWith(t, io, bare, "collect"))
	require.Contains(t, errOut.String(), "collect needs a PATH, or telemetry sources in")
	require.Contains(t, errOut.String(), "kind: files")
	require.Contains(t, errOut.String(), "docs/telemetry.md")
}

// TestDoctorSourceCheck: floe doctor lists a check per telemetry source.
func TestDoctorSourceCheck(t *testing.T) {
	w := flatWarehouseDir(t)
	trino := trinofake.New(t)
	dir := t.TempDir()
	writeLocalConfig(t, dir, w, `telemetry:
  sources:
    - {name: trino, kind: trino, dsn: '`+trino.DSN("floe")+`'}
    - {name: gone, kind: files, paths: ['`+filepath.Join(t.TempDir(), "missing")+`']}
`)
	io, out, errOut := testIO()
	code := runWith(t, io, dir, "doctor", "--output", "json")
	var rep struct {
		Checks []struct {
			Name, Target, Error string
			OK                  bool
		}
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), errOut.String())
	got := map[string]bool{}
	for _, c := range rep.Checks {
		if c.Name == "telemetry_source" {
			got[strings.Fields(c.Target)[0]] = c.OK
		}
	}
	require.Equal(t, map[string]bool{"trino": true, "gone": false}, got)
	require.NotEqual(t, 0, code, "a failing source fails doctor")
}
