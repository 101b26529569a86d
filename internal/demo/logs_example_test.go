package demo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/floe-project/floe/internal/demo"
)

// Write a week of query logs from all six telemetry sources and list what
// each source's collector will read.
func ExampleWriteLogs() {
	dir, err := os.MkdirTemp("", "floe-demo-logs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	sum, err := demo.WriteLogs(dir, demo.LogOptions{
		Queries: 1000,
		Seed:    1,
		Now:     time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, src := range sum.Sources {
		var files []string
		for _, f := range src.Files {
			rel, _ := filepath.Rel(dir, f)
			files = append(files, filepath.ToSlash(rel))
		}
		fmt.Printf("%-18s %4d queries %4d events %v\n", src.Source, src.Queries, src.Events, files)
	}
	fmt.Println(sum.Events(), "events in all")
	// Output:
	// trino-event         400 queries  400 events [trino/http-event-listener.ndjson]
	// spark-eventlog      200 queries  200 events [spark/application_1795213683194_0001]
	// athena-api          100 queries  100 events [athena/batch-get-query-execution.ndjson]
	// snowflake           100 queries  100 events [snowflake/query_history.csv snowflake/access_history.csv]
	// duckdb-log          100 queries  100 events [duckdb/duckdb_log_contexts.csv duckdb/duckdb_log_entries.csv]
	// iceberg-scanreport  100 queries  102 events [icebergscan/scan-reports.ndjson]
	// 1002 events in all
}
