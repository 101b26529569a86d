package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors/snowflake/snowfake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/internal/trinofake"
)

// flatLake is a warehouse holding db.flat.
func flatLake(t *testing.T) *testlake.Warehouse {
	t.Helper()
	w := testlake.New(t)
	writeFlatTable(t, w, "flat", 1, 10)
	return w
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

// snowflakeSource starts a Snowflake SQL API fake that takes a fresh key
// pair, writes the private key to a file and points
// FLOE_SOURCE__<NAME>__PRIVATE_KEY_FILE at it; it returns the fake and the
// source's floe.yaml item (a flow mapping), polled every second with a
// settle of 1ns (the fake's history has no lag).
func snowflakeSource(t *testing.T, name, extra string) (*snowfake.Fake, string) {
	t.Helper()
	pub, key := snowfake.NewKey(t)
	fake := snowfake.New(t, snowfake.Options{PublicKey: pub})
	keyFile := filepath.Join(t.TempDir(), "snow.p8")
	require.NoError(t, os.WriteFile(keyFile, key, 0o600))
	t.Setenv("FLOE_SOURCE__"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))+"__PRIVATE_KEY_FILE", keyFile)
	return fake, "{name: " + name + ", kind: snowflake, account: " + fake.Account() + ", user: " + fake.User() +
		", url: '" + fake.URL() + "', warehouse: FLOE_WH, settle: 1ns, interval: 1s" + extra + "}"
}

// snowQuery is a finished Snowflake query of db.flat started at start.
func snowQuery(id string, start time.Time) snowfake.Query {
	return snowfake.Query{ID: id, Text: "SELECT id FROM flat WHERE id = 3", Database: "LOCAL", Schema: "DB", User: "ANA",
		QueryType: "SELECT", Start: start, Elapsed: 800 * time.Millisecond,
		Base: []snowfake.Object{{Name: "LOCAL.DB.FLAT", Columns: []string{"ID"}}}}
}

