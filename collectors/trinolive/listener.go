package trinolive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/trino"
)

// DefaultMaxBodyBytes bounds one event body; plans can be megabytes.
const DefaultMaxBodyBytes = 32 << 20

// ListenerHandler receives Trino HTTP event listener POSTs. Each body is
// one event; completed-query events are decoded with [trino.EventParser]
// and passed to Sink, created and split events are accepted and dropped.
// It answers 204 on success, 400 for a body that is not a Trino event (the
// listener would retry it in vain), 405 for other methods and 500 when
// Sink fails (so the listener retries, up to connect-retry-count), with a
// JSON body {"error": "…"}.
type ListenerHandler struct {
	// Sink receives each completed query; it is called from the request's
	// goroutine.
	Sink func(collectors.QueryEvent) error
	// MaxBodyBytes bounds a body. Default: DefaultMaxBodyBytes.
	MaxBodyBytes int64

	completed, skipped atomic.Int64
}

// NewListenerHandler returns a handler passing completed queries to sink.
func NewListenerHandler(sink func(collectors.QueryEvent) error) *ListenerHandler {
	return &ListenerHandler{Sink: sink}
}

// Completed is how many completed-query events were passed to Sink.
func (h *ListenerHandler) Completed() int64 { return h.completed.Load() }

// Skipped is how many valid events were not completed-query events.
func (h *ListenerHandler) Skipped() int64 { return h.skipped.Load() }

// ServeHTTP handles one event POST.
func (h *ListenerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed; POST Trino event JSON")
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
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("event body exceeds %d bytes", limit))
			return
		}
		writeError(w, http.StatusBadRequest, "read event body: "+err.Error())
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeError(w, http.StatusBadRequest, "empty event body")
		return
	}
	var (
		events  []collectors.QueryEvent
		reasons []string
	)
	err = trino.EventParser{}.Parse(r.Context(), "http-event-listener", bytes.NewReader(body),
		func(ev collectors.QueryEvent) error { events = append(events, ev); return nil },
		func(b collectors.BadRecord) error { reasons = append(reasons, b.Reason); return nil })
	if err != nil {
		writeError(w, http.StatusBadRequest, "read event: "+err.Error())
		return
	}
	if len(reasons) > 0 {
		writeError(w, http.StatusBadRequest, strings.Join(reasons, "; "))
		return
	}
	if len(events) == 0 {
		h.skipped.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if h.Sink == nil {
		writeError(w, http.StatusInternalServerError, "event sink is not configured")
		return
	}
	for _, ev := range events {
		if err := h.Sink(ev); err != nil {
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("store query %s: %v", ev.QueryID, err))
			return
		}
		h.completed.Add(1)
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg}) // the client is gone if this fails
}
