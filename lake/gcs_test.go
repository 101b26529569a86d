package lake_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/internal/testlake/gcslake"
	"github.com/floe-project/floe/lake"
)

// TestGCSTable: a table on gs:// (iceberg-go's SQL catalog, warehouse in a
// bucket of the in-process GCS server) is written, listed, loaded and
// read for its health through floe's GCS IO, and reading its data files
// straight from the server's backend finds every row written.
func TestGCSTable(t *testing.T) {
	ctx := context.Background()
	w, g := gcslake.New(t)
	tbl := w.CreateTable(t, "db", "events", schema, nil, nil, nil)
	require.Equal(t, "gs://floe/warehouse/db.db/events", tbl.Location())
	sc := testlake.ArrowSchema(t, tbl)
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tbl = testlake.Append(t, tbl, batch(t, sc, 1, 100, "eu", d0))
	testlake.Append(t, tbl, batch(t, sc, 101, 250, "us", d0.Add(24*time.Hour)))

	cat := w.Reopen(t, map[string]string{lake.PropIOTimeout: "10s"})
	ids, err := lake.ListTables(ctx, w.Name, cat)
	require.NoError(t, err)
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "events"}
	require.Equal(t, []lake.Ident{id}, ids)
	loaded, err := lake.LoadTable(ctx, cat, id)
	require.NoError(t, err)
	st, err := lake.LoadState(ctx, id, loaded, lake.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, st.DataFiles, 2)
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: d0.Add(48 * time.Hour)})
	require.NoError(t, err)
	require.EqualValues(t, 250, h.Metrics.Records)
	require.Equal(t, 2, h.Metrics.DataFiles)

	// The data files, read from the server's backend, not through floe.
	stored := g.Objects(t, tbl.Location())
	var rows, sum int64
	for _, f := range st.DataFiles {
		require.Contains(t, stored, f.Path)
		n, s := testlake.SumFirstColumn(t, g.Get(t, f.Path))
		rows, sum = rows+n, sum+s
	}
	require.EqualValues(t, 250, rows)
	require.EqualValues(t, 250*251/2, sum)
	require.True(t, slices.ContainsFunc(stored, func(loc string) bool { return loc == loaded.MetadataLocation() }),
		"the current metadata file %s is in the bucket", loaded.MetadataLocation())
}

// TestGCSCredentialsReachTheStore: a token a REST catalog vends
// (gcs.oauth2.token) is sent with each request of floe's GCS IO, and
// gcs.no-auth sends none.
func TestGCSCredentialsReachTheStore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"vended token", map[string]string{iceio.GCSOAuthToken: "vended", iceio.GCSOAuthExpiresAt: strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)}, "Bearer vended"},
		{"no auth", map[string]string{iceio.GCSNoAuth: "true"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var auth []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				auth = append(auth, r.Header.Get("Authorization"))
				mu.Unlock()
				http.NotFound(w, r)
			}))
			t.Cleanup(srv.Close)
			props := with(tc.props, map[string]string{iceio.GCSServiceHost: srv.URL + "/storage/v1/"})
			fio, err := iceio.LoadFS(context.Background(), props, "gs://bucket/wh")
			require.NoError(t, err)
			_, err = fio.Open("gs://bucket/wh/metadata/v1.metadata.json")
			require.ErrorIs(t, err, fs.ErrNotExist)
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, auth)
			for _, a := range auth {
				require.Equal(t, tc.want, a)
			}
		})
	}
}