// TestServeCollectsSources is the daemon end to end: floe serve with a
// growing Spark history directory, a Trino coordinator and a Snowflake
// account (SQL API, key-pair JWT) in floe.yaml collects all three by
// itself — new queries are in floe queries within an interval or two,
// with no command run — and sources that stay silent longer than their
// silence show in /metrics and fire their alerts. A restart resumes the
// Trino poll from its stored watermark.
func TestServeCollectsSources(t *testing.T) {
	w := flatLake(t)
	history := t.TempDir()
	sparkLog(t, history, "application_1714560000000_0042")
	trino := trinofake.New(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	trino.Add(trinofake.Query{ID: "tq1", State: "FINISHED", User: "ana", SQL: "SELECT * FROM iceberg.db.flat WHERE id = 1", Created: t0, End: t0.Add(time.Second)})
	snow, snowItem := snowflakeSource(t, "snow", ", silence: 1m")
	snow.AddQueries(snowQuery("sq1", t0.Add(-time.Minute)))
	dir := t.TempDir()
	// The Spark log's queries ran in May 2024: a retention and history
	// that reach them, or the daemon's prune at start folds and deletes
	// them whenever the files source stores them first (a race the test
	// lost on a loaded machine, never seeing the Spark queries).
	writeWarehouseConfig(t, dir, w, `telemetry:
  retention: 3650d
  history: 3650d
  sources:
    - {name: spark, kind: files, paths: ['`+history+`'], interval: 1s}
    - {name: trino, kind: trino, dsn: '`+trino.DSN("floe")+`', interval: 1s, silence: 1m}
    - `+snowItem+`
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
	var seen map[string]bool
	if !assert.Eventually(t, func() bool {
		seen = collectedIDs(t, dir)
		return seen["tq1"] && seen["application_1714560000000_0042/7"] && seen["sq1"]
	}, 30*time.Second, 200*time.Millisecond, "the first collection stores every source's queries") {
		t.Fatalf("collected so far: %v", slices.Sorted(maps.Keys(seen)))
	}

	// The sources grow; no command is run.
	sparkLog(t, history, "local-1714650000000.inprogress")
	trino.Add(trinofake.Query{ID: "tq2", State: "FINISHED", User: "bob", SQL: "SELECT * FROM iceberg.db.flat WHERE id = 2", Created: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second)})
	snow.AddQueries(snowQuery("sq2", time.Now().UTC()))
	require.Eventually(t, func() bool {
		ids := collectedIDs(t, dir)
		return ids["tq2"] && ids["local-1714650000000/0"] && ids["sq2"]
	}, 10*time.Second, 100*time.Millisecond, "new queries are collected within an interval or two")
	var signed bool
	for _, r := range snow.Requests() {
		signed = signed || r.TokenType == "KEYPAIR_JWT" && r.Status == http.StatusOK
	}
	require.True(t, signed, "the daemon signs in with the key file's key")

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
	require.Contains(t, m, `floe_telemetry_source_events_total{source="snow"} 2`)
	require.Contains(t, m, `floe_telemetry_source_errors_total{source="snow"} 0`)
	require.Contains(t, m, `floe_telemetry_source_silent{source="snow"} 0`)

	// Two minutes on: trino and snow have been silent past their minute.
	clockMu.Lock()
	skew = 2 * time.Minute
	clockMu.Unlock()
	require.Eventually(t, func() bool {
		m := metrics()
		return strings.Contains(m, `floe_telemetry_source_silent{source="trino"} 1`) && strings.Contains(m, `floe_telemetry_source_silent{source="snow"} 1`) &&
			strings.Contains(m, `floe_alerts_total{kind="silent"} 2`)
	}, 10*time.Second, 100*time.Millisecond, "the silent sources show in the metrics and alerts")
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
// of floe.yaml once and says so; run again it finds nothing new; a source
// that cannot be collected (a coordinator down, a key the account does
// not know) fails it, naming each; with no source configured it says how
// to configure one and exits 2.
func TestCollectSources(t *testing.T) {
	w := flatLake(t)
	history := t.TempDir()
	sparkLog(t, history, "application_1714560000000_0042")
	trino := trinofake.New(t)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	trino.Add(trinofake.Query{ID: "tq1", State: "FINISHED", SQL: "SELECT * FROM iceberg.db.flat", Created: t0, End: t0.Add(time.Second)})
	snow, snowItem := snowflakeSource(t, "snow-prod", "")
	snow.AddQueries(snowQuery("sq1", t0), snowQuery("sq2", t0.Add(time.Minute)))
	dir := t.TempDir()
	writeWarehouseConfig(t, dir, w, `telemetry:
  sources:
    - {name: spark, kind: files, paths: ['`+history+`']}
    - {name: trino, kind: trino, dsn: '`+trino.DSN("floe")+`'}
    - `+snowItem+`
`)
	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, dir, "collect"), errOut.String())
	require.Contains(t, errOut.String(), "collecting the telemetry sources of "+filepath.Join(dir, "floe.yaml")+": spark, trino, snow-prod")
	require.Regexp(t, `trino\s+trino\s+1\s+1\s+0\s+0`, out.String())
	require.Regexp(t, `snow-prod\s+snowflake\s+2\s+2\s+0\s+0`, out.String())
	require.Regexp(t, `spark\s+files\s+\d+\s+[1-9]\d*\s+0\s+0`, out.String())
	ids := collectedIDs(t, dir)
	require.True(t, ids["tq1"])
	require.True(t, ids["sq1"] && ids["sq2"], "%v", ids)
	require.True(t, ids["application_1714560000000_0042/7"], "%v", ids)

	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "collect", "--output", "json"), errOut.String())
	var reps []struct {
		Source   string
		Inserted int
		Skipped  int
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &reps))
	require.Len(t, reps, 3)
	require.Zero(t, reps[0].Inserted+reps[1].Inserted+reps[2].Inserted, "nothing new the second time")
	require.Equal(t, 1, reps[0].Skipped)

	trino.SetDown(true)
	_, strangerKey := snowfake.NewKey(t)
	t.Setenv("FLOE_SOURCE__SNOW_PROD__PRIVATE_KEY_FILE", "")
	t.Setenv("FLOE_SOURCE__SNOW_PROD__PRIVATE_KEY", string(strangerKey))
	io, out, errOut = testIO()
	require.Equal(t, exitError, runWith(t, io, dir, "collect"))
	require.Contains(t, errOut.String(), "2 of 3 telemetry sources not collected: trino, snow-prod")
	require.Contains(t, out.String(), "390144 JWT token is invalid")
	require.NotContains(t, out.String()+errOut.String(), "PRIVATE KEY", "the key is never printed")

	// A variable for a source floe.yaml lacks is an error: set none.
	for _, k := range []string{"FLOE_SOURCE__SNOW_PROD__PRIVATE_KEY", "FLOE_SOURCE__SNOW_PROD__PRIVATE_KEY_FILE"} {
		require.NoError(t, os.Unsetenv(k)) // t.Setenv restores it
	}
	bare := t.TempDir()
	writeWarehouseConfig(t, bare, w, "")
	io, _, errOut = testIO()
	require.Equal(t, exitUsage, runWith(t, io, bare, "collect"))
	require.Contains(t, errOut.String(), "collect needs a PATH, or telemetry sources in")
	require.Contains(t, errOut.String(), "kind: files")
	require.Contains(t, errOut.String(), "docs/telemetry.md")
}

// TestDoctorSourceCheck: floe doctor lists a check per telemetry source,
// a Snowflake account signed in to with its key file's key included.
func TestDoctorSourceCheck(t *testing.T) {
	w := flatLake(t)
	trino := trinofake.New(t)
	dir := t.TempDir()
	_, snowItem := snowflakeSource(t, "snow", "")
	writeWarehouseConfig(t, dir, w, `telemetry:
  sources:
    - {name: trino, kind: trino, dsn: '`+trino.DSN("floe")+`'}
    - {name: gone, kind: files, paths: ['`+filepath.Join(t.TempDir(), "missing")+`']}
    - `+snowItem+`
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
	require.Equal(t, map[string]bool{"trino": true, "gone": false, "snow": true}, got)
	require.NotEqual(t, 0, code, "a failing source fails doctor")
}
