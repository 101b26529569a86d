package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

// TestServeDaemon runs a real floe serve process: its first pass compacts
// the table its policy says is due, the API lists the run, /metrics counts
// it, a state-changing request without the token gets 401, one with it
// queues a run (202 with its id, which GET follows to its end), every run
// is logged at info with no log level configured, and SIGTERM stops it
// with exit 0 and the table intact.
func TestServeDaemon(t *testing.T) {
	t.Parallel()
	bin := buildFloe(t)
	dir := policyWarehouse(t, "policies:\n  default: {layout: none}\n")
	ctx := context.Background()
	cat, id, cfgPath := openDemoTable(t, dir, "db.flat")
	tbl, err := lake.LoadTable(ctx, cat, id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)

	cmd := exec.Command(bin, "--config", cfgPath, "serve", "--listen", "127.0.0.1:0", "--interval", "1s")
	cmd.Env = append(withoutEnv(os.Environ(), "FLOE_LOG_LEVEL"), "FLOE_NO_PROGRESS=1", "FLOE_SERVER_TOKEN=s3cret-token")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 100)
	var logged syncBuilder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var base string
	deadline := time.After(2 * time.Minute)
	for base == "" {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "floe serve exited early: %s", logged.String())
			logged.WriteString(l + "\n")
			if _, rest, ok := strings.Cut(l, "listening on "); ok {
				base = strings.Fields(rest)[0]
			}
		case <-deadline:
			t.Fatalf("floe serve did not start: %s", logged.String())
		}
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for l := range lines {
			logged.WriteString(l + "\n")
		}
	}()
	get := func(path string) (int, string) {
		rsp, err := http.Get(base + path)
		require.NoError(t, err)
		defer rsp.Body.Close()
		b, err := io.ReadAll(rsp.Body)
		require.NoError(t, err)
		return rsp.StatusCode, string(b)
	}
	code, _ := get("/healthz")
	require.Equal(t, http.StatusOK, code)

	var runs []struct {
		ID, Status, Trigger string
	}
	require.Eventually(t, func() bool {
		code, body := get("/api/v1/runs?table=local.db.flat")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &runs) != nil {
			return false
		}
		return len(runs) > 0 && runs[len(runs)-1].Status == "done"
	}, time.Minute, 200*time.Millisecond, "the first pass runs the due table")
	require.Equal(t, "adaptive", runs[len(runs)-1].Trigger)
	// The run is recorded before the pass hands the tables' health to the
	// metrics: wait for both.
	require.Eventually(t, func() bool {
		_, metrics := get("/metrics")
		return strings.Contains(metrics, `floe_runs_total{status="done",step="compact",table="local.db.flat"}`) &&
			strings.Contains(metrics, `floe_table_data_files{table="local.db.flat"}`)
	}, time.Minute, 200*time.Millisecond, "/metrics counts the run and the table's health")

	rsp, err := http.Post(base+"/api/v1/tables/db.flat/optimize", "application/json", nil)
	require.NoError(t, err)
	rsp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, rsp.StatusCode)

	req, err := http.NewRequest("POST", base+"/api/v1/tables/db.flat/optimize", strings.NewReader(`{"by": "ana"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	rsp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var queued struct{ ID, Status, Trigger string }
	require.NoError(t, json.NewDecoder(rsp.Body).Decode(&queued))
	rsp.Body.Close()
	require.Equal(t, http.StatusAccepted, rsp.StatusCode)
	require.NotEmpty(t, queued.ID)
	require.Equal(t, "queued", queued.Status)
	require.Equal(t, "api", queued.Trigger)
	require.Eventually(t, func() bool {
		code, body := get("/api/v1/runs/" + queued.ID)
		var r struct{ Status string }
		return code == http.StatusOK && json.Unmarshal([]byte(body), &r) == nil && r.Status == "done"
	}, time.Minute, 200*time.Millisecond, "the queued run runs")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	// Every line is read before Wait closes the pipe.
	select {
	case <-drained:
	case <-time.After(time.Minute):
		t.Fatal("floe serve did not stop on SIGTERM")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "SIGTERM stops floe serve with exit 0: %s", logged.String())
	case <-time.After(time.Minute):
		t.Fatal("floe serve did not stop on SIGTERM")
	}
	require.NotContains(t, logged.String(), "s3cret-token")
	// Nothing silent at the default level: each run's decision, start and
	// end are info lines naming the table and the trigger.
	for _, want := range [][]string{
		{`msg="run due"`, "table=local.db.flat", "trigger=adaptive"},
		{`msg="run decided"`, "table=local.db.flat", "trigger=adaptive", "steps="},
		{`msg="run done"`, "table=local.db.flat", "trigger=adaptive", "status=done"},
		{`msg="run queued"`, "table=local.db.flat", "trigger=api", "by=ana", "run_id=" + queued.ID},
		{`msg="run done"`, "table=local.db.flat", "trigger=api", "run_id=" + queued.ID},
	} {
		require.True(t, slices.ContainsFunc(strings.Split(logged.String(), "\n"), func(l string) bool {
			for _, w := range want {
				if !strings.Contains(l, w) {
					return false
				}
			}
			return true
		}), "a log line with %v in:\n%s", want, logged.String())
	}
	tbl, err = lake.LoadTable(ctx, cat, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// syncBuilder is a strings.Builder safe for one writer and one reader.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}
