package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// Exit codes. Scripts may rely on them; they are listed in README.md.
const (
	exitOK       = 0
	exitError    = 1 // the operation failed
	exitUsage    = 2 // bad flags, arguments or configuration
	exitUnhealth = 3 // --fail-on: a table crossed the health level asked for
	exitNotFound = 4 // a named table, catalog, plan or run does not exist
	exitCancel   = 130
)

// flagError marks errors caused by bad flags or arguments: the only errors
// that print usage.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

func flagErrorf(format string, args ...any) error { return flagError{fmt.Errorf(format, args...)} }

// exitCodeError carries an exit code chosen by a verb (health --fail-on).
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

// Main runs floe with os.Args and returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := newFactory(systemIO())
	root := newRootCmd(f)
	root.SetArgs(os.Args[1:])
	err := root.ExecuteContext(ctx)
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return exitCode(f.IO, err)
}

func exitCode(io *IOStreams, err error) int {
	if err == nil {
		return exitOK
	}
	var ec exitCodeError
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(io.ErrOut, ec.msg)
		}
		return ec.code
	}
	fmt.Fprintln(io.ErrOut, "floe:", err)
	var fe flagError
	switch {
	case errors.Is(err, context.Canceled):
		return exitCancel
	case errors.As(err, &fe), errors.Is(err, config.ErrInvalid):
		return exitUsage
	case errors.Is(err, lake.ErrNoSuchTable), errors.Is(err, store.ErrNotFound):
		return exitNotFound
	}
	return exitError
}
