package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseEnvInt(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
		bad  bool
	}{
		{s: "", want: 7},
		{s: "12", want: 12},
		{s: "10_000_000", want: 10_000_000},
		{s: "0", bad: true},
		{s: "-3", bad: true},
		{s: "ten", bad: true},
		{s: "1.5", bad: true},
	} {
		got, err := parseEnvInt("FLOE_BENCH_X", tc.s, 7)
		if tc.bad {
			require.ErrorContains(t, err, "FLOE_BENCH_X", tc.s)
			continue
		}
		require.NoError(t, err, tc.s)
		require.Equal(t, tc.want, got, tc.s)
	}
}
