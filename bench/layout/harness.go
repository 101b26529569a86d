package layout

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
	floelayout "github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// Namespace is the namespace the harness creates its tables in.
const Namespace = "bench"

// Config sizes one evaluation run.
type Config struct {
	// Rows is the number of generated lineitem rows. Required (> 0).
	Rows int
	// Files is the number of arrival-order appends, one data file each. Required (> 0).
	Files int
	// FilesAfter is the file count the rewrite aims at: the target file size is the
	// table's bytes divided by it. Default: Files / 2.
	FilesAfter int
	// DataSeed seeds the row generator.
	DataSeed uint64
	// TrainSeed and EvalSeed seed the two workloads (they must differ for an honest
	// held-out evaluation). Default: 1 and 2.
	TrainSeed, EvalSeed uint64
	// PerTemplate is the number of instances drawn per query template. Default: 10.
	PerTemplate int
	// Workload names the query templates (a key of [Workloads]). Default: [TPCH].
	Workload string
	// Candidates are layouts in floelayout.Parse syntax. Default: the workload's.
	Candidates []string
	// ZOrderMode picks the z-order key for both projection and rewrite: Iceberg-exact
	// (zero value, what Spark writes) or rank-normalized (the fair match for Hilbert,
	// which is always rank-normalized).
	ZOrderMode floelayout.ZOrderMode
	// Partitioned partitions the table by the workload's partition field
	// (lineitem: month(l_shipdate); stream: day(event_ts)).
	Partitioned bool
	// Compacted bin-packs the table with the real rewriter before anything is projected,
	// as routine maintenance leaves production tables: "one" file per partition, or
	// "few" (about three per partition, eight when unpartitioned). Default: the
	// arrival-order files as appended.
	Compacted string
}

// The values of Config.Compacted.
const (
	CompactedOne = "one"
	CompactedFew = "few"
)

// Row is one candidate's outcome.
type Row struct {
	// Layout is the candidate in floelayout.Parse syntax.
	Layout string `json:"layout"`
	// ProjectedPct is the simulator's projected skip on the original table for the eval workload.
	ProjectedPct float64 `json:"projected_pct"`
	// TrainProjectedPct is the same projection for the train workload.
	TrainProjectedPct float64 `json:"train_projected_pct"`
	// ActualPct is the skip iceberg-go's scan planning measures on the rewritten table.
	ActualPct float64 `json:"actual_pct"`
	// ErrorPP is the projection's own error bound (simulator.Projection.ErrorPP), and
	// SamplingErrorPP the part of it from the sample's variance.
	ErrorPP         float64 `json:"error_pp"`
	SamplingErrorPP float64 `json:"sampling_error_pp"`
	// SizeErrorPP is the part of ErrorPP from the size model (simulator.Projection.SizeErrorPP).
	SizeErrorPP float64 `json:"size_error_pp"`
	// WithinError is |ProjectedPct − ActualPct| ≤ ErrorPP.
	WithinError bool `json:"within_error"`
	// Basis and SampleThin are the projection's (simulator.Projection).
	Basis      string `json:"basis"`
	SampleThin bool   `json:"sample_thin"`
	// BoundRatio is the projection's files read ÷ the bound at its file count.
	BoundRatio float64 `json:"bound_ratio"`
	// BoundPct is the skip the bound allows at the projection's file count: each query
	// reading only ceil(matching rows ÷ rows per file) files (simulator.Projection.MeanBoundFiles).
	BoundPct float64 `json:"bound_pct"`
	// BoxBoundPct is the skip the best grid of boxes allows at the projection's file
	// count under simulator.BoxBound's model (independent columns), and BoxRatio the
	// projection's files read ÷ that model's.
	BoxBoundPct float64 `json:"box_bound_pct"`
	BoxRatio    float64 `json:"box_ratio"`
	// BoxSpans are the model's spans at its best (simulator.BoxBound.Spans): 1/span
	// slices of each column make its grid.
	BoxSpans map[string]float64 `json:"box_spans"`
	// TreeLeaves is the leaves of the tree a tree layout learned (0 for the others).
	TreeLeaves int `json:"tree_leaves,omitempty"`
	// FilesProjected and FilesActual are the data files after the rewrite, projected and real.
	FilesProjected int `json:"files_projected"`
	FilesActual    int `json:"files_actual"`
	// SizeRatioProjected and SizeRatioActual are the bytes the rewrite writes divided by
	// the bytes it reads, as the simulator estimated them and as they came out.
	SizeRatioProjected float64 `json:"size_ratio_projected"`
	SizeRatioActual    float64 `json:"size_ratio_actual"`
	// QueryErrorsPP are |projected − actual| skip per eval query, in percentage points.
	QueryErrorsPP []float64 `json:"query_errors_pp"`
	// QueryFilesRead are the files iceberg-go's planner reads per eval query on the
	// rewritten table, and QueryBoundFiles the projection's bound for each
	// (simulator.QueryResult.BoundFiles).
	QueryFilesRead  []int `json:"query_files_read"`
	QueryBoundFiles []int `json:"query_bound_files"`
	// QueryBoxFiles are the files each eval query reads under the box model
	// (simulator.BoxBound.PerQuery).
	QueryBoxFiles []float64 `json:"query_box_files"`
	// RewriteSeconds is the wall time of the real rewrite.
	RewriteSeconds float64 `json:"rewrite_seconds"`
}

