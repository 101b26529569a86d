package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// counted is a memo whose computations and hits are counted.
func counted(slots, size int, maxAge time.Duration, now func() time.Time) (*memo[int], *atomic.Int64, *atomic.Int64) {
	m := newMemo[int](slots, size, maxAge, now)
	var computed, hits atomic.Int64
	m.computed, m.hit = func() { computed.Add(1) }, func() { hits.Add(1) }
	return m, &computed, &hits
}

// Concurrent requests for one key while it is computed share that one
// computation.
func TestMemoSingleFlight(t *testing.T) {
	m, computed, hits := counted(2, 8, time.Hour, time.Now)
	release := make(chan struct{})
	started := make(chan struct{})
	const n = 16
	var wg sync.WaitGroup
	got, errs := make([]int, n), make([]error, n)
	for i := range n {
		wg.Go(func() {
			got[i], errs[i] = m.do(t.Context(), "k", func(context.Context) (int, error) {
				close(started) // a second computation would panic here
				<-release
				return 42, nil
			})
		})
	}
	<-started
	// Give the other requests time to reach the flight before it lands
	// (one that comes later is answered from the cache: a hit all the
	// same).
	time.Sleep(20 * time.Millisecond)
	require.True(t, waiting(m, "k"))
	close(release)
	wg.Wait()
	require.Equal(t, int64(1), computed.Load())
	require.Equal(t, int64(n-1), hits.Load())
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, 42, got[i])
	}
}

func waiting(m *memo[int], key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.flights[key]
	return ok
}

// At most slots computations of different keys run at once.
func TestMemoBoundsComputations(t *testing.T) {
	m, computed, _ := counted(2, 8, time.Hour, time.Now)
	var running, most atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range 6 {
		wg.Go(func() {
			_, errs[i] = m.do(t.Context(), fmt.Sprint(i), func(context.Context) (int, error) {
				n := running.Add(1)
				for {
					old := most.Load()
					if n <= old || most.CompareAndSwap(old, n) {
						break
					}
				}
				<-release
				running.Add(-1)
				return i, nil
			})
		})
	}
	require.Eventually(t, func() bool { return running.Load() == 2 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, int64(2), running.Load(), "the others wait for a slot")
	close(release)
	wg.Wait()
	require.Equal(t, int64(2), most.Load())
	require.Equal(t, int64(6), computed.Load())
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// A request whose computation others wait for goes away: a waiting
// request computes again rather than failing with it. Errors and panics
// are answered, not kept; a kept answer ages out and the least recently
// used goes first.
func TestMemoFailures(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, computed, _ := counted(1, 2, time.Minute, func() time.Time { return now })

	leader, cancel := context.WithCancel(t.Context())
	inside := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := m.do(leader, "k", func(ctx context.Context) (int, error) {
			close(inside)
			<-ctx.Done()
			return 0, ctx.Err()
		})
		done <- err
	}()
	<-inside
	type answer struct {
		v   int
		err error
	}
	waiter := make(chan answer, 1)
	go func() {
		v, err := m.do(t.Context(), "k", func(context.Context) (int, error) { return 7, nil })
		waiter <- answer{v, err}
	}()
	require.Eventually(t, func() bool { return waiting(m, "k") }, 5*time.Second, time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Equal(t, answer{7, nil}, <-waiter, "the waiter computed again")
	require.Equal(t, int64(2), computed.Load())

	boom := errors.New("boom")
	_, err := m.do(t.Context(), "e", func(context.Context) (int, error) { return 0, boom })
	require.ErrorIs(t, err, boom)
	v, err := m.do(t.Context(), "e", func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	require.Equal(t, 1, v, "an error is not kept")

	require.Panics(t, func() {
		_, _ = m.do(t.Context(), "p", func(context.Context) (int, error) { panic("bug") })
	})
	v, err = m.do(t.Context(), "p", func(context.Context) (int, error) { return 3, nil })
	require.NoError(t, err, "a panic leaves no flight behind nor its slot taken")
	require.Equal(t, 3, v)

	before := computed.Load()
	_, _ = m.do(t.Context(), "p", func(context.Context) (int, error) { return 0, nil })
	require.Equal(t, before, computed.Load(), "kept")
	now = now.Add(time.Minute)
	_, _ = m.do(t.Context(), "p", func(context.Context) (int, error) { return 0, nil })
	require.Equal(t, before+1, computed.Load(), "aged out")

	// Size 2: keeping a third drops the least recently used.
	_, _ = m.do(t.Context(), "a", func(context.Context) (int, error) { return 0, nil })
	_, _ = m.do(t.Context(), "p", func(context.Context) (int, error) { return 0, nil })
	_, _ = m.do(t.Context(), "b", func(context.Context) (int, error) { return 0, nil })
	m.mu.Lock()
	_, a := m.byKey["a"]
	_, p := m.byKey["p"]
	m.mu.Unlock()
	require.False(t, a, "a was the least recently used")
	require.True(t, p)
}
