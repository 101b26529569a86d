package ingest_test

import (
	"context"
	"encoding/json"
	"github.com/floe-project/floe/expr"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/collectors/trino"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

func parsers() []collectors.Parser {
	return []collectors.Parser{trino.EventParser{}, trino.RuntimeParser{}, spark.EventLogParser{}, duckdb.LogParser{}, duckdb.ProfileParser{}}
}

// lakeFixture is a warehouse holding web.events and sales.orders, and the
// configuration and resolver over it.
type lakeFixture struct {
	w        *testlake.Warehouse
	cfg      *config.Config
	resolver *ingest.CatalogResolver
}

func newLake(t testing.TB) *lakeFixture {
	t.Helper()
	w := testlake.New(t)
	w.CreateTable(t, "web", "events", iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "tenant_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "user_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "event_date", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 4, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 5, Name: "Region", Type: iceberg.PrimitiveTypes.String},
	), nil, nil, nil)
	w.CreateTable(t, "sales", "orders", iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "customer_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "order_date", Type: iceberg.PrimitiveTypes.Date},
	), nil, nil, nil)
	cfg := &config.Config{
		DefaultCatalog: "local",
		Catalogs:       map[string]config.Props{"local": w.Props},
		Telemetry: config.TelemetryConfig{CatalogMap: map[string]map[string]string{
			"trino": {"iceberg": "local"}, "spark": {"spark_catalog": "local"}, "duckdb": {"lake": "local"},
		}},
	}
	opened := 0
	res := ingest.NewCatalogResolver(cfg, func(_ context.Context, name string) (catalog.Catalog, error) {
		opened++
		require.Equal(t, "local", name)
		require.Equal(t, 1, opened, "the catalog is opened once")
		return w.Catalog, nil
	})
	return &lakeFixture{w: w, cfg: cfg, resolver: res}
}

func (l *lakeFixture) options(paths ...string) ingest.Options {
	return ingest.Options{Paths: paths, Parsers: parsers(), Resolver: l.resolver, Catalogs: l.cfg}
}

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

// copyFixtures copies the named files of testdata into a temporary
// directory, so tests can touch them.
func copyFixtures(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o644))
	}
	return dir
}

var fixtures = []string{"trino.ndjson", "spark-app-20260501120000-0001", "duckdb-querylog.csv"}

func byID(evs []collectors.QueryEvent) map[string]collectors.QueryEvent {
	m := map[string]collectors.QueryEvent{}
	for _, e := range evs {
		m[e.QueryID] = e
	}
	return m
}

func dump(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(b)
}

