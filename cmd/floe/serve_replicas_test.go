package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/pgtest"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// replica is one floe serve process of TestServeReplicas.
type replica struct {
	cmd    *exec.Cmd
	pid    int
	logged *syncBuilder
	exited chan error
}

// startReplica starts floe serve on cfgPath and waits until it listens.
func startReplica(t *testing.T, bin, cfgPath string) *replica {
	t.Helper()
	cmd := exec.Command(bin, "--config", cfgPath, "serve", "--listen", "127.0.0.1:0", "--interval", "1s")
	cmd.Env = append(os.Environ(), "FLOE_NO_PROGRESS=1", "FLOE_LOG_LEVEL=info", "FLOE_SERVER_LEASE_TTL=3s")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := &replica{cmd: cmd, pid: cmd.Process.Pid, logged: &syncBuilder{}, exited: make(chan error, 1)}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			r.logged.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "listening on ") {
				once = true
				close(listening)
			}
		}
		r.exited <- cmd.Wait()
	}()
	select {
	case <-listening:
	case err := <-r.exited:
		t.Fatalf("floe serve exited early (%v): %s", err, r.logged.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("floe serve did not start: %s", r.logged.String())
	}
	return r
}

// runner is the runner id a replica records on its runs.
func (r *replica) runner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", host, r.pid)
}

// TestServeReplicas runs two real floe serve processes on one PostgreSQL
// state store and one warehouse: both do work, no table is ever maintained
// by both at once (the run intervals of each table never overlap), a
// replica killed with SIGKILL mid-run has its table taken over once its
// lease expires, and an independent checksum shows every table intact.
func TestServeReplicas(t *testing.T) {
	t.Parallel()
	bin := buildFloe(t)
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	ctx := context.Background()

	w := testlake.New(t)
	cfg := w.ConfigYAML(`state:
  driver: postgres
  dsn: "` + dsn + `"
server:
  max_concurrent_runs: 1
policies:
  default: {layout: none, poll_interval: 1s, enabled: {orphans: false}}
  namespaces:
    local.staging: {mode: manual}
`)
	cfgPath := filepath.Join(t.TempDir(), "floe.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	st, err := store.OpenConfig(ctx, store.Config{Driver: store.DriverPostgres, DSN: dsn})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })

	// Both replicas are up before there is anything to do, so that the
	// first to start cannot take every table before the other looks.
	a := startReplica(t, bin, cfgPath)
	b := startReplica(t, bin, cfgPath)
	// A table is written in a namespace the replicas leave alone (mode:
	// manual) and renamed into db once whole: a replica that compacted it
	// while the test still appended, one file per commit, would lose every
	// commit race to the test and back off for minutes.
	require.NoError(t, w.Catalog.CreateNamespace(ctx, table.Identifier{"db"}, nil))
	checksum := func(ns, name string) oracle.Sum {
		tbl, err := lake.LoadTable(ctx, w.Catalog, lake.Ident{Catalog: w.Name, Namespace: []string{ns}, Name: name})
		require.NoError(t, err)
		s, err := oracle.ChecksumIceberg(ctx, tbl)
		require.NoError(t, err)
		return s
	}
	// writeWhole writes a table in staging and moves it into db, where the
	// replicas see it whole, and returns its checksum, taken before the move: on a
	// slow object store a replica may otherwise compact the table, start to end,
	// while the test is still reading it.
	writeWhole := func(name string, files int) oracle.Sum {
		writeFlatTableAt(t, w, table.Identifier{"staging", name}, files, 4000)
		sum := checksum("staging", name)
		_, err := w.Catalog.RenameTable(ctx, table.Identifier{"staging", name}, table.Identifier{"db", name})
		require.NoError(t, err)
		return sum
	}
	names := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	sums := map[string]oracle.Sum{}
	for _, n := range names {
		sums[n] = writeWhole(n, 12)
	}
	runsOf := func(name string) []store.RunRecord {
		runs, err := st.Runs(ctx, w.Name+".db."+name, 0)
		require.NoError(t, err)
		return runs
	}
	done := func(name string) bool {
		return slices.ContainsFunc(runsOf(name), func(r store.RunRecord) bool { return r.Status == string(control.StatusDone) })
	}
	require.Eventually(t, func() bool {
		return !slices.ContainsFunc(names, func(n string) bool { return !done(n) })
	}, 3*time.Minute, 200*time.Millisecond, "every table is maintained: %s\n%s", a.logged.String(), b.logged.String())
	runners := map[string]int{}
	for _, n := range names {
		for _, r := range runsOf(n) {
			runners[r.Runner]++
		}
	}
	require.Positive(t, runners[a.runner()], "replica A did work: %v", runners)
	require.Positive(t, runners[b.runner()], "replica B did work: %v", runners)

	// A table big enough that its compaction takes a while; whichever
	// replica takes it is killed mid-run.
	sums["big"] = writeWhole("big", 120)
	names = append(names, "big")
	var victim, survivor *replica
	var killed store.RunRecord
	require.Eventually(t, func() bool {
		for _, r := range runsOf("big") {
			if r.Status != string(control.StatusRunning) {
				continue
			}
			switch r.Runner {
			case a.runner():
				victim, survivor = a, b
			case b.runner():
				victim, survivor = b, a
			default:
				continue
			}
			killed = r
			return true
		}
		return false
	}, 3*time.Minute, 10*time.Millisecond, "a replica starts on the big table")
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	<-victim.exited
	killedAt := time.Now()

	// The survivor takes the table over once the lease has lapsed.
	var takeover store.RunRecord
	require.Eventually(t, func() bool {
		for _, r := range runsOf("big") {
			if r.Runner == survivor.runner() && r.Status == string(control.StatusDone) {
				takeover = r
				return true
			}
		}
		return false
	}, 3*time.Minute, 200*time.Millisecond, "the survivor takes the big table over: %s", survivor.logged.String())
	require.True(t, takeover.StartedAt.After(killedAt), "the takeover started after the kill")
	rec, err := st.Run(ctx, killed.ID)
	require.NoError(t, err)
	require.Equal(t, store.RunAbandoned, rec.Status, "the killed replica's run is recorded abandoned")

	// No table was ever maintained by two runs at once.
	for _, n := range names {
		runs := runsOf(n)
		slices.SortFunc(runs, func(x, y store.RunRecord) int { return x.StartedAt.Compare(y.StartedAt) })
		for i := 1; i < len(runs); i++ {
			prev, next := runs[i-1], runs[i]
			require.False(t, prev.EndedAt.IsZero(), "%s: run %s never ended", n, prev.ID)
			require.False(t, next.StartedAt.Before(prev.EndedAt), "%s: run %s (%s) started at %s, before run %s (%s) ended at %s",
				n, next.ID, next.Runner, next.StartedAt, prev.ID, prev.Runner, prev.EndedAt)
		}
	}
	require.NoError(t, survivor.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-survivor.exited:
		require.NoError(t, err, "SIGTERM stops the survivor with exit 0")
	case <-time.After(time.Minute):
		t.Fatal("the survivor did not stop on SIGTERM")
	}
	for _, n := range names {
		require.Equal(t, sums[n], checksum("db", n), "independent read: table %s intact", n)
	}
}
