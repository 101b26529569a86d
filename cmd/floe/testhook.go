package main

import (
	"context"
	"fmt"
	"io"
)

// envPauseAt is the test-only hook of the crash tests (kill_test.go,
// interrupt_test.go), not a user setting: FLOE_TEST_PAUSE_AT=POINT, a
// [rewriter.CompactOptions.Pause] point ("before-commit-N", "committed"),
// makes a native compaction stop there, write "floe-test: paused at POINT"
// to standard error and wait until the process is killed or interrupted
// (an interrupt lets the compaction go on into its cancellation). Unset —
// always, outside those tests — no hook is installed; naming a point the
// run never reaches, it changes nothing. docs/architecture.md ("What a
// stopped run leaves") says what each point leaves.
const envPauseAt = "FLOE_TEST_PAUSE_AT"

// pausedPrefix starts the line a paused compaction writes.
const pausedPrefix = "floe-test: paused at "

// pauseAt returns the compaction's Pause hook for the point
// FLOE_TEST_PAUSE_AT names (getenv reads it), or nil when it is unset.
func pauseAt(getenv func(string) string, errOut io.Writer) func(context.Context, string) {
	point := getenv(envPauseAt)
	if point == "" {
		return nil
	}
	return func(ctx context.Context, at string) {
		if at != point {
			return
		}
		// The test waits for this line; if it cannot be written, the test
		// times out saying so, and the compaction goes on once interrupted.
		_, _ = fmt.Fprintf(errOut, "%s%s\n", pausedPrefix, at)
		<-ctx.Done()
	}
}
