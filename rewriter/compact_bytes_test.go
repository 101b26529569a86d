package rewriter_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// TestCompactBytesUnchanged rewrites the same table into every layout but the tree, with
// the memory unbounded and bounded to 1 MiB (the sort spills and merges), and compares
// a digest of the files' bytes (each file's SHA-256, sorted, hashed again) with the
// digest written before the writer learned to close files at a tree's leaves: only
// trees write other files; every other layout writes the very same bytes. The digests
// change with anything the files' bytes depend on (arrow-go's Parquet writer, the
// codec, the rows of fillTwins); after such a change, check that this is the reason
// and take the new digests from the failure.
func TestCompactBytesUnchanged(t *testing.T) {
	want := map[string]string{
		"sort(id)":                         "d6c792f34dba0101",
		"sort(v desc nulls last, id)":      "e6860ae41ffb50c4",
		"zorder(id, v)":                    "24da9415fd8b96dd",
		"hilbert(id, v)":                   "c8d0ea306df960d9",
		"binpack":                          "11c4ecbd543bdb93",
		"sort(id)/1MiB":                    "d6c792f34dba0101",
		"sort(v desc nulls last, id)/1MiB": "c1f3ef7c31279a06",
		"hilbert(id, v)/1MiB":              "3743f3c9ae641a4d",
	}
	got := map[string]string{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			spec, mem := name, int64(0)
			if s, ok := strings.CutSuffix(name, "/1MiB"); ok {
				spec, mem = s, 1<<20
			}
			tt := fillTwins(t)
			l, err := layout.Parse(spec)
			require.NoError(t, err)
			st := tt.state(t, tt.tbl)
			opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 16 << 10,
				Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			opts.Group.MemoryBytes = mem
			opts.Group.Parallelism = 1
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			res, err := rewriter.Compact(ctx, st, plan, opts)
			require.NoError(t, err)
			tt.tbl = res.Table
			after := tt.state(t, tt.tbl)
			fs, err := tt.tbl.FS(ctx)
			require.NoError(t, err)
			var sums []string
			for _, f := range after.DataFiles {
				in, err := fs.Open(f.Path)
				require.NoError(t, err)
				b, err := io.ReadAll(in)
				require.NoError(t, in.Close())
				require.NoError(t, err)
				s := sha256.Sum256(b)
				sums = append(sums, hex.EncodeToString(s[:]))
			}
			slices.Sort(sums)
			h := sha256.New()
			for _, s := range sums {
				h.Write([]byte(s))
			}
			got[name] = hex.EncodeToString(h.Sum(nil))[:16]
			t.Logf("%d files, digest %s", len(sums), got[name])
			require.Equal(t, want[name], got[name], "the files of %s are not the bytes they were", name)
		})
	}
}
