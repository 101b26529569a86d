package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/layout"
	"github.com/floe-project/floe/bench/rewrite"
	"github.com/floe-project/floe/lake"
	floelayout "github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// RewriteLayout is the layout of the one rewrite projection is compared with.
const RewriteLayout = "sort(l_shipdate)"

// Config is one run of the benchmark.
type Config struct {
	// Dir caches the generated tables (see rewrite.PrepareDataset). Required.
	Dir string
	// Rows are the table sizes, smallest first. Required.
	Rows []int64
	// FilesPerMillion is the input files per million rows. Default: 40.
	FilesPerMillion int
	// FilesAfter is the number of files the smallest table's rewrite cuts,
	// which sets the target file size for every size. Default: 120 (the
	// layout benchmark's shape).
	FilesAfter int
	// Reps is the number of timed projections per size. Default: 3.
	Reps int
	// MemoryBytes is the rewrite's budget. Default: rewrite.DefaultMemoryBytes.
	MemoryBytes int64
	// CPUProfileDir, when set, receives one CPU profile of the projections per size.
	CPUProfileDir string
	// Seed seeds the tables and the workload. Default: 1.
	Seed uint64
}

// SizeResult is what one table size measured.
type SizeResult struct {
	Rows       int64
	Files      int
	InputBytes int64
	// TargetFileSizeBytes is the target of the projections and the rewrite.
	TargetFileSizeBytes int64
	// SampleRows and SampleFraction describe the sample the projections used.
	SampleRows     int
	SampleFraction float64
	// SampleSeconds times TakeSample alone; ProjectSeconds times
	// simulator.Project of every candidate (its sample included), per rep.
	SampleSeconds  []float64
	ProjectSeconds []float64
	// Projections are the last rep's projections, in candidate order.
	Projections []simulator.Projection
	// RewriteSeconds times one RewriteGroup by [RewriteLayout]; RewriteRows
	// and RewriteFiles are what it wrote.
	RewriteSeconds float64
	RewriteRows    int64
	RewriteFiles   int
	// RewriteActualPct is the workload's skipped share of files over the
	// rewrite's real files (their written bounds, as iceberg-go would plan
	// them); RewriteProjectedPct is the projection of [RewriteLayout]; and
	// RewriteQueryErrorPP the mean per-query difference between the two, in
	// percentage points: how close the bounded sample came at this size.
	RewriteActualPct    float64
	RewriteProjectedPct float64
	RewriteQueryErrorPP float64
}

// ProjectOverRewrite is the median projection time over the rewrite time.
func (r SizeResult) ProjectOverRewrite() float64 {
	if r.RewriteSeconds <= 0 {
		return 0
	}
	return bench.SpreadOf(r.ProjectSeconds).Median / r.RewriteSeconds
}

// Candidates are the projected layouts: the TPC-H workload's, without current
// (which replays the real file bounds and costs nothing to project).
func Candidates() []string {
	var out []string
	for _, c := range layout.TPCH.Candidates {
		if c != "current" {
			out = append(out, c)
		}
	}
	return out
}

