package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

// TestOrphansRaceCompaction races the careless operator's orphan removal
// (--apply --force --older-than 1ms, in this process) against a compaction
// in another floe process, again and again while it runs. The operator's
// floe is another installation (its own state store, the same catalog):
// two floe processes sharing a state store never work on one table at once
// (the table lease), but nothing shares a state store with a second
// deployment, or an older one. The compaction's lease file under the table
// location must keep every file it wrote, so it commits, exits 0 and no row
// is lost; and orphan removal must say what it kept.
func TestOrphansRaceCompaction(t *testing.T) {
	t.Parallel()
	bin := buildFloe(t)
	home := writeConfig(t)
	_, errOut, code := run(t, home, demoArgs("--event-commits", "60", "--orders", "300", "--queries", "30")...)
	require.Equal(t, 0, code, errOut)
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(home, "floe.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), append(cfg, []byte("state:\n  path: "+filepath.Join(dir, "other-state.db")+"\n")...), 0o644))
	ctx := context.Background()
	cat, id, configPath := openDemoTable(t, home, "web.events")
	checksum := func() oracle.Sum {
		tbl, err := lake.LoadTable(ctx, cat, id)
		require.NoError(t, err)
		s, err := oracle.ChecksumIceberg(ctx, tbl)
		require.NoError(t, err)
		return s
	}
	want := checksum()

	kept, sweeps := 0, 0
	// Each layout rewrites every partition again: the second run races
	// orphan removal from its first moments, the first after a delay.
	for i, layout := range []string{"hilbert(user_id, tenant_id)", "sort(country, tenant_id)"} {
		cmd := exec.Command(bin, "--config", configPath, "compact", "web.events", "--layout", layout, "--memory", "32MiB",
			"--target-file-size", "64KiB", "--allow-small-target-file-size", "-o", "json")
		cmd.Env = append(os.Environ(), "FLOE_NO_PROGRESS=1", "TMPDIR="+t.TempDir())
		out, err := os.CreateTemp(t.TempDir(), "compact-*.json")
		require.NoError(t, err)
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		time.Sleep(time.Duration(i*200) * time.Millisecond)
		var werr error
		finished := false
	race:
		for n := 0; n < 200; n++ {
			select {
			case werr = <-done:
				finished = true
				break race
			default:
			}
			stdout, errOut, code := run(t, dir, "orphans", "web.events", "--apply", "--force", "--older-than", "1ms", "-o", "json")
			require.Equal(t, 0, code, errOut)
			sweeps++
			res := runResultOf(t, []byte(stdout))
			rep := reportOf(t, res, "orphans")
			if rep.OrphanPlan != nil {
				kept += rep.OrphanPlan.InFlight
			}
			if rep.Orphans != nil {
				kept += rep.Orphans.Plan.InFlight + len(rep.Orphans.InFlight)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !finished {
			werr = <-done
		}
		log, _ := os.ReadFile(out.Name())
		require.NoError(t, werr, "compaction %s raced by orphan removal: %s", layout, log)
		require.Equal(t, want, checksum(), "rows changed: compaction %s raced by orphan removal", layout)
	}
	t.Logf("%d orphan removals raced the compactions and kept %d files of runs in flight", sweeps, kept)
	require.Positive(t, kept, "some orphan removal ran while a compaction had files in flight")

	// Afterwards nothing is in flight: the runs released their leases, and
	// what is left to remove changes no row.
	stdout, errOut, code := run(t, dir, "orphans", "web.events", "--apply", "--force", "--older-than", "1ms", "-o", "json")
	require.Equal(t, 0, code, errOut)
	rep := reportOf(t, runResultOf(t, []byte(stdout)), "orphans")
	plan := rep.OrphanPlan
	if rep.Orphans != nil {
		plan = &rep.Orphans.Plan
	}
	require.NotNil(t, plan)
	require.Empty(t, plan.Leases)
	require.Zero(t, plan.InFlight)
	require.Equal(t, want, checksum())
}
