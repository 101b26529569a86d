package athena_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
)

const fixtures = "../../testdata/logs/athena"

type result struct {
	events []collectors.QueryEvent
	bad    []collectors.BadRecord
}

func parse(t testing.TB, p collectors.Parser, name string, data []byte) result {
	t.Helper()
	var res result
	err := p.Parse(context.Background(), name, bytes.NewReader(data),
		func(e collectors.QueryEvent) error { res.events = append(res.events, e); return nil },
		func(b collectors.BadRecord) error { res.bad = append(res.bad, b); return nil })
	require.NoError(t, err)
	return res
}

func parseFile(t testing.TB, p collectors.Parser, file string) result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, file))
	require.NoError(t, err)
	require.True(t, p.Detect(file, data), "detect %s", file)
	return parse(t, p, file, data)
}

func TestAPIParserBatchGet(t *testing.T) {
	res := parseFile(t, athena.APIParser{}, "batch_get_query_execution.json")
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
	ev := res.events[0]
	require.Equal(t, "athena-api", ev.Source)
	require.Equal(t, collectors.EngineAthena, ev.Engine)
	require.Equal(t, "a1b2c3d4-5678-90ab-cdef-111122223333", ev.QueryID)
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 30, 123_000_000, time.UTC), ev.StartTime)
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 33, 500_000_000, time.UTC), ev.EndTime)
	require.Equal(t, time.UTC, ev.StartTime.Location())
	require.Equal(t, collectors.StateSucceeded, ev.State)
	require.Equal(t, "SELECT", ev.StatementType)
	require.Contains(t, ev.SQL, `FROM "sales"."orders"`)
	require.True(t, ev.SQLTemplate)
	require.Equal(t, []string{"42"}, ev.Params)
	require.Equal(t, "awsdatacatalog", ev.DefaultCatalog)
	require.Equal(t, "sales", ev.DefaultSchema)
	require.Equal(t, "Athena engine version 3", ev.EngineVersion)
	require.Equal(t, collectors.QueryMetrics{ElapsedMs: 3377, QueuedMs: 120, BytesScanned: 73400320}, ev.Metrics)
	require.Empty(t, ev.Tables)
}

func TestAPIParserCLIForm(t *testing.T) {
	res := parseFile(t, athena.APIParser{}, "get_query_execution_cli.json")
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
	ev := res.events[0]
	require.Equal(t, "b2c3d4e5-6789-01ab-cdef-222233334444", ev.QueryID)
	require.Equal(t, collectors.StateFailed, ev.State)
	require.Equal(t, "CTAS", ev.StatementType)
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 30, 123_000_000, time.UTC), ev.StartTime)
	// The +02:00 completion time is the same instant in UTC.
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 31, 4_000_000, time.UTC), ev.EndTime)
	require.Equal(t, "awsdatacatalog", ev.DefaultCatalog, "absent catalog defaults")
	require.Equal(t, "sales", ev.DefaultSchema, "database is lower-cased")
	require.False(t, ev.SQLTemplate)
	require.Equal(t, int64(881), ev.Metrics.ElapsedMs)
	require.Zero(t, ev.Metrics.BytesScanned)
}

func TestAPIParserNDJSON(t *testing.T) {
	res := parseFile(t, athena.APIParser{}, "query_executions.ndjson")
	require.Len(t, res.events, 2, "the running query is skipped")
	byID := map[string]collectors.QueryEvent{}
	for _, e := range res.events {
		byID[e.QueryID] = e
	}

	prepared := byID["c3d4e5f6-0001-4a1b-9c2d-333344445555"]
	require.Equal(t, "SELECT", prepared.StatementType, "SubstatementType wins over the EXECUTE keyword")
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 40, 123_000_000, time.UTC), prepared.StartTime, "exponent form")
	require.Zero(t, prepared.Metrics.BytesScanned, "result reuse scans nothing")

	cancelled := byID["c3d4e5f6-0002-4a1b-9c2d-333344445555"]
	require.Equal(t, collectors.StateCancelled, cancelled.State)
	require.Equal(t, "s3tablescatalog/lake", cancelled.DefaultCatalog)
	require.Equal(t, int64(1048576000), cancelled.Metrics.BytesScanned)

	require.NotContains(t, byID, "c3d4e5f6-0003-4a1b-9c2d-333344445555")

	require.Len(t, res.bad, 2)
	require.Equal(t, 4, res.bad[0].Line)
	require.Equal(t, 5, res.bad[1].Line)
	require.Contains(t, res.bad[1].Reason, "QueryExecutionId")
}

