package ingest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/store"
)

// writeTrino writes n completed Trino queries on web.events and
// sales.orders, in upper and lower case, to path.
func writeTrino(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	t0 := 1777636800.0
	for i := range n {
		sql := fmt.Sprintf("SELECT user_id FROM WEB.EVENTS WHERE TENANT_ID = %d AND event_date >= DATE '2026-04-01' AND Region IN ('eu', 'us')", i%50)
		if i%2 == 1 {
			sql = fmt.Sprintf("SELECT o.order_id FROM sales.orders o JOIN web.events e ON o.customer_id = e.user_id WHERE o.amount > %d AND e.tenant_id = 3", i)
		}
		rec := map[string]any{
			"metadata":   map[string]any{"queryId": fmt.Sprintf("20260501_%06d_floe", i), "query": sql, "queryState": "FINISHED", "tables": []any{}},
			"statistics": map[string]any{"cpuTime": 0.5, "wallTime": 1.25},
			"context":    map[string]any{"user": fmt.Sprintf("user%d", i%7), "catalog": "iceberg", "schema": "web"},
			"createTime": t0 + float64(i), "endTime": t0 + float64(i) + 1.25,
		}
		b, err := json.Marshal(rec)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkRun collects a file of Trino queries into a fresh store: parse,
// SQL extraction, resolution (cached after the first event), column
// canonicalization and storage.
func BenchmarkRun(b *testing.B) {
	const n = 2000
	l := newLake(b)
	dir := b.TempDir()
	path := filepath.Join(dir, "trino.ndjson")
	writeTrino(b, path, n)
	events := 0
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		rep, err := ingest.Run(b.Context(), l.options(path), st)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Inserted != n {
			b.Fatalf("inserted %d of %d", rep.Inserted, n)
		}
		events += rep.Inserted
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
}
