package demo_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/floe-project/floe/expr"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/floe-project/floe/collectors/icebergscan"
	"github.com/floe-project/floe/collectors/snowflake"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/collectors/trino"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/demo"
)

var logNow = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// collected is what collecting a log directory with every parser gave.
type collected struct {
	stats    collectors.Stats
	bySource map[string][]collectors.QueryEvent
	scan     *icebergscan.Parser
}

// collectAll runs the collectors' wiring list over dir, as floe ingest
// does, flushing the Snowflake joiner at the end.
func collectAll(t *testing.T, dir string) collected {
	t.Helper()
	joiner := snowflake.NewJoiner()
	scan := icebergscan.NewParser()
	parsers := []collectors.Parser{
		trino.EventParser{}, trino.RuntimeParser{}, spark.EventLogParser{},
		athena.APIParser{}, athena.CloudTrailParser{}, joiner, scan,
		duckdb.LogParser{}, duckdb.ProfileParser{}, duckdb.HistoryParser{},
	}
	c := collected{bySource: map[string][]collectors.QueryEvent{}, scan: scan}
	sink := func(ev collectors.QueryEvent) error {
		c.bySource[ev.Source] = append(c.bySource[ev.Source], ev)
		return nil
	}
	st, err := collectors.Collect(context.Background(), parsers, collectors.CollectOptions{Strict: true}, []string{dir}, sink)
	require.NoError(t, err)
	require.NoError(t, joiner.Flush(sink))
	c.stats = st
	return c
}

func TestWriteLogsCollect(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	sum, err := demo.WriteLogs(dir, demo.LogOptions{Now: logNow})
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("wrote %d queries, %d events in %s", sum.Queries, sum.Events(), took)
	require.Equal(t, 3000, sum.Queries)
	require.Len(t, sum.Sources, 6)

	c := collectAll(t, dir)
	require.Zero(t, c.stats.BadRecords, "bad records: %v", c.stats.Bad)
	require.Zero(t, c.stats.Duplicates)
	require.Zero(t, c.stats.TruncatedTails)

	// Every file is detected as the source it was written for.
	fileSource := map[string]string{}
	for _, fs := range c.stats.Files {
		require.Empty(t, fs.Err, fs.Name)
		fileSource[fs.Name] = fs.Source
	}
	queries := 0
	for _, src := range sum.Sources {
		queries += src.Queries
		require.NotEmpty(t, src.Files, src.Source)
		for _, f := range src.Files {
			require.Equal(t, src.Source, fileSource[f], "source of %s", f)
			fi, err := os.Stat(f)
			require.NoError(t, err)
			require.Positive(t, fi.Size())
		}
	}
	require.Equal(t, sum.Queries, queries)

	cfg, err := config.Parse("default.yaml", config.DefaultYAML())
	require.NoError(t, err)
	oldest := logNow.Add(-7*24*time.Hour - time.Minute)
	for _, src := range sum.Sources {
		t.Run(src.Source, func(t *testing.T) {
			evs := c.bySource[src.Source]
			require.Len(t, evs, src.Events, "events collected")
			require.Greater(t, src.Events, 100)
			failed := 0
			for _, ev := range evs {
				require.Equal(t, src.Engine, string(ev.Engine))
				require.False(t, ev.StartTime.Before(oldest), "%s starts %s", ev.QueryID, ev.StartTime)
				require.False(t, ev.StartTime.After(logNow), "%s starts %s", ev.QueryID, ev.StartTime)
				if ev.State == collectors.StateFailed || ev.State == collectors.StateCancelled {
					failed++
					require.NotEmpty(t, ev.Error, ev.QueryID)
				}
				if ev.Engine == collectors.EngineIceberg {
					require.Empty(t, ev.SQL)
				} else {
					require.NotEmpty(t, ev.SQL, ev.QueryID)
				}
				// Engine catalog names are the ones floe's default
				// config maps to the local catalog.
				cats := []string{ev.DefaultCatalog}
				for _, ta := range ev.Tables {
					cats = append(cats, ta.Catalog)
				}
				for _, cat := range cats {
					if cat == "" {
						continue
					}
					m := cfg.Telemetry.CatalogMap[string(ev.Engine)]
					require.Equal(t, "local", m[strings.ToLower(cat)], "%s catalog %q of %s", ev.Engine, cat, ev.QueryID)
				}
			}
			require.Equal(t, src.Failed, failed, "failed events")
		})
	}
	require.Equal(t, int64(sum.Sources[5].Skipped), c.scan.CommitReports()+c.scan.MetadataTableReports())
	require.Positive(t, c.scan.CommitReports())
	require.Positive(t, c.scan.MetadataTableReports())
}

