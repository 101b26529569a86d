package rewrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/floe-project/floe/internal/oracle"
)

// Defaults of [Config].
const (
	// DefaultMemoryBytes is floe's memory budget: 512 MiB.
	DefaultMemoryBytes = 512 << 20
	// DefaultTargetFileSizeBytes is the output file size: 128 MiB.
	DefaultTargetFileSizeBytes = 128 << 20
)

// Config describes one comparison over a dataset.
type Config struct {
	// Exe is the child executable (normally os.Executable() of the test
	// binary). Required.
	Exe string
	// FloeExe, when set, runs floe's jobs instead of Exe: the pure-Go
	// child of [BuildFloeChild], so that floe's resident set is measured
	// in a process like the floe binary, without DuckDB linked in.
	FloeExe string
	// Dataset is the input. Required.
	Dataset *Dataset
	// Layouts are the layouts compared, in layout.Parse form.
	Layouts []string
	// Reps is the number of runs per engine and layout; medians are
	// reported. Default: 1.
	Reps int
	// MemoryBytes is floe's budget. Default: [DefaultMemoryBytes].
	MemoryBytes int64
	// TargetFileSizeBytes is floe's output file size. Default:
	// [DefaultTargetFileSizeBytes].
	TargetFileSizeBytes int64
	// WorkDir receives DuckDB's outputs and both engines' spill files.
	// Required.
	WorkDir string
	// FloeOnly skips DuckDB.
	FloeOnly bool
	// CPUProfileDir, when set, receives a CPU profile of floe's first run
	// per layout (and of the floor's, with Floor).
	CPUProfileDir string
	// Floor also runs the Parquet floor ([EngineFloor]) after floe in each
	// repetition: floe's input read with arrow-go and written unsorted
	// through floe's writer. Its output is checked to hold the input's
	// rows.
	Floor bool
	// Phases profiles floe's first run per layout (and the floor's, with
	// Floor) and splits its CPU by phase ([SplitProfile]), into
	// CPUProfileDir when set, else into the run's scratch directory.
	Phases bool
}

func (cfg Config) floeExe() string {
	if cfg.FloeExe != "" {
		return cfg.FloeExe
	}
	return cfg.Exe
}

// Measure is one engine's figures for one layout: medians over the runs.
type Measure struct {
	// Wall, CPU and MaxRSSBytes are measured on the child process (see
	// [Usage]); RusageMaxRSSBytes is its ru_maxrss, kept for comparison.
	Wall              time.Duration
	CPU               time.Duration
	MaxRSSBytes       int64
	RusageMaxRSSBytes int64
	// MinorFaults is the child's minor page faults (see [Usage]).
	MinorFaults int64
	// Rows and Files describe the output; Groups is the number of groups
	// (partitions) rewritten.
	Rows   int64
	Files  int
	Groups int
	// OutputBytes is the output's total size.
	OutputBytes int64
	// PeakArrowBytes, PeakPoolBytes and SpilledRuns are floe's own
	// figures (zero for DuckDB).
	PeakArrowBytes int64
	PeakPoolBytes  int64
	SpilledRuns    int
	// Verify is the part of floe's run that checked the content it wrote
	// (zero for DuckDB, which checks nothing).
	Verify time.Duration
}

// RowsPerSecond is the throughput over the child's wall time.
func (m Measure) RowsPerSecond() float64 {
	if m.Wall <= 0 {
		return 0
	}
	return float64(m.Rows) / m.Wall.Seconds()
}

// CPUPerMillionRows is the engine's user+system CPU-seconds per million
// rows written: unlike wall time it does not depend on how many cores the
// machine has, so it compares across machines better than throughput.
func (m Measure) CPUPerMillionRows() float64 {
	if m.Rows <= 0 {
		return 0
	}
	return m.CPU.Seconds() / (float64(m.Rows) / 1e6)
}

