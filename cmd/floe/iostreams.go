package main

import (
	"bytes"
	"io"
	"os"

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
}

func systemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())) && os.Getenv("FLOE_NO_PROGRESS") == "",
	}
}

// testIO returns streams backed by buffers.
func testIO() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}