// leaves lists a filter's predicate leaves as "table column transform op
// kind:value…".
func leaves(n *expr.Node) []string {
	var out []string
	var walk func(*expr.Node)
	walk = func(n *expr.Node) {
		if n == nil {
			return
		}
		if n.Pred != nil {
			s := n.Pred.Table + " " + n.Pred.Column + " " + n.Pred.Transform + " " + string(n.Pred.Op)
			for _, v := range n.Pred.Values {
				s += " " + string(v.Kind) + ":" + v.Text
			}
			out = append(out, s)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(n)
	sort.Strings(out)
	return out
}

func columns(t collectors.TableAccess) map[string]bool {
	m := map[string]bool{}
	for _, c := range t.Columns {
		for _, r := range c.Roles {
			m[c.Name+"/"+string(r)+"/"+string(c.Evidence)] = true
		}
	}
	return m
}

func TestRunResolvesAndStores(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	dir := copyFixtures(t, fixtures...)

	rep, err := ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Len(t, rep.Files, 3, dump(t, rep))
	// Trino: 4 queries and a malformed line; Spark: 1 execution; DuckDB: 2
	// statements, each logged twice.
	require.Equal(t, 7, rep.Events, dump(t, rep))
	require.Equal(t, 7, rep.Inserted)
	require.Equal(t, 2, rep.Duplicates, "DuckDB 2.0's doubled entries")
	require.Equal(t, 1, rep.Bad)
	require.Len(t, rep.BadRecords, 1)
	require.Equal(t, filepath.Join(dir, "trino.ndjson"), rep.BadRecords[0].File)
	require.Equal(t, 3, rep.BadRecords[0].Line)
	require.Equal(t, map[string]int{"iceberg.sales.big_orders_v": 1, "iceberg.sales.tmp_users": 1}, rep.Unresolved)
	require.Equal(t, 1, rep.Warnings["column local.sales.orders.no_such_column not in schema"], dump(t, rep.Warnings))

	evs, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 7)
	got := byID(evs)

	t.Run("trino upper-case names", func(t *testing.T) {
		ev := got["20260501_120000_00001_floe1"]
		require.Len(t, ev.Tables, 1, dump(t, ev))
		ta := ev.Tables[0]
		require.Equal(t, "local.web.events", ta.QualifiedName())
		require.Equal(t, collectors.EvidenceSQL, ta.Evidence, "the filter came from the SQL")
		require.Equal(t, []string{
			"local.web.events Region  = string:eu",
			"local.web.events event_date  >= date:2026-04-01",
			"local.web.events tenant_id  = number:7",
		}, leaves(ta.Filter))
		cols := columns(ta)
		require.True(t, cols["Region/filter/sql-parse"], dump(t, ta.Columns))
		require.True(t, cols["Region/referenced/analysis-refs"], dump(t, ta.Columns))
		require.True(t, cols["tenant_id/filter/pushed-filter"], dump(t, ta.Columns))
		require.Equal(t, time.UTC, ev.StartTime.Location())
	})
	t.Run("view base table kept, view dropped", func(t *testing.T) {
		ev := got["20260501_120100_00002_floe1"]
		require.Len(t, ev.Tables, 1, dump(t, ev))
		require.Equal(t, "local.sales.orders", ev.Tables[0].QualifiedName())
		require.False(t, ev.Tables[0].Direct)
	})
	t.Run("cte followed, temp table dropped", func(t *testing.T) {
		ev := got["20260501_120200_00003_floe1"]
		require.Len(t, ev.Tables, 1, dump(t, ev))
		ta := ev.Tables[0]
		require.Equal(t, "local.sales.orders", ta.QualifiedName())
		require.Equal(t, []string{
			"local.sales.orders amount  > number:10",
			"local.sales.orders order_date  > date:2026-01-01",
		}, leaves(ta.Filter))
		require.True(t, columns(ta)["customer_id/join/sql-parse"], dump(t, ta.Columns))
	})
	t.Run("metadata table marked", func(t *testing.T) {
		ev := got["20260501_120300_00004_floe1"]
		require.Len(t, ev.Tables, 1, dump(t, ev))
		ta := ev.Tables[0]
		require.Equal(t, "local.web.events", ta.QualifiedName())
		meta, ok := ta.MetadataTable()
		require.True(t, ok)
		require.Equal(t, "snapshots", meta)
		require.Nil(t, ta.Filter)
	})
	t.Run("spark pushed filter retyped", func(t *testing.T) {
		ev := got["app-20260501120000-0001/1"]
		require.Len(t, ev.Tables, 1, dump(t, ev))
		ta := ev.Tables[0]
		require.Equal(t, "local.web.events", ta.QualifiedName())
		require.Equal(t, collectors.EvidencePushedFilter, ta.Evidence)
		require.Equal(t, []string{
			"local.web.events event_date  >= date:2026-04-01",
			"local.web.events event_date  is not null",
			"local.web.events event_ts  > timestamp:2026-04-01 06:00:00+00:00",
			"local.web.events event_ts  is not null",
			"local.web.events tenant_id  = number:7",
		}, leaves(ta.Filter))
		require.True(t, columns(ta)["tenant_id/filter/sql-parse"], dump(t, ta.Columns))
	})
	t.Run("duckdb doubled and parameterized", func(t *testing.T) {
		var duck []collectors.QueryEvent
		for _, e := range evs {
			if e.Engine == collectors.EngineDuckDB {
				duck = append(duck, e)
			}
		}
		require.Len(t, duck, 2)
		require.Equal(t, []string{
			"local.web.events event_date  between date:2026-04-01 date:2026-04-30",
			"local.web.events tenant_id  = number:7",
		}, leaves(duck[0].Tables[0].Filter))
		ta := duck[1].Tables[0]
		require.Equal(t, "local.sales.orders", ta.QualifiedName())
		require.Contains(t, duck[1].SQL, "customer_id = ?")
		require.Equal(t, []string{"local.sales.orders customer_id  = param:?"}, leaves(ta.Filter))
	})

	stats, err := st.TableStats(ctx, store.QueryFilter{}, 0)
	require.NoError(t, err)
	require.Len(t, stats, 2, dump(t, stats))
	require.Equal(t, "local.sales.orders", stats[0].Table)
	require.Equal(t, 3, stats[0].Queries)
	require.Equal(t, "local.web.events", stats[1].Table)
	require.Equal(t, 3, stats[1].Queries, "the metadata-table read is not counted")
	require.Equal(t, 0, stats[1].Failed)
	require.Equal(t, 2, stats[1].Users, "alice and dave; DuckDB logs no user")
	require.Equal(t, []store.ColumnCount{
		{Column: "event_date", Queries: 3, Ops: []string{">=", "between", "is not null"}},
		{Column: "tenant_id", Queries: 3, Ops: []string{"="}},
		{Column: "Region", Queries: 1, Ops: []string{"="}},
		{Column: "event_ts", Queries: 1, Ops: []string{">", "is not null"}},
	}, stats[1].TopColumns[:4], dump(t, stats[1]))

	// WEB.EVENTS as the user types it finds the canonical table.
	evs, err = st.Queries(ctx, store.QueryFilter{Table: "LOCAL.WEB.EVENTS"})
	require.NoError(t, err)
	require.Len(t, evs, 4)
}

func TestRunTwiceIsIdempotent(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	dir := copyFixtures(t, fixtures...)

	first, err := ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Equal(t, 7, first.Inserted)

	second, err := ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Equal(t, 0, second.Inserted)
	require.Equal(t, 3, second.Skipped, "unchanged files are not read again")

	opts := l.options(dir)
	opts.Force = true
	forced, err := ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	require.Equal(t, 0, forced.Inserted)
	require.Equal(t, 7, forced.Events)
	require.Equal(t, 9, forced.Duplicates, "7 already stored and 2 doubled DuckDB entries")

	// An appended file is read again; only the new event is inserted.
	path := filepath.Join(dir, "trino.ndjson")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := splitLines(b)
	appended := []byte(lines[0])
	var rec map[string]any
	require.NoError(t, json.Unmarshal(appended, &rec))
	rec["metadata"].(map[string]any)["queryId"] = "20260501_130000_00009_floe1"
	appended, err = json.Marshal(rec)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(appended, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	third, err := ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Equal(t, 1, third.Inserted)
	require.Equal(t, 2, third.Skipped)
	evs, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 8)
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}

func TestRunStrict(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	dir := copyFixtures(t, "trino.ndjson")
	opts := l.options(dir)
	opts.Strict = true
	rep, err := ingest.Run(ctx, opts, st)
	require.Error(t, err)
	require.ErrorContains(t, err, filepath.Join(dir, "trino.ndjson")+":3:")
	var bad collectors.BadRecord
	require.ErrorAs(t, err, &bad)
	require.Equal(t, 3, bad.Line)
	require.Equal(t, 1, rep.Bad)
	files, err := st.Files(ctx)
	require.NoError(t, err)
	require.Empty(t, files, "a file that failed is not recorded as collected")
}

func TestRunForcedSource(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	dir := copyFixtures(t, "duckdb-querylog.csv")
	opts := l.options(filepath.Join(dir, "duckdb-querylog.csv"))
	opts.Source = "trino-event"
	rep, err := ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	require.Equal(t, 0, rep.Inserted)
	require.Positive(t, rep.Bad, "CSV read as Trino JSON is all bad records")

	opts.Source = "no-such-source"
	_, err = ingest.Run(ctx, opts, st)
	require.ErrorIs(t, err, collectors.ErrUnknownSource)
}

func TestOptionsValidate(t *testing.T) {
	o := ingest.Options{BatchSize: -1}
	err := o.Validate()
	for _, want := range []string{"paths", "parsers", "resolver", "catalogs", "batch size"} {
		require.ErrorContains(t, err, want)
	}
}

// TestRunOddFileNames collects a file whose name holds glob
// metacharacters, found by walking its directory.
func TestRunOddFileNames(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "duckdb-querylog.csv"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "query log [copy] *1?.csv"), b, 0o644))
	rep, err := ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Len(t, rep.Files, 1)
	require.Empty(t, rep.Files[0].Error)
	require.Equal(t, 2, rep.Inserted)
}