// LayoutResult is the comparison of one layout.
type LayoutResult struct {
	// Layout is the layout compared.
	Layout string
	// Floe and DuckDB are the median figures (DuckDB is zero when
	// Config.FloeOnly).
	Floe, DuckDB Measure
	// FloeRuns and DuckDBRuns are the single runs the medians come from.
	FloeRuns, DuckDBRuns []Measure
	// Input, FloeSum and DuckDBSum are the row digests checked equal.
	Input, FloeSum, DuckDBSum oracle.Sum
	// FloeOrder and DuckDBOrder are the order checks of the first run.
	FloeOrder, DuckDBOrder OrderCheck
	// Floor and FloorRuns are the Parquet floor's figures (zero without
	// Config.Floor), FloorSum the digest of its first run's files.
	Floor     Measure
	FloorRuns []Measure
	FloorSum  oracle.Sum
	// FloePhases and FloorPhases split the CPU profile of each one's first
	// run by phase (empty without Config.Phases).
	FloePhases, FloorPhases PhaseSplit
	// FloeProfiledCPU and FloorProfiledCPU are the user+system CPU of the
	// profiled runs, which the phase shares are taken of.
	FloeProfiledCPU, FloorProfiledCPU time.Duration
}

// FloorCPURatio is floe's CPU-seconds per million rows over the floor's:
// how far above decoding and encoding the same rows floe's rewrite is. 0
// without a floor.
func (r LayoutResult) FloorCPURatio() float64 {
	if f := r.Floor.CPUPerMillionRows(); f > 0 {
		return r.Floe.CPUPerMillionRows() / f
	}
	return 0
}

// FloorWallRatio is floe's wall time over the floor's (0 without a floor).
func (r LayoutResult) FloorWallRatio() float64 {
	if r.Floor.Wall > 0 && r.Floor.Rows > 0 {
		return r.Floe.Wall.Seconds() / r.Floor.Wall.Seconds()
	}
	return 0
}

// ThroughputRatio is floe's rows/s over DuckDB's.
func (r LayoutResult) ThroughputRatio() float64 {
	if d := r.DuckDB.RowsPerSecond(); d > 0 {
		return r.Floe.RowsPerSecond() / d
	}
	return 0
}

// OutputBytesRatio is the size of floe's output over DuckDB's for the same
// files: a faster setting that writes bigger files is no win.
func (r LayoutResult) OutputBytesRatio() float64 {
	if r.DuckDB.OutputBytes > 0 {
		return float64(r.Floe.OutputBytes) / float64(r.DuckDB.OutputBytes)
	}
	return 0
}

// RunRatios are the throughput ratios of each repetition: floe's run over
// the DuckDB run right after it, on the same input.
func (r LayoutResult) RunRatios() []float64 {
	var out []float64
	for i := range min(len(r.FloeRuns), len(r.DuckDBRuns)) {
		if d := r.DuckDBRuns[i].RowsPerSecond(); d > 0 {
			out = append(out, r.FloeRuns[i].RowsPerSecond()/d)
		}
	}
	return out
}

// RSSRatio is floe's peak RSS over DuckDB's.
func (r LayoutResult) RSSRatio() float64 {
	if r.DuckDB.MaxRSSBytes > 0 {
		return float64(r.Floe.MaxRSSBytes) / float64(r.DuckDB.MaxRSSBytes)
	}
	return 0
}

