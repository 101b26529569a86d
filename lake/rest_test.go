package lake_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/restfake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// restLake is a REST catalog (restfake over a local warehouse) opened the
// way floe opens catalogs.
type restLake struct {
	w   *testlake.Warehouse
	s   *restfake.Server
	cat catalog.Catalog
}

func newRESTLake(t *testing.T, opts restfake.Options, props map[string]string) *restLake {
	t.Helper()
	w := testlake.NewLocal(t)
	opts.Backend = w.Catalog
	s := restfake.New(t, opts)
	p := map[string]string{"type": "rest", "uri": s.URL}
	for k, v := range props {
		p[k] = v
	}
	cat, err := lake.OpenCatalog(context.Background(), "lake", p)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cat.(catalog.Closer).Close()) })
	return &restLake{w: w, s: s, cat: cat}
}

// table creates db.name in the backing warehouse with one commit of rows
// and loads it through the REST catalog.
func (l *restLake) table(t *testing.T, ns, name string) *table.Table {
	t.Helper()
	tbl := l.w.CreateTable(t, ns, name, schema, nil, nil, nil)
	testlake.Append(t, tbl, batch(t, testlake.ArrowSchema(t, tbl), 0, 9, "eu", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
	got, err := lake.LoadTable(context.Background(), l.cat, lake.Ident{Catalog: "lake", Namespace: []string{ns}, Name: name})
	require.NoError(t, err)
	return got
}

func appendRows(t *testing.T, tbl *table.Table, lo, hi int64) (*table.Table, error) {
	t.Helper()
	rec := batch(t, testlake.ArrowSchema(t, tbl), lo, hi, "us", time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	defer rec.Release()
	return testlake.TryAppend(t, tbl, rec)
}

// floe lists every table of a REST catalog whose namespaces and tables
// come a page at a time.
func TestRESTListTablesWalksPages(t *testing.T) {
	l := newRESTLake(t, restfake.Options{PageSize: 2}, nil)
	var want []string
	for i := range 5 {
		ns := fmt.Sprintf("ns%d", i)
		for j := range 3 {
			l.w.CreateTable(t, ns, fmt.Sprintf("t%d", j), schema, nil, nil, nil)
			want = append(want, fmt.Sprintf("lake.%s.t%d", ns, j))
		}
	}
	ids, err := lake.ListTables(context.Background(), "lake", l.cat)
	require.NoError(t, err)
	var got []string
	for _, id := range ids {
		got = append(got, id.String())
	}
	require.Equal(t, want, got)
	// 5 namespaces, 2 a page: 3 pages, then each namespace asked for
	// namespaces under it (none).
	require.Equal(t, 3+5, l.s.Count(http.MethodGet, "/v1/namespaces", http.StatusOK))
	require.Equal(t, 2, l.s.Count(http.MethodGet, "/v1/namespaces/ns0/tables", http.StatusOK), "3 tables, 2 a page")
}

// What a REST catalog turns away is retried as far as it is safe to: a
// 429 on any request, a 5xx on a read; never a commit answered 5xx.
func TestRESTRetries(t *testing.T) {
	cases := []struct {
		name    string
		props   map[string]string
		fault   restfake.Fault
		op      string // load or commit
		wantErr error  // nil: the call succeeds
		// attempts is how many requests of the route the server answered
		// with the fault's status.
		attempts int
		commits  int
	}{
		{"503 on load", nil, restfake.Fault{Route: "load", Status: 503, Times: 2}, "load", nil, 2, 0},
		{"429 on load with Retry-After", nil, restfake.Fault{Route: "load", Status: 429, RetryAfter: "0", Times: 3}, "load", nil, 3, 0},
		{"500 on load", nil, restfake.Fault{Route: "load", Status: 500, Times: 1}, "load", nil, 1, 0},
		{"429 on commit", nil, restfake.Fault{Route: "commit", Status: 429, Times: 2}, "commit", nil, 2, 1},
		{"503 on commit is not retried", nil, restfake.Fault{Route: "commit", Status: 503, Times: 1}, "commit", rest.ErrCommitStateUnknown, 1, 0},
		{"retries are bounded", map[string]string{lake.PropRetries: "2"}, restfake.Fault{Route: "load", Status: 503, Times: 10}, "load", rest.ErrServiceUnavailable, 3, 0},
		{"no retries", map[string]string{lake.PropRetries: "0"}, restfake.Fault{Route: "load", Status: 429, Times: 1}, "load", rest.ErrRESTError, 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newRESTLake(t, restfake.Options{}, tc.props)
			tbl := l.table(t, "db", "t")
			l.s.Inject(tc.fault)
			var err error
			switch tc.op {
			case "load":
				_, err = lake.LoadTable(context.Background(), l.cat, lake.Ident{Catalog: "lake", Namespace: []string{"db"}, Name: "t"})
			case "commit":
				_, err = appendRows(t, tbl, 10, 19)
			}
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.wantErr)
			}
			route := map[string]string{"load": http.MethodGet, "commit": http.MethodPost}[tc.op]
			require.Equal(t, tc.attempts, l.s.Count(route, "/v1/namespaces/db/tables/t", tc.fault.Status))
			require.Equal(t, tc.commits, l.s.Commits())
		})
	}
}

