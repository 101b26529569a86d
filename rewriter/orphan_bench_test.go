package rewriter_test

import (
	"testing"
	"time"

	"github.com/floe-project/floe/rewriter"
)

// BenchmarkPlanOrphans measures listing a table location and walking every
// snapshot's metadata for references, on a table of 60 appends.
func BenchmarkPlanOrphans(b *testing.B) {
	tt := newTwinTables(b, nil)
	regions := []string{"eu", "us", "ap"}
	for i := range 60 {
		tt.tbl = appendFresh(b, tt.tbl, i*10, 10, regions[i%3])
	}
	opts := rewriter.OrphanOptions{Now: func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }}
	b.Run("snapshots=60", func(b *testing.B) {
		b.ReportAllocs()
		var plan rewriter.OrphanPlan
		for b.Loop() {
			var err error
			if plan, err = rewriter.PlanOrphans(b.Context(), tt.tbl, opts); err != nil {
				b.Fatal(err)
			}
		}
		if len(plan.Files) != 0 {
			b.Fatalf("clean table has %d orphans", len(plan.Files))
		}
		b.ReportMetric(float64(plan.Scanned), "files_scanned/op")
	})
}
