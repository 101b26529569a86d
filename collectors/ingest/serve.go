package ingest

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/icebergscan"
	"github.com/floe-project/floe/collectors/trinolive"
)

// Endpoints [Serve] can serve.
const (
	// EndpointTrino accepts the POSTs of Trino's HTTP event listener
	// (http-event-listener.connect-ingest-uri).
	EndpointTrino = "trino"
	// EndpointIceberg accepts Iceberg REST scan reports
	// (…/namespaces/NS/tables/T/metrics).
	EndpointIceberg = "iceberg"
)

// ServeOptions configure [Serve].
type ServeOptions struct {
	// Endpoint is [EndpointTrino] or [EndpointIceberg].
	Endpoint string
	// Normalizer resolves each event's tables and predicates.
	Normalizer *Normalizer
	// Logger receives one line per event that could not be stored.
	// Default: discard.
	Logger *slog.Logger
	// Stored, when set, is called with each event's source after it was
	// stored (the daemon counts them into floe_telemetry_events_total).
	Stored func(source string)
	// Commit, when set, is told the table of every Iceberg commit report
	// ([EndpointIceberg]; see icebergscan.Handler's Commit): `floe serve`
	// decides that table again at once.
	Commit func(collectors.TableAccess)
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer <Token>; Trino's listener sends it with
	// http-event-listener.connect-http-headers); a request without it is
	// answered 401 and stores nothing. `floe collect --listen` sets
	// server.token here, and needs it beyond loopback, as `floe serve` does.
	Token string
	// ShutdownTimeout bounds the graceful shutdown when ctx ends.
	// Default: 5s.
	ShutdownTimeout time.Duration
}

// Handler returns the HTTP handler of opts.Endpoint: each event is
// normalized and stored in st as it arrives; one that cannot be is
// answered with an error.
func Handler(ctx context.Context, st EventStore, opts ServeOptions) (http.Handler, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Normalizer == nil {
		return nil, errors.New("ingest: serve: no normalizer")
	}
	sink := func(ev collectors.QueryEvent) error {
		if _, err := opts.Normalizer.Normalize(ctx, &ev); err != nil {
			return err
		}
		_, _, err := st.InsertEvents(ctx, []collectors.QueryEvent{ev})
		if err != nil {
			log.Error("store event", "source", ev.Source, "query_id", ev.QueryID, "err", err)
			return err
		}
		if opts.Stored != nil {
			opts.Stored(ev.Source)
		}
		return nil
	}
	var h http.Handler
	switch opts.Endpoint {
	case EndpointTrino:
		h = trinolive.NewListenerHandler(sink)
	case EndpointIceberg:
		ih := icebergscan.NewHandler(sink)
		ih.Commit = opts.Commit
		h = ih
	default:
		return nil, fmt.Errorf("ingest: serve: unknown endpoint %q: want %s or %s", opts.Endpoint, EndpointTrino, EndpointIceberg)
	}
	if opts.Token == "" {
		return h, nil
	}
	want := sha256.Sum256([]byte("Bearer " + opts.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
			http.Error(w, "a bearer token is needed: Authorization: Bearer <server.token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// Serve serves the telemetry endpoint opts.Endpoint on ln until ctx is
// cancelled, then shuts down gracefully; it returns nil after a clean
// shutdown and the server's error otherwise.
func Serve(ctx context.Context, ln net.Listener, st EventStore, opts ServeOptions) error {
	h, err := Handler(ctx, st, opts)
	if err != nil {
		return err
	}
	timeout := opts.ShutdownTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("ingest: serve %s: %w", opts.Endpoint, err)
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		serr := srv.Shutdown(shutCtx)
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return errors.Join(err, serr)
		}
		return serr
	}
}