// AbsErrorPP is |ProjectedPct − ActualPct|.
func (r Row) AbsErrorPP() float64 { return math.Abs(r.ProjectedPct - r.ActualPct) }

// Report is the outcome of [Evaluate].
type Report struct {
	// Rows, Files, TargetFileSizeBytes, Workload and EvalQueries describe the run.
	Rows                int    `json:"rows"`
	Files               int    `json:"files"`
	TargetFileSizeBytes int64  `json:"target_file_size_bytes"`
	Workload            string `json:"workload"`
	EvalQueries         int    `json:"eval_queries"`
	// Partitioned and Compacted are the Config's; Partitions counts the table's
	// partitions.
	Partitioned bool   `json:"partitioned"`
	Compacted   string `json:"compacted,omitempty"`
	Partitions  int    `json:"partitions"`
	// Templates names the template of each eval query, in query order.
	Templates []string `json:"templates"`
	// ProjectSeconds is the wall time of projecting every candidate for the eval
	// workload (one sample, all layouts), to set against the rewrites' RewriteSeconds;
	// the trees it projects were learned by the train projection on the same samples
	// and are reused (simulator.TreeCache).
	ProjectSeconds float64 `json:"project_seconds"`
	// SampleSeconds is the wall time of taking that projection's sample alone (the
	// workload's columns, sized for FilesAfter files), timed separately.
	SampleSeconds float64 `json:"sample_seconds"`
	// Results holds one row per candidate, in candidate order.
	Results []Row `json:"results"`
}

// ErrorStats returns the mean, signed mean (projected − actual) and p95 of the per-query
// absolute errors over every candidate.
func (r Report) ErrorStats() (mean, signed, p95 float64) {
	var all []float64
	for _, row := range r.Results {
		all = append(all, row.QueryErrorsPP...)
	}
	if len(all) == 0 {
		return 0, 0, 0
	}
	for _, row := range r.Results {
		signed += (row.ProjectedPct - row.ActualPct) * float64(len(row.QueryErrorsPP))
	}
	for _, e := range all {
		mean += e
	}
	slices.Sort(all)
	idx := int(math.Ceil(0.95*float64(len(all)))) - 1
	return mean / float64(len(all)), signed / float64(len(all)), all[max(idx, 0)]
}

