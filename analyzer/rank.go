package analyzer

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/lake"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// DefaultHalfLife is the age at which a query counts half, by default.
const DefaultHalfLife = 7 * 24 * time.Hour

// DefaultPartitionDiscount is the factor applied, by default, to the
// benefit of a predicate the partition spec already prunes as well as a
// layout would.
const DefaultPartitionDiscount = 0.2

// UnknownEvidenceWeight weighs evidence kinds absent from
// RankOptions.EvidenceWeights and from the defaults.
const UnknownEvidenceWeight = 0.5

// DefaultEvidenceWeights weighs each evidence kind by how surely it names
// the columns a scan filtered on.
func DefaultEvidenceWeights() map[collectors.Evidence]float64 {
	return map[collectors.Evidence]float64{
		collectors.EvidenceScanReport:    1.0,
		collectors.EvidencePushedFilter:  1.0,
		collectors.EvidenceSQL:           0.9,
		collectors.EvidenceAccessHistory: 0.5,
		collectors.EvidenceAnalysisRefs:  0.1,
	}
}

// RankOptions tune [Rank]. The zero value means every default.
type RankOptions struct {
	// HalfLife is the age at which a query's weight halves. Zero means
	// [DefaultHalfLife]; negative is invalid.
	HalfLife time.Duration
	// Now is the time ages are measured from. Zero means the latest start
	// time among the events, which keeps Rank independent of the clock.
	Now time.Time
	// OnlySucceeded counts SUCCEEDED queries only. Default: SUCCEEDED and
	// UNKNOWN (scan reports and access-history events carry no state).
	// FAILED and CANCELLED queries are never counted.
	OnlySucceeded bool
	// EvidenceWeights override [DefaultEvidenceWeights] per kind; kinds in
	// neither weigh [UnknownEvidenceWeight]. Weights must be in [0, 1].
	EvidenceWeights map[collectors.Evidence]float64
	// PartitionDiscount is the factor on the benefit of a predicate the
	// partition spec prunes as well as a layout would. Zero means
	// [DefaultPartitionDiscount]; it must be in (0, 1].
	PartitionDiscount float64
}

// DefaultRankOptions returns the options the zero value stands for, with
// every default spelled out (Now stays zero: the newest event).
func DefaultRankOptions() RankOptions {
	return RankOptions{}.withDefaults()
}

// Validate reports every invalid option at once.
func (o RankOptions) Validate() error {
	var errs []error
	if o.HalfLife < 0 {
		errs = append(errs, fmt.Errorf("half-life %s is negative", o.HalfLife))
	}
	for k, w := range o.EvidenceWeights {
		if math.IsNaN(w) || w < 0 || w > 1 {
			errs = append(errs, fmt.Errorf("evidence weight of %q is %v, want 0 to 1", k, w))
		}
	}
	if d := o.PartitionDiscount; math.IsNaN(d) || d < 0 || d > 1 {
		errs = append(errs, fmt.Errorf("partition discount %v, want 0 to 1", d))
	}
	return errors.Join(errs...)
}

func (o RankOptions) withDefaults() RankOptions {
	if o.HalfLife == 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.PartitionDiscount == 0 {
		o.PartitionDiscount = DefaultPartitionDiscount
	}
	w := DefaultEvidenceWeights()
	for k, v := range o.EvidenceWeights {
		w[k] = v
	}
	o.EvidenceWeights = w
	return o
}

func (o RankOptions) evidence(e collectors.Evidence) float64 {
	if w, ok := o.EvidenceWeights[e]; ok {
		return w
	}
	return UnknownEvidenceWeight
}

