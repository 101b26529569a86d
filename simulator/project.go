package simulator

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// DefaultTargetFileSizeBytes is Iceberg's write.target-file-size-bytes default, used when
// neither the layout nor the table sets one.
const DefaultTargetFileSizeBytes = 512 << 20

// Projection is how one layout would serve one workload: the JSON contract of a
// `floe simulate` candidate.
type Projection struct {
	// Layout is the layout projected; its JSON is the object every verb
	// prints for a layout ([layout.Layout.MarshalJSON]).
	Layout layout.Layout `json:"layout"`
	// FilesBefore is the table's live data files today.
	FilesBefore int `json:"files_before"`
	// FilesAfter is the number of data files after the rewrite (today's for current).
	FilesAfter int `json:"files_after"`
	// SkippedPct is the weighted mean over queries of 1 − files read/files, in percent.
	SkippedPct float64 `json:"skipped_pct"`
	// BytesReadPct is the weighted mean over queries of bytes read/table bytes, in percent.
	BytesReadPct float64 `json:"bytes_read_pct"`
	// ErrorPP is the error bar of SkippedPct, in percentage points: SamplingErrorPP plus
	// the largest move of SkippedPct when the writer closes every file 1/16 of a file
	// before or after the target size (it closes a file within half of one of its eight
	// row groups) plus SizeErrorPP. For binpack it is how far the projection moves when the input files cut
	// between two outputs go whole to one of them. Zero for current (real bounds). Not
	// meaningful when SampleThin.
	ErrorPP float64 `json:"error_pp"`
	// SamplingErrorPP is the part of ErrorPP that comes from the sample's own variance:
	// |bootstrap bias| + 2 × the bootstrap standard deviation over Replicates resamples
	// of the sample's files (or of its rows, in a partition whose every file was read),
	// within each partition. Zero when every row was read. [Project] samples more rows
	// while it is wider than ProjectOptions.PrecisionPP.
	SamplingErrorPP float64 `json:"sampling_error_pp"`
	// SizeErrorPP is the part of ErrorPP that comes from the size model (SizeRatio,
	// which decides the file count): the largest move of SkippedPct when the rewrite
	// writes 10% more or fewer bytes than projected, the size model's error on real
	// rewrites (binpack: as a target that much smaller or larger would cut its files).
	// Zero when no partition's file count would change.
	SizeErrorPP float64 `json:"size_error_pp"`
	// Basis says what the projection was computed from: "files" (current: the table's
	// real file bounds), "file_bounds" (binpack: unions of the real bounds of the files
	// each output holds) or "sample" (sort, zorder, hilbert).
	Basis string `json:"basis"`
	// Replicates is the number of bootstrap resamples behind ErrorPP (0 when none).
	Replicates int `json:"replicates"`
	// SampleThin is set when the sample holds too few rows per projected file for the
	// projection and its error bar to be trusted; SampleNote says why.
	SampleThin bool   `json:"sample_thin"`
	SampleNote string `json:"sample_note,omitempty"`
	// MeanFilesRead is the weighted mean over queries of the files read.
	MeanFilesRead float64 `json:"mean_files_read"`
	// MeanBoundFiles is the weighted mean over queries of the bound: the least number
	// of files a query could read at this layout's file count, ceil(matching rows / rows
	// per file) in each partition, the matching rows estimated from the sample. Zero
	// when there was no sample to estimate them from.
	MeanBoundFiles float64 `json:"mean_bound_files"`
	// BoundRatio is MeanFilesRead ÷ MeanBoundFiles: 1 is the best any layout with this
	// many files could do for the workload. Zero when the bound is unknown or zero.
	BoundRatio float64 `json:"bound_ratio"`
	// MeanBoxFiles is what the workload's queries read, on the weighted mean, under the
	// box model at this layout's file count: the best grid of min/max files for the
	// whole workload at once ([Sample.BoxBound]), where the bound lets each query have
	// the table cut for it alone. BoxRatio is MeanFilesRead ÷ MeanBoxFiles: near 1 (or
	// below) the layout does about as well as any grid of as many files would, however
	// far above 1 its BoundRatio. Zero when not computed: no sample, or more than
	// maxBoxPartitions partitions.
	MeanBoxFiles float64 `json:"mean_box_files"`
	BoxRatio     float64 `json:"box_ratio"`
	// BiasPP is how much the naive projection (each projected file's range = its sampled
	// rows' min/max) overstated SkippedPct compared with the reported, widened one, in
	// percentage points; it shows how optimistic sample-based min/max is for this layout.
	BiasPP float64 `json:"bias_pp"`
	// TargetFileSizeBytes is the file size the projection cut its files at: the layout's
	// own target, else the table's write.target-file-size-bytes, else
	// [DefaultTargetFileSizeBytes]. Zero for current.
	TargetFileSizeBytes int64 `json:"target_file_size_bytes"`
	// RewriteBytes is the bytes the rewrite reads and rewrites (0 for current).
	RewriteBytes int64 `json:"rewrite_bytes"`
	// SizeRatio is the estimated bytes the rewrite writes divided by the table's bytes
	// today (1 for current and binpack): a layout that clusters values compresses better,
	// so it writes fewer files of the target size. FilesAfter is cut from it.
	SizeRatio float64 `json:"size_ratio"`
	// Tree is the tree a tree layout's projection learned ([LearnTree]) and ordered the
	// sample by ([layout.Tree.MarshalJSON]; load with [layout.UnmarshalTree]). A rewrite
	// given it (rewriter.CompactOptions.Tree, as 'floe optimize --plan' does) writes the
	// leaves that were projected.
	Tree json.RawMessage `json:"tree,omitempty"`
	// TreeExplanation explains Tree in words a person can check ([ExplainTree]): leaf
	// count, depth, rows per leaf and the top cuts with the share of the projected
	// workload's queries each serves. Nil for every other layout.
	TreeExplanation *layout.TreeExplanation `json:"tree_explanation,omitempty"`
	// RecordedTree is the tree the table records (ProjectOptions.Recorded) projected on
	// the same sample and workload as this tree layout's re-learned one, so that the two
	// can be compared; nil for other layouts and tables that record no tree.
	RecordedTree *RecordedProjection `json:"recorded_tree,omitempty"`
	// Quantiles are the bucket boundaries a rank z-order or Hilbert projection ordered
	// the sample by ([Quantiles.MarshalJSON]; load with [UnmarshalQuantiles]). A rewrite
	// given them (rewriter.CompactOptions.Quantiles, as 'floe optimize --plan' does)
	// cuts exactly the cells that were projected.
	Quantiles json.RawMessage `json:"quantiles,omitempty"`
	// SampleRows and SampleFraction describe the sample (0 for current).
	SampleRows     int     `json:"sample_rows"`
	SampleFraction float64 `json:"sample_fraction"`
	// PerQuery holds each query's files and bytes read, in input order.
	PerQuery []QueryResult `json:"per_query,omitempty"`
}