// TemplateErrors returns the mean per-query |projected − actual| (pp) of each template
// of the workload, over every candidate.
func (r Report) TemplateErrors() map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for _, row := range r.Results {
		for j, e := range row.QueryErrorsPP {
			t := r.Templates[j]
			sum[t] += e
			n[t]++
		}
	}
	for t := range sum {
		sum[t] /= float64(n[t])
	}
	return sum
}

// TemplateFiles returns, per template of the workload, the mean files row's eval
// queries of that template read on the rewritten table and the mean of their bounds,
// per query and under the box model.
func (r Report) TemplateFiles(row Row) (read, bound, box map[string]float64) {
	read, bound, box = map[string]float64{}, map[string]float64{}, map[string]float64{}
	n := map[string]int{}
	for j, f := range row.QueryFilesRead {
		t := r.Templates[j]
		read[t] += float64(f)
		bound[t] += float64(row.QueryBoundFiles[j])
		if j < len(row.QueryBoxFiles) {
			box[t] += row.QueryBoxFiles[j]
		}
		n[t]++
	}
	for t := range n {
		read[t] /= float64(n[t])
		bound[t] /= float64(n[t])
		box[t] /= float64(n[t])
	}
	return read, bound, box
}

// Find returns the row of layout l, or false.
func (r Report) Find(l string) (Row, bool) {
	for _, row := range r.Results {
		if row.Layout == l {
			return row, true
		}
	}
	return Row{}, false
}

// Schema is the generated table's schema: the prunable columns of TPC-H lineitem.
func Schema() *iceberg.Schema {
	req := func(id int, name string, t iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
	}
	return iceberg.NewSchema(0,
		req(1, "l_orderkey", iceberg.PrimitiveTypes.Int64),
		req(2, "l_partkey", iceberg.PrimitiveTypes.Int64),
		req(3, "l_suppkey", iceberg.PrimitiveTypes.Int64),
		req(4, "l_quantity", iceberg.PrimitiveTypes.Int32),
		req(5, "l_extendedprice", iceberg.PrimitiveTypes.Float64),
		req(6, "l_discount", iceberg.PrimitiveTypes.Float64),
		req(7, "l_shipdate", iceberg.PrimitiveTypes.Date),
		req(8, "l_receiptdate", iceberg.PrimitiveTypes.Date),
		req(9, "l_shipmode", iceberg.PrimitiveTypes.String),
		req(10, "l_returnflag", iceberg.PrimitiveTypes.String),
		req(11, "l_shipinstruct", iceberg.PrimitiveTypes.String),
	)
}

var (
	shipModes     = []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}
	shipInstructs = []string{"COLLECT COD", "DELIVER IN PERSON", "NONE", "TAKE BACK RETURN"}
)

// Dates of the TPC-H ship date domain, as days since the Unix epoch.
var (
	startDate = day(time.Date(1992, 1, 2, 0, 0, 0, 0, time.UTC))
	endDate   = day(time.Date(1998, 12, 1, 0, 0, 0, 0, time.UTC))
	cutDate   = day(time.Date(1995, 6, 17, 0, 0, 0, 0, time.UTC))
)

func day(t time.Time) int32 { return int32(t.Unix() / 86400) }

func dateText(d int32) string {
	return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
}

// keyRanges are the key domains for n rows (TPC-H SF1 proportions: 6M rows, 200k parts, 10k suppliers).
func keyRanges(n int) (orders, parts, supps int64) {
	return int64(max(n, 1)), int64(max(n/30, 1)), int64(max(n/600, 1))
}

