package snowflake_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/snowflake"
	"github.com/floe-project/floe/collectors/snowflake/snowfake"
)

// testKey is one RSA key for every test of the binary: generating one
// takes a while, and no test depends on its value.
var testKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

func keyPair(t *testing.T) (*rsa.PrivateKey, snowflake.Secret) {
	t.Helper()
	k, err := testKey()
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	return k, snowflake.Secret(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// clock is a settable clock shared by a fake and a client.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// history is n queries a minute apart from t0, each filtering orders on
// customer_id and projecting amount.
func history(n int) []snowfake.Query {
	qs := make([]snowfake.Query, n)
	for i := range qs {
		qs[i] = snowfake.Query{
			ID:                fmt.Sprintf("01b0-%03d", i),
			Text:              fmt.Sprintf("SELECT amount FROM orders WHERE customer_id = %d", i),
			Database:          "SALES",
			Schema:            "PUBLIC",
			User:              "ANALYST",
			QueryType:         "SELECT",
			Start:             t0.Add(time.Duration(i) * time.Minute),
			Elapsed:           1500 * time.Millisecond,
			BytesScanned:      int64(1000 + i),
			PartitionsScanned: 2, PartitionsTotal: 10,
			Base:   []snowfake.Object{{Name: "SALES.PUBLIC.ORDERS", Columns: []string{"AMOUNT", "CUSTOMER_ID"}}},
			Direct: []snowfake.Object{{Name: "SALES.PUBLIC.ORDERS", Columns: []string{"AMOUNT"}}},
		}
	}
	return qs
}

type setup struct {
	fake   *snowfake.Fake
	client *snowflake.Client
	clock  *clock
}

// newSetup starts a fake accepting the test key and a client of it, on one
// clock an hour after t0, with fast retries.
func newSetup(t *testing.T, fo snowfake.Options, edit func(*snowflake.ClientOptions)) setup {
	t.Helper()
	k, pemKey := keyPair(t)
	clk := &clock{now: t0.Add(time.Hour)}
	fo.PublicKey = &k.PublicKey
	if fo.Now == nil {
		fo.Now = clk.Now
	}
	fake := snowfake.New(t, fo)
	co := snowflake.ClientOptions{
		Account:        fake.Account(),
		URL:            fake.URL(),
		User:           fake.User(),
		PrivateKeyPEM:  pemKey,
		Now:            clk.Now,
		StatusInterval: time.Millisecond,
		RetryBackoff:   time.Millisecond,
	}
	if edit != nil {
		edit(&co)
	}
	client, err := snowflake.NewClient(co)
	require.NoError(t, err)
	return setup{fake: fake, client: client, clock: clk}
}

var live = snowflake.PollOptions{Settle: time.Nanosecond}

func ids(evs []collectors.QueryEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.QueryID
	}
	return out
}

func TestPollPagesAcrossPartitions(t *testing.T) {
	s := newSetup(t, snowfake.Options{PartitionRows: 3}, nil)
	qs := history(8)
	s.fake.AddQueries(qs...)

	evs, mark, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 8)
	require.Equal(t, qs[7].Start, mark)
	for i, e := range evs {
		require.Equal(t, qs[i].ID, e.QueryID)
		require.Equal(t, qs[i].Start, e.StartTime)
	}
	var parts []string
	for _, r := range s.fake.Requests() {
		if r.Method == http.MethodGet {
			parts = append(parts, r.Partition)
		}
	}
	require.Equal(t, []string{"1", "2"}, parts, "partitions 1 and 2 read after the first came with the statement")

	e := evs[3]
	require.Equal(t, collectors.StateSucceeded, e.State)
	require.Equal(t, "SELECT amount FROM orders WHERE customer_id = 3", e.SQL)
	require.Equal(t, int64(1500), e.Metrics.ElapsedMs)
	require.Equal(t, int64(1003), e.Metrics.BytesScanned)
	require.Equal(t, qs[3].Start.Add(1500*time.Millisecond), e.EndTime)
	require.Len(t, e.Tables, 1)
	require.Equal(t, "ORDERS", e.Tables[0].Name)
	require.Equal(t, []collectors.ColumnUse{
		{Name: "CUSTOMER_ID", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceAccessHistory},
		{Name: "AMOUNT", Roles: []collectors.Role{collectors.RoleProjection}, Evidence: collectors.EvidenceAccessHistory},
	}, e.Tables[0].Columns)
}