func TestCloudTrailParser(t *testing.T) {
	res := parseFile(t, athena.CloudTrailParser{}, "cloudtrail.json")
	require.Len(t, res.events, 2, "failed call, GetQueryExecution and S3 records are skipped")
	ev := res.events[0]
	require.Equal(t, "cloudtrail", ev.Source)
	require.Equal(t, "a1b2c3d4-5678-90ab-cdef-111122223333", ev.QueryID)
	require.Equal(t, "alice", ev.User)
	require.Equal(t, time.Date(2024, 5, 1, 12, 51, 30, 0, time.UTC), ev.StartTime)
	require.True(t, ev.EndTime.IsZero())
	require.Equal(t, collectors.StateUnknown, ev.State)
	require.Equal(t, "SELECT", ev.StatementType)
	require.Equal(t, "awsdatacatalog", ev.DefaultCatalog)
	require.Equal(t, "sales", ev.DefaultSchema)
	require.Zero(t, ev.Metrics)

	param := res.events[1]
	require.Equal(t, "bob", param.User)
	require.True(t, param.SQLTemplate)
	require.Equal(t, []string{"42", "DATE '2024-04-01'"}, param.Params)
	require.Equal(t, "sales", param.DefaultSchema)

	require.Len(t, res.bad, 1)
	require.Contains(t, res.bad[0].Reason, "record 6")
	require.Contains(t, res.bad[0].Reason, "eventTime")
}

func TestCloudTrailNDJSON(t *testing.T) {
	line := `{"eventVersion":"1.09","eventTime":"2024-05-01T12:51:30Z","eventSource":"athena.amazonaws.com","eventName":"StartQueryExecution","userIdentity":{"arn":"arn:aws:iam::1:user/carol"},"requestParameters":{"queryString":"INSERT INTO t SELECT * FROM s"},"responseElements":{"queryExecutionId":"q1"}}`
	data := []byte(line + "\n" + line[:40] + "\n")
	p := athena.CloudTrailParser{}
	require.True(t, p.Detect("x.json", data))
	res := parse(t, p, "x.json", data)
	require.Len(t, res.events, 1)
	require.Equal(t, "INSERT", res.events[0].StatementType)
	require.Equal(t, "arn:aws:iam::1:user/carol", res.events[0].User)
	require.Len(t, res.bad, 1)
	require.Equal(t, 2, res.bad[0].Line)
}

