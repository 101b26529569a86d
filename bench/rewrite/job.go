package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/rewriter"
)

// ChildEnv is the environment variable that turns a process into a
// benchmark child: it holds a JSON [Job], and [ServeChild] runs it.
const ChildEnv = "FLOE_BENCH_REWRITE_JOB"

// Engine names who rewrites in a [Job].
type Engine string

// Engines.
const (
	// EngineFloe runs rewriter.RewriteGroup.
	EngineFloe Engine = "floe"
	// EngineDuckDB runs DuckDB's sorted temp table and COPY per file (needs
	// the duckdb build tag).
	EngineDuckDB Engine = "duckdb"
	// EngineFloor reads floe's input with arrow-go and writes its rows
	// unsorted through floe's Parquet writer, as floe would cut its files:
	// the Parquet floor under a floe job (see runFloor). It takes a floe
	// job's fields.
	EngineFloor Engine = "floor"
	// EngineIdle does nothing: it measures the child binary's baseline.
	EngineIdle Engine = "idle"
)

// ErrNoDuckDB is returned for DuckDB jobs by a binary built without the
// duckdb build tag.
var ErrNoDuckDB = errors.New("rewrite bench: built without the duckdb tag")

// DuckDBAvailable reports whether this binary can run [EngineDuckDB] jobs.
const DuckDBAvailable = duckDBAvailable

// Job is one rewrite run in a child process.
type Job struct {
	// Engine is who rewrites.
	Engine Engine `json:"engine"`
	// Layout is the layout in layout.Parse form.
	Layout string `json:"layout"`
	// QuantilesFile holds the quantiles hilbert keys need.
	QuantilesFile string `json:"quantiles_file,omitempty"`
	// TempDir holds spill files (both engines).
	TempDir string `json:"temp_dir,omitempty"`

	// Warehouse is the dataset directory whose table floe rewrites.
	Warehouse string `json:"warehouse,omitempty"`
	// MemoryBytes is floe's memory budget (0: unbounded).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// TargetFileSizeBytes is floe's output file size.
	TargetFileSizeBytes int64 `json:"target_file_size_bytes,omitempty"`
	// CPUProfile, when set, is where floe (or the floor) writes a CPU
	// profile of its run.
	CPUProfile string `json:"cpu_profile,omitempty"`

	// Groups are what DuckDB rewrites, one sort each, in order: the
	// whole table, or one partition per group (its input files, with
	// [KeyColumn] when KeyColumn is set, and the row counts of the files to
	// cut, taken from floe's group).
	Groups []JobGroup `json:"groups,omitempty"`
	// KeyColumn, when set, is the column DuckDB orders by and leaves out of
	// its output; otherwise it orders by the layout's columns.
	KeyColumn string `json:"key_column,omitempty"`
	// OutDir receives DuckDB's output files.
	OutDir string `json:"out_dir,omitempty"`
}

// JobGroup is one group of a rewrite: rows of Inputs written, globally
// ordered within the group, into files of FileRows rows each.
type JobGroup struct {
	// Partition names the group's partition ("" when unpartitioned).
	Partition string `json:"partition,omitempty"`
	// Inputs are the group's input files, local paths.
	Inputs []string `json:"inputs"`
	// FileRows are the row counts of the group's output files, in order.
	FileRows []int64 `json:"file_rows"`
}

// JobResult is what a child reports.
type JobResult struct {
	// Rows is the number of rows written.
	Rows int64 `json:"rows"`
	// Files are the output files' local paths, in key order.
	Files []string `json:"files"`
	// FileRows are the row counts of Files.
	FileRows []int64 `json:"file_rows"`
	// Groups split Files into the groups rewritten, in order: group i's
	// files follow group i-1's in Files. Each group's Inputs are the files
	// it read (floe: the table's data files of its partition).
	Groups []JobGroup `json:"groups"`
	// OutputBytes is the total size of Files.
	OutputBytes int64 `json:"output_bytes"`
	// PeakArrowBytes is floe's measured Arrow peak.
	PeakArrowBytes int64 `json:"peak_arrow_bytes,omitempty"`
	// PeakPoolBytes is the most memory floe's rewriter.PagePool had mapped
	// at once: the Arrow buffers of 32 KiB and more, with what their size
	// classes and spare slabs add.
	PeakPoolBytes int64 `json:"peak_pool_bytes,omitempty"`
	// CodedColumns are the columns floe carried as dictionary codes
	// (rewriter.GroupStats.CodedColumns), over all groups.
	CodedColumns []string `json:"coded_columns,omitempty"`
	// SpilledRuns and SpilledBytes describe floe's external sort.
	SpilledRuns  int   `json:"spilled_runs,omitempty"`
	SpilledBytes int64 `json:"spilled_bytes,omitempty"`
	// VerifySeconds is the time floe's content check took (reading every
	// output back and comparing its digest with the input's, summed over
	// the groups): part of Seconds, never skipped.
	VerifySeconds float64 `json:"verify_seconds,omitempty"`
	// Seconds is the engine's own time for the rewrite, without process
	// start-up.
	Seconds float64 `json:"seconds"`
	// PeakRSSBytes is the child's own high-water resident set (VmHWM of
	// /proc/self/status, 0 where there is none), read just before it exits.
	PeakRSSBytes int64 `json:"peak_rss_bytes,omitempty"`
}

