package lake

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
)

// PropRetries is floe's catalog property for how many times a REST catalog
// request the server turned away is sent again (a count; "0" disables
// retries). It is read by [OpenCatalog] and not passed to iceberg-go. See
// [DefaultRetries] for what is retried.
const PropRetries = "floe.retries"

// DefaultRetries is how many times a REST catalog request is retried when
// the catalog sets no [PropRetries]: a 429 Too Many Requests (any request:
// the server did not act on it) and, for reads (GET and HEAD) and token
// requests, a 500, 502, 503 or 504. A commit answered 5xx is never sent
// again: its outcome is unknown (iceberg-go returns
// rest.ErrCommitStateUnknown), and a second attempt could commit twice or
// read its own success as a conflict.
const DefaultRetries = 4

// maxRetries is the most [PropRetries] may be (control/config's MaxRetries).
const maxRetries = 20

// Retry waits: the server's Retry-After when it gives one (seconds or an
// HTTP date), else an exponential backoff with jitter from retryBase, each
// at most retryMaxWait.
const (
	retryBase    = 100 * time.Millisecond
	retryMaxWait = 30 * time.Second
)

// isREST reports whether props open a REST catalog (type rest, or no type
// and an http(s) uri, as iceberg-go's catalog.Load decides).
func isREST(props map[string]string) bool {
	switch props["type"] {
	case "rest":
		return true
	case "":
		scheme, _, _ := strings.Cut(props["uri"], "://")
		return scheme == "http" || scheme == "https"
	}
	return false
}

// openREST opens a REST catalog as catalog.Load would, on an HTTP transport
// that retries what the server turned away (see [DefaultRetries]).
// iceberg-go takes a transport only as an option of rest.NewCatalog, so the
// properties the first request (GET /v1/config) needs — its credentials,
// token endpoint, warehouse, TLS and SigV4 settings — are passed as the
// options they stand for; all of them are also passed as properties, which
// iceberg-go reads again once it has the server's configuration.
func openREST(ctx context.Context, name string, props map[string]string, retries int) (catalog.Catalog, error) {
	opts := []rest.Option{
		rest.WithTransportFactory(func(cfg *tls.Config) (http.RoundTripper, func()) {
			tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: cfg}
			return &retryTransport{inner: tr, catalog: name, retries: retries, sleep: sleepCtx}, tr.CloseIdleConnections
		}),
	}
	extra := iceberg.Properties{}
	for k, v := range props {
		switch k {
		case "type", "uri":
			continue
		case "credential":
			opts = append(opts, rest.WithCredential(v))
		case "token":
			opts = append(opts, rest.WithOAuthToken(v))
		case "scope":
			opts = append(opts, rest.WithScope(v))
		case "audience":
			opts = append(opts, rest.WithAudience(v))
		case "resource":
			opts = append(opts, rest.WithResource(v))
		case "warehouse":
			opts = append(opts, rest.WithWarehouseLocation(v))
		case "rest.tls.skip-verify":
			opts = append(opts, rest.WithTLSConfig(&tls.Config{InsecureSkipVerify: strings.EqualFold(v, "true")}))
		}
		extra[k] = v
	}
	auth := props["oauth2-server-uri"]
	if auth == "" {
		auth = props["rest.authorization-url"]
	}
	if auth != "" {
		u, err := url.Parse(auth)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("oauth2-server-uri %q: want an absolute URL", auth)
		}
		opts = append(opts, rest.WithAuthURI(u))
	}
	if strings.EqualFold(props["rest.sigv4-enabled"], "true") {
		opts = append(opts, rest.WithSigV4RegionSvc(props["rest.signing-region"], props["rest.signing-name"]))
	}
	opts = append(opts, rest.WithAdditionalProps(extra))
	return rest.NewCatalog(ctx, name, props["uri"], opts...)
}

// retryTransport sends again, up to retries times, a request the server
// turned away (see [DefaultRetries]), waiting between attempts as the
// server asks or backing off, and never past the request's context.
type retryTransport struct {
	inner   http.RoundTripper
	catalog string
	retries int
	// sleep waits d or until ctx is done (ctx's error then).
	sleep func(ctx context.Context, d time.Duration) error
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// RoundTrip sends req, and again while the answer is one to retry and
// attempts remain.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.inner.RoundTrip(req)
		if err != nil || attempt >= t.retries || !retryable(req, resp.StatusCode) {
			return resp, err
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return resp, nil // the body cannot be sent again
		}
		wait := retryWait(resp, attempt)
		if dl, ok := req.Context().Deadline(); ok && time.Until(dl) < wait {
			// Waiting would outlast the call: answer what the server said.
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, fmt.Errorf("catalog %s: %s %s: waiting %s to retry after %d %s: %w",
				t.catalog, req.Method, req.URL.Path, wait, resp.StatusCode, http.StatusText(resp.StatusCode), err)
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("catalog %s: %s %s: rewind the body to retry: %w", t.catalog, req.Method, req.URL.Path, err)
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// retryable reports whether an answer status to req may be retried: 429
// always (the server did not act on the request), 5xx on reads and token
// requests only.
func retryable(req *http.Request, status int) bool {
	if status == http.StatusTooManyRequests {
		return true
	}
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return false
	}
	return req.Method == http.MethodGet || req.Method == http.MethodHead || strings.HasSuffix(req.URL.Path, "/oauth/tokens")
}

// retryWait is how long to wait before attempt+1: the answer's Retry-After
// (seconds or an HTTP date), else 2^attempt × retryBase with ±50% jitter,
// at most retryMaxWait.
func retryWait(resp *http.Response, attempt int) time.Duration {
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
			return min(time.Duration(s)*time.Second, retryMaxWait)
		}
		if at, err := http.ParseTime(ra); err == nil {
			return min(max(time.Until(at), 0), retryMaxWait)
		}
	}
	d := retryBase << min(attempt, 8)
	d = d/2 + time.Duration(rand.Int64N(int64(d)))
	return min(d, retryMaxWait)
}

// retriesProp is the catalog's [PropRetries] (def when unset).
func retriesProp(props map[string]string) (int, error) {
	v, ok := props[PropRetries]
	if !ok {
		return DefaultRetries, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxRetries {
		return 0, fmt.Errorf("%s %q: want a count from 0 to %d", PropRetries, v, maxRetries)
	}
	return n, nil
}