func TestDetect(t *testing.T) {
	files := map[string]string{}
	for _, f := range []string{"batch_get_query_execution.json", "get_query_execution_cli.json", "query_executions.ndjson", "cloudtrail.json"} {
		data, err := os.ReadFile(filepath.Join(fixtures, f))
		require.NoError(t, err)
		files[f] = string(data)
	}
	tests := []struct {
		name       string
		head       string
		api, trail bool
	}{
		{"batch get", files["batch_get_query_execution.json"], true, false},
		{"cli", files["get_query_execution_cli.json"], true, false},
		{"ndjson", files["query_executions.ndjson"], true, false},
		{"cloudtrail", files["cloudtrail.json"], false, true},
		{"csv", "QUERY_ID,QUERY_TEXT\n1,select 1\n", false, false},
		{"empty", "", false, false},
		{"scan report", `{"report-type":"scan-report","table-name":"a.b"}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.api, athena.APIParser{}.Detect("f", []byte(tt.head)))
			require.Equal(t, tt.trail, athena.CloudTrailParser{}.Detect("f", []byte(tt.head)))
		})
	}
}

func TestStatementTypes(t *testing.T) {
	tests := []struct {
		sql, sub, want string
	}{
		{"select 1", "", "SELECT"},
		{"  -- c\n/* x */ (SELECT 1)", "", "SELECT"},
		{"WITH a AS (SELECT 1) SELECT * FROM a", "", "SELECT"},
		{"insert into t values (1)", "", "INSERT"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "", "MERGE"},
		{"UPDATE t SET a = 1", "", "UPDATE"},
		{"DELETE FROM t WHERE a = 1", "", "DELETE"},
		{"CREATE TABLE t WITH (format='PARQUET') AS SELECT 1", "", "CTAS"},
		{"CREATE TABLE t (a int)", "", "DDL"},
		{"DROP TABLE t", "", "DDL"},
		{"SHOW TABLES", "", "OTHER"},
		{"EXECUTE s USING 1", "INSERT", "INSERT"},
		{"", "", "OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.want+"/"+tt.sql, func(t *testing.T) {
			body := `{"QueryExecutionId":"q","Query":` + quote(tt.sql) + `,"SubstatementType":"` + tt.sub + `","Status":{"SubmissionDateTime":1}}`
			res := parse(t, athena.APIParser{}, "f", []byte(body))
			require.Empty(t, res.bad)
			require.Len(t, res.events, 1)
			require.Equal(t, tt.want, res.events[0].StatementType)
		})
	}
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func TestParseStopsOnEmitError(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "query_executions.ndjson"))
	require.NoError(t, err)
	stop := errors.New("stop")
	n := 0
	err = athena.APIParser{}.Parse(context.Background(), "f", bytes.NewReader(data),
		func(collectors.QueryEvent) error { n++; return stop },
		func(collectors.BadRecord) error { return nil })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = athena.APIParser{}.Parse(ctx, "f", bytes.NewReader(data),
		func(collectors.QueryEvent) error { return nil },
		func(collectors.BadRecord) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}

func TestStateAndFallbacks(t *testing.T) {
	body := `{"QueryExecutionId":"q","Query":"SELECT * FROM orders WHERE note = 'why?'","Status":{"SubmissionDateTime":1714564800},"Statistics":{"EngineExecutionTimeInMillis":1200}}`
	res := parse(t, athena.APIParser{}, "f", []byte(body))
	require.Len(t, res.events, 1)
	ev := res.events[0]
	require.Equal(t, collectors.StateUnknown, ev.State, "no state given")
	require.True(t, ev.EndTime.IsZero())
	require.False(t, ev.SQLTemplate, "a ? inside a string literal is not a placeholder")
	require.Equal(t, int64(1200), ev.Metrics.ElapsedMs, "engine time when total is missing")
}

func TestUnprocessedIDs(t *testing.T) {
	body := `{"QueryExecutions":[{"QueryExecutionId":"q1","Status":{"SubmissionDateTime":1714564800}}],"UnprocessedQueryExecutionIds":[{"QueryExecutionId":"q2","ErrorCode":"INVALID_INPUT","ErrorMessage":"QueryExecution q2 was not found"}]}`
	res := parse(t, athena.APIParser{}, "u.json", []byte(body))
	require.Len(t, res.events, 1)
	require.Len(t, res.bad, 1)
	require.Equal(t, 1, res.bad[0].Line)
	require.Equal(t, "query execution q2 was not returned (INVALID_INPUT: QueryExecution q2 was not found)", res.bad[0].Reason)
}

func TestArrayAndBadArray(t *testing.T) {
	good := `[{"QueryExecution":{"QueryExecutionId":"q1","Status":{"SubmissionDateTime":"2024-05-01T12:00:00Z"}}},{"QueryExecutionId":"q2","Status":{"SubmissionDateTime":1714564800}}]`
	res := parse(t, athena.APIParser{}, "a.json", []byte(good))
	require.Empty(t, res.bad)
	require.Len(t, res.events, 2)
	require.Equal(t, res.events[0].StartTime, res.events[1].StartTime)

	res = parse(t, athena.APIParser{}, "a.json", []byte(good[:len(good)-30]))
	require.Len(t, res.events, 1)
	require.Len(t, res.bad, 1)
	require.Equal(t, 2, res.bad[0].Index)
}

// TestByteOrderMark reads an API response saved by a Windows tool, which
// starts the file with a UTF-8 byte order mark.
func TestByteOrderMark(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "get_query_execution_cli.json"))
	require.NoError(t, err)
	withBOM := append([]byte("\ufeff"), data...)
	require.True(t, athena.APIParser{}.Detect("f.json", withBOM))
	res := parse(t, athena.APIParser{}, "f.json", withBOM)
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
}
