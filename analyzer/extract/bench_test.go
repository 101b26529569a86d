package extract_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-project/floe/analyzer/extract"
)

// BenchmarkParse parses the whole regression corpus per iteration and
// reports queries per second on one goroutine: queries/s by the wall clock
// and queries/cpu-s by process CPU time (run with -cpu 1; the second is the
// per-core figure when other work shares the machine).
//
// The decision-support statements (large star joins, CTE chains, UNION ALL
// channels) run apart, with their DDL, and also report the recall of
// (table, column, op) per dialect.
func BenchmarkParse(b *testing.B) {
	var stmts []corpusStmt
	for _, s := range loadCorpus(b) {
		if filepath.Base(s.file) != dsFile {
			stmts = append(stmts, s)
		}
	}
	byDialect, schemas := loadDecisionSupport(b)
	var ds []dsStmt
	for _, d := range []extract.Dialect{extract.DuckDB, extract.Spark, extract.Trino} {
		ds = append(ds, byDialect[d]...)
	}
	b.Run("decision_support="+strconv.Itoa(len(ds)), func(b *testing.B) {
		b.ReportAllocs()
		var bytes int
		for _, s := range ds {
			bytes += len(s.sql)
		}
		b.SetBytes(int64(bytes))
		opts := extract.Options{Schemas: schemas}
		cpu0, cpuOK := cpuTime()
		for b.Loop() {
			for _, s := range ds {
				extract.ParseWith(s.dialect, s.sql, opts)
			}
		}
		reportRate(b, len(ds), cpu0, cpuOK)
		for _, d := range []extract.Dialect{extract.DuckDB, extract.Spark, extract.Trino} {
			r, _ := recall(byDialect[d], opts)
			b.ReportMetric(r, "recall-"+string(d))
			r, _ = recall(byDialect[d], extract.Options{})
			b.ReportMetric(r, "recall-noschema-"+string(d))
		}
	})
	b.Run("corpus="+strconv.Itoa(len(stmts)), func(b *testing.B) {
		b.ReportAllocs()
		var bytes int
		for _, s := range stmts {
			bytes += len(s.sql)
		}
		b.SetBytes(int64(bytes))
		cpu0, cpuOK := cpuTime()
		for b.Loop() {
			for _, s := range stmts {
				extract.Parse(s.dialect, s.sql)
			}
		}
		reportRate(b, len(stmts), cpu0, cpuOK)
	})
	for _, n := range []int{2000, 20000} {
		var sb strings.Builder
		sb.WriteString("SELECT * FROM lake.events WHERE user_id IN (")
		for i := range n {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(strconv.Itoa(i))
		}
		sb.WriteString(")")
		sql := sb.String()
		b.Run("in_list="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(sql)))
			for b.Loop() {
				extract.Parse(extract.Trino, sql)
			}
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// reportRate reports queries/s by the wall clock and queries/cpu-s by the
// process CPU time spent since cpu0, for b.N rounds of n statements.
func reportRate(b *testing.B, n int, cpu0 time.Duration, cpuOK bool) {
	queries := float64(b.N) * float64(n)
	b.ReportMetric(queries/b.Elapsed().Seconds(), "queries/s")
	if cpu1, ok := cpuTime(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(queries/(cpu1-cpu0).Seconds(), "queries/cpu-s")
	}
}