// TestPollMatchesExport checks that a polled row and the same row in an
// export file give the same event.
func TestPollMatchesExport(t *testing.T) {
	s := newSetup(t, snowfake.Options{}, nil)
	q := history(1)[0]
	q.Status, q.ErrorCode, q.ErrorMessage = "FAIL", "000604", "SQL execution canceled"
	s.fake.AddQueries(q)
	evs, _, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 1)

	export := fmt.Sprintf(`{"QUERY_ID":%q,"QUERY_TEXT":%q,"DATABASE_NAME":"SALES","SCHEMA_NAME":"PUBLIC","QUERY_TYPE":"SELECT",`+
		`"USER_NAME":"ANALYST","EXECUTION_STATUS":"FAIL","ERROR_CODE":"000604","ERROR_MESSAGE":"SQL execution canceled",`+
		`"START_TIME":"2026-05-01 12:00:00.000 +0000","END_TIME":"2026-05-01 12:00:01.500 +0000","TOTAL_ELAPSED_TIME":1500,`+
		`"BYTES_SCANNED":1000,"PARTITIONS_SCANNED":2,"PARTITIONS_TOTAL":10,"QUEUED_OVERLOAD_TIME":0,"QUEUED_PROVISIONING_TIME":0,`+
		`"QUEUED_REPAIR_TIME":0,"RELEASE_VERSION":"8.20.1","ROOT_QUERY_ID":null,`+
		`"BASE_OBJECTS_ACCESSED":[{"objectDomain":"Table","objectName":"SALES.PUBLIC.ORDERS","columns":[{"columnName":"AMOUNT"},{"columnName":"CUSTOMER_ID"}]}],`+
		`"DIRECT_OBJECTS_ACCESSED":[{"objectDomain":"Table","objectName":"SALES.PUBLIC.ORDERS","columns":[{"columnName":"AMOUNT"}]}],"OBJECTS_MODIFIED":[]}`,
		q.ID, q.Text)
	res := &result{}
	require.NoError(t, snowflake.Parser{}.Parse(context.Background(), "export.ndjson", strings.NewReader(export), res.emit, res.addBad))
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
	require.Equal(t, res.events[0], evs[0])
	require.Equal(t, collectors.StateCancelled, evs[0].State)
}

func TestPollThrottled(t *testing.T) {
	t.Run("429 then success, one statement", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{PartitionRows: 2}, nil)
		s.fake.AddQueries(history(3)...)
		s.fake.Throttle(2)
		evs, _, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{"01b0-000", "01b0-001", "01b0-002"}, ids(evs))
		reqs := s.fake.Requests()
		require.Equal(t, []int{429, 429, 200, 200}, statuses(reqs))
		require.Equal(t, []string{"", "true", "true"}, []string{reqs[0].Retry, reqs[1].Retry, reqs[2].Retry}, "a resubmitted statement says retry=true")
		require.Equal(t, reqs[0].RequestID, reqs[2].RequestID, "and keeps its requestId, so Snowflake runs it once")
	})
	t.Run("throttled past every retry", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{}, func(o *snowflake.ClientOptions) { o.Retries = 2 })
		s.fake.AddQueries(history(3)...)
		s.fake.Throttle(10)
		mark := t0.Add(-time.Minute)
		evs, next, err := snowflake.Poll(context.Background(), s.client, live, mark)
		require.ErrorIs(t, err, snowflake.ErrUnavailable)
		require.ErrorContains(t, err, "HTTP 429")
		require.Empty(t, evs)
		require.Equal(t, mark, next)
		require.Len(t, s.fake.Requests(), 3)
	})
}

func statuses(reqs []snowfake.Request) []int {
	out := make([]int, len(reqs))
	for i, r := range reqs {
		out[i] = r.Status
	}
	return out
}

func TestPollStatementStillRunning(t *testing.T) {
	s := newSetup(t, snowfake.Options{PartitionRows: 2}, nil)
	s.fake.AddQueries(history(3)...)
	s.fake.Stall(3)
	evs, _, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 3)
	require.Equal(t, []int{202, 202, 202, 200, 200}, statuses(s.fake.Requests()))

	t.Run("longer than its timeout", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{}, func(o *snowflake.ClientOptions) {
			o.StatementTimeout = time.Second
			o.StatusInterval = 250 * time.Millisecond
		})
		s.fake.Stall(100)
		_, _, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
		require.ErrorContains(t, err, "still running after 1s")
	})
}

