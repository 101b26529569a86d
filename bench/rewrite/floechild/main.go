// Command floechild is the floe side of the rewrite benchmarks: it runs the
// one rewrite.Job in rewrite.ChildEnv and prints its result. It is built
// without cgo, as the floe binary is (rewrite.BuildFloeChild), so the
// process measured is the kind a user runs: the benchmark's test binary
// links DuckDB, whose idle resident set the floe side would otherwise carry
// too. DuckDB's jobs still run in the test binary.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/floe-project/floe/bench/rewrite"
)

func main() {
	served, err := rewrite.ServeChild(context.Background(), os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floechild:", err)
		os.Exit(1)
	}
	if !served {
		fmt.Fprintf(os.Stderr, "floechild: run by the rewrite benchmarks, with %s set to a job\n", rewrite.ChildEnv)
		os.Exit(2)
	}
}
