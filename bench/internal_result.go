package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

// Result is one benchmark's JSON record.
type Result struct {
	Name      string             `json:"name"`
	When      time.Time          `json:"when"`
	GoVersion string             `json:"go_version"`
	CPUs      int                `json:"cpus"`
	Params    map[string]any     `json:"params"`
	Figures   map[string]float64 `json:"figures"`
	Notes     []string           `json:"notes,omitempty"`
}

// NewResult starts a result with the machine's facts filled in.
func NewResult(name string) *Result {
	return &Result{Name: name, When: time.Now().UTC(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Params: map[string]any{}, Figures: map[string]float64{}}
}

// Write stores the result as bench/results/<name>.json next to this
// package (or in $FLOE_BENCH_RESULTS) and returns the path.
func (r *Result) Write() (string, error) {
	dir := os.Getenv("FLOE_BENCH_RESULTS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "results")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write bench result: %w", err)
	}
	path := filepath.Join(dir, r.Name+".json")
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("write bench result: %w", err)
	}
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

// Median of durations.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
