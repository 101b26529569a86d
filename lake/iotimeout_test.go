package lake_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/internal/testlake/gcslake"
	"github.com/floe-project/floe/lake"
)

// stallStore is an in-process object store that can stall ([testlake.S3],
// [gcslake.GCS]).
type stallStore interface {
	Stall(time.Duration)
	StallAfter(func(*http.Request) bool, time.Duration)
}

// stallStores are the in-process stores a stall test runs on: each opens a
// warehouse and returns the store behind it and its endpoint.
var stallStores = []struct {
	name string
	open func(t *testing.T) (*testlake.Warehouse, stallStore, string)
}{
	{"s3", func(t *testing.T) (*testlake.Warehouse, stallStore, string) {
		w := testlake.NewS3(t)
		return w, w.S3, w.S3.URL
	}},
	{"gcs", func(t *testing.T) (*testlake.Warehouse, stallStore, string) {
		w, g := gcslake.New(t)
		return w, g, g.URL
	}},
}

// TestIOTimeoutBoundsEveryRequestOfAStalledStore: with the store (S3, GCS)
// stalled far longer than the catalog's floe.io-timeout, a metadata read
// (loading a table), a manifest read (a table's state, as health reads
// it), a write, a listing and a delete each fail within the timeout with
// an error naming the store, the catalog, the object and the timeout.
// Before the bound, each waited for the stall to end.
func TestIOTimeoutBoundsEveryRequestOfAStalledStore(t *testing.T) {
	for _, store := range stallStores {
		t.Run(store.name, func(t *testing.T) {
			testIOTimeoutBoundsEveryRequest(t, store.open)
		})
	}
}

func testIOTimeoutBoundsEveryRequest(t *testing.T, open func(t *testing.T) (*testlake.Warehouse, stallStore, string)) {
	const timeout = time.Second
	w, store, endpoint := open(t)
	tbl := w.CreateTable(t, "db", "events", schema, nil, nil, nil)
	sc := testlake.ArrowSchema(t, tbl)
	testlake.Append(t, tbl, batch(t, sc, 1, 100, "eu", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))

	// The object store's bound alone.
	cat := w.Reopen(t, map[string]string{lake.PropIOTimeout: timeout.String(), lake.PropCatalogTimeout: "0"})
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "events"}
	loaded, err := lake.LoadTable(context.Background(), cat, id)
	require.NoError(t, err)
	loc := loaded.Metadata().Location()
	_, tableKey, _ := strings.Cut(strings.SplitN(loc, "://", 2)[1], "/")

	fio := func(t *testing.T) iceio.IO {
		t.Helper()
		f, err := loaded.FS(context.Background())
		require.NoError(t, err)
		return f
	}
	cases := []struct {
		name   string
		object string // what the error must name
		do     func(t *testing.T) error
	}{
		{"read metadata (load table)", tableKey + "/metadata/", func(t *testing.T) error {
			_, err := lake.LoadTable(context.Background(), cat, id)
			return err
		}},
		{"read manifests (table state)", tableKey + "/metadata/", func(t *testing.T) error {
			_, err := lake.LoadState(context.Background(), id, loaded, lake.LoadOptions{})
			return err
		}},
		{"write", tableKey + "/data/probe.bin", func(t *testing.T) error {
			wio, ok := fio(t).(iceio.WriteFileIO)
			require.True(t, ok)
			return wio.WriteFile(loc+"/data/probe.bin", []byte("probe"))
		}},
		{"list", tableKey, func(t *testing.T) error {
			lio, ok := fio(t).(iceio.ListableIO)
			require.True(t, ok)
			return lio.WalkDir(loc, func(_ string, _ fs.DirEntry, err error) error { return err })
		}},
		{"delete", tableKey + "/data/nothing.parquet", func(t *testing.T) error {
			return fio(t).Remove(loc + "/data/nothing.parquet")
		}},
	}
	host := mustHost(t, endpoint)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store.Stall(time.Minute)
			defer store.Stall(0)
			start := time.Now()
			err := tc.do(t)
			took := time.Since(start)
			require.Error(t, err)
			require.Less(t, took, timeout+5*time.Second, "bounded by %s: %v", timeout, err)
			require.ErrorIs(t, err, lake.ErrIOTimeout)
			require.False(t, errors.Is(err, context.Canceled), "a timeout is a failure, not a cancellation: %v", err)
			require.Contains(t, err.Error(), "object store "+host+" of catalog "+w.Name)
			require.Contains(t, err.Error(), "no progress within 1s (set floe.io-timeout to change it)")
			require.Contains(t, err.Error(), tc.object)
		})
	}

	t.Run("a table keeps its bound across commits", func(t *testing.T) {
		next := testlake.Append(t, loaded, batch(t, sc, 101, 200, "eu", time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)))
		store.Stall(time.Minute)
		defer store.Stall(0)
		_, err := lake.LoadState(context.Background(), id, next, lake.LoadOptions{})
		require.ErrorIs(t, err, lake.ErrIOTimeout)
	})

	t.Run("a store that stalls after a commit's first write", func(t *testing.T) {
		head, err := lake.LoadTable(context.Background(), cat, id)
		require.NoError(t, err)
		var wrote atomic.Bool
		store.StallAfter(func(r *http.Request) bool {
			if r.Method == http.MethodPut || r.Method == http.MethodPost {
				wrote.Store(true)
				return true
			}
			return false
		}, time.Minute)
		defer store.Stall(0)
		start := time.Now()
		_, err = testlake.TryAppend(t, head, batch(t, sc, 201, 300, "eu", time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)))
		took := time.Since(start)
		require.True(t, wrote.Load(), "the commit wrote nothing")
		require.ErrorIs(t, err, lake.ErrIOTimeout)
		require.Less(t, took, timeout+5*time.Second, "bounded by %s: %v", timeout, err)
		require.Contains(t, err.Error(), "object store "+host+" of catalog "+w.Name)
		store.Stall(0)
		after, err := lake.LoadTable(context.Background(), cat, id)
		require.NoError(t, err)
		require.Equal(t, head.CurrentSnapshot().SnapshotID, after.CurrentSnapshot().SnapshotID, "nothing committed")
	})
}

// TestIOTimeoutZeroWaitsForTheStore: floe.io-timeout 0 turns the bound off,
// so a request waits for a store that stalls (here 2s) and then succeeds.
func TestIOTimeoutZeroWaitsForTheStore(t *testing.T) {
	w := testlake.NewS3(t)
	w.CreateTable(t, "db", "events", schema, nil, nil, nil)
	cat := w.Reopen(t, map[string]string{lake.PropIOTimeout: "0", lake.PropCatalogTimeout: "0"})
	w.S3.Stall(2 * time.Second)
	defer w.S3.Stall(0)
	start := time.Now()
	_, err := cat.LoadTable(context.Background(), table.Identifier{"db", "events"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second)
}

func TestOpenCatalogRejectsABadIOTimeout(t *testing.T) {
	for _, v := range []string{"soon", "-1s"} {
		_, err := lake.OpenCatalog(context.Background(), "bad", map[string]string{"type": "sql", lake.PropIOTimeout: v})
		require.ErrorContains(t, err, `open catalog bad: floe.io-timeout "`+v+`": want a duration such as 30s, or 0 for none`)
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}
