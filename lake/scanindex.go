package lake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"
)

// ErrScanUnsupported is returned by [ScanIndex.Match] for a filter it cannot
// evaluate exactly as iceberg-go's scan planning would (a geospatial or
// variant-extract predicate). Callers plan such a filter with
// tbl.Scan(table.WithRowFilter(…)).PlanFiles instead.
var ErrScanUnsupported = errors.New("filter not supported by the scan index")

// ScanIndex holds every live data-file entry of a table's current snapshot,
// read from the manifests once, and answers "which data files would
// tbl.Scan(table.WithRowFilter(filter)).PlanFiles(ctx) return" for any
// number of filters without reading a manifest again: the work `floe
// measure` repeats for every workload query.
//
// It follows iceberg-go v0.7.0's local scan planning (table/scanner.go
// planFilesLocal), step by step:
//
//  1. per partition spec, the row filter is projected onto the partition
//     (inclusive projection: NOT rewritten away, bound to the current schema,
//     each predicate replaced by the AND of iceberg.Transform.Project over the
//     spec's fields on its column);
//  2. each data manifest is kept or pruned by evaluating that projection on
//     its partition field summaries (the manifest evaluator); manifests known
//     to have no added and no existing entries are skipped whatever the filter;
//  3. each live entry of a kept manifest is kept when the projection holds for
//     its partition tuple (iceberg.ExpressionEvaluator over the partition
//     struct, the partition evaluator PlanFiles builds) and the inclusive
//     metrics evaluator finds that its lower/upper bounds, value, null and NaN
//     counts may hold a matching row (empty files never match).
//
// Which parts are iceberg-go's own code: the partition evaluator is the
// exported iceberg.ExpressionEvaluator, fed by table.GetPartitionRecord, as
// PlanFiles does; the projection rules are the exported
// iceberg.Transform.Project of each transform; NOT rewriting, binding and
// short-circuit traversal are the exported iceberg.RewriteNotExpr,
// iceberg.BindExpr, iceberg.VisitExpr and iceberg.VisitExprEvaluator. Three
// visitors are unexported in v0.7.0's table package (newInclusiveProjection,
// newManifestEvaluator, newInclusiveMetricsEvaluator in table/evaluators.go)
// and are transcribed here rule for rule, pinned to v0.7.0 (see
// docs/iceberg-go-pitfalls.md); TestScanIndexAgreesWithPlanFiles checks the
// kept file set against PlanFiles on seeded random predicate trees. Two
// differences of form that do not change the kept set: an IN predicate's
// minimum and maximum are computed here (iceberg-go reads them from the bound
// predicate through an internal-only path), and geospatial and
// variant-extract predicates, which floe never generates, are refused with
// [ErrScanUnsupported] instead of being evaluated.
//
// Delete files do not decide which data files a scan plans, so delete
// manifests are not read. A path listed by several manifests is one file,
// kept when any of its entries is.
//
// A ScanIndex is immutable once loaded and safe for concurrent use.
type ScanIndex struct {
	schema    *iceberg.Schema
	specs     map[int]iceberg.PartitionSpec
	manifests []scanManifest
	paths     []string
}

type scanManifest struct {
	path     string
	specID   int
	summary  []iceberg.FieldSummary
	entries  []scanEntry
	partType *iceberg.StructType
}

// scanEntry is one live data-file entry with what the evaluators read,
// taken from the public iceberg.DataFile getters once.
type scanEntry struct {
	file      int // index into ScanIndex.paths
	count     int64
	partition iceberg.StructLike
	stats     fileStats
}

type fileStats struct {
	valueCounts, nullCounts, nanCounts map[int]int64
	lowerBounds, upperBounds           map[int][]byte
}

// ScanIndexOptions tune [LoadScanIndex].
type ScanIndexOptions struct {
	// Concurrency is the number of manifests read at once. Default:
	// 4 × GOMAXPROCS, as [LoadOptions].
	Concurrency int
	// Manifests reads the manifests, as [LoadOptions.Manifests]. Default:
	// a reader for this load alone.
	Manifests *ManifestReader
}

