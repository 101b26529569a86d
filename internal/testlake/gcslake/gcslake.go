// Package gcslake opens test warehouses on an in-process GCS server:
// fake-gcs-server's JSON and XML APIs, in memory, on loopback, with
// testlake's stall knobs. It is apart from testlake because the fake
// starts a goroutine when imported (OpenCensus's view worker, through its
// Pub/Sub notifications) that goleak would report in every package using
// testlake; a package that imports this one passes [IgnoreLeaks] to
// goleak.
package gcslake

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// Bucket is the bucket of every [New] warehouse.
const Bucket = "floe"

// IgnoreLeaks is the goleak option for the goroutine importing this
// package starts, which runs until the process ends.
func IgnoreLeaks() goleak.Option {
	return goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")
}

// GCS is the in-process GCS server behind a warehouse: a [testlake.Store]
// that can stall.
type GCS struct {
	// URL is the server's root (http://127.0.0.1:port); its JSON API,
	// the catalog's gcs.service.host, is under /storage/v1/.
	URL string

	testlake.Staller
	server *fakestorage.Server
}

// New opens a fresh warehouse whose files live in bucket [Bucket] of an
// in-process GCS server, under gs://floe/warehouse, with a SQL catalog on
// SQLite in t.TempDir(), and returns it with its server. The catalog
// reaches the server with the endpoint and anonymous access of its
// properties ([Props]), so no credentials are looked up and nothing
// reaches a real cloud. Reads go through the XML API, as by default on
// GCS. The server stops when t ends.
func New(t testing.TB) (*testlake.Warehouse, *GCS) {
	t.Helper()
	dir := t.TempDir()
	g := &GCS{}
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		NoListener: true,
		Scheme:     "http",
		// Where resumable uploads go on, and the host of the XML API
		// (path-style: /bucket/object).
		ExternalURL: "http://" + addr,
		PublicHost:  addr,
		Writer:      io.Discard,
	})
	require.NoError(t, err)
	fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: Bucket})
	g.server = fake
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.Hold(r) {
			g.Serve(fake.HTTPHandler(), w, r)
		}
	})
	srv.Start()
	t.Cleanup(func() {
		g.Stall(0)
		srv.CloseClientConnections()
		srv.Close()
		fake.Stop()
	})
	g.URL = srv.URL

	props := lake.LocalCatalogProps(dir)
	props["warehouse"] = "gs://" + Bucket + "/warehouse"
	for k, v := range Props(g.URL) {
		props[k] = v
	}
	return testlake.Open(t, dir, props, g), g
}

// Props are the iceberg-go properties that reach the server at url (its
// root) without credentials.
func Props(url string) map[string]string {
	return map[string]string{
		iceio.GCSServiceHost: url + "/storage/v1/",
		iceio.GCSNoAuth:      "true",
	}
}

// key is the object key of loc, a URI in bucket [Bucket].
func key(t testing.TB, loc string) string {
	t.Helper()
	k, ok := strings.CutPrefix(loc, "gs://"+Bucket+"/")
	require.True(t, ok, "%s is not in bucket %s", loc, Bucket)
	return k
}

// Objects lists the locations of the objects stored under loc (a URI in
// bucket [Bucket]), asking the server's backend itself.
func (g *GCS) Objects(t testing.TB, loc string) []string {
	t.Helper()
	objs, _, err := g.server.ListObjects(Bucket, key(t, loc), "", false)
	require.NoError(t, err)
	var out []string
	for _, o := range objs {
		out = append(out, "gs://"+Bucket+"/"+o.Name)
	}
	return out
}

// Get returns the content of the object at loc, asking the server's
// backend itself: a read that does not go through floe's IO.
func (g *GCS) Get(t testing.TB, loc string) []byte {
	t.Helper()
	obj, err := g.server.GetObject(Bucket, key(t, loc))
	require.NoError(t, err)
	return obj.Content
}

// Put stores data at loc with modTime as its creation and update time.
func (g *GCS) Put(t testing.TB, loc string, data []byte, modTime time.Time) {
	t.Helper()
	require.NoError(t, g.server.CreateObjectStreaming(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: Bucket, Name: key(t, loc), Created: modTime, Updated: modTime},
		Content:     data,
	}.StreamingObject()))
}

// Has reports whether an object is stored at loc.
func (g *GCS) Has(t testing.TB, loc string) bool {
	t.Helper()
	k := key(t, loc)
	objs, _, err := g.server.ListObjects(Bucket, k, "", false)
	require.NoError(t, err)
	for _, o := range objs {
		if o.Name == k {
			return true
		}
	}
	return false
}