// SimulateResult is the JSON contract of `floe simulate`.
type SimulateResult struct {
	// Table names the table.
	Table string `json:"table"`
	// Queries is the number of workload queries replayed.
	Queries int `json:"queries"`
	// TargetFileSizeBytes is the file size the candidates without a target of their own
	// were projected at, and TargetSource where it comes from (--target-file-size, the
	// policy's target_file_size, the table's write.target-file-size-bytes or floe's
	// default).
	TargetFileSizeBytes int64  `json:"target_file_size_bytes"`
	TargetSource        string `json:"target_source"`
	// Candidates are the projections, one per layout, in input order.
	Candidates []Projection `json:"candidates"`
}

// ProjectOptions tunes [Project] and [ProjectSample]. The zero value uses the defaults.
type ProjectOptions struct {
	// Sample sizes and seeds the sample.
	Sample SampleOptions
	// ZOrderMode picks Iceberg-exact (default) or rank-normalized z-order keys.
	ZOrderMode layout.ZOrderMode
	// QuantileBuckets is the number of quantile buckets for rank z-order and Hilbert.
	// Default: [layout.DefaultQuantileBuckets].
	QuantileBuckets int
	// Replicates is the number of bootstrap resamples behind ErrorPP. Default: 24.
	Replicates int
	// PrecisionPP is the error bar a decision needs, in percentage points: when a
	// sampled candidate's SamplingErrorPP is wider, [Project] samples again with four times the
	// rows per projected file (at most twice, never past Sample.MaxRows). Default: 1.
	PrecisionPP float64
	// ThinRowsPerFile is the fewest sampled rows per projected file below which a
	// projection is marked SampleThin. Default: 20.
	ThinRowsPerFile int
	// TreeWorkload is the workload a tree layout is learned from ([LearnTree]); nil
	// learns it from the projected workload itself. An honest evaluation learns on one
	// draw of a workload and projects another.
	TreeWorkload []Query
	// Tree tunes the learner; its MinLeafRows is set to the sampled rows per projected
	// file.
	Tree TreeOptions
	// TreeCache, when set, keeps the trees learned for tree layouts, so that projecting
	// again on the same sampled rows for the same learning workload (the same table,
	// sample options and queries) reuses them. Nil: every projection learns its tree.
	TreeCache *TreeCache
	// Recorded is the tree the table records for its tree layout, if any: every tree
	// layout's projection projects it too ([Projection.RecordedTree]).
	Recorded *RecordedTree

	// fixedTree, when set, is the tree a tree layout is projected with instead of a
	// learned one (the recorded tree's own projection).
	fixedTree *layout.Tree
}

func (o ProjectOptions) withDefaults() ProjectOptions {
	if o.Replicates <= 0 {
		o.Replicates = 24
	}
	if o.PrecisionPP <= 0 {
		o.PrecisionPP = 1
	}
	if o.ThinRowsPerFile <= 0 {
		o.ThinRowsPerFile = 20
	}
	return o
}

// The values of [Projection.Basis].
const (
	BasisFiles      = "files"
	BasisFileBounds = "file_bounds"
	BasisSample     = "sample"
)

// ProjectCurrent replays the workload against the table's real current file bounds: the
// baseline, and what [Measure] must agree with file for file. It needs no sample.
func ProjectCurrent(st *lake.State, queries []Query) Projection {
	b := newBinding(st.Metadata.CurrentSchema())
	bq := bindQueries(b, queries)
	fs := fileSetFromLake(st.DataFiles, b, st.Metadata)
	rs := fs.replay(bq)
	p := Projection{Layout: layout.Layout{Strategy: layout.StrategyCurrent}, FilesBefore: fs.n, FilesAfter: fs.n, SizeRatio: 1, PerQuery: rs, Basis: BasisFiles}
	p.SkippedPct, p.BytesReadPct = summarize(bq, rs, fs.totalBytes)
	p.MeanFilesRead = meanFilesRead(bq, rs)
	return p
}

// WorkloadColumns lists the schema columns (as the schema spells them) the queries'
// filters can prune on, in order of first use: the columns a sample must hold.
func WorkloadColumns(schema *iceberg.Schema, queries []Query) []string {
	b := newBinding(schema)
	bindQueries(b, queries)
	out := make([]string, len(b.cols))
	for i, c := range b.cols {
		out[i] = c.name
	}
	return out
}

