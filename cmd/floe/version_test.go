package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuildVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{name: "no build info", want: "(unknown build)"},
		{name: "module version only", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, want: "v0.3.0"},
		{name: "devel with commit", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "6e3438a1b2c3d4e5f60718293a4b5c6d7e8f9012"}, {Key: "vcs.time", Value: "2026-12-01T20:58:03Z"}, {Key: "vcs.modified", Value: "false"},
		}}, want: "(devel) commit 6e3438a1b2c3 2026-12-01T20:58:03Z"},
		{name: "pseudo-version holds the commit", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201213232-49c0dcb7e4e9+dirty"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "49c0dcb7e4e9aaaa"}, {Key: "vcs.modified", Value: "true"},
		}}, want: "v0.0.0-20261201213232-49c0dcb7e4e9+dirty"},
		{name: "dirty tree", info: &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"},
		}}, want: "(devel) commit abc+dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, buildVersion(tc.info))
		})
	}
}

func TestVersionFlagAndVerb(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	out, errOut, code := run(t, dir, "--version")
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.HasPrefix(out, "floe "), out)
	require.Equal(t, 1, strings.Count(out, "\n"))
	out, errOut, code = run(t, dir, "version")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "github.com/apache/iceberg-go")
}
