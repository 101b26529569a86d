package collectors_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/trino"
	"github.com/stretchr/testify/require"
)

// writeTrinoEvents writes n Kafka-wrapped QueryCompletedEvents (plan and
// payload excluded, as Kafka listener configs usually do) with varied
// users, tables, columns, times and states, and returns the file size.
func writeTrinoEvents(tb testing.TB, path string, n int) int64 {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := bufio.NewWriterSize(f, 1<<20)
	users := []string{"alice", "bob", "carol", "dave", "etl", "airflow", "superset", "looker"}
	tables := []string{"orders", "events", "sessions", "payments", "customers", "inventory", "clicks", "shipments"}
	schemas := []string{"sales", "web", "finance", "ops"}
	cols := []string{"order_id", "customer_id", "order_date", "amount", "region", "status", "ts", "tenant_id"}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var buf []byte
	for i := range n {
		start := base.Add(time.Duration(i) * 250 * time.Millisecond)
		wall := 50 + (i*7919)%30000
		end := start.Add(time.Duration(wall) * time.Millisecond)
		tbl, sch, user := tables[i%len(tables)], schemas[(i/3)%len(schemas)], users[(i/7)%len(users)]
		c1, c2, c3 := cols[i%len(cols)], cols[(i+3)%len(cols)], cols[(i+5)%len(cols)]
		state := "FINISHED"
		if i%20 == 0 {
			state = "FAILED"
		}
		id := "20261101_" + strconv.Itoa(100000+i%900000) + "_" + strconv.Itoa(10000+i) + "_q7k3m"
		buf = buf[:0]
		buf = append(buf, `{"eventPayload":{"metadata":{"queryId":"`...)
		buf = append(buf, id...)
		buf = append(buf, `","transactionId":"0b7e1c1e-5b9e-4d7e-9d2a-2f0c1f3c7a11","query":"SELECT `...)
		buf = append(buf, c1+", "+c2+", sum(amount) FROM lake."+sch+"."+tbl+" WHERE "+c3+" >= DATE '2026-10-01' AND "+c1+" = "...)
		buf = strconv.AppendInt(buf, int64(i%1000), 10)
		buf = append(buf, ` GROUP BY 1, 2","queryState":"`+state+`","uri":"http://coordinator:8080/v1/query/`+id+`","tables":[{"catalog":"lake","schema":"`...)
		buf = append(buf, sch+`","table":"`+tbl+`","authorization":"etl","filters":[],"columns":[{"column":"`+c1+`"},{"column":"`+c2+`"},{"column":"`+c3+`"},{"column":"amount"}],"directlyReferenced":true,"referenceChain":[]}],"routines":[]},"statistics":{"cpuTime":`...)
		buf = strconv.AppendFloat(buf, float64(wall)/3000, 'f', 9, 64)
		buf = append(buf, `,"wallTime":`...)
		buf = strconv.AppendFloat(buf, float64(wall)/1000, 'f', 9, 64)
		buf = append(buf, `,"queuedTime":0.004000000,"analysisTime":0.081000000,"planningTime":0.190000000,"executionTime":3.100000000,"peakUserMemoryBytes":5242880,"physicalInputBytes":`...)
		buf = strconv.AppendInt(buf, int64(1000+i*37%1e9), 10)
		buf = append(buf, `,"physicalInputRows":`...)
		buf = strconv.AppendInt(buf, int64(10+i*13%1e7), 10)
		buf = append(buf, `,"totalBytes":73400320,"totalRows":1250000,"outputRows":17,"completedSplits":24,"complete":true,"cumulativeMemory":1.2E9,"failedCumulativeMemory":0.0,"stageGcStatistics":[],"cpuTimeDistribution":[],"operatorSummaries":[]},"context":{"user":"`...)
		buf = append(buf, user+`","originalUser":"`+user+`","enabledRoles":[],"groups":[],"source":"trino-go-client","timezone":"UTC","catalog":"lake","schema":"`+sch+`","clientTags":[],"clientCapabilities":[],"sessionProperties":{},"resourceEstimates":{},"serverAddress":"10.0.0.5","serverVersion":"478","environment":"prod","queryType":"SELECT","retryPolicy":"NONE"},"ioMetadata":{"inputs":[{"catalogName":"lake","schema":"`...)
		buf = append(buf, sch+`","table":"`+tbl+`","columns":["`+c1+`","`+c2+`","amount"],"connectorInfo":{"snapshotId":3053316373432432132},"connectorMetrics":{"metrics":{}},"physicalInputBytes":73400320,"physicalInputRows":1250000}]},"warnings":[],"createTime":"`...)
		buf = start.AppendFormat(buf, "2006-01-02T15:04:05.000Z")
		buf = append(buf, `","executionStartTime":"`...)
		buf = start.Add(time.Millisecond).AppendFormat(buf, "2006-01-02T15:04:05.000Z")
		buf = append(buf, `","endTime":"`...)
		buf = end.AppendFormat(buf, "2006-01-02T15:04:05.000Z")
		buf = append(buf, "\"},\"eventMetadata\":{\"cluster\":\"prod-a\"}}\n"...)
		_, err := w.Write(buf)
		require.NoError(tb, err)
	}
	require.NoError(tb, w.Flush())
	require.NoError(tb, f.Close())
	fi, err := os.Stat(path)
	require.NoError(tb, err)
	return fi.Size()
}

// BenchmarkCollectTrino collects 1,000,000 Trino QueryCompletedEvents from
// one NDJSON file (generation is not timed). FLOE_BENCH_EVENTS overrides
// the count for quick profiling.
func BenchmarkCollectTrino(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("FLOE_BENCH_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(b, err)
		n = v
	}
	path := filepath.Join(b.TempDir(), "trino-events.ndjson")
	size := writeTrinoEvents(b, path, n)
	ps := []collectors.Parser{trino.EventParser{}}
	b.ReportAllocs()
	for b.Loop() {
		st, err := collectors.Collect(b.Context(), ps, collectors.CollectOptions{Strict: true}, []string{path}, func(collectors.QueryEvent) error { return nil })
		require.NoError(b, err)
		require.Equal(b, n, st.Events)
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/sec, "events/s")
	b.ReportMetric(float64(size)/1e6/sec, "MB/s")
}

func TestBenchmarkInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.ndjson")
	writeTrinoEvents(t, path, 200)
	st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, path)
	require.NoError(t, err)
	require.Equal(t, 200, st.Events)
	require.Equal(t, collectors.StateFailed, evs[0].State)
	require.Equal(t, collectors.StateSucceeded, evs[1].State)
	require.Len(t, evs[1].Tables, 1)
}
