package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print floe's version and the versions of the libraries it is built on",
		Example: "  floe version",
		Args:    wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, ok := debug.ReadBuildInfo()
			if !ok {
				fmt.Fprintln(f.IO.Out, "floe (unknown build)")
				return nil
			}
			fmt.Fprintf(f.IO.Out, "floe %s (%s)\n", info.Main.Version, info.GoVersion)
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
