package snowflake_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/snowflake"
)

// exports returns a QUERY_HISTORY CSV and an ACCESS_HISTORY CSV of n
// queries, shaped like the reference rows.
func exports(n int) (qh, ah []byte) {
	var q, a strings.Builder
	q.WriteString("QUERY_ID,QUERY_TEXT,DATABASE_NAME,SCHEMA_NAME,QUERY_TYPE,USER_NAME,EXECUTION_STATUS,START_TIME,END_TIME,TOTAL_ELAPSED_TIME,BYTES_SCANNED,PARTITIONS_SCANNED,PARTITIONS_TOTAL\n")
	a.WriteString("QUERY_ID,QUERY_START_TIME,USER_NAME,DIRECT_OBJECTS_ACCESSED,BASE_OBJECTS_ACCESSED\n")
	for i := range n {
		id := fmt.Sprintf("01b3f1a2-0001-8c3e-0000-%012d", i)
		fmt.Fprintf(&q, "%s,\"select order_id, amount from orders where order_date >= '2024-04-01' and customer_id = %d\",LAKE,SALES,SELECT,ALICE,SUCCESS,2024-05-01 05:51:30.123 -0700,2024-05-01 05:51:33.500 -0700,3377,73400320,12,480\n", id, i)
		fmt.Fprintf(&a, `%s,2024-05-01 05:51:30.123 -0700,ALICE,"[{""columns"":[{""columnId"":1201,""columnName"":""ORDER_ID""},{""columnId"":1204,""columnName"":""AMOUNT""}],""objectDomain"":""Table"",""objectId"":881,""objectName"":""LAKE.SALES.ORDERS""}]","[{""columns"":[{""columnId"":1201,""columnName"":""ORDER_ID""},{""columnId"":1204,""columnName"":""AMOUNT""},{""columnId"":1202,""columnName"":""ORDER_DATE""},{""columnId"":1203,""columnName"":""CUSTOMER_ID""}],""objectDomain"":""Table"",""objectId"":881,""objectName"":""LAKE.SALES.ORDERS""}]"`+"\n", id)
	}
	return []byte(q.String()), []byte(a.String())
}

func BenchmarkJoiner(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprintf("queries=%d", n), func(b *testing.B) {
			qh, ah := exports(n)
			b.SetBytes(int64(len(qh) + len(ah)))
			b.ReportAllocs()
			events := 0
			emit := func(collectors.QueryEvent) error { events++; return nil }
			fail := func(bad collectors.BadRecord) error { return bad }
			for b.Loop() {
				j := snowflake.NewJoiner()
				for _, f := range [][]byte{qh, ah} {
					if err := j.Parse(context.Background(), "bench.csv", bytes.NewReader(f), emit, fail); err != nil {
						b.Fatal(err)
					}
				}
				if err := j.Flush(emit); err != nil {
					b.Fatal(err)
				}
			}
			if events != n*b.N {
				b.Fatalf("%d events, want %d", events, n*b.N)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
