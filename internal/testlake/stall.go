package testlake

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Staller makes an in-process object store ([S3], gcslake's GCS) stall:
// every request waits before it is served, from now on ([Staller.Stall]) or
// from the moment a chosen request has been served ([Staller.StallAfter]).
// A store's handler holds each request with [Staller.Hold] and serves it
// with [Staller.Serve]; the zero Staller does not stall.
type Staller struct {
	stall   atomic.Int64 // nanoseconds each request waits before it is served
	stallMu sync.Mutex
	resume  chan struct{} // closed when the stall changes: waiting requests go on
	// stallFrom, when set, stalls the server once a request it
	// matches has been served ([Staller.StallAfter]).
	stallFrom atomic.Pointer[stallTrigger]
}

// Stall makes every request wait d before the server handles it, or until
// the client gives up on it or the stall changes (d <= 0: no wait).
// Requests already waiting go on when the stall changes: the server's
// handler does not see a client give up on a request whose body it has
// not read, so without this a request could hold the server up to d.
func (s *Staller) Stall(d time.Duration) {
	s.stallMu.Lock()
	defer s.stallMu.Unlock()
	s.stall.Store(int64(d))
	if s.resume != nil {
		close(s.resume)
	}
	s.resume = make(chan struct{})
}

// resumed is closed when the stall next changes.
func (s *Staller) resumed() <-chan struct{} {
	s.stallMu.Lock()
	defer s.stallMu.Unlock()
	if s.resume == nil {
		s.resume = make(chan struct{})
	}
	return s.resume
}

// stallTrigger is an armed [Staller.StallAfter].
type stallTrigger struct {
	match func(*http.Request) bool
	d     time.Duration
}

// StallAfter arms a stall of d (as Stall) that begins once the server has
// served a request match accepts: a store that stops answering in the
// middle of a run, after the run's first write say. The stall lasts until
// the next Stall call; it fires once.
func (s *Staller) StallAfter(match func(*http.Request) bool, d time.Duration) {
	s.stallFrom.Store(&stallTrigger{match: match, d: d})
}

// Hold holds r while the server stalls and reports whether to serve it
// (false: the client gave up).
func (s *Staller) Hold(r *http.Request) bool {
	resumed := s.resumed()
	d := time.Duration(s.stall.Load())
	if d <= 0 {
		return true
	}
	select {
	case <-time.After(d):
	case <-resumed:
	case <-r.Context().Done():
		return false
	}
	return true
}

// Serve serves r with h, then starts the stall an armed StallAfter waits
// for when r is its request.
func (s *Staller) Serve(h http.Handler, w http.ResponseWriter, r *http.Request) {
	tr := s.stallFrom.Load()
	fire := tr != nil && tr.match(r)
	h.ServeHTTP(w, r)
	if fire && s.stallFrom.CompareAndSwap(tr, nil) {
		s.Stall(tr.d)
	}
}
