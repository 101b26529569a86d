package rewriter_test

import (
	"fmt"
	"testing"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// BenchmarkDeadDeletes measures deciding which delete files a rewrite
// makes dead, on a synthetic table state of many partitions.
func BenchmarkDeadDeletes(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d,partitions=100", n), func(b *testing.B) {
			st := &lake.State{}
			rewritten := map[string]bool{}
			for i := range n {
				f := lake.File{Path: fmt.Sprintf("s3://b/t/data/p%d/f%d.parquet", i%100, i), PartitionKey: fmt.Sprintf("p=%d", i%100), SequenceNumber: int64(i / 100)}
				st.DataFiles = append(st.DataFiles, f)
				if i%100 < 10 {
					rewritten[f.Path] = true
				}
				if i%10 == 0 {
					d := lake.File{Path: fmt.Sprintf("s3://b/t/data/p%d/d%d.parquet", i%100, i), PartitionKey: f.PartitionKey,
						SequenceNumber: f.SequenceNumber + 1, DeleteKind: lake.PositionDeletes}
					if i%20 == 0 {
						d.ReferencedDataFile = f.Path
					}
					st.DeleteFiles = append(st.DeleteFiles, d)
				}
			}
			b.ReportAllocs()
			dead := 0
			for b.Loop() {
				dead = len(rewriter.DeadDeletes(st, rewritten))
			}
			b.ReportMetric(float64(n+len(st.DeleteFiles)), "files/op")
			b.ReportMetric(float64(dead), "dead/op")
		})
	}
}
