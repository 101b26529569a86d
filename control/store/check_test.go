package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// A damaged state file fails Check (the integrity check reads it
// through), though the database opens and answers a ping.
func TestCheckSeesADamagedStateFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, path)
	require.NoError(t, err)
	for i := range 200 {
		require.NoError(t, st.StartRun(ctx, store.RunRecord{ID: fmt.Sprintf("run-%04d", i), Table: "local.db.t", Status: "done", StartedAt: now,
			Error: strings.Repeat("x", 200)}))
	}
	require.NoError(t, st.Check(ctx))
	require.NoError(t, st.Close())

	// Overwrite the middle of the file: pages of the runs table.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = 0x5a
	}
	_, err = f.WriteAt(junk, int64(len(b)/2)&^4095)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	st, err = store.Open(ctx, path)
	require.NoError(t, err, "opening reads only the schema's pages")
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Ping(ctx), "a ping does not read the damaged pages")
	err = st.Check(ctx)
	require.ErrorContains(t, err, "integrity check")
	// A failed check is not cached: it fails again at once.
	require.Error(t, st.Check(ctx))
}