// LoadScanIndex reads the data manifests of tbl's current snapshot once, in
// parallel. A table without a snapshot gives an empty index.
func LoadScanIndex(ctx context.Context, tbl *table.Table, opts ScanIndexOptions) (*ScanIndex, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4 * runtime.GOMAXPROCS(0)
	}
	if opts.Manifests == nil {
		opts.Manifests = NewManifestReader(0)
	}
	md := tbl.Metadata()
	ix := &ScanIndex{schema: md.CurrentSchema(), specs: map[int]iceberg.PartitionSpec{}}
	for _, s := range md.PartitionSpecs() {
		ix.specs[s.ID()] = s
	}
	snap := md.CurrentSnapshot()
	if snap == nil {
		return ix, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("load scan index: open table io: %w", err)
	}
	list, err := snap.Manifests(fio)
	if err != nil {
		return nil, fmt.Errorf("load scan index: read manifest list: %w", err)
	}
	var data []iceberg.ManifestFile
	for _, m := range list {
		// PlanFiles skips these whatever the filter: known to hold no live entry.
		if m.ManifestContent() != iceberg.ManifestContentData || (!m.HasAddedFiles() && !m.HasExistingFiles()) {
			continue
		}
		data = append(data, m)
	}
	type read struct {
		paths []string
		m     scanManifest
	}
	reads := make([]read, len(data))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, m := range data {
		specID := int(m.PartitionSpecID())
		spec, ok := ix.specs[specID]
		if !ok {
			return nil, fmt.Errorf("load scan index: manifest %s: no partition spec %d", m.FilePath(), specID)
		}
		partType := spec.PartitionType(ix.schema)
		g.Go(func() error {
			r := read{m: scanManifest{path: m.FilePath(), specID: specID, summary: m.Partitions(), partType: partType}}
			entries, err := opts.Manifests.Entries(fio, m, &spec, true)
			if err != nil {
				return fmt.Errorf("load scan index: manifest %s: %w", m.FilePath(), err)
			}
			for _, e := range entries {
				if err := gctx.Err(); err != nil {
					return err
				}
				df := e.DataFile()
				if df.ContentType() != iceberg.EntryContentData {
					return fmt.Errorf("load scan index: data manifest %s lists a %s file %q", m.FilePath(), df.ContentType(), df.FilePath())
				}
				r.paths = append(r.paths, df.FilePath())
				r.m.entries = append(r.m.entries, scanEntry{
					count:     df.Count(),
					partition: table.GetPartitionRecord(df, partType),
					stats: fileStats{
						valueCounts: df.ValueCounts(), nullCounts: df.NullValueCounts(), nanCounts: df.NaNValueCounts(),
						lowerBounds: df.LowerBoundValues(), upperBounds: df.UpperBoundValues(),
					},
				})
			}
			reads[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	ids := map[string]int{}
	for _, r := range reads {
		for j, p := range r.paths {
			id, ok := ids[p]
			if !ok {
				id = len(ix.paths)
				ids[p] = id
				ix.paths = append(ix.paths, p)
			}
			r.m.entries[j].file = id
		}
		ix.manifests = append(ix.manifests, r.m)
	}
	return ix, nil
}

// Files lists the distinct data files of the snapshot; [ScanIndex.Match]
// answers with indices into it. The full scan plans all of them.
func (ix *ScanIndex) Files() []string { return ix.paths }

// Match returns, in increasing order, the indices into [ScanIndex.Files] of
// the data files tbl.Scan(table.WithRowFilter(filter)).PlanFiles would
// return (case-sensitive binding, as a Scan's default). A filter that does
// not bind to the schema is an error, as it is for PlanFiles.
func (ix *ScanIndex) Match(filter iceberg.BooleanExpression) ([]int, error) {
	if filter == nil {
		filter = iceberg.AlwaysTrue{}
	}
	if err := checkSupported(ix.schema, filter); err != nil {
		return nil, err
	}
	metrics, err := newMetricsEvaluator(ix.schema, filter)
	if err != nil {
		return nil, err
	}
	type specEval struct {
		manifest  func([]iceberg.FieldSummary) (bool, error)
		partition func(iceberg.StructLike) (bool, error)
	}
	evals := map[int]*specEval{}
	keep := make([]bool, len(ix.paths))
	for i := range ix.manifests {
		m := &ix.manifests[i]
		ev := evals[m.specID]
		if ev == nil {
			proj, err := inclusiveProjection(ix.schema, ix.specs[m.specID], filter)
			if err != nil {
				return nil, fmt.Errorf("project filter on partition spec %d: %w", m.specID, err)
			}
			partSchema := iceberg.NewSchema(0, m.partType.FieldList...)
			me, err := newManifestEvaluator(partSchema, proj)
			if err != nil {
				return nil, fmt.Errorf("manifest evaluator for spec %d: %w", m.specID, err)
			}
			pe, err := iceberg.ExpressionEvaluator(partSchema, proj, true)
			if err != nil {
				return nil, fmt.Errorf("partition evaluator for spec %d: %w", m.specID, err)
			}
			ev = &specEval{manifest: me, partition: pe}
			evals[m.specID] = ev
		}
		use, err := ev.manifest(m.summary)
		if err != nil {
			return nil, fmt.Errorf("evaluate manifest %s: %w", m.path, err)
		}
		if !use {
			continue
		}
		for j := range m.entries {
			e := &m.entries[j]
			if keep[e.file] {
				continue
			}
			ok, err := ev.partition(e.partition)
			if err != nil {
				return nil, fmt.Errorf("evaluate partition of %s: %w", ix.paths[e.file], err)
			}
			if !ok {
				continue
			}
			if ok, err = metrics(e); err != nil {
				return nil, fmt.Errorf("evaluate metrics of %s: %w", ix.paths[e.file], err)
			}
			keep[e.file] = ok
		}
	}
	var out []int
	for i, k := range keep {
		if k {
			out = append(out, i)
		}
	}
	return out, nil
}

// checkSupported refuses the predicates the index does not evaluate: it
// visits every node of the bound filter (VisitExprEvaluator would skip some).
func checkSupported(schema *iceberg.Schema, filter iceberg.BooleanExpression) error {
	e, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return err
	}
	bound, err := iceberg.BindExpr(schema, e, true)
	if err != nil {
		return err
	}
	_, err = iceberg.VisitExpr(bound, supportVisitor{})
	return err
}

type supportVisitor struct{}

func (supportVisitor) VisitTrue() bool                            { return true }
func (supportVisitor) VisitFalse() bool                           { return true }
func (supportVisitor) VisitNot(bool) bool                         { return true }
func (supportVisitor) VisitAnd(bool, bool) bool                   { return true }
func (supportVisitor) VisitOr(bool, bool) bool                    { return true }
func (supportVisitor) VisitUnbound(iceberg.UnboundPredicate) bool { return true }

func (supportVisitor) VisitBound(p iceberg.BoundPredicate) bool {
	if _, ok := p.Term().(iceberg.BoundExtract); ok {
		panic(fmt.Errorf("%w: variant extract in %s", ErrScanUnsupported, p))
	}
	switch p.Op() {
	case iceberg.OpBBoxIntersects, iceberg.OpBBoxNotIntersects:
		panic(fmt.Errorf("%w: geospatial predicate %s", ErrScanUnsupported, p))
	}
	return true
}

// ---- inclusive projection (iceberg-go v0.7.0 table/evaluators.go
// newInclusiveProjection, unexported) ----

func inclusiveProjection(schema *iceberg.Schema, spec iceberg.PartitionSpec, filter iceberg.BooleanExpression) (iceberg.BooleanExpression, error) {
	e, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil, err
	}
	bound, err := iceberg.BindExpr(schema, e, true)
	if err != nil {
		return nil, err
	}
	return iceberg.VisitExpr(bound, &projectionVisitor{spec: spec})
}

type projectionVisitor struct{ spec iceberg.PartitionSpec }

func (*projectionVisitor) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (*projectionVisitor) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (*projectionVisitor) VisitNot(child iceberg.BooleanExpression) iceberg.BooleanExpression {
	panic(fmt.Errorf("%w: cannot project 'not' expression, should be rewritten %s", iceberg.ErrInvalidArgument, child))
}

func (*projectionVisitor) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}

