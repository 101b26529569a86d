package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	s3io "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// PropIOTimeout is floe's catalog property for the longest one object-store
// request may go without progress: no answer yet, or no byte of the body
// sent or received (a Go duration such as "30s"; "0" disables it). It is
// read by [OpenCatalog] and not passed to iceberg-go. It applies to S3
// (s3://, s3a://, s3n://), GCS (gs://) and Azure (abfs://, abfss://,
// wasb://, wasbs://) tables, and to the catalog's own metadata reads and
// writes on those stores.
const PropIOTimeout = "floe.io-timeout"

// DefaultIOTimeout bounds each object-store request when the catalog sets
// no [PropIOTimeout]: a store that accepts connections and stops answering
// must fail the verb instead of holding it until the store answers again.
const DefaultIOTimeout = 30 * time.Second

// ErrIOTimeout is wrapped by every object-store request that went longer
// than its catalog's [PropIOTimeout] without progress; test with errors.Is.
var ErrIOTimeout = errors.New("object store did not answer in time")

// storeBounds bounds the object-store requests of one catalog's tables.
// iceberg-go's IO keeps the context it is opened with for every request it
// makes, so a deadline cannot be set per call; the bound reaches the IO
// through that context instead. For S3 it is an AWS config whose HTTP
// client bounds each request (iceberg-go's S3 IO takes its config from the
// context); for GCS and Azure it is the storeBounds itself, which floe's
// own IO for those stores ([registerBoundedIO]) reads from the context to
// build its HTTP client.
type storeBounds struct {
	catalog string
	props   map[string]string // the catalog's IO properties
	d       time.Duration

	once sync.Once
	cfg  *aws.Config
	err  error

	azureOnce sync.Once
	azureHTTP *http.Client // the connections of the catalog's Azure requests
}

func newStoreBounds(catalog string, props map[string]string, d time.Duration) *storeBounds {
	if d <= 0 {
		return nil
	}
	return &storeBounds{catalog: catalog, props: props, d: d}
}

// scheme is location's URI scheme ("" when it has none).
func scheme(location string) string {
	s, _, ok := strings.Cut(location, "://")
	if !ok {
		return ""
	}
	return s
}

// isS3 reports whether location is on S3.
func isS3(location string) bool {
	switch scheme(location) {
	case "s3", "s3a", "s3n":
		return true
	}
	return false
}

// isBounded reports whether the requests to location's store can be
// bounded: S3, GCS and Azure. Local files are not requests.
func isBounded(location string) bool {
	return isS3(location) || slices.Contains(gcsSchemes, scheme(location)) || slices.Contains(azureSchemes, scheme(location))
}

// boundsKey is the context key of the [storeBounds] floe's GCS and Azure
// IO bound their requests with.
type boundsKey struct{}

// boundsOf is the [storeBounds] ctx carries (nil: none, requests unbounded).
func boundsOf(ctx context.Context) *storeBounds {
	b, _ := ctx.Value(boundsKey{}).(*storeBounds)
	return b
}

// bind returns ctx carrying b, for floe's GCS and Azure IO, and, when
// location is on S3, the bounded AWS config (b nil: ctx itself; bounds or
// a config already in ctx are kept).
func (b *storeBounds) bind(ctx context.Context, location string) (context.Context, error) {
	if b == nil {
		return ctx, nil
	}
	if boundsOf(ctx) == nil {
		ctx = context.WithValue(ctx, boundsKey{}, b)
	}
	if !isS3(location) || utils.GetAwsConfig(ctx) != nil {
		return ctx, nil
	}
	b.once.Do(func() {
		cfg, err := s3io.ParseAWSConfig(context.WithoutCancel(ctx), b.props)
		if err != nil {
			b.err = fmt.Errorf("object store of catalog %s: configure S3: %w", b.catalog, err)
			return
		}
		inner := cfg.HTTPClient
		if inner == nil {
			// iceberg-go's own default for S3 (see io/gocloud/s3).
			inner = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
				t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = 256, 256, 2048
				t.IdleConnTimeout = 90 * time.Second
			})
		}
		cfg.HTTPClient = &boundedClient{inner: inner, ioBound: b.bound()}
		b.cfg = cfg
	})
	if b.err != nil {
		return nil, b.err
	}
	return utils.WithAwsConfig(ctx, b.cfg), nil
}

func (b *storeBounds) bound() ioBound { return ioBound{catalog: b.catalog, d: b.d} }

// transport is inner with each request bounded (b nil: inner itself).
func (b *storeBounds) transport(inner http.RoundTripper) http.RoundTripper {
	if b == nil {
		return inner
	}
	return &boundedTransport{inner: inner, ioBound: b.bound()}
}