// ColumnRank is how much one column of a table is worth clustering on,
// by the workload's filters on it.
type ColumnRank struct {
	// Table is the table's catalog.namespace.name.
	Table string `json:"table"`
	// Column is the column as the schema spells it.
	Column string `json:"column"`
	// Score is the column's benefit summed over the workload; see the
	// package documentation for the formula. Its unit is "typical queries
	// fully served".
	Score float64 `json:"score"`
	// Share is the fraction of the table's workload weight (cost ×
	// recency) whose queries filter on the column with any operator.
	Share float64 `json:"share"`
	// Queries counts the queries that filter on the column.
	Queries int `json:"queries"`
	// OpMix is each operator's fraction of the column's weighted leaves
	// ("=", "in", "<", "between", "like-prefix", "like", "is null",
	// "day =", "unknown", …).
	OpMix map[string]float64 `json:"op_mix"`
	// Selectivity is the weighted median fraction of rows a predicate on
	// the column keeps, over its leaves that can help (1 when none can).
	Selectivity float64 `json:"selectivity"`
	// Partitioned is true when the current partition spec has a
	// non-void transform of the column.
	Partitioned bool `json:"partitioned"`
	// PartitionDiscount is the column's score over what it would be
	// without partition discounts (1: nothing discounted; the configured
	// discount: every predicate already pruned by partitions).
	PartitionDiscount float64 `json:"partition_discount"`
	// Reason says in one line why the column ranks where it does.
	Reason string `json:"reason"`
}

// Rank scores the columns of table that the events filter on, highest
// score first (ties: higher share, then name). st is the table's current
// state, whose file statistics estimate selectivity and whose partition
// spec discounts predicates partitions already prune; a nil st uses
// defaults for both. Events are expected resolved to floe tables with
// schema-spelled columns (as the state store holds them); accesses of
// other tables, metadata tables and write-only accesses are ignored, and
// leaves on columns the schema lacks are dropped. Rank does no I/O.
func Rank(table lake.Ident, st *lake.State, events []collectors.QueryEvent, opts RankOptions) ([]ColumnRank, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("rank columns of %s: %w", table, err)
	}
	opts = opts.withDefaults()
	stats := NewStats(st)
	queries := foldScanReports(selectQueries(table, events, opts))
	if len(queries) == 0 {
		return nil, nil
	}
	weighQueries(queries, opts)

	leaves := make([][][]weighted, len(queries))
	for qi := range queries {
		for _, a := range queries[qi].accesses {
			leaves[qi] = append(leaves[qi], accessLeaves(stats, a, opts))
		}
	}
	typical := typicalRanges(stats, queries, leaves)

	cols := map[string]*colAcc{}
	var total float64
	for qi := range queries {
		q := &queries[qi]
		total += q.weight
		perCol := map[string]*queryCol{}
		for _, ls := range leaves[qi] {
			for col, qc := range scoreLeaves(stats, ls, typical, opts) {
				if prev, ok := perCol[col]; ok {
					prev.merge(qc)
				} else {
					perCol[col] = qc
				}
			}
		}
		for col, qc := range perCol {
			acc := cols[col]
			if acc == nil {
				acc = &colAcc{opMix: map[string]float64{}}
				cols[col] = acc
			}
			acc.add(q.weight, qc)
		}
	}
	out := make([]ColumnRank, 0, len(cols))
	for col, acc := range cols {
		out = append(out, acc.rank(table.String(), col, total, stats))
	}
	slices.SortFunc(out, func(a, b ColumnRank) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Share, a.Share); c != 0 {
			return c
		}
		return strings.Compare(a.Column, b.Column)
	})
	return out, nil
}

// query is one counted query with its accesses of the table.
type query struct {
	ev       *collectors.QueryEvent
	accesses []*collectors.TableAccess
	bytes    int64
	elapsed  int64
	weight   float64
	// reports are the accesses of the scan reports folded into the query.
	reports []*collectors.TableAccess
}