// Usage is what the parent measured of a child.
type Usage struct {
	// Wall is the child's elapsed time from start to exit.
	Wall time.Duration
	// CPU is the child's user plus system time.
	CPU time.Duration
	// MaxRSSBytes is the child's peak resident set: its own VmHWM where
	// the system has one, else RusageMaxRSSBytes.
	MaxRSSBytes int64
	// RusageMaxRSSBytes is ru_maxrss of the waited child. On Linux it is
	// at least the parent's RSS at the time of the fork: Go starts children
	// with vfork semantics (CLONE_VM), and exec keeps the high-water mark of
	// the address space it leaves, which is the parent's. So it overstates
	// a small child of a big parent; VmHWM does not.
	RusageMaxRSSBytes int64
	// MinorFaults is the child's minor page faults (ru_minflt, 0 where
	// there is none): mostly its first touches of fresh memory.
	MinorFaults int64
}

// Run runs job in a child process of the executable exe (which must call
// [ServeChild] first thing, as the benchmark's TestMain does) and returns
// the child's result and resource usage.
func Run(ctx context.Context, exe string, job Job) (JobResult, Usage, error) {
	var res JobResult
	js, err := json.Marshal(job)
	if err != nil {
		return res, Usage{}, fmt.Errorf("run %s child: %w", job.Engine, err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), ChildEnv+"="+string(js))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	u := Usage{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		u.CPU, u.RusageMaxRSSBytes, u.MinorFaults = childUsage(cmd.ProcessState)
		u.MaxRSSBytes = u.RusageMaxRSSBytes
	}
	if err != nil {
		return res, u, fmt.Errorf("run %s child (%s): %w: %s", job.Engine, job.Layout, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return res, u, fmt.Errorf("run %s child (%s): decode result %q: %w", job.Engine, job.Layout, stdout.String(), err)
	}
	if res.PeakRSSBytes > 0 {
		u.MaxRSSBytes = res.PeakRSSBytes
	}
	return res, u, nil
}

// ServeChild runs the [Job] in [ChildEnv], if set, and writes its
// [JobResult] as JSON to out. It reports whether the process was a child;
// the caller then exits (non-zero on error) instead of running tests.
func ServeChild(ctx context.Context, out io.Writer) (bool, error) {
	js := os.Getenv(ChildEnv)
	if js == "" {
		return false, nil
	}
	var job Job
	if err := json.Unmarshal([]byte(js), &job); err != nil {
		return true, fmt.Errorf("decode %s: %w", ChildEnv, err)
	}
	start := time.Now()
	var (
		res JobResult
		err error
	)
	switch job.Engine {
	case EngineFloe:
		res, err = runFloe(ctx, job)
	case EngineFloor:
		res, err = runFloor(ctx, job)
	case EngineDuckDB:
		res, err = runDuckDB(ctx, job)
	case EngineIdle:
	default:
		err = fmt.Errorf("unknown engine %q", job.Engine)
	}
	if err != nil {
		return true, fmt.Errorf("%s %s: %w", job.Engine, job.Layout, err)
	}
	res.Seconds = time.Since(start).Seconds()
	for _, p := range res.Files {
		st, err := os.Stat(p)
		if err != nil {
			return true, fmt.Errorf("%s %s: %w", job.Engine, job.Layout, err)
		}
		res.OutputBytes += st.Size()
	}
	res.PeakRSSBytes = selfPeakRSS()
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return true, fmt.Errorf("write result: %w", err)
	}
	return true, nil
}

