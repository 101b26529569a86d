package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// interruptAfter starts floe with args, sends SIGINT after delay and
// returns its exit code, stdout and stderr, and how long it took to exit
// after the signal.
func interruptAfter(t *testing.T, bin, configPath string, delay time.Duration, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--config", configPath}, args...)...)
	cmd.Env = append(os.Environ(), "FLOE_NO_PROGRESS=1")
	var out, errOut lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The delay counts from floe's first output: before main runs (package
	// initialisation takes a while on a loaded machine) floe has not yet
	// installed its signal handler, and a SIGINT kills it as it would any
	// program — nothing floe can report on.
	started := time.NewTicker(10 * time.Millisecond)
	defer started.Stop()
	var werr error
	for out.Len()+errOut.Len() == 0 {
		select {
		case werr = <-done:
			return exitOf(t, werr), out.String(), errOut.String(), 0
		case <-started.C:
		}
	}
	select {
	case werr = <-done:
		// Finished before the signal.
		return exitOf(t, werr), out.String(), errOut.String(), 0
	case <-time.After(delay):
	}
	// floe may finish in the instant between the timer and the signal:
	// Wait has then reaped it and Signal reports ErrProcessDone. That is a
	// run that finished before the signal, not a failure.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		require.ErrorIs(t, err, os.ErrProcessDone)
		werr = <-done
		return exitOf(t, werr), out.String(), errOut.String(), 0
	}
	sent := time.Now()
	select {
	case werr = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("floe %v did not exit within a minute of SIGINT; stderr:\n%s", args, errOut.String())
	}
	return exitOf(t, werr), out.String(), errOut.String(), time.Since(sent)
}

// lockedBuffer is a bytes.Buffer a child process writes to while the test
// reads its length.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func exitOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	return ee.ExitCode()
}

// TestCompactInterruptedBySIGINT stops a real floe compact with Ctrl-C at
// several points. It must exit 130 saying what it committed and what is
// left (never a bare "context canceled"), keep the table's rows, release its
// lease, and leave no file behind that it could have removed.
func TestCompactInterruptedBySIGINT(t *testing.T) {
	bin := buildFloe(t)
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "60", "--orders", "300", "--queries", "30")...)
	require.Equal(t, 0, code, errOut)
	ctx := context.Background()
	cat, id, configPath := openDemoTable(t, dir, "web.events")
	load := func() *lake.State {
		tbl, err := lake.LoadTable(ctx, cat, id)
		require.NoError(t, err)
		st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
		require.NoError(t, err)
		return st
	}
	want, err := oracle.ChecksumIceberg(ctx, load().Table)
	require.NoError(t, err)

	layouts := []string{"sort(tenant_id)", "zorder(tenant_id, user_id)", "sort(country, tenant_id)", "hilbert(user_id, tenant_id)"}
	outcomes := map[string]int{}
	for i, delay := range []time.Duration{400 * time.Millisecond, 1200 * time.Millisecond, 2500 * time.Millisecond, 4 * time.Second} {
		code, stdout, stderr, took := interruptAfter(t, bin, configPath, delay, "compact", "web.events", "--layout", layouts[i], "--memory", "32MiB")
		t.Logf("SIGINT after %s (%s): exit %d in %s: %s", delay, layouts[i], code, took.Round(time.Millisecond), stderr)
		require.NotContains(t, stderr, "context canceled")
		switch code {
		case 0:
			outcomes["finished before the signal"]++
		case exitCancel:
			require.Contains(t, stderr, "interrupted")
			require.Less(t, took, 20*time.Second, "Ctrl-C is prompt")
			switch {
			case bytes.Contains([]byte(stderr), []byte("partitions committed")):
				outcomes["interrupted between commits"]++
			default:
				outcomes["interrupted before any commit"]++
			}
		default:
			t.Fatalf("exit %d after SIGINT:\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}

		after := load()
		got, err := oracle.ChecksumIceberg(ctx, after.Table)
		require.NoError(t, err)
		require.Equal(t, want, got, "rows changed after SIGINT at %s", delay)
		leases, err := rewriter.Leases(ctx, after.Table)
		require.NoError(t, err)
		require.Empty(t, leases, "an interrupted run releases its lease")
		// No data file is left: the interrupted group's files were removed
		// on the way out. (A catalog commit cut short can leave the
		// metadata file and manifests iceberg-go staged for it: ordinary
		// orphans, found at the usual age.)
		orphans, err := rewriter.PlanOrphans(ctx, after.Table, rewriter.OrphanOptions{OlderThanSet: true, Force: true})
		require.NoError(t, err)
		// The table's data directory, not any path with /data/ in it: the
		// test's data_dir is itself called data.
		dataDir := strings.TrimPrefix(strings.TrimSuffix(after.Metadata.Location(), "/"), "file://") + "/data/"
		require.True(t, strings.HasPrefix(dataDir, "/"), "a local table: %s", dataDir)
		for _, f := range orphans.Files {
			require.False(t, strings.HasPrefix(strings.TrimPrefix(f.Path, "file://"), dataDir), "a data file left by the interrupted run: %s", f.Path)
			require.Empty(t, f.RunID, "a data file left by the interrupted run: %s", f.Path)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	require.NotZero(t, outcomes["interrupted between commits"]+outcomes["interrupted before any commit"], "no run was interrupted: %v", outcomes)
}

// TestDemoInterruptedBySIGINT stops 'floe demo' with Ctrl-C while it builds
// the warehouse and later: it must exit 130, promptly, saying so.
func TestDemoInterruptedBySIGINT(t *testing.T) {
	bin := buildFloe(t)
	for _, delay := range []time.Duration{1500 * time.Millisecond, 6 * time.Second} {
		dir := writeConfig(t)
		code, _, stderr, took := interruptAfter(t, bin, dir+"/floe.yaml", delay, demoArgs("--event-commits", "200", "--orders", "3000", "--queries", "3000")...)
		t.Logf("SIGINT after %s: exit %d in %s: %s", delay, code, took.Round(time.Millisecond), stderr)
		require.Equal(t, exitCancel, code, stderr)
		require.Less(t, took, 5*time.Second, "Ctrl-C in floe demo is prompt")
		require.Contains(t, stderr, "interrupted")
		require.NotContains(t, stderr, "context canceled")
	}
}
