//go:build linux

package scale

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// VmHWM is read from a /proc/PID/status in KiB; a status without it, or
// with a bad one, is an error.
func TestParseHWM(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         int64
		err          string
	}{
		{name: "present", status: "Name:\tscale.test\nVmPeak:\t  900 kB\nVmHWM:\t  145236 kB\nVmRSS:\t 1 kB\n", want: 145236 << 10},
		{name: "missing", status: "Name:\tx\nVmRSS:\t1 kB\n", err: "no VmHWM line"},
		{name: "bad", status: "VmHWM:\tmany kB\n", err: `VmHWM "\tmany kB"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHWM(bufio.NewScanner(strings.NewReader(tc.status)))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
