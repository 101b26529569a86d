package simulator

import (
	"cmp"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/floe-project/floe/layout"
)

// Set cuts: `status IN ('error', 'timeout')` sends the rows of the named values left and
// every other row (nulls too) right. Replayed on min/max, a side is skipped by a query
// only when the query's values lie outside each of its files' [min, max]: a query on
// 'error' skips the right side's files only where they hold no value at or below
// 'error' and none at or above it. So a set cut pays where the rest of the values lie
// between the set's (the set is the column's two ends: 'error' and 'timeout' around
// 'ok'), or where the rest side's files are narrow anyway (one value fills most of
// them). A range cut isolates one end; a set cut isolates both in one cut, and with
// them as few rows as the named values hold. The learner makes set cuts only from the
// workload's = and IN literals, and the judge takes one only where its sides' files let
// the queries skip more than every range cut's.
const (
	// maxSetDistinct is the most distinct sampled values a tree column may have for the
	// learner to try set cuts on it: set cuts are for low-cardinality columns (kinds,
	// sites, flags, codes), whose values the workload names with = and IN; on a column
	// of many values the values a workload names are a draw that the next draw does not
	// repeat.
	maxSetDistinct = layout.MaxTreeSetValues
	// maxSetCutsPerColumn bounds the set cuts tried on one column at one node (the ones
	// named by the most weighted queries), beside at most MaxCutsPerColumn range cuts.
	maxSetCutsPerColumn = 8
)

// setCand is one candidate set cut on a tree column: rows whose value is one of the
// set's go left, every other row right (nulls and NaN too).
type setCand struct {
	// in[v] says whether the column's v-th distinct sampled value is in the set.
	in []bool
	// lits are the set's literals as the workload wrote them, the ones no sampled row
	// holds included (they route the table's unsampled rows); sorted by key.
	lits []iceberg.Literal
	keys []uint64 // the literals' replay keys (numbers) or strings' ranks, to sort and dedupe
	// weight is that of the queries that name the set (or, for the union, any of it).
	weight float64
}

// setValues fills, for each tree column a set cut may be made on — strings, booleans
// and integers with at most maxSetDistinct distinct sampled values — the distinct
// value of every sampled row (dv[c][r], -1 for a null or NaN), from the keys already
// computed. Other columns get nil.
func (tl *treeLearner) setValues() {
	tl.dv = make([][]int32, len(tl.cols))
	tl.dvKeys = make([][]uint64, len(tl.cols))
	for c, ci := range tl.cols {
		switch tl.b.cols[ci].typ.(type) {
		case iceberg.StringType, iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type:
		default:
			continue
		}
		cl, k := tl.class[c], tl.key[c]
		var distinct []uint64
		for r := range cl {
			if cl[r] == 1 {
				distinct = append(distinct, k[r])
			}
		}
		slices.Sort(distinct)
		distinct = slices.Compact(distinct)
		if len(distinct) < 2 || len(distinct) > maxSetDistinct {
			continue
		}
		dv := make([]int32, len(cl))
		for r := range cl {
			dv[r] = -1
			if cl[r] == 1 {
				i, _ := slices.BinarySearch(distinct, k[r])
				dv[r] = int32(i)
			}
		}
		tl.dv[c], tl.dvKeys[c] = dv, distinct
	}
}

