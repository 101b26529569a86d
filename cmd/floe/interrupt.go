package main

import "context"

// workInterrupted is an operation stopped by Ctrl-C (or SIGTERM): msg says
// what was interrupted and what was kept, instead of a bare "context
// canceled". errors.Is finds the context's cause (exit code 130) and the
// error the operation stopped with.
type workInterrupted struct {
	msg           string
	ctxErr, cause error
	err           error
}

// interrupted describes err, returned while ctx ended, with msg.
func interrupted(ctx context.Context, msg string, err error) error {
	return workInterrupted{msg: msg, ctxErr: ctx.Err(), cause: context.Cause(ctx), err: err}
}

func (e workInterrupted) Error() string   { return e.msg }
func (e workInterrupted) Unwrap() []error { return []error{e.ctxErr, e.cause, e.err} }
