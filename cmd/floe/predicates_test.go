package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table form keeps the AND, OR and NOT of a filter: it prints each
// scan's filter as a tree.
func TestPredicatesPrintsTheTree(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	io, out, errOut := testIO()
	io.In = bytes.NewBufferString(`SELECT * FROM web.events e WHERE e.ts >= DATE '2026-11-01' AND (tenant_id IN (1, 2) OR NOT (country = 'US'))`)
	require.Equal(t, 0, runWith(t, io, dir, "predicates", "--dialect", "trino"), errOut.String())
	s := out.String()
	want := `FILTER OF web.events e
  AND
  ├─ ts >= date '2026-11-01'
  └─ OR
     ├─ tenant_id in (1, 2)
     └─ NOT
        └─ country = 'US'
`
	require.True(t, strings.Contains(s, want), "want the tree\n%s\nin\n%s", want, s)
}
