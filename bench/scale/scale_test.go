package scale_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/scale"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/scalelake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// policies make a table's compaction (bin-pack) due when it has five
// small files: the tenth of tables the generator gives 12 appends, at the
// first pass, and the tables given four commits before the changed pass.
// Nothing else runs, so a pass's runs are the compactions it found due
// (see the package doc).
const policies = `policies:
  default:
    layout: none
    poll_interval: 1m
    enabled: {expire: false, orphans: false, compact: true, deletes: false, manifests: false}
`

// sizes are the lakes to measure: FLOE_BENCH_SCALE_TABLES, comma-separated,
// else 1,000 and 10,000 tables (100 under -short).
func sizes(b *testing.B) []int {
	v := os.Getenv("FLOE_BENCH_SCALE_TABLES")
	if v == "" {
		if testing.Short() {
			return []int{100}
		}
		return []int{1000, 10000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(b, err, "FLOE_BENCH_SCALE_TABLES %q", v)
		require.Positive(b, n, "FLOE_BENCH_SCALE_TABLES %q", v)
		out = append(out, n)
	}
	return out
}

// daemon is what `floe serve` runs a pass with: the service, the
// scheduler with alerts, and the metrics that observe each pass.
type daemon struct {
	svc     *control.Service
	sched   *control.Scheduler
	metrics *server.Metrics
}

// lakeEnv is a generated lake, read through a counting catalog, its
// configuration and state store, and the daemon's clock.
type lakeEnv struct {
	b       *testing.B
	w       *testlake.Warehouse
	ids     []lake.Ident
	opts    scalelake.Options
	counted *testlake.CountingCatalog
	cfg     *config.Config
	st      *store.Store

	mu sync.Mutex
	// ahead is how far the daemon's clock runs ahead of the wall clock:
	// each pass moves it two minutes, past every table's poll interval,
	// and it never falls behind the snapshots committed meanwhile.
	ahead time.Duration
}

func (e *lakeEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().UTC().Add(e.ahead)
}

func (e *lakeEnv) advance() { e.mu.Lock(); e.ahead += 2 * time.Minute; e.mu.Unlock() }

func (e *lakeEnv) open(context.Context, string) (catalog.Catalog, error) { return e.counted, nil }

// newDaemon is a new daemon over the lake's state store; a cache of
// stateCacheFiles < 0 keeps no table state (change detection off).
func (e *lakeEnv) newDaemon(stateCacheFiles int) *daemon {
	svc, err := control.NewService(control.Deps{Config: e.cfg, Store: e.st, Catalog: e.open, Now: e.clock, StateCacheFiles: stateCacheFiles})
	require.NoError(e.b, err)
	notifier, err := alert.New(alert.Options{Store: e.st, Now: e.clock})
	require.NoError(e.b, err)
	m := server.NewMetrics()
	return &daemon{svc: svc, metrics: m,
		sched: control.NewScheduler(control.SchedulerOptions{Service: svc, Alerts: notifier, OnRun: m.ObserveRun})}
}

// passResult is one measured pass.
type passResult struct {
	use                 scale.Usage
	metadata, manifests float64 // reads per table
	read, runs          int
	decisions, tables   int
}

// pass runs one scheduling pass of d and hands it to the metrics, as the
// daemon does, and measures both.
func (e *lakeEnv) pass(d *daemon) passResult {
	e.b.Helper()
	e.advance()
	e.counted.Reset()
	var p control.Pass
	use, err := scale.Measure(func() error {
		var err error
		if p, err = d.sched.RunPass(e.b.Context()); err != nil {
			return err
		}
		return d.metrics.ObservePass(e.b.Context(), d.svc, p)
	})
	require.NoError(e.b, err)
	require.Empty(e.b, p.Errors)
	for _, r := range p.Runs {
		require.Equal(e.b, control.StatusDone, r.Run.Status, "run of %s: %+v", r.Table, r.Run)
	}
	reads := map[string]scale.Reads{}
	for k, r := range e.counted.Reads() {
		reads[k] = scale.Reads{Metadata: r.Metadata, Manifests: r.Manifests}
	}
	md, mf, read, err := scale.PerTable(reads, len(e.ids))
	require.NoError(e.b, err)
	return passResult{use: use, metadata: md, manifests: mf, read: read, runs: len(p.Runs), decisions: len(p.Decisions), tables: len(e.ids)}
}

// record stores a pass's figures under prefix.
func record(r *bench.Result, prefix string, p passResult) {
	r.Figures[prefix+"_wall_s"] = p.use.Wall.Seconds()
	r.Figures[prefix+"_cpu_s"] = p.use.CPU.Seconds()
	r.Figures[prefix+"_peak_rss_mib"] = float64(p.use.PeakRSS) / (1 << 20)
	r.Figures[prefix+"_metadata_reads_per_table"] = p.metadata
	r.Figures[prefix+"_manifest_reads_per_table"] = p.manifests
	r.Figures[prefix+"_tables_read"] = float64(p.read)
	if p.read > 0 {
		// Reads per table read: the lake's reads over the tables read.
		r.Figures[prefix+"_metadata_reads_per_table_read"] = p.metadata * float64(p.tables) / float64(p.read)
		r.Figures[prefix+"_manifest_reads_per_table_read"] = p.manifests * float64(p.tables) / float64(p.read)
	}
	r.Figures[prefix+"_runs"] = float64(p.runs)
}

func logPass(b *testing.B, n int, name string, p passResult) {
	b.Logf("%d tables, %s pass: %.2f s wall, %.2f CPU-s, peak RSS %.0f MiB, %d decisions, %d runs, %d tables read, %.3f metadata and %.3f manifest reads per table",
		n, name, p.use.Wall.Seconds(), p.use.CPU.Seconds(), float64(p.use.PeakRSS)/(1<<20), p.decisions, p.runs, p.read, p.metadata, p.manifests)
}

func BenchmarkScale(b *testing.B) {
	r := bench.NewResult("scale")
	ns := sizes(b)
	r.Params["tables"] = ns
	r.Params["policy"] = "compaction only (bin-pack, due at five small files); poll_interval 1m; the clock moves 2m a pass"
	r.Params["state_store"] = "sqlite"
	r.Params["catalog"] = "embedded SQL catalog (SQLite), listing metadata locations"
	const unchangedReps = 5
	r.Params["unchanged_reps"] = unchangedReps
	for b.Loop() {
		for _, n := range ns {
			measureLake(b, r, n, unchangedReps)
			// Written after each lake, so that a long run keeps what it
			// measured so far.
			path, err := r.Write()
			require.NoError(b, err)
			fmt.Printf("%d tables measured; wrote %s\n", n, path)
		}
	}
}

// measureLake generates a lake of n tables and measures its passes and
// its API at it.
func measureLake(b *testing.B, r *bench.Result, n, unchangedReps int) {
	key := func(s string) string { return fmt.Sprintf("t%d_%s", n, s) }
	w := testlake.NewLocal(b)
	e := &lakeEnv{b: b, w: w, counted: testlake.Count(w.Catalog), opts: scalelake.Options{Tables: n}}
	start := time.Now()
	ids, err := scalelake.Generate(b.Context(), w.Catalog, "local", e.opts)
	require.NoError(b, err)
	e.ids = ids
	r.Figures[key("generate_s")] = time.Since(start).Seconds()
	b.Logf("%d tables generated in %s (setup, not timed)", n, time.Since(start).Round(time.Second))
	e.cfg = configtest.Load(b, w, policies)
	e.st, err = store.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, e.st.Close()) })

	d := e.newDaemon(0)
	cold := e.pass(d)
	logPass(b, n, "cold", cold)
	require.Equal(b, n, cold.decisions)
	require.Equal(b, n, cold.read, "the first pass reads every table")
	record(r, key("cold"), cold)

	var unchanged []passResult
	stopProfile := profileUnchanged(b, n)
	for range unchangedReps {
		p := e.pass(d)
		logPass(b, n, "unchanged", p)
		require.Equal(b, n, p.decisions)
		require.Zero(b, p.read, "a pass with nothing changed reads no table")
		require.Zero(b, p.runs)
		unchanged = append(unchanged, p)
	}
	stopProfile()
	recordMedian(r, key("unchanged"), unchanged)

	// Four commits to a tenth of the tables (those the generator gave one
	// append), which makes their compaction due.
	var changed []lake.Ident
	for i, id := range ids {
		if i%10 == 5 {
			changed = append(changed, id)
		}
	}
	start = time.Now()
	require.NoError(b, scalelake.Commit(b.Context(), w.Catalog, changed, 4, e.opts))
	b.Logf("%d tables given four commits each in %s (setup, not timed)", len(changed), time.Since(start).Round(time.Second))
	ch := e.pass(d)
	logPass(b, n, "changed", ch)
	require.Equal(b, len(changed), ch.read, "the changed tables alone are read")
	require.Equal(b, len(changed), ch.runs, "their compaction is due")
	record(r, key("changed"), ch)
	r.Figures[key("changed_tables")] = float64(len(changed))

	// The peer: the same daemon keeping no table state, with nothing
	// changed; it reads every table each pass. Then the restart: a new
	// daemon over the same store, whose first pass reads every table.
	var peer []passResult
	pd := e.newDaemon(-1)
	peerReps := 3
	if n > 1000 {
		peerReps = 1
	}
	for range peerReps {
		p := e.pass(pd)
		logPass(b, n, "peer (no change detection), unchanged", p)
		require.Equal(b, n, p.read)
		require.Zero(b, p.runs)
		peer = append(peer, p)
	}
	recordMedian(r, key("peer_unchanged"), peer)
	r.Figures[key("peer_over_unchanged_wall_ratio")] = r.Figures[key("peer_unchanged_wall_s")] / r.Figures[key("unchanged_wall_s")]
	r.Figures[key("peer_over_unchanged_cpu_ratio")] = r.Figures[key("peer_unchanged_cpu_s")] / r.Figures[key("unchanged_cpu_s")]

	rd := e.newDaemon(0)
	restart := e.pass(rd)
	logPass(b, n, "restart", restart)
	require.Equal(b, n, restart.read, "a restarted daemon reads every table once")
	require.Zero(b, restart.runs)
	record(r, key("restart"), restart)
	after := e.pass(rd)
	logPass(b, n, "unchanged after the restart", after)
	require.Zero(b, after.read)

	measureAPI(b, r, e, key)
}

