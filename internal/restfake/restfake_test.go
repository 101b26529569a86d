package restfake_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/restfake"
	"github.com/floe-project/floe/internal/testlake"
)

var schema = iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})

func rows(t *testing.T, tbl *table.Table, ids ...int64) arrow.RecordBatch {
	t.Helper()
	sc := testlake.ArrowSchema(t, tbl)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	return b.NewRecordBatch()
}

func open(t *testing.T, s *restfake.Server, props iceberg.Properties) catalog.Catalog {
	t.Helper()
	p := iceberg.Properties{"type": "rest", "uri": s.URL}
	for k, v := range props {
		p[k] = v
	}
	cat, err := catalog.Load(context.Background(), "lake", p)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cat.(catalog.Closer).Close()) })
	return cat
}

// iceberg-go's own REST client walks the fake's pages, creates, loads and
// commits through it, and reads the rows back from the backing catalog.
func TestFakeSpeaksTheRESTProtocol(t *testing.T) {
	ctx := context.Background()
	w := testlake.NewLocal(t)
	s := restfake.New(t, restfake.Options{Backend: w.Catalog, Prefix: "main", ClientID: "floe", ClientSecret: "s3cret"})
	cat := open(t, s, iceberg.Properties{"credential": "floe:s3cret"})

	for i := range 5 {
		require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{fmt.Sprintf("ns%d", i)}, nil))
	}
	for i := range 5 {
		_, err := cat.CreateTable(ctx, table.Identifier{"ns0", fmt.Sprintf("t%d", i)}, schema)
		require.NoError(t, err)
	}
	nss, err := cat.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	require.Len(t, nss, 5)
	var names []string
	for id, err := range cat.ListTables(ctx, table.Identifier{"ns0"}) {
		require.NoError(t, err)
		names = append(names, id[1])
	}
	require.Equal(t, []string{"t0", "t1", "t2", "t3", "t4"}, names)
	require.Equal(t, 3, s.Count(http.MethodGet, "/v1/main/namespaces", http.StatusOK), "5 namespaces, 2 a page")
	require.Equal(t, 3, s.Count(http.MethodGet, "/v1/main/namespaces/ns0/tables", http.StatusOK), "5 tables, 2 a page")

	tbl, err := cat.LoadTable(ctx, table.Identifier{"ns0", "t0"})
	require.NoError(t, err)
	stale := tbl
	tbl = testlake.Append(t, tbl, rows(t, tbl, 1, 2, 3))
	require.Equal(t, 1, s.Commits())

	// A commit on the stale handle asserts the old head of main: 409.
	_, err = testlake.TryAppend(t, stale, rows(t, stale, 4))
	require.ErrorIs(t, err, table.ErrCommitFailed)
	require.ErrorIs(t, err, rest.ErrCommitFailed)
	require.Equal(t, 1, s.Commits())

	back, err := w.Catalog.LoadTable(ctx, table.Identifier{"ns0", "t0"})
	require.NoError(t, err)
	require.Equal(t, tbl.CurrentSnapshot().SnapshotID, back.CurrentSnapshot().SnapshotID)
	require.Equal(t, "3", back.CurrentSnapshot().Summary.Properties["total-records"])
}

// Tokens expire on the server's clock, and a request with none is refused.
func TestFakeTokens(t *testing.T) {
	ctx := context.Background()
	w := testlake.NewLocal(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := restfake.New(t, restfake.Options{Backend: w.Catalog, ClientID: "floe", ClientSecret: "s3cret",
		TokenTTL: time.Hour, Now: func() time.Time { return now }})

	// The client asks for a token before GET /v1/config.
	_, err := catalog.Load(ctx, "lake", iceberg.Properties{"type": "rest", "uri": s.URL, "credential": "floe:wrong"})
	require.ErrorContains(t, err, "invalid_client: The client is not authorized")

	cat := open(t, s, iceberg.Properties{"credential": "floe:s3cret"})
	_, err = cat.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	now = now.Add(2 * time.Hour) // the client's clock did not move: it keeps its token
	_, err = cat.ListNamespaces(ctx, nil)
	require.ErrorIs(t, err, rest.ErrUnauthorized)
	require.ErrorContains(t, err, "token expired")
}