// TestRunGrowingSparkLog collects a Spark log while the query runs, then
// again once the log has its end: the stored event ends up finished.
func TestRunGrowingSparkLog(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	b, err := os.ReadFile(filepath.Join("testdata", "spark-app-20260501120000-0001"))
	require.NoError(t, err)
	lines := splitLines(b)
	require.Len(t, lines, 5)
	dir := t.TempDir()
	path := filepath.Join(dir, "app-20260501120000-0001.inprogress")
	require.NoError(t, os.WriteFile(path, []byte(lines[0]+"\n"+lines[1]+"\n"+lines[2]+"\n"), 0o644))

	rep, err := ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Inserted)
	evs, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, collectors.StateUnknown, evs[0].State)

	require.NoError(t, os.WriteFile(path, []byte(lines[0]+"\n"+lines[1]+"\n"+lines[2]+"\n"+lines[3]+"\n"+lines[4]+"\n"), 0o644))
	rep, err = ingest.Run(ctx, l.options(dir), st)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Inserted, "the finished execution replaces the running one")
	evs, err = st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, collectors.StateSucceeded, evs[0].State)
	require.Equal(t, int64(3000), evs[0].Metrics.ElapsedMs)
	require.Len(t, evs[0].Tables, 1)
}

// TestRunCancelled stops at a cancelled context: the file being read when
// it was cancelled is not recorded as collected and no later file is read.
func TestRunCancelled(t *testing.T) {
	l := newLake(t)
	st := openStore(t)
	dir := copyFixtures(t, fixtures...)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sink := 0
	opts := l.options(dir)
	// Cancel from inside the pipeline: after the first file is read.
	opts.Parsers = append([]collectors.Parser{}, parsers()...)
	for i, p := range opts.Parsers {
		opts.Parsers[i] = cancelAfter{Parser: p, cancel: func() { sink++; cancel() }}
	}
	rep, err := ingest.Run(ctx, opts, st)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, sink)
	require.Len(t, rep.Files, 1, "no file after the cancellation is read")
	files, err := st.Files(t.Context())
	require.NoError(t, err)
	require.Empty(t, files)
}

// cancelAfter cancels once its parser has read a file.
type cancelAfter struct {
	collectors.Parser
	cancel func()
}

func (c cancelAfter) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	err := c.Parser.Parse(ctx, name, r, emit, bad)
	c.cancel()
	return err
}
