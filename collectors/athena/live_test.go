package athena_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsathena "github.com/aws/aws-sdk-go-v2/service/athena"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
)

// fakeAthena speaks Athena's awsJson1_1 protocol for ListQueryExecutions
// and BatchGetQueryExecution over a fixed history, newest first.
type fakeAthena struct {
	t  *testing.T
	mu sync.Mutex
	// execs is newest first, as the service lists them.
	execs       []map[string]any
	unprocessed []string
	calls       map[string]int
	workgroups  []string
}

func newFakeAthena(t *testing.T, n int, base time.Time) *fakeAthena {
	f := &fakeAthena{t: t, calls: map[string]int{}}
	for i := n - 1; i >= 0; i-- {
		sub := base.Add(time.Duration(i) * time.Minute)
		f.execs = append(f.execs, map[string]any{
			"QueryExecutionId": fmt.Sprintf("q%03d", i),
			"Query":            fmt.Sprintf("SELECT * FROM orders WHERE customer_id = %d", i),
			"StatementType":    "DML",
			"SubstatementType": "SELECT",
			"QueryExecutionContext": map[string]any{
				"Database": "sales", "Catalog": "AwsDataCatalog",
			},
			"Status": map[string]any{
				"State":              "SUCCEEDED",
				"SubmissionDateTime": float64(sub.UnixMilli()) / 1000,
				"CompletionDateTime": float64(sub.Add(1500*time.Millisecond).UnixMilli()) / 1000,
			},
			"Statistics": map[string]any{"DataScannedInBytes": 1000 + i, "TotalExecutionTimeInMillis": 1500, "QueryQueueTimeInMillis": 10},
			"WorkGroup":  "analysts",
		})
	}
	return f
}

func (f *fakeAthena) setState(id, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.execs {
		if e["QueryExecutionId"] == id {
			st := e["Status"].(map[string]any)
			st["State"] = state
			if state == "RUNNING" {
				delete(st, "CompletionDateTime")
			}
		}
	}
}

func (f *fakeAthena) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		require.NoError(f.t, json.NewEncoder(w).Encode(v))
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		reply(400, map[string]string{"__type": "InvalidRequestException", "Message": "bad request shape"})
		return
	}
	if r.Header.Get("Authorization") == "" {
		reply(403, map[string]string{"__type": "UnrecognizedClientException", "Message": "unsigned"})
		return
	}
	target := r.Header.Get("X-Amz-Target")
	f.calls[target]++
	var in struct {
		MaxResults        int
		NextToken         string
		WorkGroup         string
		QueryExecutionIds []string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		reply(400, map[string]string{"__type": "InvalidRequestException", "Message": err.Error()})
		return
	}
	switch target {
	case "AmazonAthena.ListWorkGroups":
		all := []map[string]any{
			{"Name": "primary", "State": "ENABLED"},
			{"Name": "analysts", "State": "ENABLED", "Description": "BI"},
			{"Name": "retired", "State": "DISABLED"},
		}
		if in.NextToken == "" {
			reply(200, map[string]any{"WorkGroups": all[:2], "NextToken": "2"})
		} else {
			reply(200, map[string]any{"WorkGroups": all[2:]})
		}
	case "AmazonAthena.ListQueryExecutions":
		f.workgroups = append(f.workgroups, in.WorkGroup)
		if in.MaxResults < 1 || in.MaxResults > 50 {
			reply(400, map[string]string{"__type": "InvalidRequestException", "Message": "MaxResults out of range"})
			return
		}
		start := 0
		if in.NextToken != "" {
			start, _ = strconv.Atoi(in.NextToken)
		}
		end := min(start+in.MaxResults, len(f.execs))
		out := map[string]any{"QueryExecutionIds": []string{}}
		ids := []string{}
		for _, e := range f.execs[start:end] {
			ids = append(ids, e["QueryExecutionId"].(string))
		}
		out["QueryExecutionIds"] = ids
		if end < len(f.execs) {
			out["NextToken"] = strconv.Itoa(end)
		}
		reply(200, out)
	case "AmazonAthena.BatchGetQueryExecution":
		if len(in.QueryExecutionIds) < 1 || len(in.QueryExecutionIds) > 50 {
			reply(400, map[string]string{"__type": "InvalidRequestException", "Message": "1 to 50 ids"})
			return
		}
		var found []map[string]any
		var unprocessed []map[string]any
		for _, id := range in.QueryExecutionIds {
			if contains(f.unprocessed, id) {
				unprocessed = append(unprocessed, map[string]any{"QueryExecutionId": id, "ErrorCode": "INTERNAL_ERROR", "ErrorMessage": "try again"})
				continue
			}
			for _, e := range f.execs {
				if e["QueryExecutionId"] == id {
					found = append(found, e)
				}
			}
		}
		reply(200, map[string]any{"QueryExecutions": found, "UnprocessedQueryExecutionIds": unprocessed})
	default:
		reply(400, map[string]string{"__type": "UnknownOperationException", "Message": target})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func newClient(t *testing.T, h http.Handler) *awsathena.Client {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return awsathena.New(awsathena.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		RetryMaxAttempts: 1,
	})
}

