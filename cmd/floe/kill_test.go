package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// TestCompactSurvivesSIGKILL kills a real floe process at several points of a
// compaction. Whatever the point, the table must stay readable with exactly
// the rows it had (each partition either untouched or fully rewritten: a
// replace snapshot is atomic), and whatever the dead process wrote but did
// not commit must be an orphan that orphan removal finds.
func TestCompactSurvivesSIGKILL(t *testing.T) {
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
	want, err := oracle.ChecksumIceberg(ctx, st.Table)
	require.NoError(t, err)

	layouts := []string{"sort(tenant_id)", "zorder(tenant_id, user_id)", "hilbert(user_id, tenant_id)", "sort(country, tenant_id)"}
	outcomes := map[string]int{}
	for i, delay := range []time.Duration{300 * time.Millisecond, 900 * time.Millisecond, 1800 * time.Millisecond, 3 * time.Second} {
		before := load()
		cmd := exec.Command(bin, "--config", configPath, "compact", "web.events", "--layout", layouts[i], "--memory", "32MiB")
		cmd.Env = append(os.Environ(), "FLOE_NO_PROGRESS=1", "TMPDIR="+spill)
		require.NoError(t, cmd.Start())
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		werr := cmd.Wait()

		after := load()
		got, err := oracle.ChecksumIceberg(ctx, after.Table)
		require.NoError(t, err, "table unreadable after SIGKILL at %s", delay)
		require.Equal(t, want, got, "rows changed after SIGKILL at %s", delay)

		// Commits are whole partitions: every partition's files are either
		// all from before or all new.
		old := map[string]bool{}
		for _, f := range before.DataFiles {
			old[f.Path] = true
		}
		byPart := map[string][2]int{}
		for _, f := range after.DataFiles {
			c := byPart[f.PartitionKey]
			if old[f.Path] {
				c[0]++
			} else {
				c[1]++
			}
			byPart[f.PartitionKey] = c
		}
		rewritten := 0
		for p, c := range byPart {
			if c[1] > 0 {
				rewritten++
				require.Zero(t, c[0], "partition %s mixes old and new files", p)
			}
		}
		// What the killed process wrote and did not commit is kept while
		// its lease may still be live, and an orphan once it has lapsed.
		leases, err := rewriter.Leases(ctx, after.Table)
		require.NoError(t, err)
		require.LessOrEqual(t, len(leases), 1)
		if werr == nil {
			require.Empty(t, leases, "a run that ends releases its lease")
		}
		if len(leases) == 1 {
			// Killed while holding its lease (the usual case: the lease is
			// taken before anything is read).
			outcomes["lease left live"]++
			require.True(t, leases[0].Live(time.Now()))
			young, err := rewriter.PlanOrphans(ctx, after.Table, rewriter.OrphanOptions{OlderThan: time.Nanosecond, Force: true})
			require.NoError(t, err)
			require.Empty(t, young.Files, "files of a run whose lease is live are never orphans")
		}
		// Past the lease's lapse and one more TTL: the run is over, and
		// its lease file (kept until then, it says which table the run
		// was on) and uncommitted files are floe's leftovers.
		lapsed := func() time.Time { return time.Now().Add(2*rewriter.DefaultLeaseTTL + time.Minute) }
		plan, err := rewriter.PlanOrphans(ctx, after.Table, rewriter.OrphanOptions{OlderThan: time.Nanosecond, Force: true, Now: lapsed})
		require.NoError(t, err)
		require.Empty(t, plan.Leases)
		switch {
		case werr == nil:
			outcomes["finished"]++
		case rewritten == 0:
			outcomes["killed before any commit"]++
		case rewritten < len(byPart):
			outcomes["killed between commits"]++
		default:
			outcomes["killed after the last commit"]++
		}
		t.Logf("SIGKILL after %s (%s): %d of %d partitions rewritten, %d orphan files", delay, layouts[i], rewritten, len(byPart), len(plan.Files))
		// The killed run's spill directory is left behind, and swept once
		// its lock went with the process.
		dirs, err := filepath.Glob(filepath.Join(spill, "floe-run-*"))
		require.NoError(t, err)
		require.LessOrEqual(t, len(dirs), 1)
		if werr == nil {
			require.Empty(t, dirs, "a run that ends removes its spill directory")
		}
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
			got, err = oracle.ChecksumIceberg(ctx, load().Table)
			require.NoError(t, err)
			require.Equal(t, want, got, "removing the orphans of a killed run changed the table")
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
