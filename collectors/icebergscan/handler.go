package icebergscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/floe-project/floe/collectors"
)

// DefaultMaxBodyBytes bounds a report body the [Handler] accepts.
const DefaultMaxBodyBytes = 8 << 20

// Handler is an Iceberg REST metrics sink: it accepts
// POST …/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics with a
// ReportMetricsRequest body, passes each scan report to Sink as an event
// dated when it arrived, and answers 204 No Content, as a REST catalog
// does. Commit reports and scans of metadata tables are answered 204 and
// counted, not passed on as events; the table of a commit report is told
// to Commit, when set. Bad
// bodies get 400, other methods 405, other paths 404, and a Sink error
// 500, each with an Iceberg REST error body
// ({"error":{"message","type","code"}}).
type Handler struct {
	// Sink receives every scan report. It is called from the request's
	// goroutine, so concurrently when requests are.
	Sink func(collectors.QueryEvent) error
	// Commit, when set, is told the table of every commit report (the
	// REST path's namespace and table, else its table-name), before the
	// report is answered: the daemon decides that table again at once.
	Commit func(collectors.TableAccess)
	// Now dates reports. Default: time.Now.
	Now func() time.Time
	// MaxBodyBytes bounds a request body. Default: DefaultMaxBodyBytes.
	MaxBodyBytes int64

	scans, commits, metadata atomic.Int64
}

// NewHandler returns a Handler passing scan reports to sink.
func NewHandler(sink func(collectors.QueryEvent) error) *Handler {
	return &Handler{Sink: sink}
}

// ScanReports is how many scan reports were passed to Sink successfully.
func (h *Handler) ScanReports() int64 { return h.scans.Load() }

// CommitReports is how many commit reports were accepted and skipped.
func (h *Handler) CommitReports() int64 { return h.commits.Load() }

// MetadataTableReports is how many scan reports of metadata tables were
// accepted and skipped.
func (h *Handler) MetadataTableReports() int64 { return h.metadata.Load() }

// ServeHTTP handles one metrics POST.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	loc, ok := parsePath(r.URL.EscapedPath())
	if !ok {
		writeError(w, http.StatusNotFound, "NoSuchEndpointException", fmt.Sprintf("%s is not …/namespaces/{namespace}/tables/{table}/metrics", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowedException", r.Method+" is not allowed; POST a ReportMetricsRequest")
		return
	}
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "BadRequestException", fmt.Sprintf("report body exceeds %d bytes", limit))
			return
		}
		writeError(w, http.StatusBadRequest, "BadRequestException", "read report body: "+err.Error())
		return
	}
	now := h.Now
	if now == nil {
		now = time.Now
	}
	ev, err := decode(body, loc, now(), false)
	switch {
	case errors.Is(err, errCommitReport):
		if h.Commit != nil {
			ta, err := committed(body, loc)
			if err != nil {
				writeError(w, http.StatusBadRequest, "BadRequestException", err.Error())
				return
			}
			h.Commit(ta)
		}
		h.commits.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	case errors.Is(err, errMetadataTable):
		h.metadata.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	if h.Sink == nil {
		writeError(w, http.StatusInternalServerError, "ServiceFailureException", "metrics sink is not configured")
		return
	}
	if err := h.Sink(ev); err != nil {
		writeError(w, http.StatusInternalServerError, "ServiceFailureException", "store scan report: "+err.Error())
		return
	}
	h.scans.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

type errorBody struct {
	Error errorModel `json:"error"`
}

type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorModel{Message: msg, Type: typ, Code: code}}) // the client is gone if this fails
}