// Run measures every size of cfg, in order.
func Run(ctx context.Context, cfg Config) ([]SizeResult, error) {
	if cfg.Dir == "" || len(cfg.Rows) == 0 {
		return nil, errors.New("plan bench: dir and rows are required")
	}
	if cfg.FilesPerMillion <= 0 {
		cfg.FilesPerMillion = 40
	}
	if cfg.FilesAfter <= 0 {
		cfg.FilesAfter = 120
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 3
	}
	if cfg.MemoryBytes <= 0 {
		cfg.MemoryBytes = rewrite.DefaultMemoryBytes
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	var target int64
	var out []SizeResult
	for _, rows := range cfg.Rows {
		files := max(1, int(rows*int64(cfg.FilesPerMillion)/1_000_000))
		ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: cfg.Dir, Rows: rows, Files: files, Seed: cfg.Seed})
		if err != nil {
			return nil, fmt.Errorf("plan bench: %w", err)
		}
		if target == 0 {
			target = max(1, ds.InputBytes/int64(cfg.FilesAfter))
		}
		r, err := measureSize(ctx, cfg, ds, target)
		if err != nil {
			return nil, fmt.Errorf("plan bench %d rows: %w", rows, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func measureSize(ctx context.Context, cfg Config, ds *rewrite.Dataset, target int64) (SizeResult, error) {
	r := SizeResult{Rows: ds.Rows, Files: ds.Files, InputBytes: ds.InputBytes, TargetFileSizeBytes: target}
	tbl, err := ds.LoadTable(ctx)
	if err != nil {
		return r, err
	}
	id := lake.Ident{Catalog: rewrite.CatalogName, Namespace: []string{rewrite.Namespace}, Name: rewrite.TableName}
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	if err != nil {
		return r, err
	}
	queries, err := layout.TPCH.Queries(id, int(ds.Rows), cfg.Seed, 10)
	if err != nil {
		return r, err
	}
	var layouts []floelayout.Layout
	cols := simulator.WorkloadColumns(st.Metadata.CurrentSchema(), queries)
	for _, c := range Candidates() {
		l, err := floelayout.Parse(c)
		if err != nil {
			return r, err
		}
		l.TargetFileSizeBytes = target
		layouts = append(layouts, l)
		for _, lc := range l.Columns {
			if !slices.Contains(cols, lc.Name) {
				cols = append(cols, lc.Name)
			}
		}
	}
	projected := int((ds.InputBytes + target - 1) / target)
	for rep := range cfg.Reps {
		start := time.Now()
		s, err := simulator.TakeSample(ctx, st, cols, simulator.SampleOptions{ProjectedFiles: projected})
		if err != nil {
			return r, err
		}
		r.SampleSeconds = append(r.SampleSeconds, time.Since(start).Seconds())
		r.SampleRows, r.SampleFraction = s.Rows, s.Fraction
		s.Release()

		stop := func() error { return nil }
		if cfg.CPUProfileDir != "" && rep == 0 {
			if stop, err = startProfile(filepath.Join(cfg.CPUProfileDir, fmt.Sprintf("plan-%d.pprof", ds.Rows))); err != nil {
				return r, err
			}
		}
		start = time.Now()
		ps, err := simulator.Project(ctx, st, layouts, queries, simulator.ProjectOptions{ZOrderMode: floelayout.ZOrderRank})
		r.ProjectSeconds = append(r.ProjectSeconds, time.Since(start).Seconds())
		if perr := stop(); err == nil {
			err = perr
		}
		if err != nil {
			return r, err
		}
		r.Projections = ps
	}
	return r, rewriteOnce(ctx, cfg, st, queries, target, &r)
}

// rewriteOnce times one RewriteGroup of the whole table by RewriteLayout,
// scores the workload against the files it wrote (see [scoreRewrite]) and
// removes them (it commits nothing).
func rewriteOnce(ctx context.Context, cfg Config, st *lake.State, queries []simulator.Query, target int64, r *SizeResult) error {
	tbl := st.Table
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return fmt.Errorf("arrow schema: %w", err)
	}
	keyer, err := rewrite.NewKeyer(RewriteLayout, sch, "")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(cfg.Dir, "plan-spill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan files: %w", err)
	}
	files, gst, err := rewriter.RewriteGroup(ctx, tbl, tasks, rewriter.GroupOptions{
		TargetFileSizeBytes: target, MemoryBytes: cfg.MemoryBytes, TempDir: tmp, Keyer: keyer,
	})
	r.RewriteSeconds = time.Since(start).Seconds()
	var errs []error
	for _, f := range files {
		if rerr := os.Remove(strings.TrimPrefix(f.FilePath(), "file://")); rerr != nil {
			errs = append(errs, rerr)
		}
	}
	if err != nil {
		return errors.Join(append([]error{fmt.Errorf("rewrite %s: %w", RewriteLayout, err)}, errs...)...)
	}
	r.RewriteRows, r.RewriteFiles = gst.Rows, len(files)
	if serr := scoreRewrite(st, files, queries, r); serr != nil {
		errs = append(errs, serr)
	}
	return errors.Join(errs...)
}

// scoreRewrite replays the workload against the rewrite's files, as the
// table would list them had the rewrite been committed, and compares that
// with the projection of [RewriteLayout] per query.
func scoreRewrite(st *lake.State, files []iceberg.DataFile, queries []simulator.Query, r *SizeResult) error {
	i := slices.Index(Candidates(), RewriteLayout)
	if i < 0 || i >= len(r.Projections) {
		return fmt.Errorf("score rewrite: no projection of %s", RewriteLayout)
	}
	proj := r.Projections[i]
	after := *st
	after.DataFiles = make([]lake.File, len(files))
	schema := st.Metadata.CurrentSchema()
	for i, f := range files {
		after.DataFiles[i] = lake.NewFile(f, 0, 0, st.Metadata, schema, false)
	}
	after.DeleteFiles = nil
	real := simulator.ProjectCurrent(&after, queries)
	if len(real.PerQuery) != len(proj.PerQuery) || len(real.PerQuery) == 0 {
		return fmt.Errorf("score rewrite: %d queries replayed, %d projected", len(real.PerQuery), len(proj.PerQuery))
	}
	var sum float64
	for i, q := range real.PerQuery {
		sum += 100 * math.Abs(proj.PerQuery[i].SkippedFraction()-q.SkippedFraction())
	}
	r.RewriteActualPct, r.RewriteProjectedPct = real.SkippedPct, proj.SkippedPct
	r.RewriteQueryErrorPP = sum / float64(len(real.PerQuery))
	return nil
}

func startProfile(path string) (func() error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
}
