//go:build unix

package rewriter

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A run's spill directory survives the sweeps of the runs beside it in
// the same process: a sweep that finds the directory between its lock
// file's creation and its locking does not take it away from the run.
func TestRunDirSurvivesConcurrentSweeps(t *testing.T) {
	temp := t.TempDir()
	stop := make(chan struct{})
	var sweeps sync.WaitGroup
	for range 2 {
		sweeps.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					_, _ = SweepRunDirs(temp)
				}
			}
		})
	}
	var runs sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		runs.Go(func() {
			for i := range 300 {
				d, err := NewRunDir(temp, fmt.Sprintf("r%d-%d", w, i))
				if err != nil {
					errs <- err
					return
				}
				if _, err := os.Stat(d.Path); err != nil {
					errs <- fmt.Errorf("run %d-%d lost its directory: %w", w, i, err)
					return
				}
				if err := d.Remove(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	runs.Wait()
	close(stop)
	sweeps.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
