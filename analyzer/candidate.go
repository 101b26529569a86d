package analyzer

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// Defaults of [CandidateOptions].
const (
	// DefaultMinShare is the share of the workload below which a column
	// is too rarely filtered on to key a layout.
	DefaultMinShare = 0.05
	// DefaultMaxCandidateColumns is the most columns a candidate names.
	DefaultMaxCandidateColumns = 3
)

// CandidateOptions tune [Candidates]. The zero value means every default.
type CandidateOptions struct {
	// MinShare is the least [ColumnRank.Share] a key column needs.
	// Zero means [DefaultMinShare].
	MinShare float64
	// MaxColumns caps the key columns of a candidate, 1 to
	// [layout.MaxHilbertColumns]. Zero means [DefaultMaxCandidateColumns].
	MaxColumns int
	// PrunedDiscount: a partitioned column whose
	// [ColumnRank.PartitionDiscount] is at most this has had (nearly) all
	// its benefit taken by partition pruning and keys no layout. Zero
	// means [DefaultPartitionDiscount] + 0.05.
	PrunedDiscount float64
	// ZOrderMode is the z-order the simulator will use. Iceberg-exact (the
	// zero value) cannot encode decimal and time columns, so they are left
	// out of z-order candidates; rank mode takes them.
	ZOrderMode layout.ZOrderMode
	// TargetFileSizeBytes is set on every candidate but current (the
	// files as they are). Zero means the table's
	// write.target-file-size-bytes.
	TargetFileSizeBytes int64
	// Tree proposes a tree layout over the qualifying columns (up to
	// [layout.MaxTreeColumns]) when at least two qualify: a layout learned
	// from the workload's own predicates when it is projected, so only a
	// caller that projects candidates with the workload should ask for it.
	Tree bool
}

// DefaultCandidateOptions returns the options the zero value stands for,
// with every default spelled out.
func DefaultCandidateOptions() CandidateOptions {
	return CandidateOptions{}.withDefaults()
}

// Validate reports every invalid option at once. [Candidates] itself
// clamps what Validate rejects.
func (o CandidateOptions) Validate() error {
	var errs []error
	if math.IsNaN(o.MinShare) || o.MinShare < 0 || o.MinShare > 1 {
		errs = append(errs, fmt.Errorf("min share %v, want 0 to 1", o.MinShare))
	}
	if o.MaxColumns < 0 || o.MaxColumns > layout.MaxHilbertColumns {
		errs = append(errs, fmt.Errorf("max columns %d, want 1 to %d", o.MaxColumns, layout.MaxHilbertColumns))
	}
	if math.IsNaN(o.PrunedDiscount) || o.PrunedDiscount < 0 || o.PrunedDiscount > 1 {
		errs = append(errs, fmt.Errorf("pruned discount %v, want 0 to 1", o.PrunedDiscount))
	}
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("target file size %d is negative", o.TargetFileSizeBytes))
	}
	return errors.Join(errs...)
}

func (o CandidateOptions) withDefaults() CandidateOptions {
	if o.MinShare <= 0 {
		o.MinShare = DefaultMinShare
	}
	if o.MaxColumns <= 0 {
		o.MaxColumns = DefaultMaxCandidateColumns
	}
	o.MaxColumns = min(o.MaxColumns, layout.MaxHilbertColumns)
	if o.PrunedDiscount <= 0 {
		o.PrunedDiscount = DefaultPartitionDiscount + 0.05
	}
	if o.TargetFileSizeBytes < 0 {
		o.TargetFileSizeBytes = 0
	}
	return o
}

// Candidate is one layout to simulate, with why it was proposed.
type Candidate struct {
	// Layout is the layout, valid for [layout.NewEncoder].
	Layout layout.Layout `json:"layout"`
	// Why is a one-line rationale.
	Why string `json:"why"`
}

