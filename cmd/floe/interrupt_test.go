package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
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

// interruptAt starts floe with args, stopped at FLOE_TEST_PAUSE_AT point
// (see startPaused), sends SIGINT there and returns its exit code, stdout
// and stderr, and how long it took to exit after the signal.
func interruptAt(t *testing.T, bin, configPath, point string, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	p := startPaused(t, bin, configPath, point, nil, args...)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	sent := time.Now()
	var werr error
	select {
	case werr = <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("floe %v did not exit within a minute of SIGINT at %s; stderr:\n%s", args, point, p.errOut)
	}
	return exitOf(t, werr), p.out.String(), p.errOut.String(), time.Since(sent)
}

// TestCompactInterruptedBySIGINT stops a real floe compact with Ctrl-C at
// each point where a compaction's state differs: before the first commit,
// between commits and after the last. floe stops at the point and says so
// (FLOE_TEST_PAUSE_AT, see testhook.go) before the signal is sent, so each
// interrupt lands where it is meant to. It must exit promptly, 130 with
// what it committed and what is left when it stopped before the end (never
// a bare "context canceled"), keep the table's rows, commit exactly the
// partitions before the point, release its lease, and leave no data file
// behind.
func TestCompactInterruptedBySIGINT(t *testing.T) {
	t.Parallel()
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
	want := rowSum(t, load().Table)

	for _, tc := range []struct {
		point, layout string
		// committed is how many of the plan's partitions are rewritten
		// when floe exits (-1: all of them).
		committed int
		code      int
		// status is the run's recorded status.
		status control.RunStatus
		// says is what floe must say (stdout and stderr), with {n} for
		// the number of partitions planned.
		says []string
	}{
		{rewriter.PauseBeforeCommit(1), "sort(tenant_id)", 0, exitCancel, control.StatusCancelled,
			[]string{"interrupted: no partition committed, the table is as it was", "uncommitted file"}},
		{rewriter.PauseBeforeCommit(2), "zorder(tenant_id, user_id)", 1, exitCancel, control.StatusCancelled,
			[]string{"interrupted: 1 of {n} partitions committed in 1 snapshot and kept", "uncommitted file"}},
		// Everything was committed when Ctrl-C came: the run is done and
		// recorded as such, with the table's health after it.
		{rewriter.PauseCommitted, "sort(country, tenant_id)", -1, 0, control.StatusDone,
			[]string{"committed {n} snapshots", "compact  done"}},
	} {
		args := []string{"compact", "web.events", "--layout", tc.layout, "--memory", "32MiB"}
		planned, committed := plannedPartitions(t, dir, tc.committed, args...)
		before := load()
		code, stdout, stderr, took := interruptAt(t, bin, configPath, tc.point, args...)
		t.Logf("SIGINT %s (%s): exit %d in %s: %s", tc.point, tc.layout, code, took.Round(time.Millisecond), stderr)
		require.Equal(t, tc.code, code, "SIGINT %s:\nstdout:\n%s\nstderr:\n%s", tc.point, stdout, stderr)
		require.Less(t, took, 20*time.Second, "Ctrl-C is prompt")
		require.NotContains(t, stdout+stderr, "context canceled")
		for _, w := range tc.says {
			require.Contains(t, stdout+stderr, strings.ReplaceAll(w, "{n}", strconv.Itoa(len(planned))), "SIGINT %s", tc.point)
		}

		after := load()
		require.Equal(t, want, rowSum(t, after.Table), "rows changed after SIGINT %s", tc.point)
		require.ElementsMatch(t, committed, rewrittenPartitions(t, before, after), "SIGINT %s: partitions rewritten", tc.point)
		// The run's record says how it ended, and its table lease is
		// released: the next case claims the table at once.
		rec := latestRun(t, dir, "web.events")
		require.Equal(t, tc.status, rec.Status, "SIGINT %s: the run's record", tc.point)
		require.Equal(t, []string{control.StepCompact}, stepNames(rec), "SIGINT %s: the run's steps", tc.point)
		require.Equal(t, tc.status, rec.Steps[0].Status, "SIGINT %s: the compact step's record", tc.point)
		leases, err := rewriter.Leases(ctx, after.Table)
		require.NoError(t, err)
		require.Empty(t, leases, "an interrupted run releases its lease")
		// No data file is left: the interrupted group's files were removed
		// on the way out. (A catalog commit cut short can leave the
		// metadata file and manifests iceberg-go staged for it: ordinary
		// orphans, found at the usual age.)
		orphans, err := rewriter.PlanOrphans(ctx, after.Table, rewriter.OrphanOptions{OlderThanSet: true, Force: true})
		require.NoError(t, err)
		dataDir := tableDataDir(t, after)
		for _, f := range orphans.Files {
			require.False(t, strings.HasPrefix(strings.TrimPrefix(f.Path, "file://"), dataDir), "a data file left by the interrupted run: %s", f.Path)
			require.Empty(t, f.RunID, "a data file left by the interrupted run: %s", f.Path)
		}
	}
}

// TestDemoInterruptedBySIGINT stops 'floe demo' with Ctrl-C while it builds
// the warehouse and later: it must exit 130, promptly, saying so.
func TestDemoInterruptedBySIGINT(t *testing.T) {
	t.Parallel()
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
