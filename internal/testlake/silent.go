package testlake

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// SilentCatalogURI returns the URI of a REST catalog on a host that hangs
// ([SilentHost]).
func SilentCatalogURI(t testing.TB) string {
	t.Helper()
	return "http://" + SilentHost(t)
}

// SilentHost returns the address (127.0.0.1:port) of a server that hangs:
// it accepts connections and never answers, as a stalled catalog or
// object store does. The listener and its connections are closed when t
// ends.
func SilentHost(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		require.NoError(t, ln.Close())
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			require.NoError(t, c.Close())
		}
	})
	return ln.Addr().String()
}
