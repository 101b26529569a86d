package trino

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter/trino/trinotest"
)

// TestCancelDeletesTheLastNextURIWhenTheClientDidNot covers the engine's own
// cancellation: a query whose id and nextUri the engine saw, but that the
// client never deleted, is deleted on its nextUri.
func TestCancelDeletesTheLastNextURIWhenTheClientDidNot(t *testing.T) {
	fake := trinotest.New(t)
	fake.Expect("SELECT 1", trinotest.Response{Slow: true})
	e, err := Open(Config{Name: "trino", DSN: fake.DSN("floe")})
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()

	// Run the statement until ctx ends; the client deletes it on
	// /v1/query/<id>. Then forget that DELETE, as if the client had had no
	// chance to send it.
	ctx, tr := withTrace(t.Context())
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = e.db.QueryContext(ctx, "SELECT 1")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	id, next, _ := tr.get()
	require.NotEmpty(t, id)
	require.NotEmpty(t, next)
	tr.mu.Lock()
	tr.deleted = false
	tr.mu.Unlock()

	e.cancel(ctx, tr)
	var paths []string
	for _, d := range fake.Deletes() {
		paths = append(paths, d.Path)
	}
	require.Contains(t, paths, next[len(fake.URL):])
	_, _, deleted := tr.get()
	require.True(t, deleted)
}
