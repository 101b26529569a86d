package icebergscan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/floe-project/floe/collectors"
)

func BenchmarkParse(b *testing.B) {
	var one bytes.Buffer
	if err := json.Compact(&one, read(b, "scan_report.json")); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000} {
		b.Run(fmt.Sprintf("reports=%d", n), func(b *testing.B) {
			var data bytes.Buffer
			for i := range n {
				// Distinct snapshot ids make distinct bodies.
				data.Write(bytes.Replace(one.Bytes(), []byte("3053316373432432132"), fmt.Appendf(nil, "%d", 3053316373432432132+i), 1))
				data.WriteByte('\n')
			}
			b.SetBytes(int64(data.Len()))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				err := fixedParser().Parse(context.Background(), "bench", bytes.NewReader(data.Bytes()),
					func(collectors.QueryEvent) error { events++; return nil },
					func(bad collectors.BadRecord) error { return bad })
				if err != nil {
					b.Fatal(err)
				}
			}
			if events != n*b.N {
				b.Fatalf("%d events, want %d", events, n*b.N)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "reports/s")
		})
	}
}