func (*projectionVisitor) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}

func (*projectionVisitor) VisitUnbound(pred iceberg.UnboundPredicate) iceberg.BooleanExpression {
	panic(fmt.Errorf("%w: cannot project unbound predicate: %s", iceberg.ErrInvalidArgument, pred))
}

// VisitBound ANDs the projections of every partition field on the
// predicate's column: the most restrictive wins (day(ts) and hour(ts) both
// constrain ts).
func (p *projectionVisitor) VisitBound(pred iceberg.BoundPredicate) iceberg.BooleanExpression {
	var result iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	for _, part := range p.spec.FieldsBySourceID(pred.Term().Ref().Field().ID) {
		proj, err := part.Transform.Project(part.Name, pred)
		if err != nil {
			panic(err)
		}
		if proj != nil {
			result = iceberg.NewAnd(result, proj)
		}
	}
	return result
}

// ---- manifest evaluator (iceberg-go v0.7.0 table/evaluators.go
// newManifestEvaluator, unexported): the projected filter against a
// manifest's partition field summaries ----

const (
	rowsMightMatch  = true
	rowsCannotMatch = false
	// inPredicateLimit is iceberg-go's: larger IN sets are not checked
	// against file bounds.
	inPredicateLimit = 200
)

func newManifestEvaluator(partSchema *iceberg.Schema, partFilter iceberg.BooleanExpression) (func([]iceberg.FieldSummary) (bool, error), error) {
	e, err := iceberg.RewriteNotExpr(partFilter)
	if err != nil {
		return nil, err
	}
	bound, err := iceberg.BindExpr(partSchema, e, true)
	if err != nil {
		return nil, err
	}
	return func(parts []iceberg.FieldSummary) (bool, error) {
		if len(parts) == 0 {
			return rowsMightMatch, nil
		}
		res, err := iceberg.VisitExprEvaluator(bound, &manifestVisitor{parts: parts})
		if errors.Is(err, iceberg.ErrInvalidFixedLength) {
			return rowsMightMatch, nil
		}
		return res, err
	}, nil
}

