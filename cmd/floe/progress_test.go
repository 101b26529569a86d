package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// compact prints its plan before the work and shows progress in bytes, also
// for an unpartitioned table (one partition group), with a time estimate
// from a clock started before the work.
func TestCompactHeaderBeforeByteProgress(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 12, 4000)
	io, buf := ttyIO()
	code := runWith(t, io, dir, "compact", "db.flat", "--layout", "sort(id)", "--target-file-size", "64KiB", "--allow-small-target-file-size")
	s := buf.String()
	require.Equal(t, 0, code, s)
	header := strings.Index(s, "rewriting 1 partitions")
	require.GreaterOrEqual(t, header, 0, s)
	first := strings.Index(s, "compact local.db.flat: 0/1 partitions")
	require.Greater(t, first, header, "the header comes before the progress:\n%s", s)
	require.Greater(t, strings.Index(s, "committed 1 snapshots"), first, s)

	// Within the only group the bar moves in bytes.
	within := 0
	for _, m := range regexp.MustCompile(`0/1 partitions\s+(\d+)% [^(]*\(([^)]*)\)`).FindAllStringSubmatch(s, -1) {
		p, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		if p > 0 && p < 100 {
			within++
			require.Contains(t, m[2], "iB", "bytes, not a count: %q", m[0])
		}
	}
	require.NotZero(t, within, "no byte progress within the group:\n%q", s)
}

// With -o json the bar stays on stderr: stdout is one JSON document.
func TestCompactJSONStdoutClean(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 6, 2000)
	var out, errOut bytes.Buffer
	io := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut, ErrTTY: true}
	code := runWith(t, io, dir, "compact", "db.flat", "--layout", "sort(id)", "--target-file-size", "64KiB", "--allow-small-target-file-size", "-o", "json")
	require.Equal(t, 0, code, errOut.String())
	require.True(t, json.Valid(out.Bytes()), out.String())
	require.Contains(t, errOut.String(), "0/1 partitions")
}
