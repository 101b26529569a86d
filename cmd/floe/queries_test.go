package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueriesEventsJSONEmpty(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	out, errOut, code := run(t, dir, "queries", "--events", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "[]", strings.TrimSpace(out), "no events is an empty list, not null")
}
