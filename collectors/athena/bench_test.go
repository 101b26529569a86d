package athena_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
)

// batchGetNDJSON is n executions as BatchGetQueryExecution responses of 50,
// one per line, shaped like the reference response.
func batchGetNDJSON(n int) []byte {
	var b strings.Builder
	for i := 0; i < n; i += 50 {
		b.WriteString(`{"QueryExecutions":[`)
		for j := i; j < min(i+50, n); j++ {
			if j > i {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"QueryExecutionId":"a1b2c3d4-5678-90ab-cdef-%012d","Query":"SELECT order_id, amount FROM \"sales\".\"orders\" WHERE order_date >= DATE '2024-04-01' AND customer_id = ?","StatementType":"DML","SubstatementType":"SELECT","QueryExecutionContext":{"Database":"sales","Catalog":"AwsDataCatalog"},"Status":{"State":"SUCCEEDED","SubmissionDateTime":%d.123,"CompletionDateTime":%d.5},"Statistics":{"EngineExecutionTimeInMillis":2890,"DataScannedInBytes":73400320,"TotalExecutionTimeInMillis":3377,"QueryQueueTimeInMillis":120},"WorkGroup":"primary","EngineVersion":{"SelectedEngineVersion":"AUTO","EffectiveEngineVersion":"Athena engine version 3"},"ExecutionParameters":["%d"]}`, j, 1714567890+j, 1714567893+j, j)
		}
		b.WriteString("],\"UnprocessedQueryExecutionIds\":[]}\n")
	}
	return []byte(b.String())
}

func BenchmarkAPIParser(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprintf("executions=%d", n), func(b *testing.B) {
			data := batchGetNDJSON(n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				err := athena.APIParser{}.Parse(context.Background(), "bench", bytes.NewReader(data),
					func(collectors.QueryEvent) error { events++; return nil },
					func(bad collectors.BadRecord) error { return bad })
				if err != nil {
					b.Fatal(err)
				}
			}
			if events != n*b.N {
				b.Fatalf("%d events, want %d", events, n*b.N)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
