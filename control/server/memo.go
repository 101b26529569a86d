package server

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// memo computes costly answers once per key and keeps them. A key names
// everything the answer depends on, so a change makes a new key and the
// old answer is simply no longer asked for. Requests for one key while it
// is being computed wait for that one computation (a single flight); at
// most slots computations of different keys run at once, the others wait
// for a slot; at most size answers are kept, the least recently used
// dropped first; an answer older than maxAge is computed again, as what it
// depends on includes the clock. Errors are not kept.
type memo[V any] struct {
	slots  chan struct{}
	size   int
	maxAge time.Duration
	now    func() time.Time
	// computed and hit, when set, count computations and answers served
	// without one (from the cache or another request's flight).
	computed, hit func()

	mu      sync.Mutex
	lru     *list.List // of *memoEntry[V], most recent first
	byKey   map[string]*list.Element
	flights map[string]*flight[V]
}

type memoEntry[V any] struct {
	key string
	v   V
	at  time.Time
}

// flight is one computation in progress; done is closed when v and err
// are set.
type flight[V any] struct {
	done chan struct{}
	v    V
	err  error
	// abandoned says the computation stopped because its requester's
	// context ended: whoever waited computes again.
	abandoned bool
}

func newMemo[V any](slots, size int, maxAge time.Duration, now func() time.Time) *memo[V] {
	return &memo[V]{slots: make(chan struct{}, slots), size: size, maxAge: maxAge, now: now,
		lru: list.New(), byKey: map[string]*list.Element{}, flights: map[string]*flight[V]{}}
}

// do answers key: the kept answer, the answer of the computation in
// flight, or compute's. compute runs under ctx, the context of the
// request that started it; should that request go away, a request still
// waiting computes again rather than failing with it.
func (m *memo[V]) do(ctx context.Context, key string, compute func(context.Context) (V, error)) (V, error) {
	for {
		m.mu.Lock()
		if v, ok := m.get(key); ok {
			m.mu.Unlock()
			m.count(m.hit)
			return v, nil
		}
		if f, ok := m.flights[key]; ok {
			m.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
			if f.abandoned && ctx.Err() == nil {
				continue
			}
			if f.err == nil {
				m.count(m.hit)
			}
			return f.v, f.err
		}
		f := &flight[V]{done: make(chan struct{})}
		m.flights[key] = f
		m.mu.Unlock()
		m.fly(ctx, key, f, compute)
		return f.v, f.err
	}
}

// fly runs compute for f once a slot is free, keeps its answer and lands
// f, even when compute panics (the panic goes on up).
func (m *memo[V]) fly(ctx context.Context, key string, f *flight[V], compute func(context.Context) (V, error)) {
	landed := false
	defer func() {
		if !landed {
			f.err = fmt.Errorf("compute %s: panicked", key)
		}
		m.mu.Lock()
		delete(m.flights, key)
		if f.err == nil {
			m.put(key, f.v)
		}
		m.mu.Unlock()
		close(f.done)
	}()
	select {
	case m.slots <- struct{}{}:
	case <-ctx.Done():
		f.err, f.abandoned, landed = ctx.Err(), true, true
		return
	}
	defer func() { <-m.slots }()
	m.count(m.computed)
	f.v, f.err = compute(ctx)
	f.abandoned = f.err != nil && ctx.Err() != nil
	landed = true
}

func (m *memo[V]) count(c func()) {
	if c != nil {
		c()
	}
}

// get returns key's kept answer when it is young enough. Called with m.mu
// held.
func (m *memo[V]) get(key string) (V, bool) {
	el, ok := m.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*memoEntry[V])
	if m.now().Sub(e.at) >= m.maxAge {
		m.lru.Remove(el)
		delete(m.byKey, key)
		var zero V
		return zero, false
	}
	m.lru.MoveToFront(el)
	return e.v, true
}

// put keeps v as key's answer, dropping the least recently used beyond
// size. Called with m.mu held.
func (m *memo[V]) put(key string, v V) {
	if el, ok := m.byKey[key]; ok {
		m.lru.Remove(el)
	}
	m.byKey[key] = m.lru.PushFront(&memoEntry[V]{key: key, v: v, at: m.now()})
	for m.lru.Len() > m.size {
		last := m.lru.Back()
		m.lru.Remove(last)
		delete(m.byKey, last.Value.(*memoEntry[V]).key)
	}
}