// doer is an HTTP client as the AWS SDK (aws.HTTPClient) and the Azure SDK
// (policy.Transporter) take one.
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// boundedClient is an HTTP client (for the AWS and Azure SDKs) whose every
// request fails with [ErrIOTimeout] once it has gone its bound without
// progress.
type boundedClient struct {
	inner doer
	ioBound
}

// Do sends req through the inner client, bounded (see [ioBound.send]).
func (c *boundedClient) Do(req *http.Request) (*http.Response, error) {
	return c.send(req, c.inner.Do)
}

// boundedTransport is an HTTP transport (for GCS) whose every request fails
// with [ErrIOTimeout] once it has gone its bound without progress.
type boundedTransport struct {
	inner http.RoundTripper
	ioBound
}

// RoundTrip sends req through the inner transport, bounded (see
// [ioBound.send]).
func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.send(req, t.inner.RoundTrip)
}

// ioBound is how long one object-store request of a catalog may go without
// progress: the one place every store's requests are bounded.
type ioBound struct {
	catalog string
	d       time.Duration
}

// send sends req with do on a context cancelled when d passes with no
// byte of the request body sent and no byte of the response read; each
// byte moved restarts the wait.
func (c ioBound) send(req *http.Request, do func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watch{d: c.d}
	w.timer = time.AfterFunc(c.d, func() { cancel(ErrIOTimeout) })
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		out.Body = &progressBody{ReadCloser: req.Body, w: w}
	}
	if req.GetBody != nil {
		out.GetBody = func() (io.ReadCloser, error) {
			b, err := req.GetBody()
			if err != nil || b == nil || b == http.NoBody {
				return b, err
			}
			return &progressBody{ReadCloser: b, w: w}, nil
		}
	}
	resp, err := do(out)
	if err != nil {
		w.timer.Stop()
		err = c.explain(ctx, req, err)
		cancel(nil)
		return nil, err
	}
	w.progress()
	resp.Body = &progressBody{ReadCloser: resp.Body, w: w,
		done:  func(err error) error { return c.explain(ctx, req, err) },
		close: func() { w.timer.Stop(); cancel(nil) }}
	return resp, nil
}

// explain names the store, the request and the timeout in err when the
// request ran out of time.
func (c ioBound) explain(ctx context.Context, req *http.Request, err error) error {
	if err == nil || err == io.EOF || !errors.Is(context.Cause(ctx), ErrIOTimeout) {
		return err
	}
	what := req.URL.Path
	if name := req.URL.Query().Get("name"); name != "" {
		// A GCS upload names its object in the query.
		what += " (object " + name + ")"
	}
	return &ioTimeoutError{msg: fmt.Sprintf("object store %s of catalog %s: %s %s: no progress within %s (set %s to change it)",
		req.URL.Host, c.catalog, req.Method, what, c.d, PropIOTimeout)}
}

// ioTimeoutError is a request that ran out of time. It matches
// [ErrIOTimeout] and context.DeadlineExceeded, never context.Canceled (the
// transport's own error for it), so that it reads as a failure and not as
// a cancelled run. No SDK retries it — the AWS SDK reads RetryableError,
// the Azure SDK NonRetriable, and the GCS client retries no error of this
// kind: a stalled store must fail the verb within the timeout, not after
// every retry's.
type ioTimeoutError struct{ msg string }

func (e *ioTimeoutError) Error() string        { return e.msg + ": " + ErrIOTimeout.Error() }
func (e *ioTimeoutError) Unwrap() []error      { return []error{ErrIOTimeout, context.DeadlineExceeded} }
func (e *ioTimeoutError) RetryableError() bool { return false }
func (e *ioTimeoutError) NonRetriable()        {}
func (e *ioTimeoutError) Timeout() bool        { return true }

// watch restarts a request's timer whenever its bytes move.
type watch struct {
	d     time.Duration
	timer *time.Timer
}

func (w *watch) progress() { w.timer.Reset(w.d) }

// progressBody is a request or response body that reports progress.
type progressBody struct {
	io.ReadCloser
	w     *watch
	done  func(error) error // explains a read error (response bodies)
	close func()            // releases the request (response bodies)
	once  sync.Once
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.progress()
	}
	if err != nil && b.done != nil {
		err = b.done(err)
	}
	return n, err
}

func (b *progressBody) Close() error {
	err := b.ReadCloser.Close()
	if b.close != nil {
		b.once.Do(b.close)
	}
	return err
}
