package testlake

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// EnvStore selects the store of the warehouses [New] opens: "s3" for an
// in-process S3 server ([NewS3]), "versitygw" for a versitygw server
// ([NewVersitygw]); unset or "local" for a local directory.
const EnvStore = "FLOE_TEST_STORE"

// S3Bucket is the bucket of every [NewS3] warehouse.
const S3Bucket = "floe"

// S3 is the in-process S3 server (gofakes3 on loopback) behind a warehouse.
// It can stall (every request waits before it is served) and can age the
// objects it stores (their last-modified time is set by its clock).
type S3 struct {
	// URL is the server's endpoint, as s3.endpoint.
	URL string

	Staller
	backend *s3mem.Backend
	offset  atomic.Int64 // nanoseconds added to the wall clock for new objects
	down    atomic.Bool
	atMu    sync.Mutex // one planted file at a time moves the clock

	keysMu  sync.Mutex
	keys    *keyCheck            // nil: any access key is served
	granted map[string]time.Time // access key -> expiry (zero: never)
	refused atomic.Int64
}

// keyCheck is how the server checks access keys ([S3.CheckKeys]).
type keyCheck struct {
	now   func() time.Time
	watch func(method, key string)
}

// Now is the server's clock: the wall clock shifted by the offset [S3.At]
// sets while it plants a file.
func (s *S3) Now() time.Time {
	return time.Now().Add(time.Duration(s.offset.Load())).In(time.UTC)
}

// Since is [time.Since] on the server's clock.
func (s *S3) Since(t time.Time) time.Duration { return s.Now().Sub(t) }

// Down makes the server answer every request with 503 Service Unavailable
// (down false: serve again).
func (s *S3) Down(down bool) { s.down.Store(down) }

// CheckKeys makes the server check each request's access key (the
// Credential of its SigV4 Authorization header or X-Amz-Credential query
// parameter) from now on: a key granted with [S3.Grant] is served until its
// expiry on clock now, and answered 400 ExpiredToken from then on, as S3
// answers expired session credentials; any other key is answered 403
// InvalidAccessKeyId. The test's static key ([S3Props]), which the
// warehouse's own catalog uses, never expires. watch, when set, sees each
// request (its method and object key, bucket first) before its key is
// checked: a test moves its clock there at the moment it chooses. By
// default (no CheckKeys) the server serves any key.
func (s *S3) CheckKeys(now func() time.Time, watch func(method, key string)) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	s.keys = &keyCheck{now: now, watch: watch}
}

// Grant makes the server serve access key id until expires (zero: for
// good) while [S3.CheckKeys] is on.
func (s *S3) Grant(id string, expires time.Time) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if s.granted == nil {
		s.granted = map[string]time.Time{}
	}
	s.granted[id] = expires
}

// refuse answers r as S3 answers a key it does not take and reports
// whether it did (false: the key is served).
func (s *S3) refuse(w http.ResponseWriter, r *http.Request) bool {
	s.keysMu.Lock()
	keys := s.keys
	s.keysMu.Unlock()
	if keys == nil {
		return false
	}
	if keys.watch != nil {
		keys.watch(r.Method, strings.TrimPrefix(r.URL.Path, "/"))
	}
	id := accessKey(r)
	s.keysMu.Lock()
	exp, ok := s.granted[id]
	s.keysMu.Unlock()
	switch {
	case id == S3Props("")[iceio.S3AccessKeyID]:
		return false
	case !ok:
		s3Error(w, r, http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
	case !exp.IsZero() && !keys.now().Before(exp):
		s3Error(w, r, http.StatusBadRequest, "ExpiredToken", "The provided token has expired.")
	default:
		return false
	}
	s.refused.Add(1)
	return true
}

// Refused is how many requests the server refused for their key.
func (s *S3) Refused() int { return int(s.refused.Load()) }

// Objects lists the keys of the objects stored under loc (a URI in bucket
// [S3Bucket]), asking the server's backend itself.
func (s *S3) Objects(t testing.TB, loc string) []string {
	t.Helper()
	key, ok := strings.CutPrefix(loc, "s3://"+S3Bucket+"/")
	require.True(t, ok, "%s is not in bucket %s", loc, S3Bucket)
	prefix := gofakes3.NewPrefix(&key, nil)
	list, err := s.backend.ListBucket(S3Bucket, &prefix, gofakes3.ListBucketPage{})
	require.NoError(t, err)
	var out []string
	for _, c := range list.Contents {
		out = append(out, "s3://"+S3Bucket+"/"+c.Key)
	}
	return out
}

// accessKey is the access key id r is signed with, or "".
func accessKey(r *http.Request) string {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); auth != "" {
		_, rest, _ := strings.Cut(auth, "Credential=")
		cred, _, _ = strings.Cut(rest, ",")
	}
	id, _, _ := strings.Cut(cred, "/")
	return strings.TrimSpace(id)
}

