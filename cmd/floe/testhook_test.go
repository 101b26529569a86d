package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
)

// TestPauseAt checks the crash tests' hook: nothing unless
// FLOE_TEST_PAUSE_AT is set, and then a stop at that point only, said on
// stderr, until the context ends.
func TestPauseAt(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			require.Equal(t, envPauseAt, k)
			return v
		}
	}
	require.Nil(t, pauseAt(env(""), &bytes.Buffer{}), "unset: no hook")

	var errOut bytes.Buffer
	pause := pauseAt(env(rewriter.PauseBeforeCommit(2)), &errOut)
	require.NotNil(t, pause)
	pause(context.Background(), rewriter.PauseBeforeCommit(1))
	pause(context.Background(), rewriter.PauseCommitted)
	require.Empty(t, errOut.String(), "other points pass")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pause(ctx, rewriter.PauseBeforeCommit(2))
	}()
	select {
	case <-done:
		t.Fatal("the hook returned before its context ended")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	<-done
	require.Equal(t, pausedPrefix+"before-commit-2\n", errOut.String())
}
