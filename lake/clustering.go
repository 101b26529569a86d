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
// overlapping others. The depth over a closed range peaks at an endpoint
// value, so depths are computed at the sorted distinct endpoints
// (d_k = #lo ≤ v_k − #hi < v_k) and a sparse table answers the range maxima:
// O(n log n) for n files.
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
	// starts[k] = #lo at value k, ends[k] = #hi at value k.
	starts, ends := make([]int, m+1), make([]int, m+1)
	lo, hi := make([]int, n), make([]int, n)
	for _, i := range bounded {
		lo[i], hi[i] = idx(ivs[i].lo), idx(ivs[i].hi)
		starts[lo[i]]++
		ends[hi[i]]++
	}
	// Prefix sums: loLE[k] = #lo ≤ v_k, hiLT[k] = #hi < v_k.
	loLE, hiLT := make([]int, m), make([]int, m+1)
	run := 0
	for k := range m {
		run += starts[k]
		loLE[k] = run
	}
	for k := range m {
		hiLT[k+1] = hiLT[k] + ends[k]
	}
	d := make([]int, m)
	for k := range m {
		d[k] = loLE[k] - hiLT[k]
	}
	table := sparseMax(d)
	nb := len(bounded)
	for _, i := range bounded {
		depth[i] = rangeMax(table, lo[i], hi[i]) + unbounded
		// Others with lo ≤ my hi and hi ≥ my lo: (#lo ≤ v_hi) − (#hi < v_lo) − me.
		overlaps[i] = loLE[hi[i]] - hiLT[lo[i]] - 1 + unbounded
	}
	for i, iv := range ivs {
		if iv.unbounded {
			overlaps[i] = n - 1
			depth[i] = unbounded
			if nb > 0 {
				depth[i] += rangeMax(table, 0, m-1)
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