// A Retry-After is waited for, and one that would outlast the call's
// timeout is not: the call fails with the server's answer at once.
func TestRESTRetryAfter(t *testing.T) {
	l := newRESTLake(t, restfake.Options{}, map[string]string{lake.PropCatalogTimeout: "5s"})
	l.table(t, "db", "t")
	id := lake.Ident{Catalog: "lake", Namespace: []string{"db"}, Name: "t"}

	l.s.Inject(restfake.Fault{Route: "load", Status: 503, RetryAfter: "1"})
	start := time.Now()
	_, err := lake.LoadTable(context.Background(), l.cat, id)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), time.Second)

	l.s.Inject(restfake.Fault{Route: "load", Status: 429, RetryAfter: "3600"})
	start = time.Now()
	_, err = lake.LoadTable(context.Background(), l.cat, id)
	require.ErrorContains(t, err, "TooManyRequestsException")
	require.Less(t, time.Since(start), 2*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	l.s.Inject(restfake.Fault{Route: "load", Status: 503, RetryAfter: "2"})
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = lake.LoadTable(ctx, l.cat, id)
	require.ErrorIs(t, err, context.Canceled)
}

// OAuth2 client credentials: a token that expires between load and commit
// is renewed by its expires_in and the commit goes through; one the server
// revokes early fails the commit cleanly, the table unchanged.
func TestRESTTokenExpiresBetweenLoadAndCommit(t *testing.T) {
	auth := restfake.Options{ClientID: "floe", ClientSecret: "s3cret"}
	props := map[string]string{"credential": "floe:s3cret"}
	t.Run("expires_in", func(t *testing.T) {
		// The client renews a token 10s before its expires_in; the server's
		// clock runs 10s ahead, so both see it expire a second after issue.
		o := auth
		o.TokenTTL = 11 * time.Second
		o.Now = func() time.Time { return time.Now().Add(10 * time.Second) }
		l := newRESTLake(t, o, props)
		tbl := l.table(t, "db", "t")
		issued := l.s.TokensIssued()
		time.Sleep(1100 * time.Millisecond)
		_, err := appendRows(t, tbl, 10, 19)
		require.NoError(t, err)
		require.Greater(t, l.s.TokensIssued(), issued)
		require.Equal(t, 1, l.s.Commits())
	})
	t.Run("revoked", func(t *testing.T) {
		o := auth
		o.TokenUses = 2
		l := newRESTLake(t, o, props)
		tbl := l.table(t, "db", "t") // GET /v1/config does not count; load uses 1
		before := tbl.CurrentSnapshot().SnapshotID
		_, err := l.cat.ListNamespaces(context.Background(), nil)
		require.NoError(t, err)
		_, err = appendRows(t, tbl, 10, 19)
		require.ErrorIs(t, err, rest.ErrUnauthorized)
		require.Equal(t, 0, l.s.Commits())
		back, err := l.w.Catalog.LoadTable(context.Background(), table.Identifier{"db", "t"})
		require.NoError(t, err)
		require.Equal(t, before, back.CurrentSnapshot().SnapshotID)
	})
}
