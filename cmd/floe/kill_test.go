package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// TestCompactSurvivesSIGKILL kills a real floe process at each point of a
// compaction where a crash leaves the table in a state of its own: before
// the first commit (a group written, nothing committed), between commits
// (the first partition committed, the second written) and after the last
// commit (the lease still held). floe stops at the point and says so
// (FLOE_TEST_PAUSE_AT, see testhook.go), and only then is it killed, so
// each kill lands where it is meant to and its outcome is asserted: the
// table keeps exactly its rows, each partition either untouched or fully
// rewritten (a replace snapshot is atomic), the partitions committed are
// those the point implies, and whatever the dead process wrote but did not
// commit is an orphan that orphan removal finds once its lease lapsed.
func TestCompactSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	bin := buildFloe(t)
	// The killed processes spill into their own temp dir, to check what they
	// leave there.
	spill := t.TempDir()

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
	st := load()
	want := rowSum(t, st.Table)

	for _, tc := range []struct {
		point, layout string
		// committed is how many of the plan's partitions the kill leaves
		// rewritten (-1: all of them); orphans says whether written,
		// uncommitted data files are left.
		committed int
		orphans   bool
	}{
		{rewriter.PauseBeforeCommit(1), "sort(tenant_id)", 0, true},
		{rewriter.PauseBeforeCommit(2), "zorder(tenant_id, user_id)", 1, true},
		{rewriter.PauseCommitted, "hilbert(user_id, tenant_id)", -1, false},
	} {
		args := []string{"compact", "web.events", "--layout", tc.layout, "--memory", "32MiB"}
		planned, committed := plannedPartitions(t, dir, tc.committed, args...)

		before := load()
		// A short table lease (server.lease_ttl), so that the next case
		// need not wait the default 2m for the killed run's to lapse.
		p := startPaused(t, bin, configPath, tc.point, []string{"TMPDIR=" + spill, "FLOE_SERVER_LEASE_TTL=" + killedLeaseTTL.String()}, args...)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		werr := <-p.done
		var ee *exec.ExitError
		require.ErrorAs(t, werr, &ee, "%s: floe was running when killed", tc.point)
		ws, ok := ee.Sys().(syscall.WaitStatus)
		require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%s: %v", tc.point, werr)

		// The killed run's record says it was running when it died, and
		// its table lease, live for a while yet, keeps every other run off
		// the table.
		killed := latestRun(t, dir, "web.events")
		require.Equal(t, control.StatusRunning, killed.Status, "SIGKILL %s: the killed run's record", tc.point)
		_, errOut, code := run(t, dir, args...)
		require.Equal(t, exitError, code, "SIGKILL %s: a run while the killed run's lease is live", tc.point)
		require.Contains(t, errOut, "table busy", "SIGKILL %s", tc.point)
		require.Contains(t, errOut, "run "+killed.ID, "SIGKILL %s: the refusal names the killed run", tc.point)

		after := load()
		require.Equal(t, want, rowSum(t, after.Table), "rows changed after SIGKILL %s", tc.point)
		require.ElementsMatch(t, committed, rewrittenPartitions(t, before, after), "SIGKILL %s: partitions rewritten", tc.point)

		// The killed run held its lease (taken before anything is read,
		// released after the last commit), so what it wrote is not an
		// orphan while the lease may be live.
		leases, err := rewriter.Leases(ctx, after.Table)
		require.NoError(t, err)
		require.Len(t, leases, 1, "SIGKILL %s: the killed run's lease is left", tc.point)
		require.True(t, leases[0].Live(time.Now()))
		young, err := rewriter.PlanOrphans(ctx, after.Table, rewriter.OrphanOptions{OlderThan: time.Nanosecond, Force: true})
		require.NoError(t, err)
		require.Empty(t, young.Files, "files of a run whose lease is live are never orphans")
		// Past the lease's lapse and one more TTL: the run is over, and
		// its lease file (kept until then, it says which table the run
		// was on) and uncommitted files are floe's leftovers.
		lapsed := func() time.Time { return time.Now().Add(2*rewriter.DefaultLeaseTTL + time.Minute) }
		plan, err := rewriter.PlanOrphans(ctx, after.Table, rewriter.OrphanOptions{OlderThan: time.Nanosecond, Force: true, Now: lapsed})
		require.NoError(t, err)
		require.Empty(t, plan.Leases)
		dataDir := tableDataDir(t, after)
		var dataOrphans int
		for _, f := range plan.Files {
			if strings.HasPrefix(strings.TrimPrefix(f.Path, "file://"), dataDir) {
				// What the dead process wrote, named by its run: nothing
				// of the table's own is taken for an orphan.
				require.Equal(t, killed.ID, rewriter.RunOfFile(f.Path), "SIGKILL %s: a data orphan not of the killed run", tc.point)
				dataOrphans++
			}
		}
		require.Equal(t, tc.orphans, dataOrphans > 0, "SIGKILL %s: %d uncommitted data files", tc.point, dataOrphans)
		t.Logf("SIGKILL %s (%s): %d of %d planned partitions rewritten, %d orphan files (%d data)", tc.point, tc.layout, len(committed), len(planned), len(plan.Files), dataOrphans)

		// The killed run's spill directory is left behind, and swept once
		// its lock went with the process.
		dirs, err := filepath.Glob(filepath.Join(spill, "floe-run-*"))
		require.NoError(t, err)
		require.Len(t, dirs, 1, "SIGKILL %s: the killed run's spill directory is left", tc.point)
		swept, err := rewriter.SweepRunDirs(spill)
		require.NoError(t, err)
		require.Len(t, swept, len(dirs))
		dirs, err = filepath.Glob(filepath.Join(spill, "floe-run-*"))
		require.NoError(t, err)
		require.Empty(t, dirs)
		if len(plan.Files) > 0 {
			res, err := rewriter.DeleteOrphans(ctx, after.Table, plan, 4)
			require.NoError(t, err)
			require.Len(t, res.Deleted, len(plan.Files))
			require.Equal(t, want, rowSum(t, load().Table), "removing the orphans of a killed run changed the table")
		}

		// Once its table lease lapsed, the killed run is recorded as
		// abandoned, and the next case may claim the table.
		time.Sleep(time.Until(killed.LeaseExpiresAt) + 100*time.Millisecond)
		killed = latestRun(t, dir, "web.events")
		require.Equal(t, control.StatusAbandoned, killed.Status, "SIGKILL %s: the killed run once its lease lapsed", tc.point)
	}
}

