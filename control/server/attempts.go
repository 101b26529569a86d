package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// attemptsForget is how long a client address that sent no wrong token is
// remembered; after it, its count starts again.
const attemptsForget = 24 * time.Hour

// maxAttemptClients bounds the client addresses remembered. When full, the
// one longest quiet is forgotten first.
const maxAttemptClients = 10000

// attempts slows down the guessing of tokens, per client address: each
// wrong token counts, and after free of them the address must wait before
// its next attempt — base, doubling with each further wrong token, up to
// max. A right token clears the count. Kept in memory, like the sessions.
type attempts struct {
	free      int
	base, max time.Duration
	now       func() time.Time

	mu sync.Mutex
	by map[string]*attempt
}

type attempt struct {
	failures int
	// until is when the address may try again; last when it last failed.
	until, last time.Time
}

func newAttempts(free int, base, maxWait time.Duration, now func() time.Time) *attempts {
	return &attempts{free: free, base: base, max: maxWait, now: now, by: map[string]*attempt{}}
}

// wait is how long client must wait before its next attempt; 0 when it
// may try now.
func (a *attempts) wait(client string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.by[client]
	if !ok {
		return 0
	}
	now := a.now()
	if now.Sub(at.last) >= attemptsForget {
		delete(a.by, client)
		return 0
	}
	return max(at.until.Sub(now), 0)
}

// failed counts a wrong token from client and returns how long it must
// now wait before its next attempt.
func (a *attempts) failed(client string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	at, ok := a.by[client]
	if !ok || now.Sub(at.last) >= attemptsForget {
		if !ok && len(a.by) >= maxAttemptClients {
			a.forgetOldest(now)
		}
		at = &attempt{}
		a.by[client] = at
	}
	at.failures++
	at.last = now
	if over := at.failures - a.free; over > 0 {
		wait := a.base
		for i := 1; i < over && wait < a.max; i++ {
			wait *= 2
		}
		at.until = now.Add(min(wait, a.max))
	}
	return max(at.until.Sub(now), 0)
}

// succeeded clears client's count: it presented a right token.
func (a *attempts) succeeded(client string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.by, client)
}

// forgetOldest drops the addresses quiet for attemptsForget, or else the
// one quiet longest. Called with a.mu held.
func (a *attempts) forgetOldest(now time.Time) {
	var oldest string
	for k, v := range a.by {
		if now.Sub(v.last) >= attemptsForget {
			delete(a.by, k)
			continue
		}
		if oldest == "" || v.last.Before(a.by[oldest].last) {
			oldest = k
		}
	}
	if len(a.by) >= maxAttemptClients && oldest != "" {
		delete(a.by, oldest)
	}
}

// clientOf is the address r came from, the key its attempts are counted
// under: the connection's IP address (never a header a client can forge,
// such as X-Forwarded-For), an IPv6 address by its /64, the block one
// host is usually given.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// retryAfter is d in whole seconds, rounded up, for a Retry-After header.
func retryAfter(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
