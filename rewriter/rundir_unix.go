//go:build unix

package rewriter

import (
	"errors"
	"os"
	"syscall"
)

// sweepSupported: flock locks go with the process that holds them.
const sweepSupported = true

// tryLock takes an exclusive advisory lock on f without waiting; false
// means another process holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