func TestPollCredentials(t *testing.T) {
	t.Run("jwt re-signed before it expires", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{}, nil)
		s.fake.AddQueries(history(2)...)
		_, mark, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
		require.NoError(t, err)
		s.clock.Advance(2 * time.Hour)
		s.fake.AddQueries(snowfake.Query{ID: "late", Text: "SELECT 1", Status: "SUCCESS", Start: t0.Add(time.Hour)})
		evs, _, err := snowflake.Poll(context.Background(), s.client, live, mark)
		require.NoError(t, err, "a client keeping its first JWT would be refused now")
		require.Equal(t, []string{"late"}, ids(evs))
		reqs := s.fake.Requests()
		require.NotEqual(t, reqs[0].Token, reqs[len(reqs)-1].Token)
		require.Equal(t, snowflake.TokenTypeKeyPairJWT, reqs[0].TokenType)
	})
	t.Run("jwt expired by the server's clock", func(t *testing.T) {
		srv := &clock{now: t0.Add(5 * time.Hour)}
		s := newSetup(t, snowfake.Options{Now: srv.Now}, nil)
		mark := t0
		_, next, err := snowflake.Poll(context.Background(), s.client, live, mark)
		require.ErrorIs(t, err, snowflake.ErrAuth)
		require.ErrorContains(t, err, "snowflake account FLOE-TEST")
		require.ErrorContains(t, err, "390198 Keypair access token expired")
		require.Equal(t, mark, next)
		require.Len(t, s.fake.Requests(), 1, "credentials are not retried")
	})
	t.Run("key not the user's", func(t *testing.T) {
		other, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		der, err := x509.MarshalPKCS8PrivateKey(other)
		require.NoError(t, err)
		s := newSetup(t, snowfake.Options{}, func(o *snowflake.ClientOptions) {
			o.PrivateKeyPEM = snowflake.Secret(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		})
		_, _, err = snowflake.Poll(context.Background(), s.client, live, t0)
		require.ErrorIs(t, err, snowflake.ErrAuth)
		require.ErrorContains(t, err, "390144 JWT token is invalid")
	})
	t.Run("oauth expired", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{OAuthTokens: map[string]time.Time{"tok-old": t0, "tok-new": t0.Add(24 * time.Hour)}},
			func(o *snowflake.ClientOptions) { o.PrivateKeyPEM, o.User, o.OAuthToken = "", "", "tok-old" })
		_, _, err := snowflake.Poll(context.Background(), s.client, live, t0)
		require.ErrorIs(t, err, snowflake.ErrAuth)
		require.ErrorContains(t, err, "snowflake account FLOE-TEST: HTTP 401: 390318 OAuth access token expired")
		require.NotContains(t, err.Error(), "tok-old")
	})
	t.Run("oauth", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{OAuthTokens: map[string]time.Time{"tok-new": t0.Add(24 * time.Hour)}},
			func(o *snowflake.ClientOptions) { o.PrivateKeyPEM, o.User, o.OAuthToken = "", "", "tok-new" })
		s.fake.AddQueries(history(2)...)
		evs, _, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.Equal(t, snowflake.TokenTypeOAuth, s.fake.Requests()[0].TokenType)
		require.NoError(t, s.client.Check(context.Background()))
	})
}

// refuseAfter is a transport that takes the fake down (connections
// refused) once the statement's first answer has arrived, so the
// partitions after it cannot be read.
type refuseAfter struct {
	fake *snowfake.Fake
	next http.RoundTripper
}

func (r refuseAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	rsp, err := r.next.RoundTrip(req)
	if req.Method == http.MethodPost {
		r.fake.Down(snowfake.Refused)
	}
	return rsp, err
}

func TestPollSourceGoesAway(t *testing.T) {
	for _, tc := range []struct {
		name   string
		outage snowfake.Outage
		want   string
	}{
		{"503", snowfake.Unavailable, "HTTP 503"},
		{"connection refused", snowfake.Refused, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, snowfake.Options{}, nil)
			s.fake.AddQueries(history(4)...)
			s.fake.Down(tc.outage)
			mark := t0.Add(-time.Second)
			evs, next, err := snowflake.Poll(context.Background(), s.client, live, mark)
			require.ErrorIs(t, err, snowflake.ErrUnavailable)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "FLOE-TEST")
			require.Empty(t, evs)
			require.Equal(t, mark, next)

			s.fake.Down(snowfake.Up)
			evs, _, err = snowflake.Poll(context.Background(), s.client, live, next)
			require.NoError(t, err)
			require.Len(t, evs, 4, "nothing was skipped")
		})
	}
	t.Run("between partitions", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{PartitionRows: 2}, nil)
		fake := s.fake
		client, err := snowflake.NewClient(snowflake.ClientOptions{
			Account: fake.Account(), URL: fake.URL(), User: fake.User(), PrivateKeyPEM: secretOf(t),
			Now: s.clock.Now, RetryBackoff: time.Millisecond, Retries: 1,
			HTTPClient: &http.Client{Transport: refuseAfter{next: http.DefaultTransport, fake: fake}},
		})
		require.NoError(t, err)
		fake.AddQueries(history(5)...)
		evs, next, err := snowflake.Poll(context.Background(), client, live, t0.Add(-time.Second))
		require.ErrorIs(t, err, snowflake.ErrUnavailable)
		require.ErrorContains(t, err, "partition 2 of 3")
		require.Empty(t, evs, "no partial batch")
		require.Equal(t, t0.Add(-time.Second), next, "no partial watermark advance")
	})
}