// Project projects every layout for the workload: current from the real file bounds,
// every other layout from one sample of the predicate and layout columns (taken once,
// see [TakeSample]).
func Project(ctx context.Context, st *lake.State, layouts []layout.Layout, queries []Query, opts ProjectOptions) ([]Projection, error) {
	schema := st.Metadata.CurrentSchema()
	cols := WorkloadColumns(schema, queries)
	for _, c := range WorkloadColumns(schema, opts.TreeWorkload) {
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	if r := opts.Recorded; r != nil && r.Tree != nil && slices.ContainsFunc(layouts, func(l layout.Layout) bool { return l.Strategy == layout.StrategyTree }) {
		for _, name := range r.Tree.Columns() {
			f, ok := schema.FindFieldByNameCaseInsensitive(name)
			if !ok {
				return nil, fmt.Errorf("project the recorded tree of %s: column %q: %w", r.Layout, name, layout.ErrColumnNotFound)
			}
			if n, _ := schema.FindColumnName(f.ID); !slices.Contains(cols, n) {
				cols = append(cols, n)
			}
		}
	}
	needSample := false
	projected := 0
	for _, l := range layouts {
		if err := l.Validate(); err != nil {
			return nil, err
		}
		if l.Strategy == layout.StrategyCurrent {
			continue
		}
		needSample = true
		for _, c := range l.Columns {
			f, ok := schema.FindFieldByNameCaseInsensitive(c.Name)
			if !ok {
				return nil, fmt.Errorf("project layout %s: column %q: %w", l, c.Name, layout.ErrColumnNotFound)
			}
			n, _ := schema.FindColumnName(f.ID)
			if !slices.Contains(cols, n) {
				cols = append(cols, n)
			}
		}
		var bytes int64
		for _, f := range st.DataFiles {
			bytes += f.SizeBytes
		}
		projected = max(projected, int(math.Ceil(float64(bytes)/float64(targetSize(l, st)))))
	}
	opts = opts.withDefaults()
	if !needSample {
		out := make([]Projection, len(layouts))
		for i := range layouts {
			out[i] = ProjectCurrent(st, queries)
		}
		return out, nil
	}
	so := opts.Sample
	if so.ProjectedFiles <= 0 {
		so.ProjectedFiles = projected
	}
	so = withSampleDefaults(so)
	// The sample is sized by the precision the decision needs: when a sampled
	// candidate's error bar is wider than PrecisionPP, sample again with four times the
	// rows per projected file, up to twice and never past MaxRows.
	for round := 0; ; round++ {
		out, sample, err := projectOnce(ctx, st, layouts, queries, cols, so, opts)
		if err != nil {
			return nil, err
		}
		wide := false
		for _, p := range out {
			wide = wide || p.Basis == BasisSample && p.SamplingErrorPP > opts.PrecisionPP
		}
		full := sample.Fraction >= 1 || sample.Rows >= so.MaxRows*9/10
		sample.Release()
		if !wide || full || round == 2 {
			return out, nil
		}
		so.RowsPerProjectedFile *= 4
	}
}

// withSampleDefaults fills the zero fields of o with [DefaultSampleOptions].
func withSampleDefaults(o SampleOptions) SampleOptions {
	d := DefaultSampleOptions()
	if o.RowsPerProjectedFile <= 0 {
		o.RowsPerProjectedFile = d.RowsPerProjectedFile
	}
	if o.MaxRows <= 0 {
		o.MaxRows = d.MaxRows
	}
	return o
}

// projectOnce takes one sample and projects every layout from it; the caller
// releases the sample.
func projectOnce(ctx context.Context, st *lake.State, layouts []layout.Layout, queries []Query, cols []string, so SampleOptions, opts ProjectOptions) ([]Projection, *Sample, error) {
	sample, err := TakeSample(ctx, st, cols, so)
	if err != nil {
		return nil, nil, err
	}
	// Layouts are projected concurrently, one per core: each is pure CPU over the
	// shared sample, whose column values and quantile fits are computed once.
	out := make([]Projection, len(layouts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, l := range layouts {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return fmt.Errorf("project %s: %w", st.Ident, err)
			}
			if l.Strategy == layout.StrategyCurrent {
				p := ProjectCurrent(st, queries)
				if err := sample.applyBound(&p, queries, sample.PartitionFiles); err != nil {
					return fmt.Errorf("project %s: %w", st.Ident, err)
				}
				out[i] = p
				return nil
			}
			p, err := ProjectSample(sample, l, queries, targetSize(l, st), opts)
			if err != nil {
				return fmt.Errorf("project %s: %w", st.Ident, err)
			}
			out[i] = p
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		sample.Release()
		return nil, nil, err
	}
	if err := applyBox(sample, queries, out); err != nil {
		sample.Release()
		return nil, nil, fmt.Errorf("project %s: box model: %w", st.Ident, err)
	}
	return out, sample, nil
}

// maxBoxPartitions bounds the partitions the box model prices for a projection: it
// fits a grid per partition, and a table of thousands of partitions would spend more
// on it than on the projections.
const maxBoxPartitions = 64

// applyBox sets each projection's MeanBoxFiles and BoxRatio, pricing the box model
// once per file count.
func applyBox(s *Sample, queries []Query, ps []Projection) error {
	if len(s.Partitions) > maxBoxPartitions {
		return nil
	}
	m, err := s.boxModel(queries)
	if err != nil || m == nil {
		return err
	}
	byFiles := map[int]float64{}
	for i := range ps {
		p := &ps[i]
		if p.FilesAfter <= 0 {
			continue
		}
		mean, ok := byFiles[p.FilesAfter]
		if !ok {
			mean = m.price(p.FilesAfter).MeanFiles
			byFiles[p.FilesAfter] = mean
		}
		if p.MeanBoxFiles = mean; mean > 0 {
			p.BoxRatio = p.MeanFilesRead / mean
		}
	}
	return nil
}

func targetSize(l layout.Layout, st *lake.State) int64 {
	if l.TargetFileSizeBytes > 0 {
		return l.TargetFileSizeBytes
	}
	return st.TargetFileSizeBytes(DefaultTargetFileSizeBytes)
}

// colVals are one column's sampled values, keyed, in sample row order.
type colVals struct {
	u []uint64
	s []string
	// rank is the position of s[i] in dict, the column's distinct values in
	// order: per-file min/max compares ranks, not strings.
	rank []uint32
	dict []string
	null []bool // null (or NaN: no bound contribution, not a null either)
	nan  []bool
}

// ProjectSample projects layout l from a sample: per partition, it orders the sampled rows
// by l's key, cuts them into files of targetFileSizeBytes (filled in order, as the
// rewriter's writer fills them), takes each projected file's min/max and null count for
// every predicate column (truncated as the table's metrics mode truncates string bounds)
// and its partition's tuple, and replays the workload against those files. Binpack is
// projected from the real bounds of the files each output would hold instead (see
// binpack.go). Pure: no I/O.
//
// Bias correction: a projected file's true range contains its sampled range, so naive
// bounds are optimistic. Each file's range is widened to the sorted neighbours just
// outside it (the last sampled row of the file before and the first of the file after,
// in the same partition): by order statistics the unsampled rows of a file lie, in key
// order, between those neighbours, so for the leading key column the widened range covers
// the true one. BiasPP reports the difference. ErrorPP comes from a bootstrap over the
// sample's files within each partition (see [Projection.ErrorPP]).
func ProjectSample(s *Sample, l layout.Layout, queries []Query, targetFileSizeBytes int64, opts ProjectOptions) (Projection, error) {
	if err := l.Validate(); err != nil {
		return Projection{}, err
	}
	if l.Strategy == layout.StrategyCurrent {
		return Projection{}, fmt.Errorf("project sample: layout current needs the table's files, use ProjectCurrent")
	}
	if targetFileSizeBytes <= 0 {
		targetFileSizeBytes = DefaultTargetFileSizeBytes
	}
	opts = opts.withDefaults()
	p := Projection{Layout: l, FilesBefore: s.FilesBefore, TargetFileSizeBytes: targetFileSizeBytes, RewriteBytes: s.TableBytes, SampleRows: s.Rows, SampleFraction: s.Fraction, Basis: BasisSample, SizeRatio: 1}
	b := newBinding(s.Schema)
	bq := bindQueries(b, queries)
	if l.Strategy == layout.StrategyBinpack {
		return s.projectBinpack(p, b, bq, queries, targetFileSizeBytes)
	}
	if s.Rows == 0 {
		if s.TableRows > 0 {
			return Projection{}, fmt.Errorf("project %s: %w", l, errNoSample)
		}
		p.PerQuery = make([]QueryResult, len(bq))
		for i, q := range bq {
			p.PerQuery[i] = QueryResult{ID: q.id}
		}
		return p, nil
	}
	vals, err := extractColumns(s, b)
	if err != nil {
		return Projection{}, fmt.Errorf("project %s: %w", l, err)
	}
	var tree *layout.Tree
	if l.Strategy == layout.StrategyTree {
		if tree = opts.fixedTree; tree == nil {
			if tree, err = s.learnTree(l, queries, targetFileSizeBytes, opts); err != nil {
				return Projection{}, fmt.Errorf("project %s: %w", l, err)
			}
			if p.RecordedTree, err = s.projectRecorded(tree, queries, targetFileSizeBytes, opts); err != nil {
				return Projection{}, fmt.Errorf("project %s: %w", l, err)
			}
		}
		if p.Tree, err = tree.MarshalJSON(); err != nil {
			return Projection{}, fmt.Errorf("project %s: %w", l, err)
		}
		ex, err := ExplainTree(s, tree, queries)
		if err != nil {
			return Projection{}, fmt.Errorf("project %s: %w", l, err)
		}
		p.TreeExplanation = &ex
	}
	perm, q, rowLeaf, err := sortSample(s, l, tree, opts)
	if err != nil {
		return Projection{}, fmt.Errorf("project %s: %w", l, err)
	}
	if q != nil {
		if p.Quantiles, err = q.MarshalJSON(); err != nil {
			return Projection{}, fmt.Errorf("project %s: %w", l, err)
		}
	}
	// Files per partition, from the bytes the rewrite is expected to write.
	dataRatio, err := s.sizeRatio(perm, targetFileSizeBytes)
	if err != nil {
		return Projection{}, fmt.Errorf("project %s: %w", l, err)
	}
	// A tree's files are cut at its leaves: each leaf of each partition is written
	// alone, in files of equal rows (see leafCuts).
	cutsAt := func(ratio float64) []cut { return s.cuts(ratio, targetFileSizeBytes) }
	var leafOf []int32 // the leaf of each row, in the layout's order
	if rowLeaf != nil {
		leaves := s.leafRows(perm, rowLeaf)
		cutsAt = func(ratio float64) []cut { return s.leafCuts(ratio, targetFileSizeBytes, leaves) }
		leafOf = make([]int32, len(perm))
		for i, r := range perm {
			leafOf[i] = rowLeaf[r]
		}
	}
	cuts := cutsAt(dataRatio)
	p.SizeRatio = s.writtenRatio(dataRatio, targetFileSizeBytes, cuts)
	for _, c := range cuts {
		p.FilesAfter += c.files
	}
	exact := s.Fraction >= 1
	// Lay the values out in the layout's order once: every cut below (the projection,
	// the naive one, the bootstrap replicates) then reads them in sequence.
	ordered, rowPart := permuteVals(vals, s.rowPart, perm)
	pos := make([]int32, len(perm))
	for i := range pos {
		pos[i] = int32(i)
	}
	fs := cutFiles(s, b, ordered, rowPart, leafOf, pos, cuts, !exact)
	rs := fs.replay(bq)
	p.PerQuery = rs
	p.SkippedPct, p.BytesReadPct = summarize(bq, rs, fs.totalBytes)
	p.MeanFilesRead = meanFilesRead(bq, rs)
	files := make([]int, len(cuts))
	for pi, c := range cuts {
		files[pi] = c.files
	}
	if err := s.applyBound(&p, queries, files); err != nil {
		return Projection{}, fmt.Errorf("project %s: %w", l, err)
	}
	skipAt := func(c []cut) float64 {
		fs := cutFiles(s, b, ordered, rowPart, leafOf, pos, c, !exact)
		skip, _ := summarize(bq, fs.replay(bq), fs.totalBytes)
		return skip
	}
	p.SizeErrorPP = sizeSensitivity(s, p.SkippedPct, dataRatio, targetFileSizeBytes, cutsAt, skipAt)
	cutErr := cutSensitivity(p.SkippedPct, cuts, skipAt) + p.SizeErrorPP
	p.ErrorPP = cutErr
	if exact {
		return p, nil
	}
	if perFile := float64(s.Rows) / float64(max(p.FilesAfter, 1)); perFile < float64(opts.ThinRowsPerFile) {
		p.SampleThin = true
		p.SampleNote = fmt.Sprintf("sample too thin: %.1f sampled rows per projected file, fewer than %d; the error bar is not reliable (sample more rows: --seed does not help, a larger sample does)", perFile, opts.ThinRowsPerFile)
	}
	naive := cutFiles(s, b, ordered, rowPart, leafOf, pos, cuts, false)
	naiveSkip, _ := summarize(bq, naive.replay(bq), naive.totalBytes)
	p.BiasPP = naiveSkip - p.SkippedPct
	reps := s.bootstrap(perm, opts.Replicates, func(sub []int32) float64 {
		rep := cutFiles(s, b, ordered, rowPart, leafOf, sub, cuts, true)
		skip, _ := summarize(bq, rep.replay(bq), rep.totalBytes)
		return skip
	})
	p.Replicates = len(reps)
	p.SamplingErrorPP = errorBar(p.SkippedPct, reps)
	p.ErrorPP = p.SamplingErrorPP + cutErr
	return p, nil
}

// cutSlack is how far from the target size the rewriter's writer may close a file, as
// a share of the file: within half a row group, and it writes eight row groups a file
// (rewriter.DefaultRowGroupsPerFile).
const cutSlack = 1.0 / 16

// sizeModelError is the size model's relative error on the bytes a rewrite writes
// (SizeRatio), calibrated against real rewrites: on bench/layout's shapes the largest
// |projected − written| ÷ written was 8.7%, on a table whose files another writer
// (iceberg-go's appends) wrote; 6.5% where floe's rewriter wrote them; tables of many
// small files are not covered (see "File count after a rewrite" in the package
// documentation).
const sizeModelError = 0.10

// sizeSensitivity is the largest change of the skip rate when the rewrite writes
// sizeModelError fewer, or sizeModelError plus its row groups' share
// (rowGroupShare) more bytes than projected, which changes the file count
// where a partition's bytes lie near a multiple of the target: the part of the
// error that comes from the size model.
func sizeSensitivity(s *Sample, est, sizeRatio float64, target int64, cutsAt func(float64) []cut, skip func([]cut) float64) float64 {
	var worst float64
	base := cutsAt(sizeRatio)
	// Every 5% between the two ends: the file count, and with it the skip
	// rate, need not move one way as the bytes grow.
	lo, hi := 1-sizeModelError, 1+sizeModelError+s.rowGroupShare(target)
	steps := int(math.Ceil((hi - lo) / 0.05))
	for i := 0; i <= steps; i++ {
		f := lo + (hi-lo)*float64(i)/float64(steps)
		c := cutsAt(sizeRatio * f)
		same := true
		for i := range c {
			same = same && c[i].files == base[i].files && len(c[i].leaves) == len(base[i].leaves)
			for j := range c[i].leaves {
				same = same && j < len(base[i].leaves) && c[i].leaves[j].files == base[i].leaves[j].files
			}
		}
		if !same {
			worst = max(worst, math.Abs(skip(c)-est))
		}
	}
	return worst
}

// cutSensitivity is the largest change of the skip rate when every file is cut
// cutSlack larger or smaller than the target (the file count kept): the part of the
// error that comes from where the writer closes files, not from the sample. A tree's
// files have no such slack: the writer splits each leaf's rows, which it counts, into
// files of equal rows.
func cutSensitivity(est float64, cuts []cut, skip func([]cut) float64) float64 {
	var worst float64
	for _, f := range []float64{1 - cutSlack, 1 + cutSlack} {
		c := slices.Clone(cuts)
		for i := range c {
			if c[i].files > 1 && c[i].leaves == nil {
				c[i].share = min(c[i].share*f, 1/float64(c[i].files-1))
			}
		}
		worst = max(worst, math.Abs(skip(c)-est))
	}
	return worst
}

// errorBar is |mean(reps) − est| + 2 × the standard deviation of reps: the bootstrap's
// estimate of the estimator's bias plus a two-sided 95% spread.
func errorBar(est float64, reps []float64) float64 {
	if len(reps) < 2 {
		return 0
	}
	var mean float64
	for _, r := range reps {
		mean += r
	}
	mean /= float64(len(reps))
	var ss float64
	for _, r := range reps {
		ss += (r - mean) * (r - mean)
	}
	return math.Abs(mean-est) + 2*math.Sqrt(ss/float64(len(reps)-1))
}

// bootstrap draws n resamples of the sample and returns stat of each. A resample is
// drawn per partition: the partition's sampled files with replacement (each row counted
// as often as its file was drawn) when only some of its files were read, else its rows
// with replacement (a Poisson(1) count per row); a partition read whole is kept as it
// is. stat receives the resample as positions in perm's order, repeated as counted,
// ascending. Seeded by the sample's size: the same sample gives the same error bars.
func (s *Sample) bootstrap(perm []int32, n int, stat func(sub []int32) float64) []float64 {
	rng := rand.New(rand.NewPCG(uint64(s.Rows)*0x9e3779b97f4a7c15+1, 0xb007))
	// The sampled files of each partition.
	partFiles := make([][]int32, len(s.Partitions))
	seen := map[int32]bool{}
	for r, fi := range s.rowFile {
		if !seen[fi] {
			seen[fi] = true
			pi := s.rowPart[r]
			partFiles[pi] = append(partFiles[pi], fi)
		}
	}
	out := make([]float64, 0, n)
	fileCount := map[int32]int32{}
	mult := make([]int32, s.Rows)
	for range n {
		clear(fileCount)
		byFile := make([]bool, len(s.Partitions))
		for pi, fs := range partFiles {
			if s.wholeParts[pi] || len(fs) < 2 {
				continue
			}
			byFile[pi] = true
			for range fs {
				fileCount[fs[rng.IntN(len(fs))]]++
			}
		}
		for r := range mult {
			pi := s.rowPart[r]
			switch {
			case byFile[pi]:
				mult[r] = fileCount[s.rowFile[r]]
			case int64(s.PartitionSampledRows[pi]) >= s.PartitionRows[pi]:
				mult[r] = 1 // every row of the partition is in the sample
			default:
				mult[r] = poisson1(rng)
			}
		}
		sub := make([]int32, 0, len(perm))
		for i, r := range perm {
			for range mult[r] {
				sub = append(sub, int32(i))
			}
		}
		out = append(out, stat(sub))
	}
	return out
}

// poisson1 draws from a Poisson distribution of mean 1 (inversion).
func poisson1(rng *rand.Rand) int32 {
	u := rng.Float64()
	p := math.Exp(-1)
	cdf := p
	k := int32(0)
	for u > cdf && k < 20 {
		k++
		p /= float64(k)
		cdf += p
	}
	return k
}

// meanFilesRead is the weighted mean over queries of the files read.
func meanFilesRead(qs []boundQuery, rs []QueryResult) float64 {
	var sum, wsum float64
	for i, r := range rs {
		w := qs[i].weight
		if w <= 0 {
			w = 1
		}
		sum += w * float64(r.FilesRead)
		wsum += w
	}
	if wsum == 0 {
		return 0
	}
	return sum / wsum
}

// projectBinpack projects a bin-pack from the real file statistics (see binpack.go).
// ErrorPP is how far the projection moves when every input file cut between two
// outputs goes whole to the one holding more of its rows.
func (s *Sample) projectBinpack(p Projection, b *binding, bq []boundQuery, queries []Query, target int64) (Projection, error) {
	p.Basis = BasisFileBounds
	in := fileSetFromLake(s.files, b, s.md)
	plan := s.binpackFiles(target, false)
	fs := binpackSet(in, plan, b)
	rs := fs.replay(bq)
	p.PerQuery = rs
	p.FilesAfter = fs.n
	p.SkippedPct, p.BytesReadPct = summarize(bq, rs, fs.totalBytes)
	p.MeanFilesRead = meanFilesRead(bq, rs)
	alt := binpackSet(in, s.binpackFiles(target, true), b)
	altSkip, _ := summarize(bq, alt.replay(bq), alt.totalBytes)
	p.ErrorPP = math.Abs(altSkip - p.SkippedPct)
	// The bytes it writes: arrival order kept, but not the writer's row groups and
	// encodings, so it may write sizeModelError more or fewer bytes than it reads,
	// as a target that much smaller or larger would cut them.
	for _, f := range []float64{1 - sizeModelError, 1 + sizeModelError} {
		alt := binpackSet(in, s.binpackFiles(max(1, int64(float64(target)/f)), false), b)
		if alt.n != fs.n {
			altSkip, _ := summarize(bq, alt.replay(bq), alt.totalBytes)
			p.SizeErrorPP = max(p.SizeErrorPP, math.Abs(altSkip-p.SkippedPct))
		}
	}
	p.ErrorPP += p.SizeErrorPP
	// The rewrite reads and writes only the files it rewrites, each once however
	// many of its outputs share it (summing the shares would round bytes away).
	p.RewriteBytes = 0
	counted := map[int]bool{}
	for _, f := range plan {
		if f.rewritten {
			for _, i := range f.members {
				if !counted[i] {
					counted[i] = true
					p.RewriteBytes += s.files[i].SizeBytes
				}
			}
		}
	}
	files := make([]int, len(s.Partitions))
	part := make(map[int]int, len(s.files))
	for pi, idx := range s.partFiles {
		for _, i := range idx {
			part[i] = pi
		}
	}
	for _, f := range plan {
		files[part[f.members[0]]]++
	}
	if err := s.applyBound(&p, queries, files); err != nil {
		return Projection{}, err
	}
	return p, nil
}

// learnTree learns tree layout l's tree on the sample ([LearnTree]) from
// opts.TreeWorkload, else queries, with leaves of at least the sampled rows of one
// projected file at the target size.
func (s *Sample) learnTree(l layout.Layout, queries []Query, target int64, opts ProjectOptions) (*layout.Tree, error) {
	files := 0
	for _, c := range s.cuts(1, target) {
		files += c.files
	}
	to := opts.Tree
	to.MinLeafRows = max(1, s.Rows/max(files, 1))
	if opts.TreeWorkload != nil {
		queries = opts.TreeWorkload
	}
	if opts.TreeCache == nil {
		return LearnTree(s, l, queries, to)
	}
	key, ok, err := treeKey(s, l, queries, to)
	if err != nil {
		return nil, err
	}
	if !ok { // a sample the cache cannot key
		return LearnTree(s, l, queries, to)
	}
	return opts.TreeCache.learn(key, func() (*layout.Tree, error) { return LearnTree(s, l, queries, to) })
}

// sortSample returns the sample's row numbers grouped by partition and, within one,
// ordered by the layout's key (stable: ties and binpack keep arrival order); for a tree,
// also each row's leaf (by row number), which its key begins with.
func sortSample(s *Sample, l layout.Layout, tree *layout.Tree, opts ProjectOptions) ([]int32, *layout.Quantiles, []int32, error) {
	perm := make([]int32, s.Rows)
	for i := range perm {
		perm[i] = int32(i)
	}
	var keys [][]byte
	var quantiles *layout.Quantiles
	var rowLeaf []int32
	if len(l.Columns) > 0 {
		schema := s.Records[0].Schema()
		eo := layout.EncoderOptions{ZOrderMode: opts.ZOrderMode, Tree: tree}
		if l.Strategy == layout.StrategyHilbert || l.Strategy == layout.StrategyZOrder && opts.ZOrderMode == layout.ZOrderRank {
			names := make([]string, len(l.Columns))
			for i, c := range l.Columns {
				names[i] = c.Name
			}
			q, err := s.fitQuantiles(names, opts.QuantileBuckets)
			if err != nil {
				return nil, nil, nil, err
			}
			eo.Quantiles, quantiles = q, q
		}
		enc, err := layout.NewEncoder(l, schema, eo)
		if err != nil {
			return nil, nil, nil, err
		}
		keys = make([][]byte, s.Rows)
		var buf []byte
		r := 0
		for _, rec := range s.Records {
			for row := range int(rec.NumRows()) {
				start := len(buf)
				buf, err = enc.AppendKey(buf, rec, row)
				if err != nil {
					return nil, nil, nil, err
				}
				keys[r] = buf[start:len(buf):len(buf)]
				r++
			}
		}
		// keys alias buf, which may have moved while growing: re-slice from the final buffer.
		off := 0
		for i, k := range keys {
			keys[i] = buf[off : off+len(k) : off+len(k)]
			off += len(k)
		}
		if tree != nil {
			rowLeaf = make([]int32, len(keys))
			for i, k := range keys {
				leaf, _ := layout.LeafOfKey(k)
				rowLeaf[i] = int32(leaf)
			}
		}
	}
	// Sort entries that carry the partition and the key's first 16 bytes (as two
	// integers) themselves: most comparisons are settled without touching the keys,
	// and without reading other arrays at random. Only keys longer than 16 bytes fall
	// back to the whole key on a tie; then the row number decides (a stable order).
	ents := make([]sortEnt, len(perm))
	long := false
	sameLen := true
	var buf [16]byte
	for i := range ents {
		ents[i] = sortEnt{part: s.rowPart[i], row: int32(i)}
		if keys != nil {
			n := copy(buf[:], keys[i])
			clear(buf[n:])
			ents[i].p0 = binary.BigEndian.Uint64(buf[:8])
			ents[i].p1 = binary.BigEndian.Uint64(buf[8:])
			long = long || len(keys[i]) > len(buf)
			sameLen = sameLen && len(keys[i]) == len(keys[0])
		}
	}
	if !long && sameLen {
		// Every key is its 16-byte prefix: a stable radix sort on (partition,
		// prefix) gives the comparison sort's order (ties in row order) in a
		// few linear passes.
		ents = radixSortEnts(ents, make([]sortEnt, len(ents)))
	} else {
		// Keys of at most 16 bytes compare as their zero-padded prefixes, except that
		// a shorter key sorts before a longer one it pads equal to.
		slices.SortFunc(ents, func(a, b sortEnt) int {
			switch {
			case a.part != b.part:
				return compareInt64(int64(a.part), int64(b.part))
			case a.p0 != b.p0:
				if a.p0 < b.p0 {
					return -1
				}
				return 1
			case a.p1 != b.p1:
				if a.p1 < b.p1 {
					return -1
				}
				return 1
			}
			if c := bytes.Compare(keys[a.row], keys[b.row]); c != 0 {
				return c
			}
			return compareInt64(int64(a.row), int64(b.row))
		})
	}
	for i, e := range ents {
		perm[i] = e.row
	}
	return perm, quantiles, rowLeaf, nil
}

// sortEnt is a sample row being sorted: its partition, its row number and
// its key's first 16 bytes as two integers, so that most comparisons are
// settled without touching the keys or reading other arrays at random.
type sortEnt struct {
	part   int32
	row    int32
	p0, p1 uint64
}

// radixSortEnts sorts ents by (part, p0, p1), stably, with one counting pass
// and one scatter per byte that varies, least significant first; scratch must
// be as long as ents. It returns whichever of the two holds the result.
// Partitions are never negative.
func radixSortEnts(ents, scratch []sortEnt) []sortEnt {
	if len(ents) < 2 {
		return ents
	}
	// Digits 0-7 are p1's bytes, 8-15 p0's, 16-19 the partition's, least
	// significant first.
	digit := func(e *sortEnt, d int) byte {
		switch {
		case d < 8:
			return byte(e.p1 >> (8 * d))
		case d < 16:
			return byte(e.p0 >> (8 * (d - 8)))
		}
		return byte(uint32(e.part) >> (8 * (d - 16)))
	}
	var counts [20][256]int
	for i := range ents {
		e := &ents[i]
		for d := range 8 {
			counts[d][byte(e.p1>>(8*d))]++
			counts[8+d][byte(e.p0>>(8*d))]++
		}
		for d := range 4 {
			counts[16+d][byte(uint32(e.part)>>(8*d))]++
		}
	}
	src, dst := ents, scratch[:len(ents)]
	for d := range counts {
		c := &counts[d]
		if c[digit(&src[0], d)] == len(src) {
			continue // every entry has the same byte here
		}
		var pos [256]int
		sum := 0
		for v, n := range c {
			pos[v] = sum
			sum += n
		}
		for i := range src {
			v := digit(&src[i], d)
			dst[pos[v]] = src[i]
			pos[v]++
		}
		src, dst = dst, src
	}
	return src
}

// permuteVals returns vals and rowPart in the order perm: element i of the result is
// element perm[i] of the input.
func permuteVals(vals []colVals, rowPart []int32, perm []int32) ([]colVals, []int32) {
	out := make([]colVals, len(vals))
	for ci := range vals {
		v, o := &vals[ci], &out[ci]
		o.dict = v.dict
		o.null = make([]bool, len(perm))
		o.nan = make([]bool, len(perm))
		for i, r := range perm {
			o.null[i], o.nan[i] = v.null[r], v.nan[r]
		}
		if v.u != nil {
			o.u = make([]uint64, len(perm))
			for i, r := range perm {
				o.u[i] = v.u[r]
			}
		}
		if v.rank != nil {
			o.rank = make([]uint32, len(perm))
			for i, r := range perm {
				o.rank[i] = v.rank[r]
			}
		}
	}
	rp := make([]int32, len(perm))
	for i, r := range perm {
		rp[i] = rowPart[r]
	}
	return out, rp
}

// cut is how a partition is cut into projected files: files of which every one but the
// last holds share of the partition's rows (the writer fills each file to the target
// size before it opens the next, so the last holds the rest). A tree's partition is
// cut leaf by leaf instead (leaves, in leaf order; files is then their sum).
type cut struct {
	files  int
	share  float64
	leaves []leafCut
}

// leafCut is how one leaf of a tree, in one partition, is cut — or a run of small leaves
// packed together ([layout.LeafPacked]), leaf to last: their rows, share of the
// partition's, written into files of equal rows.
type leafCut struct {
	leaf, last int32
	files      int
	share      float64
}

// leafRowCount is one leaf's sampled rows in one partition.
type leafRowCount struct {
	leaf int32
	rows int
}

// leafRows counts the sampled rows of each leaf in each partition, leaves in order, from
// perm (the layout's order: by partition, then leaf) and each row's leaf.
func (s *Sample) leafRows(perm, rowLeaf []int32) [][]leafRowCount {
	out := make([][]leafRowCount, len(s.Partitions))
	for _, r := range perm {
		pi, leaf := s.rowPart[r], rowLeaf[r]
		lc := out[pi]
		if n := len(lc); n > 0 && lc[n-1].leaf == leaf {
			lc[n-1].rows++
			continue
		}
		out[pi] = append(lc, leafRowCount{leaf: leaf, rows: 1})
	}
	return out
}

// leafCuts is cuts for a tree, as the rewriter's writer writes one: in each partition
// every leaf's rows are written alone, into as many files of equal rows as make a file
// nearest the target ([layout.LeafFilesFor]), its bytes taken as its share of the
// partition's sampled rows; consecutive leaves too small for a file of their own
// ([layout.LeafPacked], by their share of the partition's bytes today) are packed into
// files cut at the target size ([layout.FilesFor]). A partition without sampled rows is
// cut as cuts cuts it.
func (s *Sample) leafCuts(dataRatio float64, target int64, leaves [][]leafRowCount) []cut {
	out := s.cuts(dataRatio, target)
	room := float64(target) - s.overheadAt(target)
	for pi, lcs := range leaves {
		if len(lcs) == 0 || s.PartitionRows[pi] == 0 {
			continue
		}
		total := 0
		for _, lc := range lcs {
			total += lc.rows
		}
		data := max(float64(s.PartitionBytes[pi])-float64(s.PartitionFiles[pi])*s.overheadAt(target), 1) * dataRatio
		c := cut{leaves: make([]leafCut, 0, len(lcs))}
		var run *leafCut // the small leaves packed so far
		endRun := func() {
			if run != nil {
				run.files = layout.FilesFor(data*run.share, room)
				c.leaves = append(c.leaves, *run)
				c.files += run.files
				run = nil
			}
		}
		for _, lc := range lcs {
			share := float64(lc.rows) / float64(total)
			if layout.LeafPacked(float64(s.PartitionBytes[pi])*share, float64(target)) {
				if run == nil {
					run = &leafCut{leaf: lc.leaf}
				}
				run.last, run.share = lc.leaf, run.share+share
				continue
			}
			endRun()
			n := layout.LeafFilesFor(data*share, room)
			c.leaves = append(c.leaves, leafCut{leaf: lc.leaf, last: lc.leaf, files: n, share: share})
			c.files += n
		}
		endRun()
		out[pi] = c
	}
	return out
}

// fileShare is the share of a partition's rows file j of c holds.
func (c cut) fileShare(j int) float64 {
	for _, lc := range c.leaves {
		if j < lc.files {
			return lc.share / float64(lc.files)
		}
		j -= lc.files
	}
	_, share := c.span(j)
	return share
}

// cuts returns each partition's cut for a rewrite that writes dataRatio × the bytes
// its files hold beyond their own overhead (s.fileOverhead each, see fileOverhead)
// in files of target bytes, each paying that overhead again:
// ceil(data / (target − overhead)) files, less a last one that would hold no more
// than layout.TailAllowance of a file, as the rewriter's writer writes them
// ([layout.FilesFor]; none for a partition without rows).
func (s *Sample) cuts(dataRatio float64, target int64) []cut {
	out := make([]cut, len(s.Partitions))
	over := s.overheadAt(target)
	room := float64(target) - over
	for pi, by := range s.PartitionBytes {
		if s.PartitionRows[pi] == 0 {
			continue
		}
		data := max(float64(by)-float64(s.PartitionFiles[pi])*over, 1) * dataRatio
		out[pi].files = layout.FilesFor(data, room)
		out[pi].share = min(1, room/max(data, 1))
	}
	return out
}

// writtenRatio is the bytes a rewrite cut as c writes (its rows at dataRatio plus
// each file's overhead) divided by the table's bytes today.
func (s *Sample) writtenRatio(dataRatio float64, target int64, c []cut) float64 {
	over := s.overheadAt(target)
	var written, today float64
	for pi, by := range s.PartitionBytes {
		today += float64(by)
		if s.PartitionRows[pi] == 0 {
			continue
		}
		written += max(float64(by)-float64(s.PartitionFiles[pi])*over, 1)*dataRatio + float64(c[pi].files)*over
	}
	if today <= 0 {
		return 1
	}
	return written / today
}

// span returns the share of a partition's rows before file j of c and in it.
func (c cut) span(j int) (from, share float64) {
	from = float64(j) * c.share
	if j == c.files-1 {
		return from, max(0, 1-from)
	}
	return from, c.share
}

// cutFiles cuts the ordered rows (grouped by partition) as cuts say and builds their
// statistics, each projected file carrying its partition's tuple for the partition
// view; widen extends every file's rows by one sorted neighbour on each side within
// its partition.
//
// A tree's partition (a cut with leaves) is cut leaf by leaf, by leafOf (the leaf of
// each row, indexed as vals): each leaf's rows among perm into its files of equal rows,
// widened within the leaf, since no file holds rows of two leaves.
func cutFiles(s *Sample, b *binding, vals []colVals, rowPart, leafOf []int32, perm []int32, cuts []cut, widen bool) *fileSet {
	total := 0
	for _, c := range cuts {
		total += c.files
	}
	fs := newFileSet(total, b)
	fileParts := make([]int, total)
	visited := make([]bool, len(cuts))
	fi := 0
	setSize := func(fi, pi, j int) {
		share := cuts[pi].fileShare(j)
		fs.size[fi] = int64(math.Round(share * float64(s.PartitionBytes[pi])))
		fs.records[fi] = max(1, int64(math.Round(share*float64(s.PartitionRows[pi]))))
		fileParts[fi] = pi
	}
	start := 0
	for start < len(perm) {
		// rows of this partition in perm[start:end]
		pi := int(rowPart[perm[start]])
		end := start
		for end < len(perm) && int(rowPart[perm[end]]) == pi {
			end++
		}
		visited[pi] = true
		c := cuts[pi]
		fill := func(rows []int32) {
			for ci := range b.cols {
				trunc := s.metrics(b.cols[ci].name)
				switch cd := fs.cols[ci].(type) {
				case *colData[uint64]:
					fillU64(cd, fi, &vals[ci], rows, fs.records[fi], trunc)
				case *colData[string]:
					fillStr(cd, fi, &vals[ci], rows, fs.records[fi], trunc)
				}
			}
		}
		if c.leaves != nil {
			i, j := start, 0
			for _, lc := range c.leaves {
				a := i
				for i < end && leafOf[perm[i]] <= lc.last {
					i++
				}
				m := i - a
				for k := range lc.files {
					x, z := a+k*m/lc.files, a+(k+1)*m/lc.files
					if widen {
						x, z = max(a, x-1), min(i, z+1)
					}
					setSize(fi, pi, j)
					fill(perm[x:z])
					fi++
					j++
				}
			}
			start = end
			continue
		}
		m := float64(end - start)
		for j := range c.files {
			from, share := c.span(j)
			a, z := start+int(math.Round(from*m)), start+int(math.Round((from+share)*m))
			if j == c.files-1 {
				z = end
			}
			a, z = min(a, end), min(max(z, a), end)
			if widen {
				a, z = max(start, a-1), min(end, z+1)
			}
			setSize(fi, pi, j)
			fill(perm[a:z])
			fi++
		}
		start = end
	}
	// Partitions without sampled rows: files with no bounds (may match anything) but
	// their partition's tuple.
	for pi, c := range cuts {
		if visited[pi] {
			continue
		}
		for j := range c.files {
			setSize(fi, pi, j)
			fi++
		}
	}
	fs.finish()
	if len(s.partFiles) == len(cuts) {
		reps := make([]lake.File, total)
		for i, pi := range fileParts {
			rep := &s.files[s.partFiles[pi][0]]
			reps[i] = lake.File{SpecID: rep.SpecID, Partition: rep.Partition, Records: fs.records[i], SizeBytes: fs.size[i]}
		}
		fs.part = partitionView(reps, b, s.md)
	}
	return fs
}

func fillU64(cd *colData[uint64], fi int, v *colVals, rows []int32, records int64, trunc int) {
	var lo, hi uint64
	seen := false
	nulls := 0
	for _, r := range rows {
		if v.null[r] {
			if !v.nan[r] {
				nulls++
			}
			continue
		}
		x := v.u[r]
		if !seen || x < lo {
			lo = x
		}
		if !seen || x > hi {
			hi = x
		}
		seen = true
	}
	setCounts(&cd.nulls[fi], &cd.values[fi], nulls, len(rows), records)
	if seen && trunc >= 0 {
		cd.low[fi], cd.up[fi], cd.hasLow[fi], cd.hasUp[fi] = lo, hi, true, true
	}
}

func fillStr(cd *colData[string], fi int, v *colVals, rows []int32, records int64, trunc int) {
	var rlo, rhi uint32
	seen := false
	nulls := 0
	for _, r := range rows {
		if v.null[r] {
			nulls++
			continue
		}
		x := v.rank[r]
		if !seen || x < rlo {
			rlo = x
		}
		if !seen || x > rhi {
			rhi = x
		}
		seen = true
	}
	setCounts(&cd.nulls[fi], &cd.values[fi], nulls, len(rows), records)
	if !seen || trunc < 0 {
		return
	}
	lo, hi := v.dict[rlo], v.dict[rhi]
	if trunc > 0 {
		lo = truncateLower(lo, trunc)
		var ok bool
		if hi, ok = truncateUpper(hi, trunc); !ok {
			cd.low[fi], cd.hasLow[fi] = lo, true
			return
		}
	}
	cd.low[fi], cd.up[fi], cd.hasLow[fi], cd.hasUp[fi] = lo, hi, true, true
}

// setCounts scales a file's sampled null count to its projected records: all-null stays
// all-null, some nulls stay at least one, none stays none.
func setCounts(nulls, values *int64, sampledNulls, sampled int, records int64) {
	if sampled == 0 {
		return // unknown
	}
	*values = records
	switch {
	case sampledNulls == 0:
		*nulls = 0
	case sampledNulls == sampled:
		*nulls = records
	default:
		*nulls = min(records-1, max(1, int64(math.Round(float64(sampledNulls)/float64(sampled)*float64(records)))))
	}
}

// extractColumns keys every bound column of the sample, row by row. A column's values
// are kept on the sample, so every layout projected from it reads them from there.
func extractColumns(s *Sample, b *binding) ([]colVals, error) {
	out := make([]colVals, len(b.cols))
	for ci, c := range b.cols {
		v, err := s.columnVals(c)
		if err != nil {
			return nil, err
		}
		out[ci] = *v
	}
	return out, nil
}

// columnVals returns the keyed values of column c, extracting them on first use. The
// result is shared: callers must not change it.
func (s *Sample) columnVals(c boundCol) (*colVals, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.vals[c.fieldID]; ok {
		return v, nil
	}
	schema := s.Records[0].Schema()
	idx := -1
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, c.name) || strings.EqualFold(f.Name, lastPart(c.name)) && idx < 0 {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("sample has no column %q: %w", c.name, layout.ErrColumnNotFound)
	}
	v := &colVals{null: make([]bool, 0, s.Rows), nan: make([]bool, 0, s.Rows)}
	if c.kind == kindStr {
		v.s = make([]string, 0, s.Rows)
	} else {
		v.u = make([]uint64, 0, s.Rows)
	}
	for _, rec := range s.Records {
		if err := appendKeys(v, c, rec.Column(idx)); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
	}
	if c.kind == kindStr {
		v.rankStrings()
	}
	if s.vals == nil {
		s.vals = map[int]*colVals{}
	}
	s.vals[c.fieldID] = v
	return v, nil
}

// fitQuantiles fits the quantiles of the named columns on the sample once per column
// list and bucket count: z-order and Hilbert candidates on the same columns share them.
func (s *Sample) fitQuantiles(names []string, buckets int) (*layout.Quantiles, error) {
	key := fmt.Sprintf("%d\x00%s", buckets, strings.Join(names, "\x00"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.quantiles[key]; ok {
		return q, nil
	}
	q, err := layout.FitQuantiles(s.Records, names, buckets)
	if err != nil {
		return nil, err
	}
	if s.quantiles == nil {
		s.quantiles = map[string]*layout.Quantiles{}
	}
	s.quantiles[key] = q
	return q, nil
}

// rankStrings fills dict and rank from s.
func (v *colVals) rankStrings() {
	seen := make(map[string]struct{})
	for i, x := range v.s {
		if !v.null[i] {
			seen[x] = struct{}{}
		}
	}
	v.dict = make([]string, 0, len(seen))
	for x := range seen {
		v.dict = append(v.dict, x)
	}
	slices.Sort(v.dict)
	pos := make(map[string]uint32, len(v.dict))
	for i, x := range v.dict {
		pos[x] = uint32(i)
	}
	v.rank = make([]uint32, len(v.s))
	for i, x := range v.s {
		if !v.null[i] {
			v.rank[i] = pos[x]
		}
	}
}

func lastPart(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func appendKeys(v *colVals, c boundCol, arr arrow.Array) error {
	n := arr.Len()
	for i := range n {
		null := arr.IsNull(i)
		v.null = append(v.null, null)
		v.nan = append(v.nan, false)
		if c.kind == kindStr {
			s := ""
			if !null {
				switch a := arr.(type) {
				case *array.String:
					s = a.Value(i)
				case *array.LargeString:
					s = a.Value(i)
				case *array.StringView:
					s = a.Value(i)
				default:
					return fmt.Errorf("%w: %s for a string column", layout.ErrUnsupportedType, arr.DataType())
				}
			}
			v.s = append(v.s, s)
			continue
		}
		var u uint64
		if !null {
			switch a := arr.(type) {
			case *array.Int32:
				u = intKey(int64(a.Value(i)))
			case *array.Int64:
				u = intKey(a.Value(i))
			case *array.Date32:
				u = intKey(int64(a.Value(i)))
			case *array.Boolean:
				if a.Value(i) {
					u = 1
				}
			case *array.Float32:
				f := float64(a.Value(i))
				if math.IsNaN(f) {
					v.null[len(v.null)-1], v.nan[len(v.nan)-1] = true, true
				} else {
					u = floatKey(f)
				}
			case *array.Float64:
				f := a.Value(i)
				if math.IsNaN(f) {
					v.null[len(v.null)-1], v.nan[len(v.nan)-1] = true, true
				} else {
					u = floatKey(f)
				}
			case *array.Timestamp:
				unit := a.DataType().(*arrow.TimestampType).Unit
				x := int64(a.Value(i))
				switch c.typ.(type) {
				case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
					x = toNanos(x, unit)
				default:
					x = layout.TimestampMicros(x, unit)
				}
				u = intKey(x)
			default:
				return fmt.Errorf("%w: %s", layout.ErrUnsupportedType, arr.DataType())
			}
		}
		v.u = append(v.u, u)
	}
	return nil
}

func toNanos(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1e9
	case arrow.Millisecond:
		return v * 1e6
	case arrow.Microsecond:
		return v * 1e3
	}
	return v
}
