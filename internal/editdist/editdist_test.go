package editdist_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/editdist"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"events", "events", 0},
		{"event", "events", 1}, {"flta", "flat", 2}, {"kitten", "sitting", 3},
	} {
		require.Equal(t, tc.want, editdist.Distance(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
}