// selectQueries keeps the events that count and read the table, once per
// (engine, query id).
func selectQueries(table lake.Ident, events []collectors.QueryEvent, opts RankOptions) []query {
	var out []query
	seen := map[[2]string]int{}
	for i := range events {
		ev := &events[i]
		switch ev.State {
		case collectors.StateFailed, collectors.StateCancelled:
			continue
		case collectors.StateSucceeded:
		default:
			if opts.OnlySucceeded {
				continue
			}
		}
		q := query{ev: ev}
		for j := range ev.Tables {
			a := &ev.Tables[j]
			if _, meta := a.MetadataTable(); !sameTable(table, a) || meta || strings.Contains(a.Name, "$") {
				continue
			}
			if a.Write && a.Filter == nil && !hasFilterColumn(a) {
				continue // an INSERT target: nothing read
			}
			q.accesses = append(q.accesses, a)
			q.bytes += a.Metrics.BytesScanned
		}
		if len(q.accesses) == 0 {
			continue
		}
		if q.bytes == 0 {
			q.bytes = ev.Metrics.BytesScanned
		}
		q.elapsed = ev.Metrics.ElapsedMs
		if q.elapsed == 0 {
			q.elapsed = ev.Duration().Milliseconds()
		}
		if ev.QueryID != "" {
			key := [2]string{string(ev.Engine), ev.QueryID}
			if k, ok := seen[key]; ok {
				if richness(&q) > richness(&out[k]) {
					out[k] = q
				}
				continue
			}
			seen[key] = len(out)
		}
		out = append(out, q)
	}
	return out
}

// foldScanReports merges each Iceberg scan report into the engine query
// it was sent for, when exactly one engine query of the table ran at the
// report's time (start ≤ report ≤ end, end known) and, when the report
// names its engine ("trino 467"), that query ran on it. The report's access
// joins the query's accesses, so the query counts once and each column is
// credited by the better of the two filters. Ambiguous or unmatched reports
// stay queries of their own.
func foldScanReports(qs []query) []query {
	var engine []int
	var maxDur time.Duration
	for i := range qs {
		ev := qs[i].ev
		if ev.Engine == collectors.EngineIceberg || ev.StartTime.IsZero() || ev.EndTime.Before(ev.StartTime) {
			continue
		}
		engine = append(engine, i)
		maxDur = max(maxDur, ev.EndTime.Sub(ev.StartTime))
	}
	if len(engine) == 0 {
		return qs
	}
	slices.SortFunc(engine, func(a, b int) int { return qs[a].ev.StartTime.Compare(qs[b].ev.StartTime) })
	drop := map[int]bool{}
	for i := range qs {
		rep := qs[i].ev
		if rep.Engine != collectors.EngineIceberg || rep.StartTime.IsZero() {
			continue
		}
		t := rep.StartTime
		name, _, _ := strings.Cut(strings.ToLower(rep.EngineVersion), " ")
		// engine is sorted by start: walk back from the last query that
		// started by t while one could still be running at t.
		hi, _ := slices.BinarySearchFunc(engine, t, func(j int, t time.Time) int {
			if qs[j].ev.StartTime.After(t) {
				return 1
			}
			return -1
		})
		match := -1
		for k := hi - 1; k >= 0 && !qs[engine[k]].ev.StartTime.Before(t.Add(-maxDur)); k-- {
			ev := qs[engine[k]].ev
			if ev.EndTime.Before(t) || (name != "" && knownEngine(name) && !strings.EqualFold(name, string(ev.Engine))) {
				continue
			}
			if match >= 0 {
				match = -2 // two candidates: leave the report alone
				break
			}
			match = engine[k]
		}
		if match >= 0 {
			qs[match].accesses = append(qs[match].accesses, qs[i].accesses...)
			qs[match].reports = append(qs[match].reports, qs[i].accesses...)
			drop[i] = true
		}
	}
	if len(drop) == 0 {
		return qs
	}
	out := qs[:0]
	for i := range qs {
		if !drop[i] {
			out = append(out, qs[i])
		}
	}
	return out
}

func knownEngine(name string) bool {
	switch collectors.Engine(name) {
	case collectors.EngineTrino, collectors.EngineSpark, collectors.EngineAthena, collectors.EngineSnowflake, collectors.EngineDuckDB:
		return true
	}
	return false
}

// richness orders duplicates of one query: a known state, known cost and
// a structured filter make a record more useful.
func richness(q *query) int {
	r := 0
	if q.ev.State == collectors.StateSucceeded {
		r += 4
	}
	if q.bytes > 0 || q.elapsed > 0 {
		r += 2
	}
	for _, a := range q.accesses {
		if a.Filter != nil {
			r++
			break
		}
	}
	return r
}

