package rewriter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// unpartitioned returns the state of an unpartitioned table of files small
// files, rows rows each.
func unpartitioned(t *testing.T, files, rows int) *lake.State {
	t.Helper()
	w := testlake.New(t)
	closeCatalog(t, w)
	tbl := w.CreateTable(t, "db", "flat", commitSchema, nil, nil, nil)
	for i := range files {
		tbl = appendFresh(t, tbl, (files-i)*rows, rows, "eu")
	}
	st, err := lake.LoadState(context.Background(), lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "flat"}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

type progressEvent struct {
	done, total           int
	bytesDone, bytesTotal int64
}

// An unpartitioned table is one group: its progress must still move in
// bytes while that group is read and written, not jump from 0 to 1 at its
// end, and it must start at zero before any work.
func TestCompactProgressInBytesWithinAGroup(t *testing.T) {
	for _, spec := range []string{"binpack", "sort(id)"} {
		t.Run(spec, func(t *testing.T) {
			// A table of its own: the state of one compacted by the other
			// case has no live inputs left (that compaction would commit
			// nothing, and say so).
			st := unpartitioned(t, 12, 4000)
			l, err := layout.Parse(spec)
			require.NoError(t, err)
			var events []progressEvent
			opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 64 << 10,
				Group: rewriter.GroupOptions{ScanBatchRows: 1000, ScanChunkFiles: 2},
				Progress: func(done, total int, bd, bt int64) {
					events = append(events, progressEvent{done, total, bd, bt})
				}}
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			require.Len(t, plan.Groups, 1)
			_, err = rewriter.Compact(context.Background(), st, plan, opts)
			require.NoError(t, err)

			require.NotEmpty(t, events)
			require.Equal(t, progressEvent{0, 1, 0, plan.InputBytes}, events[0], "a first event before any work")
			within := 0
			for i, e := range events {
				require.Equal(t, plan.InputBytes, e.bytesTotal)
				if i > 0 {
					require.GreaterOrEqual(t, e.bytesDone, events[i-1].bytesDone, "bytes only grow")
				}
				if e.done == 0 && e.bytesDone > 0 && e.bytesDone < e.bytesTotal {
					within++
				}
			}
			require.Greater(t, within, 4, "bytes advance while the only group is rewritten: %v", events)
			last := events[len(events)-1]
			require.Equal(t, progressEvent{1, 1, plan.InputBytes, plan.InputBytes}, last)
		})
	}
}
