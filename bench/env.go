package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// EnvInt is the positive integer the environment variable name holds, or
// def when it is unset or empty. Underscores may separate digits
// (FLOE_BENCH_ROWS=10_000_000). Any other value fails tb, naming the
// variable: a benchmark never runs silently at a size nobody asked for.
func EnvInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	n, err := parseEnvInt(name, os.Getenv(name), def)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// parseEnvInt is EnvInt's rule on the value s of variable name.
func parseEnvInt(name, s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive integer (underscores may separate digits)", name, s)
	}
	return n, nil
}