func sameTable(id lake.Ident, a *collectors.TableAccess) bool {
	if !strings.EqualFold(a.Name, id.Name) || !strings.EqualFold(a.Namespace, id.NamespaceString()) {
		return false
	}
	return a.Catalog == "" || id.Catalog == "" || strings.EqualFold(a.Catalog, id.Catalog)
}

func hasFilterColumn(a *collectors.TableAccess) bool {
	for _, c := range a.Columns {
		if slices.Contains(c.Roles, collectors.RoleFilter) {
			return true
		}
	}
	return false
}

// weighQueries sets each query's weight: cost × recency. Cost is bytes
// scanned over the median bytes of the queries that report bytes; else
// elapsed time over the median elapsed time of the queries that report it
// (and no bytes); else 1.
func weighQueries(qs []query, opts RankOptions) {
	var bytes, elapsed []float64
	now := opts.Now
	for i := range qs {
		q := &qs[i]
		switch {
		case q.bytes > 0:
			bytes = append(bytes, float64(q.bytes))
		case q.elapsed > 0:
			elapsed = append(elapsed, float64(q.elapsed))
		}
		if opts.Now.IsZero() {
			if t := eventTime(q.ev); t.After(now) {
				now = t
			}
		}
	}
	mb, me := median(bytes), median(elapsed)
	for i := range qs {
		q := &qs[i]
		cost := 1.0
		switch {
		case q.bytes > 0:
			cost = float64(q.bytes) / mb
		case q.elapsed > 0:
			cost = float64(q.elapsed) / me
		}
		rec := 1.0
		if t := eventTime(q.ev); !t.IsZero() && now.After(t) {
			rec = math.Exp2(-float64(now.Sub(t)) / float64(opts.HalfLife))
		}
		q.weight = cost * rec
	}
}

