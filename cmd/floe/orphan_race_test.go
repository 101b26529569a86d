package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
)

// TestOrphansRaceCompaction races the careless operator's orphan removal
// (--apply --force --older-than 1ms, in this process) against a compaction
// in another floe process, again and again while it runs. The compaction's
// lease must keep every file it wrote, so it commits, exits 0 and no row is
// lost; and orphan removal must say what it kept.
func TestOrphansRaceCompaction(t *testing.T) {
	bin := buildFloe(t)
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "60", "--orders", "300", "--queries", "30")...)
	require.Equal(t, 0, code, errOut)
	ctx := context.Background()
	cat, id, configPath := openDemoTable(t, dir, "web.events")
	checksum := func() oracle.Sum {
		tbl, err := lake.LoadTable(ctx, cat, id)
		require.NoError(t, err)
		s, err := oracle.ChecksumIceberg(ctx, tbl)
		require.NoError(t, err)
		return s
	}
	want := checksum()

	type orphansJSON struct {
		Plan struct {
			Files    []struct{ Path string }
			InFlight int `json:"in_flight"`
			Leases   []struct {
				RunID string `json:"run_id"`
			}
		} `json:"plan"`
		Result *struct {
			Deleted  []string
			InFlight []string `json:"in_flight"`
		} `json:"result"`
	}
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
			var o orphansJSON
			require.NoError(t, json.Unmarshal([]byte(stdout), &o), stdout)
			sweeps++
			kept += o.Plan.InFlight
			if o.Result != nil {
				kept += len(o.Result.InFlight)
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
	var o orphansJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &o))
	require.Empty(t, o.Plan.Leases)
	require.Zero(t, o.Plan.InFlight)
	require.Equal(t, want, checksum())
}
