package trino

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// traceKey is the context key of a statement's *trace.
type traceKey struct{}

// trace records what the coordinator said about one statement: its query
// id, the last nextUri, and whether a DELETE cancelled it. trino-go-client
// v1.1.0 keeps the query id to itself (its errors carry none, and its
// progress callback is sent without blocking, so it can be dropped), so the
// engine reads it from the protocol's responses as they pass.
type trace struct {
	mu      sync.Mutex
	id      string
	nextURI string
	deleted bool
}

func (t *trace) get() (id, next string, deleted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id, t.nextURI, t.deleted
}

// maxPeekBytes bounds the response bodies read for the query id; a larger
// page (rows of a big SELECT, which floe does not run) passes unread.
const maxPeekBytes = 4 << 20

// recorder is the HTTP transport of the engine's client: it passes every
// request to base and notes, for requests whose context carries a trace,
// the query id and nextUri of statement responses and any DELETE.
type recorder struct{ base http.RoundTripper }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	tr, _ := req.Context().Value(traceKey{}).(*trace)
	if tr == nil {
		return resp, err
	}
	if req.Method == http.MethodDelete {
		tr.mu.Lock()
		tr.deleted = true
		tr.mu.Unlock()
		return resp, err
	}
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(req.URL.Path, "/v1/statement") {
		return resp, err
	}
	if resp.ContentLength > maxPeekBytes {
		return resp, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxPeekBytes+1))
	cerr := resp.Body.Close()
	if rerr != nil || cerr != nil {
		// Hand the client what was read and the failure after it.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{firstErr(rerr, cerr)}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var page struct {
		ID      string `json:"id"`
		NextURI string `json:"nextUri"`
	}
	if len(body) <= maxPeekBytes && json.Unmarshal(body, &page) == nil {
		tr.mu.Lock()
		if page.ID != "" {
			tr.id = page.ID
		}
		tr.nextURI = page.NextURI
		tr.mu.Unlock()
	}
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func withTrace(ctx context.Context) (context.Context, *trace) {
	tr := &trace{}
	return context.WithValue(ctx, traceKey{}, tr), tr
}