// Candidates proposes layouts for one table from its ranking (as [Rank]
// returns it). The key columns are the ranked columns, best score first,
// with a positive score, at least MinShare of the workload, benefit not
// all taken by partition pruning, and (when st is given) a top-level
// primitive type in the current schema. From the first MaxColumns of
// them: sort(c1), sort(c1, c2), zorder(c1, c2), zorder(c1, c2, c3),
// hilbert(c1, c2), hilbert(c1, c2, c3) — as many as the qualifying
// columns allow — then, with opts.Tree and at least two qualifying columns
// the tree learner can cut on (numbers, dates, timestamps, booleans,
// strings), tree(c1, …) over up to [layout.MaxTreeColumns] of them, then
// current and binpack, which are always proposed. Z-order leaves out
// columns its mode cannot encode. Layouts are distinct.
func Candidates(ranks []ColumnRank, st *lake.State, opts CandidateOptions) []Candidate {
	opts = opts.withDefaults()
	ranks = slices.Clone(ranks)
	slices.SortStableFunc(ranks, func(a, b ColumnRank) int { return cmp.Compare(b.Score, a.Score) })
	var total float64
	for _, r := range ranks {
		total += r.Score
	}
	var keys, treeKeys []keyColumn
	for _, r := range ranks {
		if r.Score <= 0 || r.Share < opts.MinShare || (r.Partitioned && r.PartitionDiscount <= opts.PrunedDiscount) {
			continue
		}
		typ, ok := columnType(st, r.Column)
		if !ok {
			continue
		}
		k := keyColumn{rank: r, typ: typ, scoreShare: r.Score / total}
		if len(keys) < opts.MaxColumns {
			keys = append(keys, k)
		}
		if len(treeKeys) < layout.MaxTreeColumns && treeCuts(typ) {
			treeKeys = append(treeKeys, k)
		}
	}
	var out []Candidate
	seen := map[string]bool{}
	add := func(l layout.Layout, why string) {
		if l.Strategy != layout.StrategyCurrent {
			l.TargetFileSizeBytes = opts.TargetFileSizeBytes
		}
		if l.Validate() != nil || seen[l.String()] {
			return
		}
		seen[l.String()] = true
		out = append(out, Candidate{Layout: l, Why: why})
	}
	if len(keys) >= 1 {
		k := keys[0]
		add(keyLayout(layout.StrategySort, keys[:1]), fmt.Sprintf("%s carries %.0f%% of the filter score (%s of queries, mostly %s); a sort clusters it fully",
			k.rank.Column, 100*k.scoreShare, percent(k.rank.Share), topOp(k.rank.OpMix)))
	}
	if len(keys) >= 2 {
		add(keyLayout(layout.StrategySort, keys[:2]), fmt.Sprintf("sort by %s, then %s within equal %s values (%.0f%% of the filter score together)",
			keys[0].rank.Column, keys[1].rank.Column, keys[0].rank.Column, 100*(keys[0].scoreShare+keys[1].scoreShare)))
	}
	var zkeys []keyColumn
	for _, k := range keys {
		if zorderEncodes(k.typ, opts.ZOrderMode) {
			zkeys = append(zkeys, k)
		}
	}
	for n := 2; n <= min(3, len(zkeys)); n++ {
		add(keyLayout(layout.StrategyZOrder, zkeys[:n]), fmt.Sprintf("z-order %s: each column keeps part of its locality (%s z-order)",
			names(zkeys[:n]), opts.ZOrderMode))
	}
	for n := 2; n <= min(3, len(keys)); n++ {
		add(keyLayout(layout.StrategyHilbert, keys[:n]), fmt.Sprintf("Hilbert curve over %s: like z-order with more compact files, on quantile-normalized columns",
			names(keys[:n])))
	}
	if opts.Tree && len(treeKeys) >= 2 {
		add(keyLayout(layout.StrategyTree, treeKeys), fmt.Sprintf("a tree of cuts learned from the workload's own predicates on %s: each part of the table is cut and sorted for the queries that read it",
			names(treeKeys)))
	}
	if len(keys) == 0 {
		add(layout.Layout{Strategy: layout.StrategyCurrent}, "the table as it is today; no column is filtered on often and selectively enough to key a layout")
	} else {
		add(layout.Layout{Strategy: layout.StrategyCurrent}, "the table as it is today: the baseline every projection is compared with")
	}
	add(layout.Layout{Strategy: layout.StrategyBinpack}, "compaction only: fewer, larger files in today's row order")
	return out
}

type keyColumn struct {
	rank       ColumnRank
	typ        iceberg.Type // nil without a state
	scoreShare float64
}

func keyLayout(s layout.Strategy, keys []keyColumn) layout.Layout {
	l := layout.Layout{Strategy: s}
	for _, k := range keys {
		l.Columns = append(l.Columns, layout.Column{Name: k.rank.Column})
	}
	return l
}

func names(keys []keyColumn) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.rank.Column
	}
	return strings.Join(s, ", ")
}

func topOp(mix map[string]float64) string {
	best, bw := "", -1.0
	for op, w := range mix {
		if w > bw || (w == bw && op < best) {
			best, bw = op, w
		}
	}
	if best == "" {
		return "unknown"
	}
	return best
}

// columnType finds a top-level primitive column; without a state every
// column is accepted, with a nil type.
func columnType(st *lake.State, name string) (iceberg.Type, bool) {
	if st == nil || st.Metadata == nil {
		return nil, true
	}
	for _, f := range st.Metadata.CurrentSchema().Fields() {
		if strings.EqualFold(f.Name, name) {
			_, prim := f.Type.(iceberg.PrimitiveType)
			return f.Type, prim
		}
	}
	return nil, false
}

// treeCuts reports whether the tree learner can cut on a column of type t
// (the types replay bounds); without a state (nil) every column is taken.
func treeCuts(t iceberg.Type) bool {
	switch t.(type) {
	case nil, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.BooleanType, iceberg.StringType:
		return true
	}
	return false
}

// zorderEncodes reports whether the simulator's z-order in mode encodes
// a column of type t. Iceberg's Spark z-order has no case for decimals or
// times; rank z-order orders every primitive.
func zorderEncodes(t iceberg.Type, mode layout.ZOrderMode) bool {
	if mode == layout.ZOrderRank || t == nil {
		return true
	}
	switch t.(type) {
	case iceberg.DecimalType, iceberg.TimeType:
		return false
	}
	return true
}
