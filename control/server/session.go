package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"time"
)

// session is one browser signed in to the dashboard.
type session struct {
	// csrf is the token every form of this session carries; a post without
	// it changes nothing.
	csrf string
	// write says the browser signed in with server.token: it may approve
	// and reject plans. A session of server.read_token may only read.
	write   bool
	expires time.Time
}

// sessions are the dashboard's signed-in browsers, in memory only: the
// cookie holds a random id, never a token, and a restart signs everyone
// out. Each session ends SessionTTL after sign-in, whatever its use.
type sessions struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	byID map[string]session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, byID: map[string]session{}}
}

// create starts a session and returns its id. Expired sessions are dropped
// on the way, so the map holds only live ones.
func (ss *sessions) create(write bool) (string, session) {
	now := ss.now()
	id, sess := rand.Text(), session{csrf: rand.Text(), write: write, expires: now.Add(ss.ttl)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, v := range ss.byID {
		if !now.Before(v.expires) {
			delete(ss.byID, k)
		}
	}
	ss.byID[id] = sess
	return id, sess
}

// get returns the live session id.
func (ss *sessions) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess, ok := ss.byID[id]
	if !ok {
		return session{}, false
	}
	if !ss.now().Before(sess.expires) {
		delete(ss.byID, id)
		return session{}, false
	}
	return sess, true
}

func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byID, id)
}

// equalSecret compares two secrets in constant time: both are hashed first
// so that the time does not depend on their lengths either. An empty want
// matches nothing.
func equalSecret(got, want string) bool {
	if want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
