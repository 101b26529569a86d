package store_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
)

// BenchmarkInsertEvents stores batches of events that each read one table
// with a three-leaf filter, as collection does.
func BenchmarkInsertEvents(b *testing.B) {
	for _, size := range []int{1, 500} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}()
			tbl := "local.web.events"
			n := 0
			batch := make([]collectors.QueryEvent, size)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				for i := range batch {
					n++
					batch[i] = event(fmt.Sprintf("q%d", n), "u", t0.Add(time.Duration(n)*time.Millisecond), eventsAccess(&extract.Node{Kind: extract.NodeAnd, Children: []*extract.Node{
						pred(tbl, "tenant_id", "", extract.OpEq, extract.Value{Kind: extract.KindNumber, Text: "7"}),
						pred(tbl, "event_ts", "day", extract.OpGtEq, extract.Value{Kind: extract.KindDate, Text: "2026-04-01"}),
						pred(tbl, "region", "", extract.OpIn, extract.Value{Kind: extract.KindString, Text: "eu"}, extract.Value{Kind: extract.KindString, Text: "us"}),
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
