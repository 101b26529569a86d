package main

import (
	"bytes"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// IOStreams are where a verb reads and writes. Progress and decorations go
// to ErrOut, and only when it is a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrTTY is true when ErrOut is a terminal (progress bars).
	ErrTTY bool
	// OutTTY is true when Out is a terminal.
	OutTTY bool
	// InTTY is true when In is a terminal: a verb may prompt for what its
	// flags left out (floe init).
	InTTY bool
	// ProgressThrottle is the least time between two redraws of a byte
	// progress bar (systemIO: 100ms; tests: every change).
	ProgressThrottle time.Duration
}

func systemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		InTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())) && os.Getenv("FLOE_NO_PROGRESS") == "",

		ProgressThrottle: 100 * time.Millisecond,
	}
}

// testIO returns streams backed by buffers.
func testIO() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}
