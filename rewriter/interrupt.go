package rewriter

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// InterruptedError is what [Compact] returns when its context ends (Ctrl-C,
// a deadline) before the plan is done. It says what the run kept and what it
// did not do, instead of a bare "context canceled". errors.Is matches both
// the context's cause (context.Canceled, context.DeadlineExceeded) and the
// error the run stopped with.
type InterruptedError struct {
	// Table is the table compacted; RunID the run.
	Table string
	RunID string
	// Total is the plan's groups; Committed the groups committed before
	// the interruption, in Snapshots snapshots: they are kept.
	Total     int
	Committed []string
	Snapshots int
	// Skipped counts groups skipped (inputs changed, commit races lost).
	Skipped int
	// Removed counts the files written for uncommitted groups and removed
	// on the way out; Left are those that could not be removed, orphans
	// that 'floe orphans' reports as left by run RunID.
	Removed int
	Left    []string
	// Cause is the context's cause; Err what the run stopped with.
	Cause error
	Err   error
	// ctxErr is the context's error (context.Canceled when the cause is a
	// signal).
	ctxErr error
}

func (e *InterruptedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "compact %s interrupted", e.Table)
	if !errors.Is(e.Cause, context.Canceled) {
		fmt.Fprintf(&b, " (%v)", e.Cause)
	}
	b.WriteString(": ")
	if len(e.Committed) == 0 {
		fmt.Fprintf(&b, "no partition committed, the table is as it was")
	} else {
		fmt.Fprintf(&b, "%d of %d partitions committed in %s and kept", len(e.Committed), e.Total, plural(e.Snapshots, "snapshot"))
	}
	if rest := e.Total - len(e.Committed) - e.Skipped; rest > 0 && len(e.Committed) > 0 {
		fmt.Fprintf(&b, "; %s not rewritten, unchanged for the next run", plural(rest, "partition"))
	}
	if e.Skipped > 0 {
		fmt.Fprintf(&b, "; %s skipped", plural(e.Skipped, "partition"))
	}
	if e.Removed > 0 {
		fmt.Fprintf(&b, "; %s removed", plural(e.Removed, "uncommitted file"))
	}
	if len(e.Left) > 0 {
		fmt.Fprintf(&b, "; %s could not be removed ('floe orphans' reports them as left by run %s): %v", plural(len(e.Left), "uncommitted file"), e.RunID, e.Err)
	}
	return b.String()
}

// Unwrap returns the context's error and cause and the error the run
// stopped with.
func (e *InterruptedError) Unwrap() []error { return []error{e.ctxErr, e.Cause, e.Err} }

// interrupted describes a compaction whose context ended.
func interrupted(ctx context.Context, table fmt.Stringer, plan CompactPlan, res CompactResult, runID string, err error) error {
	e := &InterruptedError{Table: table.String(), RunID: runID, Total: len(plan.Groups), Snapshots: len(res.Commits),
		Skipped: len(res.Skipped), Removed: res.RemovedOutputs, Left: res.LeftOutputs, Cause: context.Cause(ctx), Err: err, ctxErr: ctx.Err()}
	for _, c := range res.Commits {
		e.Committed = append(e.Committed, c.Groups...)
	}
	return e
}

// plural is "1 file" or "n files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