// leafColumns are the (lower-case) columns of a predicate tree's leaves.
func leafColumns(n *expr.Node, into map[string]bool) {
	if n == nil {
		return
	}
	if n.Pred != nil {
		into[strings.ToLower(n.Pred.Column)] = true
	}
	for _, ch := range n.Children {
		leafColumns(ch, into)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var tableColumns = map[string][]string{
	"web.events":     {"event_id", "ts", "tenant_id", "user_id", "event_type", "country", "device", "url", "latency_ms", "revenue"},
	"sales.orders":   {"o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate", "o_orderpriority", "o_clerk", "o_shippriority", "o_comment"},
	"sales.lineitem": {"l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct", "l_shipmode", "l_comment"},
	"crm.accounts":   {"account_id", "name", "country", "plan", "signup_date", "mrr"},
}

func dialect(e collectors.Engine) extract.Dialect {
	switch e {
	case collectors.EngineTrino:
		return extract.Trino
	case collectors.EngineSpark:
		return extract.Spark
	case collectors.EngineAthena:
		return extract.Athena
	case collectors.EngineSnowflake:
		return extract.Snowflake
	}
	return extract.DuckDB
}

// baseName is namespace.table of a table name as a query or log spells it,
// lower-cased, without catalog or metadata-table suffix.
func baseName(ns, name string) string {
	ns = strings.ToLower(ns)
	if i := strings.LastIndexByte(ns, '.'); i >= 0 {
		ns = ns[i+1:]
	}
	return ns + "." + strings.ToLower(name)
}

// TestWriteLogsFilters checks the pushed filters of the Spark log and the
// scan reports against the SQL the queries were written in, and that the
// workload's filters are skewed the way the demo promises.
func TestWriteLogsFilters(t *testing.T) {
	dir := t.TempDir()
	sum, err := demo.WriteLogs(dir, demo.LogOptions{Now: logNow, Queries: 2000, Seed: 7})
	require.NoError(t, err)
	c := collectAll(t, dir)
	require.Zero(t, c.stats.BadRecords)

	t.Run("spark pushed filters match the SQL", func(t *testing.T) {
		withFilter := 0
		for _, ev := range c.bySource[spark.Source] {
			res := extract.Parse(extract.Spark, ev.SQL)
			require.Empty(t, res.Warnings, ev.SQL)
			sqlCols := map[string]map[string]bool{}
			for _, p := range res.Predicates {
				for _, tr := range res.Tables {
					if tr.QualifiedName() == p.Table || tr.Alias != "" && strings.EqualFold(tr.Alias, p.Table) {
						k := baseName(tr.Namespace, tr.Name)
						if sqlCols[k] == nil {
							sqlCols[k] = map[string]bool{}
						}
						sqlCols[k][strings.ToLower(p.Column)] = true
					}
				}
			}
			for _, ta := range ev.Tables {
				require.Equal(t, "spark_catalog", ta.Catalog)
				k := baseName(ta.Namespace, ta.Name)
				if strings.HasSuffix(k, ".snapshots") {
					require.Nil(t, ta.Filter)
					continue
				}
				require.Contains(t, tableColumns, k)
				require.NotNil(t, ta.Filter, "%s: %s", ev.QueryID, ev.SQL)
				require.NotEmpty(t, ta.FilterText)
				withFilter++
				got := map[string]bool{}
				leafColumns(ta.Filter, got)
				for col := range got {
					require.Contains(t, tableColumns[k], col)
				}
				require.Equal(t, sortedKeys(sqlCols[k]), sortedKeys(got), "%s: %s\npushed %v", ev.QueryID, ev.SQL, ta.FilterText)
				// Dates are day numbers and timestamps epoch micros.
				for _, f := range ta.FilterText {
					require.NotContains(t, f, "DATE '")
					require.NotContains(t, f, "TIMESTAMP")
				}
			}
		}
		require.Greater(t, withFilter, 300)
	})

	t.Run("scan reports carry masked filter trees", func(t *testing.T) {
		tenant := 0
		evs := c.bySource[icebergscan.Source]
		for _, ev := range evs {
			require.Len(t, ev.Tables, 1)
			ta := ev.Tables[0]
			require.Equal(t, "local", ta.Catalog)
			k := baseName(ta.Namespace, ta.Name)
			require.Contains(t, tableColumns, k)
			require.NotNil(t, ta.Filter, ev.QueryID)
			require.NotNil(t, ta.SnapshotID)
			require.Positive(t, ta.Metrics.ResultDataFiles)
			cols := map[string]bool{}
			leafColumns(ta.Filter, cols)
			for col := range cols {
				require.Contains(t, tableColumns[k], col)
			}
			if cols["tenant_id"] {
				tenant++
			}
			for _, f := range ta.FilterText {
				require.NotContains(t, f, "shop.example.com", "literals are masked")
			}
		}
		require.Greater(t, tenant, len(evs)/3, "web.events reports filter mostly on tenant_id")
	})

	t.Run("filters are skewed", func(t *testing.T) {
		// Count, over every source with SQL, how many queries filter each
		// column of each table.
		counts := map[string]map[string]int{}
		for src, evs := range c.bySource {
			if src == icebergscan.Source {
				continue
			}
			for _, ev := range evs {
				if ev.State == collectors.StateFailed || ev.State == collectors.StateCancelled {
					continue
				}
				res := extract.Parse(dialect(ev.Engine), ev.SQL)
				require.Empty(t, res.Warnings, "%s: %s", src, ev.SQL)
				seen := map[string]bool{}
				for _, p := range res.Predicates {
					for _, tr := range res.Tables {
						if tr.QualifiedName() != p.Table && !strings.EqualFold(tr.Alias, p.Table) {
							continue
						}
						ns := tr.Namespace
						if ns == "" {
							ns = ev.DefaultSchema
						}
						k := baseName(ns, tr.Name)
						if tableColumns[k] == nil {
							continue // the misspelled table of a failed query
						}
						col := strings.ToLower(p.Column)
						if seen[k+"."+col] {
							continue
						}
						seen[k+"."+col] = true
						if counts[k] == nil {
							counts[k] = map[string]int{}
						}
						counts[k][col]++
					}
				}
			}
		}
		top := func(table string, n int) []string {
			var cols []string
			for col := range counts[table] {
				cols = append(cols, col)
			}
			slices.SortFunc(cols, func(a, b string) int { return counts[table][b] - counts[table][a] })
			return cols[:min(n, len(cols))]
		}
		t.Logf("filter counts: %v", counts)
		require.ElementsMatch(t, []string{"tenant_id", "ts"}, top("web.events", 2))
		require.Equal(t, []string{"l_shipdate"}, top("sales.lineitem", 1))
		require.Equal(t, []string{"o_orderdate"}, top("sales.orders", 1))
		require.Equal(t, []string{"account_id"}, top("crm.accounts", 1))
		for _, col := range []string{"event_type", "country", "user_id", "url"} {
			require.Positive(t, counts["web.events"][col], col)
		}
		for _, col := range []string{"l_orderkey", "l_shipmode"} {
			require.Positive(t, counts["sales.lineitem"][col], col)
		}
		require.Positive(t, counts["sales.orders"]["o_custkey"])
		require.Positive(t, counts["crm.accounts"]["country"])
	})

	t.Run("noise", func(t *testing.T) {
		var cte, join, meta, mixed, params int
		for _, evs := range c.bySource {
			for _, ev := range evs {
				switch {
				case strings.HasPrefix(ev.SQL, "WITH recent AS"):
					cte++
				case strings.Contains(ev.SQL, "\nJOIN "):
					join++
				case strings.Contains(ev.SQL, "$snapshots") || strings.Contains(ev.SQL, "events.snapshots"):
					meta++
				case strings.Contains(ev.SQL, "Tenant_Id"):
					mixed++
				}
				if ev.SQLTemplate {
					params++
				}
			}
		}
		require.Positive(t, cte)
		require.Positive(t, join)
		require.Positive(t, meta)
		require.Positive(t, mixed)
		require.Positive(t, params)
		require.Positive(t, sum.Sources[0].Failed)
	})
}

// digest hashes every file under dir with its relative path.
func digest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00", rel)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	require.NoError(t, err)
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestWriteLogsDeterministic(t *testing.T) {
	cases := []struct {
		name string
		a, b demo.LogOptions
		same bool
	}{
		{"same seed", demo.LogOptions{Now: logNow, Queries: 500, Seed: 3}, demo.LogOptions{Now: logNow, Queries: 500, Seed: 3}, true},
		{"other seed", demo.LogOptions{Now: logNow, Queries: 500, Seed: 3}, demo.LogOptions{Now: logNow, Queries: 500, Seed: 4}, false},
		{"other now", demo.LogOptions{Now: logNow, Queries: 500, Seed: 3}, demo.LogOptions{Now: logNow.Add(time.Hour), Queries: 500, Seed: 3}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := t.TempDir(), t.TempDir()
			sa, err := demo.WriteLogs(a, tc.a)
			require.NoError(t, err)
			sb, err := demo.WriteLogs(b, tc.b)
			require.NoError(t, err)
			if tc.same {
				require.Equal(t, digest(t, a), digest(t, b))
				require.Equal(t, sa.Events(), sb.Events())
			} else {
				require.NotEqual(t, digest(t, a), digest(t, b))
			}
		})
	}
}

func TestWriteLogsErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	cases := []struct {
		name string
		dir  string
		opts demo.LogOptions
		want []string
	}{
		{"dir is a file", file, demo.LogOptions{Now: logNow, Queries: 10}, []string{"write demo logs", "not-a-dir"}},
		{"bad options", t.TempDir(), demo.LogOptions{Queries: -1, Window: -time.Hour, Orders: -5},
			[]string{"queries: -1", "window: -1h0m0s is negative", "orders: -5 is negative"}},
		{"too many queries", t.TempDir(), demo.LogOptions{Queries: demo.MaxLogQueries + 1}, []string{"queries: 10000001"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := demo.WriteLogs(tc.dir, tc.opts)
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	require.Equal(t, 3000, demo.DefaultLogOptions().Queries)
	require.True(t, demo.DefaultLogOptions().Now.IsZero())
}

func BenchmarkWriteLogs(b *testing.B) {
	for _, n := range []int{3000} {
		b.Run(fmt.Sprintf("queries=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			var sum demo.LogSummary
			var err error
			for b.Loop() {
				sum, err = demo.WriteLogs(dir, demo.LogOptions{Now: logNow, Queries: n})
				if err != nil {
					b.Fatal(err)
				}
			}
			var bytes int64
			for _, s := range sum.Sources {
				bytes += s.Bytes
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(bytes), "log_bytes/op")
		})
	}
}

// Writing again into the same directory replaces the earlier logs: the
// Spark application, whose name depends on Now, included.
func TestWriteLogsRewrite(t *testing.T) {
	dir := t.TempDir()
	_, err := demo.WriteLogs(dir, demo.LogOptions{Now: logNow.Add(-48 * time.Hour), Queries: 400})
	require.NoError(t, err)
	sum, err := demo.WriteLogs(dir, demo.LogOptions{Now: logNow, Queries: 300})
	require.NoError(t, err)
	c := collectAll(t, dir)
	require.Zero(t, c.stats.BadRecords)
	for _, src := range sum.Sources {
		require.Len(t, c.bySource[src.Source], src.Events, src.Source)
	}
}
