package policy

import "errors"

// ErrInvalid marks a policy that cannot be resolved or read: a tie
// between two patterns, a bad value, a value out of its bounds. Config
// errors wrap it too. The errors [Parse], [Set.Resolve] and [Set.Validate]
// return wrap it and every problem they found ([Problems]).
var ErrInvalid = errors.New("invalid policy")

// ErrNoOccurrence is returned (wrapped) by [NextRun] for a schedule that
// does not fire within [ScheduleHorizon] (0 0 30 2 *: February 30th).
// [Set.Validate] refuses such a schedule; the scheduler treats one as an
// error of the table, never as due.
var ErrNoOccurrence = errors.New("schedule never fires")

// invalidError is [ErrInvalid] with the problems found, one per line.
type invalidError struct{ problems []error }

func (e *invalidError) Error() string {
	return ErrInvalid.Error() + ": " + errors.Join(e.problems...).Error()
}

func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func (e *invalidError) Unwrap() []error { return e.problems }

// Invalid is one error wrapping [ErrInvalid] and each of problems (each
// "file:line: key: what is wrong"), or nil when there are none.
func Invalid(problems ...error) error {
	if len(problems) == 0 {
		return nil
	}
	return &invalidError{problems: problems}
}

// Problems are the problems an error of [Invalid] holds, so that a caller
// can report them with its own; any other error is its own one problem,
// and nil has none.
func Problems(err error) []error {
	var ie *invalidError
	if errors.As(err, &ie) {
		return ie.problems
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