// Generate builds rows lineitem-like rows as files batches (in arrival order: every key
// random, as a stream would write them), seeded by seed. The caller releases the batches.
func Generate(schema *arrow.Schema, rows, files int, seed uint64) ([]arrow.RecordBatch, error) {
	if rows <= 0 || files <= 0 || files > rows {
		return nil, fmt.Errorf("generate lineitem: need 0 < files <= rows, got rows=%d files=%d", rows, files)
	}
	rng := rand.New(rand.NewPCG(seed, 0x1a7e))
	orders, parts, supps := keyRanges(rows)
	mem := memory.DefaultAllocator
	out := make([]arrow.RecordBatch, 0, files)
	for f := range files {
		n := rows / files
		if f < rows%files {
			n++
		}
		b := array.NewRecordBuilder(mem, schema)
		for range n {
			part := 1 + rng.Int64N(parts)
			qty := int32(1 + rng.IntN(50))
			ship := startDate + int32(rng.IntN(int(endDate-startDate)+1))
			receipt := ship + int32(1+rng.IntN(30))
			flag := "N"
			if receipt <= cutDate {
				flag = []string{"R", "A"}[rng.IntN(2)]
			}
			b.Field(0).(*array.Int64Builder).Append(1 + rng.Int64N(orders))
			b.Field(1).(*array.Int64Builder).Append(part)
			b.Field(2).(*array.Int64Builder).Append(1 + rng.Int64N(supps))
			b.Field(3).(*array.Int32Builder).Append(qty)
			b.Field(4).(*array.Float64Builder).Append(float64(qty) * float64(90000+part%20001) / 100)
			b.Field(5).(*array.Float64Builder).Append(float64(rng.IntN(11)) / 100)
			b.Field(6).(*array.Date32Builder).Append(arrow.Date32(ship))
			b.Field(7).(*array.Date32Builder).Append(arrow.Date32(receipt))
			b.Field(8).(*array.StringBuilder).Append(shipModes[rng.IntN(len(shipModes))])
			b.Field(9).(*array.StringBuilder).Append(flag)
			b.Field(10).(*array.StringBuilder).Append(shipInstructs[rng.IntN(len(shipInstructs))])
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out, nil
}

// Evaluate runs the protocol on catalog cat (named catalogName): it generates the rows once,
// writes them into a table per candidate (Files appends each), projects every candidate
// on the first table with both workloads, rewrites each candidate's own table with
// rewriter.Compact at the same target size, and measures it with the eval workload.
func Evaluate(ctx context.Context, cat catalog.Catalog, catalogName string, cfg Config) (Report, error) {
	if cfg.Rows <= 0 || cfg.Files <= 0 {
		return Report{}, fmt.Errorf("evaluate layouts: rows and files must be > 0, got %d and %d", cfg.Rows, cfg.Files)
	}
	if cfg.FilesAfter <= 0 {
		cfg.FilesAfter = max(cfg.Files/2, 1)
	}
	if cfg.TrainSeed == 0 && cfg.EvalSeed == 0 {
		cfg.TrainSeed, cfg.EvalSeed = 1, 2
	}
	if cfg.PerTemplate <= 0 {
		cfg.PerTemplate = 10
	}
	if cfg.Workload == "" {
		cfg.Workload = TPCH.Name
	}
	wl, ok := Workloads[cfg.Workload]
	if !ok {
		return Report{}, fmt.Errorf("evaluate layouts: unknown workload %q", cfg.Workload)
	}
	if len(cfg.Candidates) == 0 {
		cfg.Candidates = wl.Candidates
	}
	layouts := make([]floelayout.Layout, len(cfg.Candidates))
	for i, s := range cfg.Candidates {
		l, err := floelayout.Parse(s)
		if err != nil {
			return Report{}, fmt.Errorf("evaluate layouts: %w", err)
		}
		layouts[i] = l
	}
	switch cfg.Compacted {
	case "", CompactedOne, CompactedFew:
	default:
		return Report{}, fmt.Errorf("evaluate layouts: compacted %q: want %q or %q", cfg.Compacted, CompactedOne, CompactedFew)
	}
	schema := wl.schema()
	var spec *iceberg.PartitionSpec
	if cfg.Partitioned {
		ps := iceberg.NewPartitionSpec(wl.partition)
		spec = &ps
	}
	aschema, err := table.SchemaToArrowSchema(schema, nil, true, false)
	if err != nil {
		return Report{}, fmt.Errorf("evaluate layouts: arrow schema: %w", err)
	}
	batches, err := wl.generate(aschema, cfg.Rows, cfg.Files, cfg.DataSeed)
	if err != nil {
		return Report{}, err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if ok, err := cat.CheckNamespaceExists(ctx, table.Identifier{Namespace}); err != nil {
		return Report{}, fmt.Errorf("evaluate layouts: check namespace: %w", err)
	} else if !ok {
		if err := cat.CreateNamespace(ctx, table.Identifier{Namespace}, nil); err != nil {
			return Report{}, fmt.Errorf("evaluate layouts: create namespace: %w", err)
		}
	}
	// One table per candidate over the same files: the first is written by appends in
	// arrival order, the others add its files in one commit each, in the same order.
	states := make([]*lake.State, len(layouts))
	for i := range layouts {
		id := lake.Ident{Catalog: catalogName, Namespace: []string{Namespace}, Name: fmt.Sprintf("lineitem_%d", i)}
		var st *lake.State
		var err error
		if i == 0 || spec != nil {
			// A partitioned table is written anew for every candidate: adding files
			// to one would need their partition values inferred.
			st, err = writeTable(ctx, cat, id, schema, spec, batches)
		} else {
			st, err = shareTable(ctx, cat, id, schema, states[0])
		}
		if err == nil && cfg.Compacted != "" && (i == 0 || spec != nil) {
			st, err = precompact(ctx, st, cfg.Compacted)
		}
		if err != nil {
			return Report{}, err
		}
		states[i] = st
	}
	var bytes int64
	for _, f := range states[0].DataFiles {
		bytes += f.SizeBytes
	}
	target := max(bytes/int64(cfg.FilesAfter), 1)
	rep := Report{Rows: cfg.Rows, Files: len(states[0].DataFiles), TargetFileSizeBytes: target, Workload: wl.Name,
		Partitioned: cfg.Partitioned, Compacted: cfg.Compacted, Partitions: len(partitionBytes(states[0]))}
	for i := range layouts {
		if layouts[i].Strategy != floelayout.StrategyCurrent {
			layouts[i].TargetFileSizeBytes = target
		}
	}
	// Projections: on the original table; queries name lineitem_0 via the SQL.
	train, err := wl.Queries(states[0].Ident, cfg.Rows, cfg.TrainSeed, cfg.PerTemplate)
	if err != nil {
		return Report{}, err
	}
	eval, err := wl.Queries(states[0].Ident, cfg.Rows, cfg.EvalSeed, cfg.PerTemplate)
	if err != nil {
		return Report{}, err
	}
	rep.EvalQueries = len(eval)
	for j := range eval {
		rep.Templates = append(rep.Templates, wl.Templates[j%len(wl.Templates)])
	}
	// The train projection learns each tree on the train draw; the eval projection,
	// taking the same samples, reuses it.
	trees := simulator.NewTreeCache(0)
	trainP, err := simulator.Project(ctx, states[0], layouts, train, simulator.ProjectOptions{ZOrderMode: cfg.ZOrderMode, TreeCache: trees})
	if err != nil {
		return Report{}, fmt.Errorf("evaluate layouts: project train workload: %w", err)
	}
	start := time.Now()
	cols := simulator.WorkloadColumns(states[0].Metadata.CurrentSchema(), eval)
	for _, l := range layouts {
		for _, c := range l.Columns {
			if !slices.Contains(cols, c.Name) {
				cols = append(cols, c.Name)
			}
		}
	}
	sample, err := simulator.TakeSample(ctx, states[0], cols, simulator.SampleOptions{ProjectedFiles: cfg.FilesAfter})
	if err != nil {
		return Report{}, fmt.Errorf("evaluate layouts: sample: %w", err)
	}
	defer sample.Release()
	rep.SampleSeconds = time.Since(start).Seconds()
	start = time.Now()
	// A tree is learned on the train draw and projected for the eval draw: the rewrite
	// writes what the recommender, which never sees the eval parameters, would have.
	evalP, err := simulator.Project(ctx, states[0], layouts, eval, simulator.ProjectOptions{ZOrderMode: cfg.ZOrderMode, TreeWorkload: train, TreeCache: trees})
	if err != nil {
		return Report{}, fmt.Errorf("evaluate layouts: project eval workload: %w", err)
	}
	rep.ProjectSeconds = time.Since(start).Seconds()
	for i, l := range layouts {
		row := Row{Layout: cfg.Candidates[i], ProjectedPct: evalP[i].SkippedPct, TrainProjectedPct: trainP[i].SkippedPct,
			ErrorPP: evalP[i].ErrorPP, SamplingErrorPP: evalP[i].SamplingErrorPP, SizeErrorPP: evalP[i].SizeErrorPP, Basis: evalP[i].Basis, SampleThin: evalP[i].SampleThin,
			BoundRatio: evalP[i].BoundRatio, FilesProjected: evalP[i].FilesAfter, SizeRatioProjected: evalP[i].SizeRatio, SizeRatioActual: 1}
		if f := evalP[i].FilesAfter; f > 0 && evalP[i].MeanBoundFiles > 0 {
			row.BoundPct = 100 * (1 - evalP[i].MeanBoundFiles/float64(f))
		}
		if f := evalP[i].FilesAfter; f > 0 {
			box, err := sample.BoxBound(eval, f)
			if err != nil {
				return Report{}, fmt.Errorf("evaluate layout %s: box bound: %w", l, err)
			}
			if box.MeanFiles > 0 {
				row.BoxBoundPct = 100 * (1 - box.MeanFiles/float64(f))
				row.BoxRatio = evalP[i].MeanFilesRead / box.MeanFiles
				row.QueryBoxFiles = box.PerQuery
				row.BoxSpans = box.Spans
			}
		}
		tbl := states[i].Table
		start := time.Now()
		if l.Strategy != floelayout.StrategyCurrent {
			opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: target, ZOrderMode: cfg.ZOrderMode}
			if len(evalP[i].Quantiles) > 0 {
				// As 'floe optimize --plan' does: the rewrite cuts the projected cells.
				if opts.Quantiles, err = floelayout.UnmarshalQuantiles(evalP[i].Quantiles, aschema); err != nil {
					return Report{}, fmt.Errorf("evaluate layout %s: %w", l, err)
				}
			}
			if len(evalP[i].Tree) > 0 {
				if opts.Tree, err = floelayout.UnmarshalTree(evalP[i].Tree, aschema); err != nil {
					return Report{}, fmt.Errorf("evaluate layout %s: %w", l, err)
				}
				row.TreeLeaves = opts.Tree.Leaves()
			}
			plan, err := rewriter.PlanCompaction(states[i], opts)
			if err != nil {
				return Report{}, fmt.Errorf("evaluate layout %s: %w", l, err)
			}
			res, err := rewriter.Compact(ctx, states[i], plan, opts)
			if err != nil {
				return Report{}, fmt.Errorf("evaluate layout %s: %w", l, err)
			}
			tbl = res.Table
			if res.BytesIn > 0 {
				row.SizeRatioActual = float64(res.BytesOut) / float64(res.BytesIn)
			}
		}
		row.RewriteSeconds = time.Since(start).Seconds()
		m, err := simulator.Measure(ctx, tbl, eval)
		if err != nil {
			return Report{}, fmt.Errorf("evaluate layout %s: %w", l, err)
		}
		row.ActualPct, row.FilesActual = m.SkippedPct, m.FilesTotal
		row.WithinError = row.AbsErrorPP() <= row.ErrorPP+1e-9
		for j, mq := range m.Queries {
			pq := evalP[i].PerQuery[j]
			proj := pq.SkippedFraction()
			act := 1 - float64(mq.FilesScanned)/float64(max(m.FilesTotal, 1))
			row.QueryErrorsPP = append(row.QueryErrorsPP, 100*math.Abs(proj-act))
			row.QueryFilesRead = append(row.QueryFilesRead, mq.FilesScanned)
			row.QueryBoundFiles = append(row.QueryBoundFiles, pq.BoundFiles)
		}
		rep.Results = append(rep.Results, row)
	}
	return rep, nil
}

// precompact bin-packs st with the real rewriter as mode says (see Config.Compacted).
func precompact(ctx context.Context, st *lake.State, mode string) (*lake.State, error) {
	parts := partitionBytes(st)
	var total, most int64
	for _, b := range parts {
		total += b
		most = max(most, b)
	}
	target := 2*most + 1
	if mode == CompactedFew {
		target = max(total/int64(len(parts))/3, 1)
		if len(parts) == 1 {
			target = max(total/8, 1)
		}
	}
	opts := rewriter.CompactOptions{Layout: floelayout.Layout{Strategy: floelayout.StrategyBinpack}, TargetFileSizeBytes: target, MinInputFiles: 2}
	plan, err := rewriter.PlanCompaction(st, opts)
	if err != nil {
		return nil, fmt.Errorf("compact %s before projecting: %w", st.Ident, err)
	}
	res, err := rewriter.Compact(ctx, st, plan, opts)
	if err != nil {
		return nil, fmt.Errorf("compact %s before projecting: %w", st.Ident, err)
	}
	out, err := lake.LoadState(ctx, st.Ident, res.Table, lake.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", st.Ident, err)
	}
	return out, nil
}

// partitionBytes sums st's data file bytes per partition.
func partitionBytes(st *lake.State) map[string]int64 {
	out := map[string]int64{}
	for _, f := range st.DataFiles {
		out[f.PartitionKey] += f.SizeBytes
	}
	return out
}

func writeTable(ctx context.Context, cat catalog.Catalog, id lake.Ident, schema *iceberg.Schema, spec *iceberg.PartitionSpec, batches []arrow.RecordBatch) (*lake.State, error) {
	props := iceberg.Properties{
		"commit.manifest-merge.enabled":      "true",
		"commit.manifest.min-count-to-merge": "2",
	}
	copts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if spec != nil {
		copts = append(copts, catalog.WithPartitionSpec(spec))
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{Namespace, id.Name}, schema, copts...)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	for i, b := range batches {
		rdr, err := array.NewRecordReader(b.Schema(), []arrow.RecordBatch{b})
		if err != nil {
			return nil, fmt.Errorf("append batch %d to %s: %w", i, id, err)
		}
		tbl, err = tbl.Append(ctx, rdr, nil)
		rdr.Release()
		if err != nil {
			return nil, fmt.Errorf("append batch %d to %s: %w", i, id, err)
		}
	}
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", id, err)
	}
	return st, nil
}

// shareTable creates table id holding the data files of src, added in one commit in
// src's order. The tables share the files: a rewrite of one only drops them from its own
// manifests, and nothing here deletes files.
func shareTable(ctx context.Context, cat catalog.Catalog, id lake.Ident, schema *iceberg.Schema, src *lake.State) (*lake.State, error) {
	props := iceberg.Properties{
		"commit.manifest-merge.enabled":      "true",
		"commit.manifest.min-count-to-merge": "2",
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{Namespace, id.Name}, schema, catalog.WithProperties(props))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	paths := make([]string, len(src.DataFiles))
	for i, f := range src.DataFiles {
		paths[i] = f.Path
	}
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, paths, nil, false); err != nil {
		return nil, fmt.Errorf("add %d files of %s to %s: %w", len(paths), src.Ident, id, err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("add %d files of %s to %s: %w", len(paths), src.Ident, id, err)
	}
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", id, err)
	}
	return st, nil
}
