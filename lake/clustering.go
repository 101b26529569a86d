package lake

import (
	"math/bits"
	"sort"

	"github.com/apache/iceberg-go"
)

// Clustering measures how well a table's files are clustered on one column,
// the way Snowflake's SYSTEM$CLUSTERING_INFORMATION does for
// micro-partitions, from the [min, max] bounds in the manifests.
//
// Ranges are compared only within a partition: files of different partitions
// never compete for a query that prunes by partition, so overlap across
// partitions says nothing about the layout. A file without bounds for the
// column (no stats collected, truncated-away, or a type floe cannot order)
// is taken to span every value, as a planner must read it for any
// predicate. A file whose column is entirely null takes no part.
type Clustering struct {
	Column string `json:"column"`
	// Files is the number of files measured.
	Files int `json:"files"`
	// AverageDepth is the mean, over files, of the largest number of files
	// of the same partition whose ranges contain one value of the file's
	// own range (the file included). 1 means perfectly clustered: a point
	// lookup reads one file.
	AverageDepth float64 `json:"average_depth"`
	// AverageOverlaps is the mean number of other files of the same
	// partition whose range intersects a file's range.
	AverageOverlaps float64 `json:"average_overlaps"`
	// OverlapFraction is the fraction of files whose range intersects at
	// least one other file's range.
	OverlapFraction float64 `json:"overlap_fraction"`
}

// interval is a file's closed range; unbounded means (-inf, +inf).
type interval struct {
	lo, hi    iceberg.Literal
	unbounded bool
}

// MeasureClustering computes [Clustering] for the column with field id
// fieldID over the data files.
func MeasureClustering(column string, fieldID int, files []File) Clustering {
	byPart := map[string][]interval{}
	for _, f := range files {
		lo, okLo := f.Lower[fieldID]
		hi, okHi := f.Upper[fieldID]
		if !okLo || !okHi {
			if nc, ok := f.NullCounts[fieldID]; ok && nc == f.Records && f.Records > 0 {
				continue // all null: never read for a value predicate
			}
			byPart[f.PartitionKey] = append(byPart[f.PartitionKey], interval{unbounded: true})
			continue
		}
		if _, ok := CompareLiterals(lo, hi); !ok {
			byPart[f.PartitionKey] = append(byPart[f.PartitionKey], interval{unbounded: true})
			continue
		}
		byPart[f.PartitionKey] = append(byPart[f.PartitionKey], interval{lo: lo, hi: hi})
	}
	c := Clustering{Column: column}
	var depthSum, overlapSum float64
	var overlapping int
	for _, ivs := range byPart {
		d, o := partitionDepths(ivs)
		for i := range ivs {
			depthSum += float64(d[i])
			overlapSum += float64(o[i])
			if o[i] > 0 {
				overlapping++
			}
		}
		c.Files += len(ivs)
	}
	if c.Files > 0 {
		c.AverageDepth = depthSum / float64(c.Files)
		c.AverageOverlaps = overlapSum / float64(c.Files)
		c.OverlapFraction = float64(overlapping) / float64(c.Files)
	}
	return c
}

