package collectors_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/collectors/trino"
)

// Collect a directory of Trino event-listener logs: formats are detected
// per file, duplicates (a Kafka redelivery) dropped and bad lines counted.
func ExampleCollect() {
	parsers := []collectors.Parser{trino.EventParser{}, trino.RuntimeParser{}, spark.EventLogParser{}}
	n := 0
	st, err := collectors.Collect(context.Background(), parsers, collectors.CollectOptions{},
		[]string{filepath.Join("..", "testdata", "logs", "trino")},
		func(ev collectors.QueryEvent) error {
			n++
			return nil
		})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(n, "events,", st.Duplicates, "duplicates,", st.BadRecords, "bad records")
	fmt.Println("first bad record at line", st.Bad[0].Line, "of", filepath.Base(st.Bad[0].File))
	// Output:
	// 12 events, 7 duplicates, 3 bad records
	// first bad record at line 2 of http-events-bad.ndjson
}