// profileUnchanged starts a CPU profile of the unchanged passes at n
// tables when FLOE_BENCH_SCALE_PROFILE names a directory (the profile is
// unchanged-<n>.pprof there), and returns what stops it.
func profileUnchanged(b *testing.B, n int) func() {
	dir := os.Getenv("FLOE_BENCH_SCALE_PROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("unchanged-%d.pprof", n)))
	require.NoError(b, err)
	require.NoError(b, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(b, f.Close())
	}
}

// recordMedian records the pass of median wall time among ps under
// prefix, and the range of their wall times.
func recordMedian(r *bench.Result, prefix string, ps []passResult) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].use.Wall < ps[j].use.Wall })
	record(r, prefix, ps[len(ps)/2])
	walls := make([]float64, len(ps))
	for i, p := range ps {
		walls[i] = p.use.Wall.Seconds()
	}
	r.SetSpread(prefix+"_wall_s", walls)
}

// measureAPI times the table list and the dashboard's overview through
// the real server handler over the lake: the first request waits for the
// table index to measure every table.
func measureAPI(b *testing.B, r *bench.Result, e *lakeEnv, key func(string) string) {
	e.counted.Reset()
	deps := server.Deps{Config: e.cfg, Store: e.st, Now: e.clock, Catalog: e.open}
	var h http.Handler
	get := func(path string) func() error {
		return func() error {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				return fmt.Errorf("GET %s: %d %s", path, rec.Code, rec.Body.String())
			}
			if path == "/api/v1/tables?limit=100" && strings.Contains(rec.Body.String(), `"measuring"`) {
				return fmt.Errorf("GET %s: the index is still measuring", path)
			}
			return nil
		}
	}
	first, err := scale.Measure(func() error {
		var err error
		if h, err = server.New(b.Context(), deps, server.Options{TableIndexWait: time.Hour}); err != nil {
			return err
		}
		return get("/api/v1/tables?limit=100")()
	})
	require.NoError(b, err)
	reads := map[string]scale.Reads{}
	for k, rd := range e.counted.Reads() {
		reads[k] = scale.Reads{Metadata: rd.Metadata, Manifests: rd.Manifests}
	}
	md, _, _, err := scale.PerTable(reads, len(e.ids))
	require.NoError(b, err)
	r.Figures[key("api_tables_first_s")] = first.Wall.Seconds()
	r.Figures[key("api_tables_first_cpu_s")] = first.CPU.Seconds()
	r.Figures[key("api_tables_first_peak_rss_mib")] = float64(first.PeakRSS) / (1 << 20)
	r.Figures[key("api_index_metadata_reads_per_table")] = md
	dash, err := scale.Measure(get("/"))
	require.NoError(b, err)
	r.Figures[key("dashboard_first_s")] = dash.Wall.Seconds()
	b.Logf("%d tables: first GET /api/v1/tables?limit=100 %s (measuring the lake), first GET / %s",
		len(e.ids), first.Wall.Round(time.Millisecond), dash.Wall.Round(time.Millisecond))
	for _, path := range []string{"/api/v1/tables?limit=100", "/"} {
		var walls []float64
		for range 5 {
			u, err := scale.Measure(get(path))
			require.NoError(b, err)
			walls = append(walls, u.Wall.Seconds())
		}
		name := "api_tables_warm_s"
		if path == "/" {
			name = "dashboard_warm_s"
		}
		r.SetSpread(key(name), walls)
		b.Logf("%d tables: warm GET %s median %.3f s", len(e.ids), path, bench.SpreadOf(walls).Median)
	}
}
