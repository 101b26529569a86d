package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// BenchmarkInsertEvents stores batches of events that each read one table
// with a three-leaf filter, as collection does, in SQLite and in
// PostgreSQL (a server on loopback, started for the benchmark).
func BenchmarkInsertEvents(b *testing.B) {
	for _, driver := range []string{store.DriverSQLite, store.DriverPostgres} {
		for _, size := range []int{1, 500} {
			b.Run(fmt.Sprintf("driver=%s,batch=%d", driver, size), func(b *testing.B) {
				s := store.NewTestDB(b, driver).Open(b)
				tbl := "local.web.events"
				n := 0
				batch := make([]collectors.QueryEvent, size)
				b.ReportAllocs()
				start := time.Now()
				for b.Loop() {
					for i := range batch {
						n++
						batch[i] = event(fmt.Sprintf("q%d", n), "u", t0.Add(time.Duration(n)*time.Millisecond), eventsAccess(&expr.Node{Kind: expr.NodeAnd, Children: []*expr.Node{
							pred(tbl, "tenant_id", "", expr.OpEq, expr.Value{Kind: expr.KindNumber, Text: "7"}),
							pred(tbl, "event_ts", "day", expr.OpGtEq, expr.Value{Kind: expr.KindDate, Text: "2026-04-01"}),
							pred(tbl, "region", "", expr.OpIn, expr.Value{Kind: expr.KindString, Text: "eu"}, expr.Value{Kind: expr.KindString, Text: "us"}),
						}}))
					}
					if _, _, err := s.InsertEvents(b.Context(), batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
			})
		}
	}
}
