package athena_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"batch_get_query_execution.json", "get_query_execution_cli.json", "query_executions.ndjson", "cloudtrail.json"} {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"QueryExecutionId":"q","Status":{"SubmissionDateTime":"1e400"}}`))
	// A byte order mark, and several documents in one file.
	f.Add([]byte("\ufeff{\n \"QueryExecution\": {\"QueryExecutionId\": \"q\", \"Status\": {\"SubmissionDateTime\": 1}}\n}\n"))
	f.Add([]byte(`[{"QueryExecutionId":"a","Status":{"SubmissionDateTime":1}}]` + "\n" + `[{"QueryExecutionId":"b","Status":{"SubmissionDateTime":2}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []collectors.Parser{athena.APIParser{}, athena.CloudTrailParser{}} {
			_ = p.Detect("f", data)
			err := p.Parse(context.Background(), "f", bytes.NewReader(data),
				func(e collectors.QueryEvent) error {
					if e.QueryID == "" || e.StartTime.IsZero() {
						t.Fatalf("event without id or start time: %+v", e)
					}
					if e.StartTime.Location() != time.UTC {
						t.Fatalf("start time not UTC: %v", e.StartTime)
					}
					return nil
				},
				func(collectors.BadRecord) error { return nil })
			if err != nil {
				t.Fatalf("parse returned %v on in-memory input", err)
			}
		}
	})
}