// Compare runs every layout of cfg on both engines, Reps times each, floe
// first so that DuckDB can cut its files at the same rows, and checks the
// first run of each engine: all rows present exactly once (digest equal to
// the input's) and globally ordered by the layout. A failed check is an
// error.
func Compare(ctx context.Context, cfg Config) ([]LayoutResult, error) {
	if cfg.Exe == "" || cfg.Dataset == nil || cfg.WorkDir == "" || len(cfg.Layouts) == 0 {
		return nil, errors.New("compare: exe, dataset, work dir and layouts are required")
	}
	if !cfg.FloeOnly && !DuckDBAvailable {
		return nil, fmt.Errorf("compare: %w", ErrNoDuckDB)
	}
	cfg.Reps = max(cfg.Reps, 1)
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = DefaultMemoryBytes
	}
	if cfg.TargetFileSizeBytes == 0 {
		cfg.TargetFileSizeBytes = DefaultTargetFileSizeBytes
	}
	ds := cfg.Dataset
	input, err := Checksum(ctx, ds.Paths)
	if err != nil {
		return nil, err
	}
	if input.Rows != ds.Rows {
		return nil, fmt.Errorf("compare: dataset holds %d rows, expected %d", input.Rows, ds.Rows)
	}
	var out []LayoutResult
	for _, layout := range cfg.Layouts {
		r, err := compareLayout(ctx, cfg, layout, input)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func compareLayout(ctx context.Context, cfg Config, layout string, input oracle.Sum) (LayoutResult, error) {
	ds := cfg.Dataset
	res := LayoutResult{Layout: layout, Input: input}
	// duckInput maps each of the table's files to the file DuckDB reads
	// for it.
	duckInput := map[string]string{}
	keyCol := ""
	if !cfg.FloeOnly {
		keyed, err := NeedsKeyColumn(layout)
		if err != nil {
			return res, err
		}
		inputs := ds.Paths
		if keyed {
			keyCol = KeyColumn
			if inputs, err = ds.KeyedCopy(ctx, layout); err != nil {
				return res, err
			}
		}
		for i, p := range ds.Paths {
			duckInput[p] = inputs[i]
		}
	}
	for rep := range cfg.Reps {
		tmp, err := os.MkdirTemp(cfg.WorkDir, "run-")
		if err != nil {
			return res, fmt.Errorf("compare %s: %w", layout, err)
		}
		job := Job{
			Engine: EngineFloe, Layout: layout, QuantilesFile: ds.QuantilesFile, TempDir: tmp,
			Warehouse: ds.Dir, MemoryBytes: cfg.MemoryBytes, TargetFileSizeBytes: cfg.TargetFileSizeBytes,
		}
		job.CPUProfile = cfg.profilePath(rep, tmp, "floe-"+slug(layout))
		fres, fu, err := Run(ctx, cfg.floeExe(), job)
		if err != nil {
			return res, errors.Join(err, os.RemoveAll(tmp))
		}
		res.FloeRuns = append(res.FloeRuns, measure(fres, fu))
		if rep == 0 && cfg.Phases {
			res.FloeProfiledCPU = fu.CPU
			if res.FloePhases, err = splitProfileFile(job.CPUProfile); err != nil {
				return res, errors.Join(err, removeFiles(fres.Files), os.RemoveAll(tmp))
			}
		}
		if cfg.Floor {
			if err := runFloorRep(ctx, cfg, &res, job, rep, tmp); err != nil {
				return res, errors.Join(fmt.Errorf("compare %s: %w", layout, err), removeFiles(fres.Files), os.RemoveAll(tmp))
			}
		}
		checkErr := func() error {
			if rep > 0 {
				return nil
			}
			res.FloeSum, res.FloeOrder, err = check(ctx, fres, layout, ds, input)
			if err != nil {
				return fmt.Errorf("floe: %w", err)
			}
			return nil
		}()
		var groups []JobGroup
		if checkErr == nil && !cfg.FloeOnly {
			groups, checkErr = duckGroups(fres.Groups, duckInput)
		}
		if checkErr == nil && !cfg.FloeOnly {
			dres, du, err := Run(ctx, cfg.Exe, Job{
				Engine: EngineDuckDB, Layout: layout, QuantilesFile: ds.QuantilesFile, TempDir: tmp,
				Groups: groups, KeyColumn: keyCol, OutDir: filepath.Join(tmp, "duckdb"),
			})
			checkErr = err
			if err == nil {
				res.DuckDBRuns = append(res.DuckDBRuns, measure(dres, du))
				if rep == 0 {
					res.DuckDBSum, res.DuckDBOrder, checkErr = check(ctx, dres, layout, ds, input)
					if checkErr != nil {
						checkErr = fmt.Errorf("duckdb: %w", checkErr)
					}
				}
			}
		}
		// floe's files are written into the table's data directory,
		// uncommitted: remove them with the run's scratch directory.
		if err := errors.Join(checkErr, removeFiles(fres.Files), os.RemoveAll(tmp)); err != nil {
			return res, fmt.Errorf("compare %s: %w", layout, err)
		}
	}
	res.Floe = median(res.FloeRuns)
	res.DuckDB = median(res.DuckDBRuns)
	res.Floor = median(res.FloorRuns)
	return res, nil
}

// profilePath is where a run's CPU profile goes: the first run's only,
// into CPUProfileDir when set, else (for Phases) into the run's scratch
// directory tmp; "" for no profile.
func (cfg Config) profilePath(rep int, tmp, name string) string {
	switch {
	case rep > 0:
		return ""
	case cfg.CPUProfileDir != "":
		return filepath.Join(cfg.CPUProfileDir, name+".pprof")
	case cfg.Phases:
		return filepath.Join(tmp, name+".pprof")
	}
	return ""
}

// runFloorRep runs the floor on floe's job (the same input, budget and
// target) in a child of the floe executable, records it in res, checks the
// first run's files hold the input's rows, and removes its files.
func runFloorRep(ctx context.Context, cfg Config, res *LayoutResult, floeJob Job, rep int, tmp string) error {
	job := floeJob
	job.Engine = EngineFloor
	job.CPUProfile = cfg.profilePath(rep, tmp, "floor-"+slug(floeJob.Layout))
	r, u, err := Run(ctx, cfg.floeExe(), job)
	if err != nil {
		return err
	}
	res.FloorRuns = append(res.FloorRuns, measure(r, u))
	var checkErr error
	if rep == 0 {
		checkErr = func() error {
			if cfg.Phases {
				res.FloorProfiledCPU = u.CPU
				if res.FloorPhases, err = splitProfileFile(job.CPUProfile); err != nil {
					return err
				}
			}
			if res.FloorSum, err = Checksum(ctx, r.Files); err != nil {
				return err
			}
			if res.FloorSum != res.Input || r.Rows != cfg.Dataset.Rows {
				return fmt.Errorf("floor: wrote %d rows, digest %s, the input %s", r.Rows, res.FloorSum, res.Input)
			}
			return nil
		}()
	}
	return errors.Join(checkErr, removeFiles(r.Files))
}

func splitProfileFile(path string) (PhaseSplit, error) {
	f, err := os.Open(path)
	if err != nil {
		return PhaseSplit{}, err
	}
	defer f.Close()
	split, err := SplitProfile(f)
	if err != nil {
		return split, fmt.Errorf("%s: %w", path, err)
	}
	return split, nil
}

// removeFiles removes the files an engine wrote into the table's data
// directory, uncommitted.
func removeFiles(paths []string) error {
	var errs []error
	for _, p := range paths {
		errs = append(errs, os.Remove(p))
	}
	return errors.Join(errs...)
}

// duckGroups turns floe's groups into DuckDB's: the same partitions, the
// files DuckDB reads for the same inputs, the same files cut.
func duckGroups(floe []JobGroup, input map[string]string) ([]JobGroup, error) {
	out := make([]JobGroup, len(floe))
	for i, g := range floe {
		out[i] = JobGroup{Partition: g.Partition, FileRows: g.FileRows}
		for _, p := range g.Inputs {
			in, ok := input[p]
			if !ok {
				return nil, fmt.Errorf("floe read %s, which is not a file of the dataset", p)
			}
			out[i].Inputs = append(out[i].Inputs, in)
		}
	}
	return out, nil
}

// check verifies one engine's output: every input row exactly once, and
// each group's files globally ordered by layout.
func check(ctx context.Context, r JobResult, layout string, ds *Dataset, input oracle.Sum) (oracle.Sum, OrderCheck, error) {
	sum, err := Checksum(ctx, r.Files)
	if err != nil {
		return sum, OrderCheck{}, err
	}
	var oc OrderCheck
	files := r.Files
	for _, g := range r.Groups {
		if len(g.FileRows) > len(files) {
			return sum, oc, fmt.Errorf("groups name %d more files than the engine wrote", len(g.FileRows)-len(files))
		}
		goc, err := CheckOrder(ctx, files[:len(g.FileRows)], layout, ds.QuantilesFile)
		if err != nil {
			return sum, oc, err
		}
		files = files[len(g.FileRows):]
		oc.Rows += goc.Rows
		oc.Violations += goc.Violations
	}
	var errs []error
	if len(files) > 0 {
		errs = append(errs, fmt.Errorf("%d files the engine wrote are in none of its groups", len(files)))
	}
	if sum != input {
		errs = append(errs, fmt.Errorf("output rows differ from the input: output %s, input %s", sum, input))
	}
	if r.Rows != ds.Rows || oc.Rows != ds.Rows {
		errs = append(errs, fmt.Errorf("engine reported %d rows and its files hold %d, the input %d", r.Rows, oc.Rows, ds.Rows))
	}
	if oc.Violations != 0 {
		errs = append(errs, fmt.Errorf("%d adjacent rows out of %s order across %d files in %d groups", oc.Violations, layout, len(r.Files), len(r.Groups)))
	}
	return sum, oc, errors.Join(errs...)
}

func measure(r JobResult, u Usage) Measure {
	return Measure{
		Wall: u.Wall, CPU: u.CPU, MaxRSSBytes: u.MaxRSSBytes, RusageMaxRSSBytes: u.RusageMaxRSSBytes, MinorFaults: u.MinorFaults, Rows: r.Rows, Files: len(r.Files), Groups: len(r.Groups),
		OutputBytes: r.OutputBytes, PeakArrowBytes: r.PeakArrowBytes, PeakPoolBytes: r.PeakPoolBytes, SpilledRuns: r.SpilledRuns,
		Verify: time.Duration(r.VerifySeconds * float64(time.Second)),
	}
}

// median takes the median of each figure on its own.
func median(ms []Measure) Measure {
	if len(ms) == 0 {
		return Measure{}
	}
	mid := func(f func(Measure) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Measure{
		Wall:              time.Duration(mid(func(m Measure) int64 { return int64(m.Wall) })),
		CPU:               time.Duration(mid(func(m Measure) int64 { return int64(m.CPU) })),
		MaxRSSBytes:       mid(func(m Measure) int64 { return m.MaxRSSBytes }),
		RusageMaxRSSBytes: mid(func(m Measure) int64 { return m.RusageMaxRSSBytes }),
		MinorFaults:       mid(func(m Measure) int64 { return m.MinorFaults }),
		Rows:              ms[0].Rows,
		Files:             ms[0].Files,
		Groups:            ms[0].Groups,
		OutputBytes:       mid(func(m Measure) int64 { return m.OutputBytes }),
		PeakArrowBytes:    mid(func(m Measure) int64 { return m.PeakArrowBytes }),
		PeakPoolBytes:     mid(func(m Measure) int64 { return m.PeakPoolBytes }),
		SpilledRuns:       int(mid(func(m Measure) int64 { return int64(m.SpilledRuns) })),
		Verify:            time.Duration(mid(func(m Measure) int64 { return int64(m.Verify) })),
	}
}

// slug turns a layout into a name usable in files and JSON keys.
func slug(layout string) string {
	b := make([]byte, 0, len(layout))
	dash := false
	for _, c := range []byte(layout) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b = append(b, c)
			dash = false
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
			dash = false
		default:
			if !dash && len(b) > 0 {
				b = append(b, '-')
				dash = true
			}
		}
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	return string(b)
}

// Slug is the name of a layout in result keys and file names:
// "sort(l_shipdate, l_orderkey)" becomes "sort-l_shipdate-l_orderkey".
func Slug(layout string) string { return slug(layout) }

// WriteTable prints results as an aligned table: one line per layout and
// engine, with floe/DuckDB ratios on floe's line.
func WriteTable(w io.Writer, results []LayoutResult) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layout\tengine\twall s\tcpu s\tcpu s/Mrows\tpeak RSS MiB\tfaults k\trows/s\tfiles\toutput MiB\tspilled runs\tthroughput ×\tRSS ×\toutput ×\t")
	for _, r := range results {
		row := func(engine string, m Measure, ratios string) {
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%d\t%.1f\t%d\t%s\t\n", r.Layout, engine, m.Wall.Seconds(), m.CPU.Seconds(),
				m.CPUPerMillionRows(), float64(m.MaxRSSBytes)/(1<<20), float64(m.MinorFaults)/1000, m.RowsPerSecond(), m.Files, float64(m.OutputBytes)/(1<<20), m.SpilledRuns, ratios)
		}
		if r.DuckDB.Rows == 0 {
			row("floe", r.Floe, "-\t-\t-")
		} else {
			row("floe", r.Floe, fmt.Sprintf("%.2f\t%.2f\t%.3f", r.ThroughputRatio(), r.RSSRatio(), r.OutputBytesRatio()))
			row("duckdb", r.DuckDB, "\t\t")
		}
		if r.Floor.Rows > 0 {
			row("floor", r.Floor, "\t\t")
		}
	}
	return tw.Flush()
}
