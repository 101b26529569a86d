package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
)

// TestingM is what a TestMain runs: *testing.M, and what goleak.VerifyTestMain takes.
type TestingM interface{ Run() int }

// Shared is one cluster for all tests of a package, started by the first
// [Shared.NewDatabase] and stopped after the package's tests. A package
// declares one and runs its tests through it:
//
//	var pg pgtest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
//
// A package whose tests never ask for a database starts no server.
type Shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// Main runs m and then stops the cluster, if one was started; its result
// is the exit code. A failure to stop turns a pass into code 1.
func (s *Shared) Main(m TestingM) int { return s.Wrap(m).Run() }

// Wrap returns m with the cluster stopped after its Run, for TestMains
// that hand m to another wrapper, such as goleak.VerifyTestMain.
func (s *Shared) Wrap(m TestingM) TestingM { return wrapped{m, s} }

type wrapped struct {
	m TestingM
	s *Shared
}

func (w wrapped) Run() int {
	code := w.m.Run()
	if w.s.cluster != nil {
		if err := w.s.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Cluster returns the shared cluster, starting it on first use. Without
// the PostgreSQL binaries it fails tb, or skips it under -short.
func (s *Shared) Cluster(tb testing.TB) *Cluster {
	tb.Helper()
	bins, err := FindBins()
	if err != nil {
		if testing.Short() {
			tb.Skip(err)
		}
		tb.Fatal(err)
	}
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
		defer cancel()
		s.cluster, s.err = StartCluster(ctx, bins)
	})
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.cluster
}

// NewDatabase creates an empty database on the shared cluster and
// returns its DSN.
func (s *Shared) NewDatabase(tb testing.TB) string {
	tb.Helper()
	return s.Cluster(tb).NewDatabase(tb)
}