// setCandidates collects each set-cut column's candidate sets from the workload's = and
// IN predicates on it, most promising first:
//
//   - the ends: the named values that lie below or above every value the workload does
//     not name (on both sides; on one side it is a range cut), so that a query on one of
//     them skips the rest's files, which lie between;
//   - all the values the workload names on the column together;
//   - every IN list, by the weight of the queries that name it.
//
// A set no sampled row holds, that holds every sampled value, or whose values are the
// column's first or last values in order (a range cut makes the same sides) is dropped;
// sets holding the same sampled values are one candidate, their weights added. At most
// maxSetCutsPerColumn are kept.
func (tl *treeLearner) setCandidates() {
	tl.sets = make([][]setCand, len(tl.cols))
	colOf := map[int]int{}
	for c, ci := range tl.cols {
		if tl.dv[c] != nil {
			colOf[ci] = c
		}
	}
	type named struct {
		keys   []uint64
		lits   []iceberg.Literal
		weight float64
	}
	lists := make([][]named, len(tl.cols))
	union := make([]named, len(tl.cols))
	tl.eachLeaf(func(lf *leaf, w float64) {
		c, ok := colOf[lf.col]
		if !ok || (lf.op != opEQ && lf.op != opIn) || len(lf.lits) > layout.MaxTreeSetValues {
			return
		}
		var keys []uint64
		for i := range lf.lits {
			k, ok := tl.threshold(c, lf, i, false)
			if !ok {
				return
			}
			keys = append(keys, k)
		}
		if len(lf.lits) > 1 {
			lists[c] = append(lists[c], named{keys: keys, lits: lf.lits, weight: w})
		}
		union[c].keys = append(union[c].keys, keys...)
		union[c].lits = append(union[c].lits, lf.lits...)
		union[c].weight += w
	})
	for c := range tl.cols {
		if tl.dv[c] == nil || len(union[c].lits) == 0 {
			continue
		}
		var out []setCand
		add := func(n named) {
			sc, ok := tl.setCand(c, n.keys, n.lits, n.weight)
			if !ok {
				return
			}
			if i := slices.IndexFunc(out, func(o setCand) bool { return slices.Equal(o.in, sc.in) }); i >= 0 {
				out[i].weight += sc.weight
				return
			}
			out = append(out, sc)
		}
		if all, ok := tl.setCand(c, union[c].keys, union[c].lits, union[c].weight); ok {
			// The ends: the named values outside the range of the values not named.
			lo, hi := slices.Index(all.in, false), len(all.in)-1
			for hi >= 0 && all.in[hi] {
				hi--
			}
			if lo > 0 && hi < len(all.in)-1 {
				var ends named
				for i, k := range all.keys {
					if j, ok := slices.BinarySearch(tl.dvKeys[c], k); ok && all.in[j] && (j < lo || j > hi) {
						ends.keys, ends.lits = append(ends.keys, k), append(ends.lits, all.lits[i])
					}
				}
				ends.weight = union[c].weight
				add(ends)
			}
		}
		add(union[c])
		slices.SortStableFunc(lists[c], func(a, b named) int { return cmp.Compare(b.weight, a.weight) })
		for _, n := range lists[c] {
			add(n)
		}
		tl.sets[c] = out[:min(len(out), maxSetCutsPerColumn)]
	}
}

// setCand builds the candidate of the literals lits (keys their keys on column c),
// or fails for a set that is not worth trying as a set (see setCandidates).
func (tl *treeLearner) setCand(c int, keys []uint64, lits []iceberg.Literal, w float64) (setCand, bool) {
	distinct := tl.dvKeys[c]
	v := &tl.vals[tl.cols[c]]
	sc := setCand{in: make([]bool, len(distinct)), weight: w}
	type kl struct {
		k   uint64
		lit iceberg.Literal
	}
	var all []kl
	for i, k := range keys {
		all = append(all, kl{k, lits[i]})
		// A string's key is the rank of the first sampled value at or above it: the
		// literal is in the sample only if that value is the literal.
		if sl, ok := lits[i].(iceberg.StringLiteral); v.u == nil && (!ok || int(k) >= len(v.dict) || v.dict[k] != string(sl)) {
			continue
		}
		if j, ok := slices.BinarySearch(distinct, k); ok {
			sc.in[j] = true
		}
	}
	slices.SortStableFunc(all, func(a, b kl) int { return cmp.Compare(a.k, b.k) })
	all = slices.CompactFunc(all, func(a, b kl) bool { return a.k == b.k && a.lit == b.lit })
	if len(all) > layout.MaxTreeSetValues {
		return sc, false
	}
	for _, x := range all {
		sc.lits, sc.keys = append(sc.lits, x.lit), append(sc.keys, x.k)
	}
	in, out := slices.Index(sc.in, true), slices.Index(sc.in, false)
	switch {
	case in < 0, out < 0:
		return sc, false // no sampled value, or every one
	case in == 0 && !slices.Contains(sc.in[out:], true):
		return sc, false // the first values: the range cut `col <= v` makes the same sides
	case !slices.Contains(sc.in[in:], false):
		return sc, false // the last values: the range cut `col < v` makes the same sides
	}
	return sc, true
}

// setSides puts the rows of byS (in that order) that set cut sc on column c sends left
// at the front of side and the others after them, in order, and returns how many went
// left.
func (tl *treeLearner) setSides(side, byS []int32, c int, sc *setCand) int {
	dv := tl.dv[c]
	left := 0
	for _, r := range byS {
		if d := dv[r]; d >= 0 && sc.in[d] {
			left++
		}
	}
	l, rt := 0, left
	for _, r := range byS {
		if d := dv[r]; d >= 0 && sc.in[d] {
			side[l] = r
			l++
		} else {
			side[rt] = r
			rt++
		}
	}
	return left
}