func runFloe(ctx context.Context, job Job) (res JobResult, err error) {
	tbl, err := loadTable(ctx, job.Warehouse)
	if err != nil {
		return res, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return res, fmt.Errorf("plan files: %w", err)
	}
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return res, fmt.Errorf("arrow schema: %w", err)
	}
	keyer, err := NewKeyer(job.Layout, sch, job.QuantilesFile)
	if err != nil {
		return res, err
	}
	stop, err := startTimedPart(job)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	groups, parts := partitionGroups(tasks)
	pages := rewriter.NewPagePool()
	out := rewriter.RewriteGroups(ctx, tbl, groups, rewriter.GroupOptions{
		TargetFileSizeBytes: job.TargetFileSizeBytes,
		MemoryBytes:         job.MemoryBytes,
		TempDir:             job.TempDir,
		Keyer:               keyer,
		Pages:               pages,
	})
	res.PeakPoolBytes = pages.PeakMappedBytes()
	if err := pages.Close(); err != nil {
		return res, err
	}
	var errs []error
	for i, g := range out {
		if g.Err != nil {
			errs = append(errs, fmt.Errorf("group %s: %w", parts[i], g.Err))
			continue
		}
		jg := JobGroup{Partition: parts[i]}
		for _, t := range groups[i] {
			jg.Inputs = append(jg.Inputs, localPath(t.File.FilePath()))
		}
		for _, f := range g.Files {
			res.Files = append(res.Files, localPath(f.FilePath()))
			res.FileRows = append(res.FileRows, f.Count())
			jg.FileRows = append(jg.FileRows, f.Count())
		}
		res.Groups = append(res.Groups, jg)
		res.Rows += g.Stats.Rows
		// Groups run at once, each with its own allocator: the sum bounds
		// the peak from above.
		res.PeakArrowBytes += g.Stats.PeakArrowBytes
		for _, c := range g.Stats.CodedColumns {
			if !slices.Contains(res.CodedColumns, c) {
				res.CodedColumns = append(res.CodedColumns, c)
			}
		}
		res.SpilledRuns += g.Stats.Sort.SpilledRuns
		res.SpilledBytes += g.Stats.Sort.SpilledBytes
		res.VerifySeconds += g.Stats.Content.Duration.Seconds()
	}
	if err := errors.Join(errs...); err != nil {
		// Files of the groups that did succeed are left for the parent to
		// remove with the rest of the run.
		return res, err
	}
	return res, nil
}

// startTimedPart begins the timed part of a job in its child process: the
// CPU profile the job asks for, and the heap limit of its memory budget,
// as floe compact --memory sets it (the benchmark measures the process a
// user runs). The returned func stops the profile.
func startTimedPart(job Job) (stop func() error, err error) {
	if stop, err = startCPUProfile(job.CPUProfile); err != nil {
		return nil, err
	}
	if job.MemoryBytes > 0 {
		debug.SetMemoryLimit(rewriter.HeapLimit(job.MemoryBytes))
	}
	return stop, nil
}

// startCPUProfile starts a CPU profile of this process into path (nothing
// when path is empty) and returns what stops it: the timed part of a job,
// after the table is loaded and before its rows are read.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(fmt.Errorf("cpu profile: %w", err), f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// partitionGroups groups the scan tasks by partition, one group per
// partition in the order of the partitions' names (one group, named "",
// when the table is unpartitioned), as floe's compaction plans a table
// whose partitions each fit one group.
func partitionGroups(tasks []table.FileScanTask) ([][]table.FileScanTask, []string) {
	tasks = rewriter.CollapseTasks(tasks)
	byPart := map[string][]table.FileScanTask{}
	for _, t := range tasks {
		k := ""
		if p := t.File.Partition(); len(p) > 0 {
			k = fmt.Sprint(p)
		}
		byPart[k] = append(byPart[k], t)
	}
	parts := slices.Sorted(maps.Keys(byPart))
	groups := make([][]table.FileScanTask, len(parts))
	for i, k := range parts {
		groups[i] = byPart[k]
	}
	return groups, parts
}

// selfPeakRSS reads this process's VmHWM from /proc/self/status; 0 when
// there is no such file (not Linux) or no such line.
func selfPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