// killedLeaseTTL is the table lease (server.lease_ttl) of the floe
// processes the kill test kills: what each leaves is waited out before the
// next starts. Renewed every quarter of it, it must stay long enough for a
// busy machine to renew it in time.
const killedLeaseTTL = 8 * time.Second

// latestRun is the newest recorded run of table, as floe runs lists it.
func latestRun(t *testing.T, dir, table string) control.Run {
	t.Helper()
	out, errOut, code := run(t, dir, "runs", table, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []control.Run
	require.NoError(t, json.Unmarshal([]byte(out), &runs), "%s", out)
	require.NotEmpty(t, runs, "no run of %s", table)
	return runs[0]
}

// stepNames are the names of r's steps, in order.
func stepNames(r control.Run) []string {
	names := make([]string, 0, len(r.Steps))
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	return names
}

// rewrittenPartitions are the partitions whose data files changed from
// before to after. Commits are whole partitions (a replace snapshot is
// atomic): each partition's files must be either all from before or all
// new.
func rewrittenPartitions(t *testing.T, before, after *lake.State) []string {
	t.Helper()
	old := map[string]bool{}
	for _, f := range before.DataFiles {
		old[f.Path] = true
	}
	byPart := map[string][2]int{} // old files, new files
	for _, f := range after.DataFiles {
		c := byPart[f.PartitionKey]
		if old[f.Path] {
			c[0]++
		} else {
			c[1]++
		}
		byPart[f.PartitionKey] = c
	}
	var rewritten []string
	for p, c := range byPart {
		if c[1] > 0 {
			rewritten = append(rewritten, p)
			require.Zero(t, c[0], "partition %s mixes old and new files", p)
		}
	}
	return rewritten
}

// plannedPartitions are the partitions, in commit order, that floe with
// args (a compaction) would rewrite now — its dry run's plan — and the
// first n of them (all when n < 0): those a compaction stopped after n
// commits of one partition each has rewritten. The plan has at least two,
// so that a stop between commits is one.
func plannedPartitions(t *testing.T, dir string, n int, args ...string) (planned, committed []string) {
	t.Helper()
	out, errOut, code := run(t, dir, append(args, "--dry-run", "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	dry := dryRunOf(t, []byte(out))
	var parts []string
	for _, s := range dry.Steps {
		if s.Compact != nil {
			for _, g := range s.Compact.Groups {
				parts = append(parts, g.Partition)
			}
		}
	}
	require.GreaterOrEqual(t, len(parts), 2, "floe %v: the plan has a second commit to stop before", args)
	if n < 0 {
		return parts, parts
	}
	return parts, parts[:n]
}

// tableDataDir is the local directory of st's data files. Not any path
// with /data/ in it: the tests' data_dir is itself called data.
func tableDataDir(t *testing.T, st *lake.State) string {
	t.Helper()
	dir := strings.TrimPrefix(strings.TrimSuffix(st.Metadata.Location(), "/"), "file://") + "/data/"
	require.True(t, strings.HasPrefix(dir, "/"), "a local table: %s", dir)
	return dir
}

// paused is a floe process stopped at a FLOE_TEST_PAUSE_AT point.
type paused struct {
	cmd         *exec.Cmd
	done        <-chan error
	out, errOut *lockedBuffer
}

// startPaused starts floe with args and FLOE_TEST_PAUSE_AT=point (and env)
// and returns once floe says it stopped there. It fails the test when floe
// exits first — the point was never reached — or is not there within two
// minutes.
func startPaused(t *testing.T, bin, configPath, point string, env []string, args ...string) paused {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--config", configPath}, args...)...)
	cmd.Env = append(append(os.Environ(), "FLOE_NO_PROGRESS=1", envPauseAt+"="+point), env...)
	p := paused{cmd: cmd, out: &lockedBuffer{}, errOut: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	p.done = done
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(2 * time.Minute)
	for !strings.Contains(p.errOut.String(), pausedPrefix+point+"\n") {
		select {
		case err := <-done:
			t.Fatalf("floe %v exited (%v) before reaching %s:\nstdout:\n%s\nstderr:\n%s", args, err, point, p.out, p.errOut)
		case <-timeout:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("floe %v did not reach %s within two minutes; stderr:\n%s", args, point, p.errOut)
		case <-tick.C:
		}
	}
	return p
}