func eventTime(ev *collectors.QueryEvent) time.Time {
	if !ev.StartTime.IsZero() {
		return ev.StartTime
	}
	return ev.EndTime
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 1
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// scored is one leaf with its weight and estimates.
type scored struct {
	leaf     leaf
	weight   float64 // evidence × OR share
	sel      float64
	discount float64
}

// queryCol is what one query says about one column.
type queryCol struct {
	credit, undiscounted float64
	leaves               []scored
}

// merge combines two accesses of the same table in one query (a self-join):
// the column is credited once, by the access that credits it most.
func (q *queryCol) merge(o *queryCol) {
	if o.credit > q.credit {
		q.credit, q.undiscounted = o.credit, o.undiscounted
	}
	q.leaves = append(q.leaves, o.leaves...)
}

// accessLeaves lists the leaves of one access with their evidence and OR
// share, adding a leaf of unknown operator for each filter column the
// access names without a predicate on it. Leaves on columns the table
// lacks are dropped.
func accessLeaves(stats *Stats, a *collectors.TableAccess, opts RankOptions) []weighted {
	ew := opts.evidence(a.Evidence)
	var leaves []weighted
	collectLeaves(stats, a.Filter, false, 1, &leaves)
	covered := map[string]bool{}
	for _, wl := range leaves {
		covered[strings.ToLower(wl.leaf.column)] = true
	}
	for _, c := range a.Columns {
		if !slices.Contains(c.Roles, collectors.RoleFilter) || covered[strings.ToLower(c.Name)] {
			continue
		}
		covered[strings.ToLower(c.Name)] = true
		l := leaf{column: c.Name, ops: []string{"unknown"}, kind: kindUnknown, benefit: BenefitUnknownOp}
		if cs := stats.column(c.Name); cs != nil {
			l.column = cs.name
		}
		leaves = append(leaves, weighted{leaf: l, share: 1, evidence: opts.evidence(c.Evidence)})
	}
	out := leaves[:0]
	for _, wl := range leaves {
		if wl.evidence < 0 {
			wl.evidence = ew
		}
		if stats.st != nil && stats.column(wl.leaf.column) == nil {
			continue // not a column of the table
		}
		out = append(out, wl)
	}
	return out
}

// typicalRanges is, per column, the weighted median selectivity of the
// workload's ranges whose literals the statistics could place: the
// column's typical range, which stands in for ranges with unknown
// literals (a masked scan-report bound, a parameter).
func typicalRanges(stats *Stats, qs []query, leaves [][][]weighted) map[string]float64 {
	samples := map[string][]weightedValue{}
	for qi, perAccess := range leaves {
		for _, ls := range perAccess {
			for _, wl := range ls {
				l := &wl.leaf
				if l.kind != kindRange || l.unknown > 0 || len(l.ivs) == 0 {
					continue
				}
				sel, known := stats.estimate(l)
				if w := qs[qi].weight * wl.evidence * wl.share; known && w > 0 {
					samples[l.column] = append(samples[l.column], weightedValue{sel, w})
				}
			}
		}
	}
	out := make(map[string]float64, len(samples))
	for col, vs := range samples {
		out[col] = weightedMedian(vs)
	}
	return out
}

// scoreLeaves scores the leaves of one access per column.
func scoreLeaves(stats *Stats, leaves []weighted, typical map[string]float64, opts RankOptions) map[string]*queryCol {
	out := map[string]*queryCol{}
	for _, wl := range leaves {
		cs := stats.column(wl.leaf.column)
		tr, ok := typical[wl.leaf.column]
		if !ok {
			tr = -1
		}
		sel, _ := stats.estimateWith(&wl.leaf, tr)
		d := 1.0
		if cs != nil {
			d = stats.discount(&wl.leaf, stats.partitionOf(cs.id), opts.PartitionDiscount)
		}
		w := wl.evidence * wl.share
		gain := w * wl.leaf.benefit * (1 - sel)
		qc := out[wl.leaf.column]
		if qc == nil {
			qc = &queryCol{}
			out[wl.leaf.column] = qc
		}
		qc.credit += gain * d
		qc.undiscounted += gain
		qc.leaves = append(qc.leaves, scored{leaf: wl.leaf, weight: w, sel: sel, discount: d})
	}
	return out
}

// weighted is a leaf found in a filter tree with its OR share; evidence is
// set for leaves that carry their own (column uses), -1 otherwise.
type weighted struct {
	leaf     leaf
	share    float64
	evidence float64
}

// collectLeaves walks a filter tree. Under an OR of k branches each leaf
// counts 1/k (nested ORs multiply); NOT is pushed down to the leaves by De
// Morgan's laws and negates their operators; opaque terms are skipped.
// Bare ranges on one column under the same AND are intersected into one
// leaf, so ts >= a AND ts < b is scored as the narrow range it is.
func collectLeaves(stats *Stats, n *expr.Node, neg bool, share float64, out *[]weighted) {
	if n == nil {
		return
	}
	kind := n.Kind
	if neg {
		switch kind {
		case expr.NodeAnd:
			kind = expr.NodeOr
		case expr.NodeOr:
			kind = expr.NodeAnd
		}
	}
	switch kind {
	case expr.NodePred:
		if n.Pred == nil || n.Pred.Column == "" {
			return
		}
		*out = append(*out, weighted{leaf: stats.makeLeaf(n.Pred, neg), share: share, evidence: -1})
	case expr.NodeNot:
		for _, c := range n.Children {
			collectLeaves(stats, c, !neg, share, out)
		}
	case expr.NodeOr:
		k := 0
		for _, c := range n.Children {
			if c != nil {
				k++
			}
		}
		for _, c := range n.Children {
			collectLeaves(stats, c, neg, share/float64(k), out)
		}
	case expr.NodeAnd:
		start := len(*out)
		for _, c := range n.Children {
			collectLeaves(stats, c, neg, share, out)
		}
		*out = append((*out)[:start], mergeRanges((*out)[start:])...)
	}
}

// mergeRanges intersects the mergeable range leaves of one AND that share
// a column and a weight.
func mergeRanges(ls []weighted) []weighted {
	var out []weighted
	idx := map[string]int{}
	for _, wl := range ls {
		if !wl.leaf.mergeable {
			out = append(out, wl)
			continue
		}
		key := fmt.Sprintf("%s|%g", strings.ToLower(wl.leaf.column), wl.share)
		i, ok := idx[key]
		if !ok {
			idx[key] = len(out)
			wl.leaf.ops = slices.Clone(wl.leaf.ops)
			wl.leaf.ivs = slices.Clone(wl.leaf.ivs)
			out = append(out, wl)
			continue
		}
		m := &out[i].leaf
		m.ivs[0] = m.ivs[0].intersect(wl.leaf.ivs[0])
		m.ops = append(m.ops, wl.leaf.ops...)
		m.benefit = math.Max(m.benefit, wl.leaf.benefit)
		m.between = true
	}
	return out
}

// colAcc accumulates one column over the workload.
type colAcc struct {
	score, undiscounted float64
	share               float64
	queries             int
	opMix               map[string]float64
	sels                []weightedValue
}

type weightedValue struct{ v, w float64 }

func (c *colAcc) add(qw float64, qc *queryCol) {
	c.score += qw * qc.credit
	c.undiscounted += qw * qc.undiscounted
	c.share += qw
	c.queries++
	for _, s := range qc.leaves {
		w := qw * s.weight
		for _, op := range s.leaf.ops {
			c.opMix[op] += w / float64(len(s.leaf.ops))
		}
		if s.leaf.benefit > 0 && w > 0 {
			c.sels = append(c.sels, weightedValue{s.sel, w})
		}
	}
}

func (c *colAcc) rank(table, col string, total float64, stats *Stats) ColumnRank {
	r := ColumnRank{Table: table, Column: col, Score: c.score, Queries: c.queries, OpMix: map[string]float64{}, Selectivity: 1, PartitionDiscount: 1}
	if total > 0 {
		r.Share = c.share / total
	}
	// Summed in a fixed order: a map's order changes from run to run,
	// and with it the last bit of the total.
	var mixTotal float64
	for _, op := range slices.Sorted(maps.Keys(c.opMix)) {
		mixTotal += c.opMix[op]
	}
	for op, w := range c.opMix {
		if mixTotal > 0 {
			r.OpMix[op] = w / mixTotal
		}
	}
	if len(c.sels) > 0 {
		r.Selectivity = weightedMedian(c.sels)
	}
	var part partitioning
	if cs := stats.column(col); cs != nil {
		part = stats.partitionOf(cs.id)
		r.Partitioned = len(part.transforms) > 0
	}
	if c.undiscounted > 0 {
		r.PartitionDiscount = c.score / c.undiscounted
	}
	r.Reason = reason(r, part)
	return r
}

func weightedMedian(vs []weightedValue) float64 {
	s := slices.Clone(vs)
	slices.SortFunc(s, func(a, b weightedValue) int { return cmp.Compare(a.v, b.v) })
	var total float64
	for _, x := range s {
		total += x.w
	}
	var run float64
	for _, x := range s {
		run += x.w
		if run >= total/2 {
			return x.v
		}
	}
	return s[len(s)-1].v
}

// reason is the one-line explanation of a rank.
func reason(r ColumnRank, part partitioning) string {
	type opw struct {
		op string
		w  float64
	}
	var ops []opw
	for op, w := range r.OpMix {
		ops = append(ops, opw{op, w})
	}
	slices.SortFunc(ops, func(a, b opw) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return strings.Compare(a.op, b.op)
	})
	var b strings.Builder
	plural := "queries"
	if r.Queries == 1 {
		plural = "query"
	}
	fmt.Fprintf(&b, "filtered by %.0f%% of the workload (%d %s)", 100*r.Share, r.Queries, plural)
	if len(ops) > 0 {
		fmt.Fprintf(&b, ", mostly %s (%.0f%%)", ops[0].op, 100*ops[0].w)
	}
	if r.Score == 0 {
		b.WriteString("; its predicates cannot skip files")
		return b.String()
	}
	fmt.Fprintf(&b, "; a predicate keeps ~%s of rows", percent(r.Selectivity))
	if r.Partitioned && r.PartitionDiscount < 1 {
		b.WriteString("; ")
		b.WriteString(describeDiscount(part, r.PartitionDiscount))
	}
	return b.String()
}

func percent(f float64) string {
	switch {
	case f >= 0.1:
		return fmt.Sprintf("%.0f%%", 100*f)
	case f >= 0.001:
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	return fmt.Sprintf("%.2g%%", 100*f)
}
