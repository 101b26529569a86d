package extract_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/floe-project/floe/analyzer/extract"
)

// BenchmarkParse parses the whole regression corpus per iteration and
// reports queries per second on one goroutine: queries/s by the wall clock
// and queries/cpu-s by process CPU time (run with -cpu 1; the second is the
// per-core figure when other work shares the machine).
func BenchmarkParse(b *testing.B) {
	stmts := loadCorpus(b)
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
		queries := float64(b.N) * float64(len(stmts))
		b.ReportMetric(queries/b.Elapsed().Seconds(), "queries/s")
		if cpu1, ok := cpuTime(); ok && cpuOK && cpu1 > cpu0 {
			b.ReportMetric(queries/(cpu1-cpu0).Seconds(), "queries/cpu-s")
		}
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
