package analyzer_test

import (
	"fmt"
	"github.com/floe-project/floe/expr"
	"strconv"
	"testing"
	"time"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/collectors"
)

// BenchmarkRank ranks a workload of mixed filters (equality, a day range,
// an OR, a prefix like) on the 4-file events table.
func BenchmarkRank(b *testing.B) {
	st := eventsTable(b, "events", nil)
	for _, n := range []int{1000, 10000} {
		events := make([]collectors.QueryEvent, n)
		for i := range events {
			day := fmt.Sprintf("2026-11-0%d", 1+i%4)
			f := and(
				pred("tenant_id", expr.OpEq, num(strconv.Itoa(i%400))),
				pred("ts", expr.OpGtEq, ts(day+" 00:00:00")),
				pred("ts", expr.OpLt, ts(day+" 12:00:00")),
				or(pred("country", expr.OpEq, str("FR")), pred("country", expr.OpLike, str("D%"))),
			)
			events[i] = event(st, strconv.Itoa(i), f, collectors.EvidenceSQL)
			events[i].StartTime = now.Add(-time.Duration(i) * time.Minute)
			events[i].Metrics.BytesScanned = int64(1+i%7) << 20
		}
		b.Run(fmt.Sprintf("events=%d,files=%d", n, len(st.DataFiles)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ranks, err := analyzer.Rank(st.Ident, st, events, analyzer.RankOptions{Now: now})
				if err != nil || len(ranks) != 3 {
					b.Fatalf("rank: %v, %d columns", err, len(ranks))
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
