package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// Exit codes. Scripts may rely on them; they are listed in README.md, whose
// table is the source of truth (exit_test.go runs its cases).
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

// notFoundError is a named thing that does not exist (a catalog that is not
// configured): exit 4, printed as msg. It matches [lake.ErrNoSuchTable].
type notFoundError struct{ msg string }

func (e notFoundError) Error() string { return e.msg }
func (e notFoundError) Unwrap() error { return lake.ErrNoSuchTable }

// interruptedError is a verb stopped by Ctrl-C or SIGTERM: Main wraps the
// verb's error in it to say which verb was interrupted.
type interruptedError struct {
	cmd *cobra.Command
	err error
}

func (e interruptedError) Error() string {
	what := "floe"
	if e.cmd != nil {
		what = e.cmd.CommandPath()
	}
	msg := what + " was interrupted"
	// The verb's error says where; a bare "context canceled" says nothing.
	text := e.err.Error()
	switch where, cut := strings.CutSuffix(text, ": "+context.Canceled.Error()); {
	case text == context.Canceled.Error():
	case cut:
		msg += " (" + where + ")"
	default:
		msg += ": " + text
	}
	switch v := verbName(e.cmd); {
	case readOnlyVerbs[v]:
		msg += "; nothing was changed"
	case tableWriterVerbs[v]:
		msg += "; commits made before it are kept (floe runs shows what an optimize run did), and files written for an uncommitted change are left for floe orphans"
	}
	return msg
}

func (e interruptedError) Unwrap() error { return e.err }

// readOnlyVerbs change nothing, and create no local catalog, warehouse or
// state store where none is (factory.ReadOnly); tableWriterVerbs commit to
// tables. The others (collect, plan and its decisions) write to the state
// store only.
var (
	readOnlyVerbs = map[string]bool{
		"tables": true, "health": true, "predicates": true, "queries": true, "analyze": true,
		"simulate": true, "measure": true, "plans": true, "list": true, "show": true, "runs": true,
		"report": true, "version": true, "config": true, "policy": true,
	}
	tableWriterVerbs = map[string]bool{
		"compact": true, "optimize": true, "rewrite-manifests": true, "rewrite-deletes": true, "expire": true, "orphans": true, "demo": true,
	}
)

// verbName is the verb under the root ("plan" for floe plan approve, but
// "list" and "show" for floe plan list and floe plan show).
func verbName(cmd *cobra.Command) string {
	if cmd == nil {
		return ""
	}
	for cmd.HasParent() && cmd.Parent().HasParent() {
		if cmd.Name() == "list" || cmd.Name() == "show" {
			return cmd.Name()
		}
		cmd = cmd.Parent()
	}
	return cmd.Name()
}

// Main runs floe with os.Args and returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := newFactory(systemIO())
	root := newRootCmd(f)
	root.SetArgs(os.Args[1:])
	cmd, err := root.ExecuteContextC(ctx)
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) && !errors.As(err, new(workInterrupted)) {
		// A verb that says itself what it kept (workInterrupted) is left
		// as it is.
		err = interruptedError{cmd: cmd, err: err}
	}
	return exitCode(f.IO, err)
}

// exitCode prints err as one sentence on ErrOut and returns the exit code
// README.md's table gives it.
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
	code := classify(err)
	fmt.Fprintln(io.ErrOut, "floe:", message(err))
	return code
}

// classify maps an error to its exit code.
func classify(err error) int {
	var fe flagError
	switch {
	case errors.Is(err, context.Canceled):
		return exitCancel
	case errors.As(err, &fe), errors.Is(err, config.ErrInvalid), errors.Is(err, rewriter.ErrUnsafeAge),
		errors.Is(err, layout.ErrColumnNotFound), errors.Is(err, rewriter.ErrLayoutUnsupported), errors.Is(err, rewriter.ErrScopeUnsupported), errors.Is(err, rewriter.ErrStaleTree),
		errors.Is(err, collectors.ErrUnknownSource):
		return exitUsage
	case errors.Is(err, lake.ErrNoSuchTable), errors.Is(err, catalog.ErrNoSuchTable),
		errors.Is(err, catalog.ErrNoSuchNamespace), errors.Is(err, store.ErrNotFound):
		return exitNotFound
	}
	return exitError
}

// message is what floe prints for err: errors that are whole sentences
// (a table, plan or run that does not exist, a plan in the wrong state)
// stand alone, without the chain of steps that led to them.
func message(err error) string {
	var (
		intr  interruptedError
		table *lake.NoSuchTableError
		nf    *store.NotFoundError
		ps    *control.PlanStateError
		he    *control.HaltedError
		nfe   notFoundError
	)
	switch {
	case errors.As(err, &intr):
		return intr.Error()
	case errors.As(err, &table):
		return table.Error()
	case errors.As(err, &nf):
		return nf.Error()
	case errors.As(err, &ps):
		return ps.Error()
	case errors.As(err, &he):
		return he.Error()
	case errors.As(err, &nfe):
		return nfe.Error()
	case errors.Is(err, rewriter.ErrUnsafeAge):
		return fmt.Sprintf("an orphan age below the %gh safety floor may delete files of commits in flight; raise it, or pass --force to floe orphans if no writer is running", rewriter.MinOrphanAge.Hours())
	}
	return err.Error()
}
