package collectors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
)

// One placeholder detection for every collector; the Athena copy missed
// $n and the DuckDB copy missed backticks and block comments.
func TestHasPlaceholder(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"SELECT * FROM t WHERE a = ?", true},
		{"SELECT * FROM t WHERE a = $1", true},
		{"SELECT '?' FROM t", false},
		{`SELECT "a?" FROM t`, false},
		{"SELECT `a?` FROM t", false},
		{"SELECT 1 -- why?\nFROM t", false},
		{"SELECT 1 /* why? */ FROM t WHERE b = $2", true},
		{"SELECT 1 /* why? */ FROM t", false},
		{"SELECT price$ FROM t", false},
		{"SELECT * FROM \"t$snapshots\"", false},
		{"SELECT 'unterminated ?", false},
	} {
		require.Equal(t, tc.want, collectors.HasPlaceholder(tc.sql), tc.sql)
	}
}