func secretOf(t *testing.T) snowflake.Secret {
	_, s := keyPair(t)
	return s
}

func TestPollWatermark(t *testing.T) {
	t.Run("re-polling returns each query once, ties kept together", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{PartitionRows: 2}, nil)
		qs := history(7)
		qs[3].Start = qs[2].Start // a tie across the first batch's end
		qs[4].Start = qs[2].Start
		s.fake.AddQueries(qs...)
		var got []string
		mark := time.Time{}
		for range 10 {
			evs, next, err := snowflake.Poll(context.Background(), s.client, snowflake.PollOptions{BatchSize: 3, Settle: time.Nanosecond}, mark)
			require.NoError(t, err)
			require.False(t, next.Before(mark))
			got = append(got, ids(evs)...)
			mark = next
		}
		require.Equal(t, ids(eventsOf(qs)), got)
	})
	t.Run("a running query holds the watermark", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{}, nil)
		qs := history(3)
		qs[1].Status = "RUNNING"
		s.fake.AddQueries(qs...)
		evs, mark, err := snowflake.Poll(context.Background(), s.client, live, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{"01b0-000", "01b0-002"}, ids(evs))
		require.Equal(t, qs[1].Start.Add(-time.Nanosecond), mark)
		s.fake.SetStatus(qs[1].ID, "SUCCESS")
		evs, _, err = snowflake.Poll(context.Background(), s.client, live, mark)
		require.NoError(t, err)
		require.Equal(t, []string{"01b0-001", "01b0-002"}, ids(evs), "the finished query, and the one after it again (deduplicated downstream)")
	})
	t.Run("settle leaves young queries for later", func(t *testing.T) {
		s := newSetup(t, snowfake.Options{}, nil) // clock is t0+1h
		qs := history(3)
		qs[2].Start = t0.Add(50 * time.Minute)
		s.fake.AddQueries(qs...)
		evs, mark, err := snowflake.Poll(context.Background(), s.client, snowflake.PollOptions{}, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{"01b0-000", "01b0-001"}, ids(evs), "default settle is 45 minutes")
		s.clock.Advance(time.Hour)
		evs, _, err = snowflake.Poll(context.Background(), s.client, snowflake.PollOptions{}, mark)
		require.NoError(t, err)
		require.Equal(t, []string{"01b0-002"}, ids(evs))
	})
}

func eventsOf(qs []snowfake.Query) []collectors.QueryEvent {
	out := make([]collectors.QueryEvent, len(qs))
	for i, q := range qs {
		out[i] = collectors.QueryEvent{QueryID: q.ID}
	}
	return out
}

func TestClientOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts snowflake.ClientOptions
		want []string
	}{
		{"nothing", snowflake.ClientOptions{}, []string{"account is required", "one of private key and oauth token is required"}},
		{"both credentials, no user", snowflake.ClientOptions{Account: "A", PrivateKeyPEM: "k", OAuthToken: "t"}, []string{"exclusive"}},
		{"key without user", snowflake.ClientOptions{Account: "A", PrivateKeyPEM: "k"}, []string{"user is required"}},
		{"bad tunables", snowflake.ClientOptions{Account: "A", OAuthToken: "t", URL: "ftp://x", JWTLifetime: 2 * time.Hour, Retries: -1},
			[]string{`url "ftp://x"`, "jwt lifetime 2h0m0s", "retries -1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	_, err := snowflake.NewClient(snowflake.ClientOptions{Account: "A", User: "U", PrivateKeyPEM: "not pem"})
	require.ErrorContains(t, err, "no PEM block")
	require.NoError(t, snowflake.ClientOptions{Account: "A", OAuthToken: "t"}.Validate())
}

func TestSecretsNotPrinted(t *testing.T) {
	_, key := keyPair(t)
	opts := snowflake.ClientOptions{Account: "A", User: "U", PrivateKeyPEM: key, OAuthToken: "tok-secret"}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, opts)
		require.NotContains(t, out, "PRIVATE KEY", format)
		require.NotContains(t, out, "tok-secret", format)
	}
}

func TestJWTAccountAndFingerprint(t *testing.T) {
	require.Equal(t, "XY12345", snowflake.JWTAccount("xy12345.us-east-1"))
	require.Equal(t, "MYORG-MYACCOUNT", snowflake.JWTAccount("myorg-myaccount"))
	k, _ := keyPair(t)
	fp, err := snowflake.Fingerprint(&k.PublicKey)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(fp, "SHA256:"))
	require.Len(t, fp, len("SHA256:")+44, "base64 of 32 bytes")
	require.False(t, bytes.ContainsAny([]byte(fp), "\n "))
}
