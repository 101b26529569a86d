package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// changeLake is a warehouse of a few small real tables (local.db.a, .b,
// .c, two commits each), read through a counting catalog by a daemon's
// parts: the service, the scheduler with alerts, and the metrics.
type changeLake struct {
	w       *testlake.Warehouse
	counted *testlake.CountingCatalog
	cfg     *config.Config
	st      *store.Store
	svc     *control.Service
	sched   *control.Scheduler
	metrics *server.Metrics

	mu  sync.Mutex
	now time.Time
}

const changeToken = "change-token-0123456789abcdef"

func newChangeLake(t *testing.T, policies string) *changeLake {
	t.Helper()
	ctx := t.Context()
	w := testlake.NewLocal(t)
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	l := &changeLake{w: w, counted: testlake.Count(w.Catalog), now: time.Now().UTC()}
	for _, name := range []string{"a", "b", "c"} {
		w.CreateTable(t, "db", name, schema, nil, nil, nil)
		l.commit(t, name)
		l.commit(t, name)
	}
	l.cfg = configtest.Load(t, w, "server: {token: "+changeToken+"}\npolicies:\n"+policies)
	var err error
	l.st, err = store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.st.Close()) })
	open := func(context.Context, string) (catalog.Catalog, error) { return l.counted, nil }
	l.svc, err = control.NewService(control.Deps{Config: l.cfg, Store: l.st, Catalog: open, Now: l.clock})
	require.NoError(t, err)
	notifier, err := alert.New(alert.Options{Store: l.st, Now: l.clock})
	require.NoError(t, err)
	l.metrics = server.NewMetrics()
	l.sched = control.NewScheduler(control.SchedulerOptions{Service: l.svc, Alerts: notifier, OnRun: l.metrics.ObserveRun})
	return l
}

func (l *changeLake) clock() time.Time { l.mu.Lock(); defer l.mu.Unlock(); return l.now }

func (l *changeLake) advance(d time.Duration) { l.mu.Lock(); l.now = l.now.Add(d); l.mu.Unlock() }

// commit appends one row to local.db.<name>, through the warehouse's own
// catalog (not counted).
func (l *changeLake) commit(t *testing.T, name string) {
	t.Helper()
	tbl, err := lake.LoadTable(t.Context(), l.w.Catalog, lake.Ident{Catalog: l.w.Name, Namespace: []string{"db"}, Name: name})
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	b.Field(0).(*array.Int64Builder).Append(time.Now().UnixNano())
	b.Field(1).(*array.StringBuilder).Append(name)
	rec := b.NewRecordBatch()
	b.Release()
	testlake.Append(t, tbl, rec)
	rec.Release()
}

// pass runs one scheduling pass and hands it to the metrics, as the
// daemon's health observer does; it returns the reads both cost.
func (l *changeLake) pass(t *testing.T) (control.Pass, map[string]testlake.Reads) {
	t.Helper()
	l.counted.Reset()
	p, err := l.sched.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Errors)
	require.NoError(t, l.metrics.ObservePass(t.Context(), l.svc, p))
	return p, l.counted.Reads()
}

// dataFiles is floe_table_data_files of local.db.<name> as scraped, -1
// when the scrape has none.
func (l *changeLake) dataFiles(t *testing.T, name string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	l.metrics.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/metrics", nil))
	prefix := `floe_table_data_files{table="local.db.` + name + `"} `
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			return n
		}
	}
	return -1
}

func reasons(p control.Pass) map[string]string {
	out := map[string]string{}
	for _, d := range p.Decisions {
		out[d.Table] = d.Reason
	}
	return out
}

// TestUnchangedLakeReadsNoMetadata: a pass over a SQL catalog whose tables
// did not change since the last reads no metadata file and no manifest —
// neither for the decisions, nor the alerts' backlog, nor the gauges —
// though every table is decided again. After one table commits, that
// table alone is read, once, for all three; a commit the listing shows
// before the table's poll interval came round is read once for the
// gauges. Time alone still fires a trigger: a table whose snapshots grew
// past the expiry age is found due from its kept state.
func TestUnchangedLakeReadsNoMetadata(t *testing.T) {
	l := newChangeLake(t, `  default:
    layout: none
    poll_interval: 1m
    freshness_sla: 2h
    enabled: {expire: false, orphans: false, compact: false, deletes: false, manifests: false}
  tables:
    local.db.c: {enabled: {expire: true}, snapshots: {older_than: 1h}}
`)
	p, reads := l.pass(t)
	require.Len(t, p.Decisions, 3)
	for _, name := range []string{"db.a", "db.b", "db.c"} {
		require.Equal(t, int64(1), reads[name].Metadata, "the first pass reads %s once: %v", name, reads)
		require.Positive(t, reads[name].Manifests, name)
	}
	require.Equal(t, 2, l.dataFiles(t, "b"))

	// Nothing changed: every table is decided again, nothing is read.
	l.advance(2 * time.Minute)
	p, reads = l.pass(t)
	require.Equal(t, map[string]string{"local.db.a": "no trigger fired", "local.db.b": "no trigger fired", "local.db.c": "no trigger fired"}, reasons(p))
	require.Empty(t, reads, "an unchanged lake is not read")

	// One table commits: it alone is read, once for the decision, the
	// alerts and the gauges together.
	l.commit(t, "b")
	l.advance(2 * time.Minute)
	p, reads = l.pass(t)
	require.Equal(t, "no trigger fired", reasons(p)["local.db.b"])
	require.Len(t, reads, 1, "%v", reads)
	require.Equal(t, int64(1), reads["db.b"].Metadata)
	require.Positive(t, reads["db.b"].Manifests)
	require.Equal(t, 3, l.dataFiles(t, "b"), "the gauges see the commit")

	// A commit before the table's poll interval came round: not decided
	// yet, but the gauges read it once.
	l.commit(t, "a")
	l.advance(10 * time.Second)
	p, reads = l.pass(t)
	require.Contains(t, reasons(p)["local.db.a"], "polled 10s ago")
	require.Len(t, reads, 1, "%v", reads)
	require.Equal(t, int64(1), reads["db.a"].Metadata)
	require.Equal(t, 3, l.dataFiles(t, "a"))

	// Time passes with no commit: db.c's snapshots grow older than its
	// expiry age, and the pass finds it due from its kept state, reading
	// nothing. (Another replica holds it, so that no run reads it.)
	got, err := l.st.ClaimTables(t.Context(), "other-replica", []string{"local.db.c"}, 1, l.clock().Add(3*time.Hour), l.clock())
	require.NoError(t, err)
	require.Len(t, got, 1)
	l.advance(2 * time.Hour)
	p, reads = l.pass(t)
	require.Contains(t, reasons(p)["local.db.c"], "expire: oldest snapshot")
	require.Empty(t, p.Runs)
	require.Empty(t, reads)
}