// s3Error answers S3's error document (no body for HEAD, as S3 does).
func s3Error(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource><RequestId>testlake</RequestId></Error>`,
		code, msg, r.URL.Path)
}

func (s *S3) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.Hold(r) {
			return
		}
		if s.down.Load() {
			http.Error(w, "object store down (testlake)", http.StatusServiceUnavailable)
			return
		}
		if s.refuse(w, r) {
			return
		}
		s.Serve(h, w, r)
	})
}

// at runs fn with new objects stamped as written at t.
func (s *S3) at(t time.Time, fn func()) {
	s.atMu.Lock()
	defer s.atMu.Unlock()
	s.offset.Store(int64(time.Until(t)))
	defer s.offset.Store(0)
	fn()
}

// NewS3 opens a fresh warehouse whose files live in bucket [S3Bucket] of an
// in-process S3 server (gofakes3, in memory, on loopback), under
// s3://floe/warehouse, with a SQL catalog on SQLite in t.TempDir(). The
// catalog reaches the server with the endpoint, region and static keys of
// its properties ([S3Props]), which the AWS SDK takes before any variable,
// profile file or metadata service, so nothing reaches a real cloud. It
// sets no process environment: parallel tests may each open one. The
// server stops when t ends.
func NewS3(t testing.TB) *Warehouse {
	t.Helper()
	dir := t.TempDir()
	s := &S3{}
	s.backend = s3mem.New(s3mem.WithTimeSource(s))
	require.NoError(t, s.backend.CreateBucket(S3Bucket))
	faker := gofakes3.New(s.backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := httptest.NewServer(s.handler(faker.Server()))
	t.Cleanup(func() {
		s.Stall(0)
		srv.CloseClientConnections()
		srv.Close()
	})
	s.URL = srv.URL

	props := lake.LocalCatalogProps(dir)
	props["warehouse"] = "s3://" + S3Bucket + "/warehouse"
	for k, v := range S3Props(s.URL) {
		props[k] = v
	}
	w := Open(t, dir, props, nil)
	w.S3 = s
	return w
}

// S3Props are the iceberg-go properties that reach the server at endpoint
// with the test's static keys.
func S3Props(endpoint string) map[string]string {
	return map[string]string{
		iceio.S3EndpointURL:            endpoint,
		iceio.S3AccessKeyID:            "floe-test",
		iceio.S3SecretAccessKey:        "floe-test-secret",
		iceio.S3Region:                 "us-east-1",
		iceio.S3ForceVirtualAddressing: "false",
	}
}

// fileIO is the warehouse's IO for loc.
func (w *Warehouse) fileIO(t testing.TB, loc string) iceio.IO {
	t.Helper()
	fio, err := iceio.LoadFS(context.Background(), w.Props, loc)
	require.NoError(t, err)
	return fio
}

// exists reports whether the object at loc (s3://floe/key; a key ending in
// "/" is a directory marker) is stored, asking the server's backend itself.
func (s *S3) exists(t testing.TB, loc string) bool {
	t.Helper()
	key, ok := strings.CutPrefix(loc, "s3://"+S3Bucket+"/")
	require.True(t, ok, "%s is not in bucket %s", loc, S3Bucket)
	_, err := s.backend.HeadObject(S3Bucket, key)
	if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return false
	}
	require.NoError(t, err)
	return true
}
