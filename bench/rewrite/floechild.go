package rewrite

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// FloeChildPackage is the command [BuildFloeChild] builds.
const FloeChildPackage = "github.com/floe-project/floe/bench/rewrite/floechild"

// BuildFloeChild builds the floe side's child executable into dir, without
// cgo as the floe binary is built (make build), and returns its path. The
// benchmarks run floe's jobs in it and DuckDB's in their own test binary,
// which links DuckDB: each engine's peak resident set then includes its own
// process's baseline, not the other's. It needs the go command (on PATH,
// else in runtime.GOROOT) and a working directory inside the module.
func BuildFloeChild(ctx context.Context, dir string) (string, error) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "floechild")
	cmd := exec.CommandContext(ctx, gocmd, "build", "-o", out, FloeChildPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: %w: %s", FloeChildPackage, err, strings.TrimSpace(stderr.String()))
	}
	if err := CheckPureGo(out); err != nil {
		return "", err
	}
	return out, nil
}

// CheckPureGo fails unless the executable at path was built with
// CGO_ENABLED=0.
func CheckPureGo(path string) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read build info of %s: %w", path, err)
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" {
			if s.Value != "0" {
				return fmt.Errorf("%s was built with CGO_ENABLED=%s, want 0", path, s.Value)
			}
			return nil
		}
	}
	return fmt.Errorf("%s records no CGO_ENABLED setting", path)
}