type manifestVisitor struct{ parts []iceberg.FieldSummary }

func (*manifestVisitor) VisitTrue() bool          { return rowsMightMatch }
func (*manifestVisitor) VisitFalse() bool         { return rowsCannotMatch }
func (*manifestVisitor) VisitNot(child bool) bool { return !child }
func (*manifestVisitor) VisitAnd(l, r bool) bool  { return l && r }
func (*manifestVisitor) VisitOr(l, r bool) bool   { return l || r }
func (*manifestVisitor) VisitUnbound(iceberg.UnboundPredicate) bool {
	panic("need bound predicate")
}

func (m *manifestVisitor) VisitBound(pred iceberg.BoundPredicate) bool {
	if isTransformedTerm(pred.Term()) {
		return rowsMightMatch
	}
	return iceberg.VisitBoundPredicate(pred, m)
}

func (m *manifestVisitor) field(t iceberg.BoundTerm) iceberg.FieldSummary {
	return m.parts[t.Ref().Pos()]
}

func mustLiteral(typ iceberg.Type, b []byte) iceberg.Literal {
	l, err := iceberg.LiteralFromBytes(typ, b)
	if err != nil {
		panic(err)
	}
	return l
}

// VisitIn prunes when every value lies below the lower or above the upper
// bound. iceberg-go v0.7.0 compares with the set's precomputed extrema here
// (no size limit); they are computed the same way.
func (m *manifestVisitor) VisitIn(t iceberg.BoundTerm, lits iceberg.Set[iceberg.Literal]) bool {
	f := m.field(t)
	if f.LowerBound == nil {
		return rowsCannotMatch
	}
	minLit, maxLit := setExtrema(lits)
	if minLit == nil {
		return rowsCannotMatch // no value at all (iceberg-go: every one of none is out of bounds)
	}
	lower := mustLiteral(t.Type(), *f.LowerBound)
	if getCmpLiteral(lower)(lower, maxLit) > 0 {
		return rowsCannotMatch
	}
	if f.UpperBound != nil {
		upper := mustLiteral(t.Type(), *f.UpperBound)
		if getCmpLiteral(upper)(upper, minLit) < 0 {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func setExtrema(lits iceberg.Set[iceberg.Literal]) (minLit, maxLit iceberg.Literal) {
	for _, l := range lits.Members() {
		if minLit == nil {
			minLit, maxLit = l, l
			continue
		}
		cmp := getCmpLiteral(l)
		if cmp(l, minLit) < 0 {
			minLit = l
		}
		if cmp(l, maxLit) > 0 {
			maxLit = l
		}
	}
	return minLit, maxLit
}

func (*manifestVisitor) VisitNotIn(iceberg.BoundTerm, iceberg.Set[iceberg.Literal]) bool {
	return rowsMightMatch
}

func (m *manifestVisitor) VisitIsNan(t iceberg.BoundTerm) bool {
	if f := m.field(t); f.ContainsNaN != nil && !*f.ContainsNaN {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitNotNan(t iceberg.BoundTerm) bool {
	if f := m.field(t); f.ContainsNaN != nil && *f.ContainsNaN && !f.ContainsNull && f.LowerBound == nil {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitIsNull(t iceberg.BoundTerm) bool {
	if !m.field(t).ContainsNull {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitNotNull(t iceberg.BoundTerm) bool {
	f := m.field(t)
	allNull := f.ContainsNull && f.LowerBound == nil
	if allNull && (t.Ref().Type().Equals(iceberg.PrimitiveTypes.Float32) || t.Ref().Type().Equals(iceberg.PrimitiveTypes.Float64)) {
		allNull = f.ContainsNaN != nil && !*f.ContainsNaN
	}
	if allNull {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	if f.LowerBound == nil || f.UpperBound == nil {
		return rowsCannotMatch
	}
	lower := mustLiteral(t.Ref().Type(), *f.LowerBound)
	cmp := getCmpLiteral(lower)
	if cmp(lower, lit) == 1 {
		return rowsCannotMatch
	}
	upper := mustLiteral(t.Ref().Type(), *f.UpperBound)
	if cmp(lit, upper) == 1 {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (*manifestVisitor) VisitNotEqual(iceberg.BoundTerm, iceberg.Literal) bool { return rowsMightMatch }

func (m *manifestVisitor) VisitGreaterEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	if f.UpperBound == nil {
		return rowsCannotMatch
	}
	upper := mustLiteral(t.Ref().Type(), *f.UpperBound)
	if getCmpLiteral(upper)(lit, upper) == 1 {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitGreater(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	if f.UpperBound == nil {
		return rowsCannotMatch
	}
	upper := mustLiteral(t.Ref().Type(), *f.UpperBound)
	if getCmpLiteral(upper)(lit, upper) >= 0 {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitLessEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	if f.LowerBound == nil {
		return rowsCannotMatch
	}
	lower := mustLiteral(t.Ref().Type(), *f.LowerBound)
	if getCmpLiteral(lower)(lit, lower) == -1 {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitLess(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	if f.LowerBound == nil {
		return rowsCannotMatch
	}
	lower := mustLiteral(t.Ref().Type(), *f.LowerBound)
	if getCmpLiteral(lower)(lit, lower) <= 0 {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

// stringOf is the string or bytes value of a string or binary literal.
func stringOf(l iceberg.Literal) string {
	switch v := l.(type) {
	case iceberg.TypedLiteral[string]:
		return v.Value()
	case iceberg.TypedLiteral[[]byte]:
		return string(v.Value())
	}
	return ""
}

func truncated(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (m *manifestVisitor) VisitStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	prefix := stringOf(lit)
	if f.LowerBound == nil {
		return rowsCannotMatch
	}
	if truncated(stringOf(mustLiteral(t.Ref().Type(), *f.LowerBound)), len(prefix)) > prefix {
		return rowsCannotMatch
	}
	if f.UpperBound == nil {
		return rowsCannotMatch
	}
	if truncated(stringOf(mustLiteral(t.Ref().Type(), *f.UpperBound)), len(prefix)) < prefix {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *manifestVisitor) VisitNotStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	f := m.field(t)
	if f.ContainsNull || f.LowerBound == nil || f.UpperBound == nil {
		return rowsMightMatch
	}
	lower := stringOf(mustLiteral(t.Ref().Type(), *f.LowerBound))
	upper := stringOf(mustLiteral(t.Ref().Type(), *f.UpperBound))
	prefix := stringOf(lit)
	if len(lower) < len(prefix) {
		return rowsMightMatch
	}
	if lower[:len(prefix)] == prefix {
		if len(upper) < len(prefix) {
			return rowsMightMatch
		}
		if upper[:len(prefix)] == prefix {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

// ---- inclusive metrics evaluator (iceberg-go v0.7.0 table/evaluators.go
// newInclusiveMetricsEvaluator, unexported): the filter against one data
// file's column metrics ----

func newMetricsEvaluator(schema *iceberg.Schema, filter iceberg.BooleanExpression) (func(*scanEntry) (bool, error), error) {
	e, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil, err
	}
	bound, err := iceberg.BindExpr(schema, e, true)
	if err != nil {
		return nil, err
	}
	return func(f *scanEntry) (bool, error) {
		// include_empty_files is off for PlanFiles: an empty file holds no row.
		if f.count == 0 {
			return rowsCannotMatch, nil
		}
		res, err := iceberg.VisitExprEvaluator(bound, &metricsVisitor{fileStats: &f.stats})
		if errors.Is(err, iceberg.ErrInvalidFixedLength) {
			return rowsMightMatch, nil
		}
		return res, err
	}, nil
}

type metricsVisitor struct{ *fileStats }

func (*metricsVisitor) VisitTrue() bool  { return rowsMightMatch }
func (*metricsVisitor) VisitFalse() bool { return rowsCannotMatch }
func (*metricsVisitor) VisitNot(child bool) bool {
	panic(fmt.Errorf("%w: NOT should be rewritten %v", iceberg.ErrInvalidArgument, child))
}
func (*metricsVisitor) VisitAnd(l, r bool) bool { return l && r }
func (*metricsVisitor) VisitOr(l, r bool) bool  { return l || r }
func (*metricsVisitor) VisitUnbound(iceberg.UnboundPredicate) bool {
	panic("need bound predicate")
}

func (m *metricsVisitor) VisitBound(pred iceberg.BoundPredicate) bool {
	if isTransformedTerm(pred.Term()) {
		return rowsMightMatch
	}
	return iceberg.VisitBoundPredicate(pred, m)
}

func (m *metricsVisitor) containsNullsOnly(id int) bool {
	v, ok := m.valueCounts[id]
	if !ok {
		return false
	}
	n, ok := m.nullCounts[id]
	return ok && v == n
}

func (m *metricsVisitor) containsNansOnly(id int) bool {
	n, ok := m.nanCounts[id]
	if !ok {
		return false
	}
	v, ok := m.valueCounts[id]
	return ok && n == v
}

func (m *metricsVisitor) mayContainNull(id int) bool {
	if m.nullCounts == nil {
		return true
	}
	_, ok := m.nullCounts[id]
	return ok
}

func isNaN(l iceberg.Literal) bool {
	switch v := l.(type) {
	case iceberg.Float32Literal:
		return math.IsNaN(float64(v))
	case iceberg.Float64Literal:
		return math.IsNaN(float64(v))
	}
	return false
}

// bound decodes a file bound of t's column; ok is false when there is none.
func bound(t iceberg.BoundTerm, raw []byte) (iceberg.Literal, bool) {
	if raw == nil {
		return nil, false
	}
	field := t.Ref().Field()
	if _, ok := field.Type.(iceberg.PrimitiveType); !ok {
		panic(fmt.Errorf("%w: expected iceberg.PrimitiveType, got %s", iceberg.ErrInvalidTypeString, field.Type))
	}
	return mustLiteral(field.Type, raw), true
}

func (m *metricsVisitor) VisitIsNull(t iceberg.BoundTerm) bool {
	if cnt, ok := m.nullCounts[t.Ref().Field().ID]; ok && cnt == 0 {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitNotNull(t iceberg.BoundTerm) bool {
	if m.containsNullsOnly(t.Ref().Field().ID) {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitIsNan(t iceberg.BoundTerm) bool {
	id := t.Ref().Field().ID
	if cnt, ok := m.nanCounts[id]; ok && cnt == 0 {
		return rowsCannotMatch
	}
	if m.containsNullsOnly(id) {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitNotNan(t iceberg.BoundTerm) bool {
	if m.containsNansOnly(t.Ref().Field().ID) {
		return rowsCannotMatch
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitLess(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) || m.containsNansOnly(id) {
		return rowsCannotMatch
	}
	if lower, ok := bound(t, m.lowerBounds[id]); ok {
		if isNaN(lower) {
			return rowsMightMatch
		}
		if getCmpLiteral(lower)(lower, lit) >= 0 {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitLessEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) || m.containsNansOnly(id) {
		return rowsCannotMatch
	}
	if lower, ok := bound(t, m.lowerBounds[id]); ok {
		if isNaN(lower) {
			return rowsMightMatch
		}
		if getCmpLiteral(lower)(lower, lit) > 0 {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitGreater(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) || m.containsNansOnly(id) {
		return rowsCannotMatch
	}
	if upper, ok := bound(t, m.upperBounds[id]); ok {
		if getCmpLiteral(upper)(upper, lit) <= 0 {
			if isNaN(upper) {
				return rowsMightMatch
			}
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitGreaterEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) || m.containsNansOnly(id) {
		return rowsCannotMatch
	}
	if upper, ok := bound(t, m.upperBounds[id]); ok {
		if getCmpLiteral(upper)(upper, lit) < 0 {
			if isNaN(upper) {
				return rowsMightMatch
			}
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) || m.containsNansOnly(id) {
		return rowsCannotMatch
	}
	if lower, ok := bound(t, m.lowerBounds[id]); ok {
		if isNaN(lower) {
			return rowsMightMatch
		}
		if getCmpLiteral(lower)(lower, lit) == 1 {
			return rowsCannotMatch
		}
	}
	if upper, ok := bound(t, m.upperBounds[id]); ok {
		if isNaN(upper) {
			return rowsMightMatch
		}
		if getCmpLiteral(upper)(upper, lit) == -1 {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func (*metricsVisitor) VisitNotEqual(iceberg.BoundTerm, iceberg.Literal) bool { return rowsMightMatch }

func (m *metricsVisitor) VisitIn(t iceberg.BoundTerm, s iceberg.Set[iceberg.Literal]) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) || m.containsNansOnly(id) {
		return rowsCannotMatch
	}
	if s.Len() > inPredicateLimit {
		return rowsMightMatch
	}
	values := s.Members()
	if lower, ok := bound(t, m.lowerBounds[id]); ok {
		if isNaN(lower) {
			return rowsMightMatch
		}
		values = removeBound(lower, values, 1)
		if len(values) == 0 {
			return rowsCannotMatch
		}
	}
	if upper, ok := bound(t, m.upperBounds[id]); ok {
		if isNaN(upper) {
			return rowsMightMatch
		}
		values = removeBound(upper, values, -1)
		if len(values) == 0 {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

// removeBound drops the values v with cmp(bound, v) == drop (iceberg-go's
// removeBoundCheck: 1 drops values below a lower bound, -1 values above an
// upper bound).
func removeBound(b iceberg.Literal, vals []iceberg.Literal, drop int) []iceberg.Literal {
	cmp := getCmpLiteral(b)
	out := vals[:0]
	for _, v := range vals {
		if cmp(b, v) != drop {
			out = append(out, v)
		}
	}
	return out
}

func (*metricsVisitor) VisitNotIn(iceberg.BoundTerm, iceberg.Set[iceberg.Literal]) bool {
	return rowsMightMatch
}

func (m *metricsVisitor) VisitStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.containsNullsOnly(id) {
		return rowsCannotMatch
	}
	prefix := stringOf(lit)
	if lower, ok := bound(t, m.lowerBounds[id]); ok {
		if v := truncated(stringOf(lower), len(prefix)); len(v) > 0 && v > prefix {
			return rowsCannotMatch
		}
	}
	if upper, ok := bound(t, m.upperBounds[id]); ok {
		if v := truncated(stringOf(upper), len(prefix)); len(v) > 0 && v < prefix {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func (m *metricsVisitor) VisitNotStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	field := t.Ref().Field()
	if m.mayContainNull(field.ID) {
		return rowsMightMatch
	}
	lo, hi := m.lowerBounds[field.ID], m.upperBounds[field.ID]
	if lo == nil || hi == nil {
		return rowsMightMatch
	}
	lower, _ := bound(t, lo)
	upper, _ := bound(t, hi)
	prefix, l, u := stringOf(lit), stringOf(lower), stringOf(upper)
	if len(l) < len(prefix) {
		return rowsMightMatch
	}
	if l[:len(prefix)] == prefix {
		if len(u) < len(prefix) {
			return rowsMightMatch
		}
		if u[:len(prefix)] == prefix {
			return rowsCannotMatch
		}
	}
	return rowsMightMatch
}

func isTransformedTerm(t iceberg.BoundTerm) bool {
	_, ok := t.(*iceberg.BoundTransform)
	return ok
}

// ---- literal comparison (iceberg-go v0.7.0 table/evaluators.go getCmpLiteral) ----

func getCmp[T iceberg.LiteralType](b iceberg.TypedLiteral[T]) func(iceberg.Literal, iceberg.Literal) int {
	cmp := b.Comparator()
	return func(l1, l2 iceberg.Literal) int {
		return cmp(l1.(iceberg.TypedLiteral[T]).Value(), l2.(iceberg.TypedLiteral[T]).Value())
	}
}

func getCmpLiteral(b iceberg.Literal) func(iceberg.Literal, iceberg.Literal) int {
	switch l := b.(type) {
	case iceberg.TypedLiteral[bool]:
		return getCmp(l)
	case iceberg.TypedLiteral[int32]:
		return getCmp(l)
	case iceberg.TypedLiteral[int64]:
		return getCmp(l)
	case iceberg.TypedLiteral[float32]:
		return getCmp(l)
	case iceberg.TypedLiteral[float64]:
		return getCmp(l)
	case iceberg.TypedLiteral[iceberg.Date]:
		return getCmp(l)
	case iceberg.TypedLiteral[iceberg.Time]:
		return getCmp(l)
	case iceberg.TypedLiteral[iceberg.Timestamp]:
		return getCmp(l)
	case iceberg.TypedLiteral[iceberg.TimestampNano]:
		return getCmp(l)
	case iceberg.TypedLiteral[[]byte]:
		return getCmp(l)
	case iceberg.TypedLiteral[string]:
		return getCmp(l)
	case iceberg.TypedLiteral[uuid.UUID]:
		return getCmp(l)
	case iceberg.TypedLiteral[iceberg.Decimal]:
		return getCmp(l)
	}
	panic(iceberg.ErrType)
}
