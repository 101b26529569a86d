package rewriter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runDirPrefix starts the name of every per-run spill directory.
const runDirPrefix = "floe-run-"

// RunDir is a run's own spill directory, <temp>/floe-run-<run id>, locked
// (an advisory file lock on its "lock" file) for as long as the run lives.
// The lock goes with the process, so a run killed with SIGKILL leaves a
// directory that nobody holds: [SweepRunDirs], called by the next run and
// by floe orphans, removes it and the spill files in it.
type RunDir struct {
	Path string
	lock *os.File
}

// NewRunDir creates and locks the spill directory of run under temp
// (default os.TempDir()).
func NewRunDir(temp, runID string) (*RunDir, error) {
	if temp == "" {
		temp = os.TempDir()
	}
	if runID == "" || strings.ContainsAny(runID, `/\`) {
		return nil, fmt.Errorf("new run dir: run id %q is empty or holds a path separator", runID)
	}
	dir := filepath.Join(temp, runDirPrefix+runID)
	// Another run's sweep may find the directory between the lock file's
	// creation and its locking: it then holds the lock a moment, or has
	// removed the directory with the file this run opened. Either way the
	// run tries again, and keeps the directory only once it holds the lock
	// of the lock file that is there.
	var errs []error
	for attempt := range 20 {
		d, err := lockRunDir(dir)
		if err == nil {
			return d, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, errRunDirTaken) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
	return nil, fmt.Errorf("new run dir: %w", errs[len(errs)-1])
}

// errRunDirTaken says a sweep held or removed the run directory while it
// was being created.
var errRunDirTaken = errors.New("held or removed by a sweep")

// lockRunDir creates dir and its lock file and locks it.
func lockRunDir(dir string) (*RunDir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	lock := filepath.Join(dir, "lock")
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		// A sweep that took an earlier attempt's directory removed it
		// between the MkdirAll and here.
		return nil, fmt.Errorf("%s was removed while created: %w", dir, errRunDirTaken)
	}
	if err != nil {
		return nil, err
	}
	ok, err := tryLock(f)
	if err == nil && !ok {
		err = fmt.Errorf("%s is locked by another run or a sweep: %w", dir, errRunDirTaken)
	}
	if err == nil {
		mine, errMine := f.Stat()
		there, errThere := os.Stat(lock)
		if errMine != nil || errThere != nil || !os.SameFile(mine, there) {
			err = fmt.Errorf("%s was removed: %w", dir, errRunDirTaken)
		}
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &RunDir{Path: dir, lock: f}, nil
}

// Remove deletes the directory with everything in it and drops the lock.
func (d *RunDir) Remove() error {
	err := os.RemoveAll(d.Path)
	return errors.Join(err, d.lock.Close())
}

// SweptDir is a spill directory [SweepRunDirs] removed.
type SweptDir struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// SweepRunDirs removes the spill directories under temp (default
// os.TempDir()) that no live run holds: those of killed runs. A directory
// whose lock is held is left alone.
func SweepRunDirs(temp string) ([]SweptDir, error) {
	if !sweepSupported {
		return nil, nil
	}
	if temp == "" {
		temp = os.TempDir()
	}
	entries, err := os.ReadDir(temp)
	if err != nil {
		return nil, fmt.Errorf("sweep run dirs in %s: %w", temp, err)
	}
	var out []SweptDir
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runDirPrefix) {
			continue
		}
		dir := filepath.Join(temp, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			// Being created, or half removed: only a directory with a lock
			// file can be judged.
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ok, err := tryLock(f)
		if err != nil || !ok {
			errs = append(errs, err)
			_ = f.Close() // read-only probe of a live run's lock
			continue
		}
		size := dirSize(dir)
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", dir, err))
		} else {
			out = append(out, SweptDir{Path: dir, Bytes: size})
		}
		errs = append(errs, f.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("sweep run dirs in %s: %w", temp, err)
	}
	return out, nil
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil // a size for the report: unreadable entries count zero
	})
	return n
}
