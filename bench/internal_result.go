package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is one benchmark's JSON record.
type Result struct {
	Name      string             `json:"name"`
	When      time.Time          `json:"when"`
	GoVersion string             `json:"go_version"`
	CPUs      int                `json:"cpus"`
	Machine   Machine            `json:"machine"`
	Params    map[string]any     `json:"params"`
	Figures   map[string]float64 `json:"figures"`
	Notes     []string           `json:"notes,omitempty"`
}

// Machine is what a result needs to be compared with one from another
// machine: the CPU, the commit measured, and how busy the machine was
// (the 1-minute load average when the benchmark began and when its result
// was written; machines here are shared, and a load above the core count
// means the figures are slower than the code), and what a first touch of
// fresh memory costs there.
//
// PageFaultMicros is that cost: the median microseconds per 4 KiB page of
// writing one byte to each page of 64 MiB of fresh anonymous memory, three
// times. It is about 12 us on the 2-core VMs the committed results come from
// (bench/results/rewrite.json at ee0e07b: 12.0), where a fault also has the
// host back the page: a property of the machine and its virtualisation,
// not of the code. An engine pays it about once per page of its peak
// resident set, so two engines of different footprints (DuckDB holds the
// whole table in memory, floe its budget) see their throughput ratio move
// with it: the rewrite benchmarks record each engine's *.minor_faults beside
// its CPU so that the share can be taken out. 0 where it cannot be measured
// (not unix).
type Machine struct {
	CPUModel string `json:"cpu_model"`
	// CPUFeatures are the CPU's vector extensions ([cpuFeatures]) and
	// CPUFamily the family they make it ([cpuFamily]): figures of one
	// family are not quoted for another.
	CPUFeatures     []string `json:"cpu_features"`
	CPUFamily       string   `json:"cpu_family"`
	Cores           int      `json:"cores"`
	Commit          string   `json:"commit"`
	LoadBefore      float64  `json:"load_before"`
	LoadAfter       float64  `json:"load_after"`
	PageFaultMicros float64  `json:"page_fault_us"`
}

// NewResult starts a result with the machine's facts filled in.
func NewResult(name string) *Result {
	features := cpuFeatures()
	return &Result{Name: name, When: time.Now().UTC(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Machine: Machine{CPUModel: cpuModel(), CPUFeatures: features, CPUFamily: cpuFamily(features), Cores: runtime.NumCPU(), Commit: commit(), LoadBefore: loadAverage(), PageFaultMicros: pageFaultMicros()},
		Params:  map[string]any{}, Figures: map[string]float64{}}
}

// cpuModel is /proc/cpuinfo's first "model name", or GOARCH elsewhere.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// loadAverage is the 1-minute load average (/proc/loadavg), -1 when
// unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// commit is the commit benchmarked: the build's VCS stamp, else git's
// HEAD (with "-dirty" when the work tree has changes outside bench/results),
// else "unknown".
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	// Result files are left out: one benchmark's result, written into the
	// tree, must not mark the next one's code as changed.
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ":(top)", ":(top,exclude)bench/results").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += "-dirty"
	}
	return rev
}

// Spread is the median of a benchmark's repetitions with their range.
type Spread struct {
	Median, Min, Max float64
}

// SpreadOf summarizes xs.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Spread{Median: s[len(s)/2], Min: s[0], Max: s[len(s)-1]}
}

// SetSpread records name_median, name_min and name_max.
func (r *Result) SetSpread(name string, xs []float64) {
	sp := SpreadOf(xs)
	r.Figures[name+"_median"], r.Figures[name+"_min"], r.Figures[name+"_max"] = sp.Median, sp.Min, sp.Max
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
	r.Machine.LoadAfter = loadAverage()
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