// partitionDepths returns, per interval, its depth and its number of
// overlapping others.
//
// Two ranges overlap when they share a value that lies strictly inside at
// least one of them: [1,5] and [5,9] only touch, and two files holding the
// single value 5 only ([5,5] twice) do not overlap either. A sort that rolls
// files in the middle of a run of equal values produces exactly these, and
// no layout could separate them further, so a freshly sorted table has depth
// 1. A single-value file [v,v] overlaps a range with lo < v < hi.
//
// With the sorted distinct endpoint values v_0 < … < v_{m-1}, the depth is
// the largest set of pairwise overlapping ranges through one point, which
// is either a gap (v_k, v_{k+1}) — g_k ranges of more than one value span
// it — or a value v_k — the S_k ranges with v_k strictly inside, plus one
// single-value file at v_k if there is any (single-value files at one value
// do not overlap each other). A range over [v_a, v_b] takes the maximum of
// g over [a, b-1] and of S+min(1,P) over (a, b), answered by sparse tables:
// O(n log n) for n files. Unbounded files overlap every file.
func partitionDepths(ivs []interval) (depth, overlaps []int) {
	n := len(ivs)
	depth = make([]int, n)
	overlaps = make([]int, n)
	var bounded []int
	unbounded := 0
	for i, iv := range ivs {
		if iv.unbounded {
			unbounded++
		} else {
			bounded = append(bounded, i)
		}
	}
	less := func(a, b iceberg.Literal) bool { c, _ := CompareLiterals(a, b); return c < 0 }
	// Distinct sorted endpoint values.
	vals := make([]iceberg.Literal, 0, 2*len(bounded))
	for _, i := range bounded {
		vals = append(vals, ivs[i].lo, ivs[i].hi)
	}
	sort.Slice(vals, func(a, b int) bool { return less(vals[a], vals[b]) })
	uniq := vals[:0]
	for _, v := range vals {
		if len(uniq) == 0 || less(uniq[len(uniq)-1], v) {
			uniq = append(uniq, v)
		}
	}
	idx := func(v iceberg.Literal) int {
		return sort.Search(len(uniq), func(k int) bool { return !less(uniq[k], v) })
	}
	m := len(uniq)
	// Per value index: starts/ends of ranges of several values, and
	// single-value files.
	starts, ends, points := make([]int, m), make([]int, m), make([]int, m)
	lo, hi := make([]int, n), make([]int, n)
	for _, i := range bounded {
		lo[i], hi[i] = idx(ivs[i].lo), idx(ivs[i].hi)
		if lo[i] == hi[i] {
			points[lo[i]]++
			continue
		}
		starts[lo[i]]++
		ends[hi[i]]++
	}
	// Prefix sums over value indexes: loLE[k] = #starts at ≤ k, loLT[k] =
	// #starts at < k, hiLE[k] = #ends at ≤ k, ptLE[k] = #points at ≤ k.
	loLE, loLT, hiLE, ptLE := make([]int, m), make([]int, m), make([]int, m), make([]int, m)
	for k := range m {
		if k > 0 {
			loLE[k], loLT[k], hiLE[k], ptLE[k] = loLE[k-1], loLE[k-1], hiLE[k-1], ptLE[k-1]
		}
		loLE[k] += starts[k]
		hiLE[k] += ends[k]
		ptLE[k] += points[k]
	}
	// gap[k]: ranges spanning (v_k, v_k+1); at[k]: ranges with v_k strictly
	// inside, plus one single-value file at v_k if any.
	gap, at, inside := make([]int, max(m, 1)), make([]int, max(m, 1)), make([]int, m)
	for k := range m {
		gap[k] = loLE[k] - hiLE[k]
		inside[k] = loLT[k] - hiLE[k]
		at[k] = inside[k] + min(1, points[k])
	}
	gapMax, atMax := sparseMax(gap), sparseMax(at)
	for _, i := range bounded {
		a, b := lo[i], hi[i]
		if a == b {
			// Single value: the ranges with it strictly inside, and itself.
			depth[i] = inside[a] + 1 + unbounded
			overlaps[i] = inside[a] + unbounded
			continue
		}
		d := rangeMax(gapMax, a, b-1)
		if b-a > 1 {
			d = max(d, rangeMax(atMax, a+1, b-1))
		}
		depth[i] = d + unbounded
		// Ranges of several values with lo < my hi and hi > my lo (me
		// included, hence -1), and single-value files strictly inside.
		multi := loLT[b] - hiLE[a] - 1
		pts := 0
		if b-a > 1 {
			pts = ptLE[b-1] - ptLE[a]
		}
		overlaps[i] = multi + pts + unbounded
	}
	nb := len(bounded)
	for i, iv := range ivs {
		if iv.unbounded {
			overlaps[i] = n - 1
			depth[i] = unbounded
			if nb > 0 && m > 0 {
				depth[i] += max(rangeMax(gapMax, 0, m-1), rangeMax(atMax, 0, m-1), 1)
			}
		}
	}
	return depth, overlaps
}

func sparseMax(d []int) [][]int {
	if len(d) == 0 {
		return nil
	}
	levels := bits.Len(uint(len(d)))
	t := make([][]int, levels)
	t[0] = d
	for j := 1; j < levels; j++ {
		w := 1 << j
		prev := t[j-1]
		cur := make([]int, len(d)-w+1)
		for i := range cur {
			cur[i] = max(prev[i], prev[i+w/2])
		}
		t[j] = cur
	}
	return t
}

func rangeMax(t [][]int, l, r int) int {
	j := bits.Len(uint(r-l+1)) - 1
	return max(t[j][l], t[j][r-(1<<j)+1])
}
