package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print floe's version, the commit it was built from, and the versions of the libraries it is built on",
		Long: `Print floe's module version and the VCS commit it was built from (with
"+dirty" when the work tree had changes, from the Go toolchain's build
information), the Go version, and the versions of iceberg-go and arrow-go.
'floe --version' prints the first line only.`,
		Example: "  floe version\n  floe --version",
		Args:    wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, ok := debug.ReadBuildInfo()
			if !ok {
				fmt.Fprintln(f.IO.Out, "floe (unknown build)")
				return nil
			}
			fmt.Fprintf(f.IO.Out, "floe %s (%s)\n", buildVersion(info), info.GoVersion)
			for _, d := range info.Deps {
				switch d.Path {
				case "github.com/apache/iceberg-go", "github.com/apache/arrow-go/v18":
					fmt.Fprintf(f.IO.Out, "  %s %s\n", d.Path, d.Version)
				}
			}
			return nil
		},
	}
}

// buildVersion is floe's version as built: the module version, then the VCS
// commit (12 hex digits, "+dirty" for a modified work tree) and its time
// when the toolchain recorded them, as in "(devel) commit 6e3438a1b2c3
// 2026-12-01T20:58:03Z".
func buildVersion(info *debug.BuildInfo) string {
	if info == nil {
		return "(unknown build)"
	}
	parts := []string{info.Main.Version}
	if parts[0] == "" {
		parts[0] = "(devel)"
	}
	var rev, at string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		// Go stamps a pseudo-version that already holds the commit.
		if !strings.Contains(parts[0], strings.TrimSuffix(rev, "+dirty")) {
			parts = append(parts, "commit "+rev)
		}
	}
	if at != "" {
		parts = append(parts, at)
	}
	return strings.Join(parts, " ")
}

// rootVersion is the text of floe --version.
func rootVersion() string {
	info, _ := debug.ReadBuildInfo()
	return buildVersion(info)
}