func TestPoll(t *testing.T) {
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	fake := newFakeAthena(t, 120, base)
	client := newClient(t, fake)
	ctx := context.Background()

	t.Run("all history pages through every id", func(t *testing.T) {
		events, next, err := athena.Poll(ctx, client, "analysts", time.Time{})
		require.NoError(t, err)
		require.Len(t, events, 120)
		require.Equal(t, "q000", events[0].QueryID, "oldest first")
		require.Equal(t, "q119", events[119].QueryID)
		require.Equal(t, base.Add(119*time.Minute), next)
		require.Equal(t, 3, fake.calls["AmazonAthena.ListQueryExecutions"])
		require.Equal(t, 3, fake.calls["AmazonAthena.BatchGetQueryExecution"])
		require.Equal(t, []string{"analysts", "analysts", "analysts"}, fake.workgroups)
		ev := events[7]
		require.Equal(t, "athena-api", ev.Source)
		require.Equal(t, collectors.StateSucceeded, ev.State)
		require.Equal(t, base.Add(7*time.Minute), ev.StartTime)
		require.Equal(t, base.Add(7*time.Minute+1500*time.Millisecond), ev.EndTime)
		require.Equal(t, int64(1007), ev.Metrics.BytesScanned)
		require.Equal(t, "awsdatacatalog", ev.DefaultCatalog)
		require.Equal(t, "sales", ev.DefaultSchema)
	})

	t.Run("watermark stops paging at the first page reaching it", func(t *testing.T) {
		clear(fake.calls)
		events, next, err := athena.Poll(ctx, client, "analysts", base.Add(100*time.Minute))
		require.NoError(t, err)
		require.Len(t, events, 19)
		require.Equal(t, "q101", events[0].QueryID)
		require.Equal(t, base.Add(119*time.Minute), next)
		require.Equal(t, 1, fake.calls["AmazonAthena.ListQueryExecutions"])
		require.Equal(t, 1, fake.calls["AmazonAthena.BatchGetQueryExecution"])
	})

	t.Run("running query holds the watermark below it", func(t *testing.T) {
		fake.setState("q115", "RUNNING")
		events, next, err := athena.Poll(ctx, client, "analysts", base.Add(100*time.Minute))
		require.NoError(t, err)
		require.Len(t, events, 18)
		for _, e := range events {
			require.NotEqual(t, "q115", e.QueryID)
		}
		require.Equal(t, base.Add(115*time.Minute-time.Nanosecond), next)

		fake.setState("q115", "FAILED")
		events, next, err = athena.Poll(ctx, client, "analysts", next)
		require.NoError(t, err)
		require.Len(t, events, 5)
		require.Equal(t, "q115", events[0].QueryID)
		require.Equal(t, collectors.StateFailed, events[0].State)
		require.Equal(t, base.Add(119*time.Minute), next)
	})

	t.Run("nothing new keeps the watermark", func(t *testing.T) {
		mark := base.Add(119 * time.Minute)
		events, next, err := athena.Poll(ctx, client, "analysts", mark)
		require.NoError(t, err)
		require.Empty(t, events)
		require.Equal(t, mark, next)
	})

	t.Run("unprocessed ids fail the poll", func(t *testing.T) {
		fake.mu.Lock()
		fake.unprocessed = []string{"q110"}
		fake.mu.Unlock()
		defer func() { fake.mu.Lock(); fake.unprocessed = nil; fake.mu.Unlock() }()
		mark := base.Add(100 * time.Minute)
		events, next, err := athena.Poll(ctx, client, "analysts", mark)
		require.ErrorContains(t, err, "q110 (INTERNAL_ERROR: try again)")
		require.Nil(t, events)
		require.Equal(t, mark, next)
	})
}

func TestWorkgroups(t *testing.T) {
	fake := newFakeAthena(t, 0, time.Time{})
	names, err := athena.Workgroups(context.Background(), newClient(t, fake))
	require.NoError(t, err)
	require.Equal(t, []string{"primary", "analysts", "retired"}, names)
	require.Equal(t, 2, fake.calls["AmazonAthena.ListWorkGroups"])
}

func TestPollServiceError(t *testing.T) {
	client := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"__type":"InvalidRequestException","Message":"WorkGroup nope is not found"}`))
	}))
	_, _, err := athena.Poll(context.Background(), client, "nope", time.Time{})
	require.ErrorContains(t, err, "list athena query executions of workgroup nope")
	require.ErrorContains(t, err, "WorkGroup nope is not found")
}

func TestPollCancelled(t *testing.T) {
	fake := newFakeAthena(t, 3, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	client := newClient(t, fake)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := athena.Poll(ctx, client, "", time.Time{})
	require.ErrorIs(t, err, context.Canceled)
}
