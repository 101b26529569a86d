package simulator

import (
	"math"
	"math/bits"
)

// applyBound sets each query's BoundFiles and the projection's MeanBoundFiles and
// BoundRatio for a layout with files[pi] files in partition pi. A query that matches
// M rows of a partition whose files hold R rows each reads at least ceil(M / R) of
// them, whatever the order of the rows; M is estimated from the sample (the sampled
// rows of the partition that match, scaled to the partition's rows), with each
// sampled row judged exactly on its own values by the same replay rules. Nothing is
// set when the sample is empty.
func (s *Sample) applyBound(p *Projection, queries []Query, files []int) error {
	if s == nil || s.Rows == 0 || len(files) != len(s.Partitions) {
		return nil
	}
	b := newBinding(s.Schema)
	bq := bindQueries(b, queries)
	vals, err := extractColumns(s, b)
	if err != nil {
		return err
	}
	rows := rowSet(s.Rows, b, vals)
	counts := make([]int64, len(s.Partitions))
	var sum, wsum float64
	for qi, q := range bq {
		clear(counts)
		for wi, w := range rows.replayBits(q.e) {
			for w != 0 {
				r := wi*64 + bits.TrailingZeros64(w)
				counts[s.rowPart[r]]++
				w &= w - 1
			}
		}
		bound := s.boundFiles(counts, files)
		if qi < len(p.PerQuery) {
			p.PerQuery[qi].BoundFiles = bound
		}
		w := q.weight
		if w <= 0 {
			w = 1
		}
		sum += w * float64(bound)
		wsum += w
	}
	if wsum > 0 {
		p.MeanBoundFiles = sum / wsum
	}
	if p.MeanBoundFiles > 0 {
		p.BoundRatio = p.MeanFilesRead / p.MeanBoundFiles
	}
	return nil
}

// boundFiles is the bound of a query whose sampled matching rows in partition pi
// are counts[pi], with files[pi] files there: ceil(M / R) in each partition.
func (s *Sample) boundFiles(counts []int64, files []int) int {
	bound := 0
	for pi, n := range counts {
		if n == 0 || files[pi] == 0 || s.PartitionSampledRows[pi] == 0 {
			continue
		}
		matching := float64(n) * float64(s.PartitionRows[pi]) / float64(s.PartitionSampledRows[pi])
		perFile := float64(s.PartitionRows[pi]) / float64(files[pi])
		bound += min(files[pi], int(math.Ceil(matching/perFile-1e-9)))
	}
	return bound
}

// rowSet is a fileSet with one file per sampled row, holding that row's values as
// exact bounds: replay on it tells which rows a filter matches.
func rowSet(n int, b *binding, vals []colVals) *fileSet {
	fs := newFileSet(n, b)
	for r := range n {
		fs.size[r], fs.records[r] = 1, 1
	}
	for ci := range b.cols {
		v := &vals[ci]
		switch cd := fs.cols[ci].(type) {
		case *colData[uint64]:
			setRows(cd, v, func(r int) uint64 { return v.u[r] })
		case *colData[string]:
			setRows(cd, v, func(r int) string { return v.dict[v.rank[r]] })
		}
	}
	fs.finish()
	return fs
}

func setRows[T uint64 | string](cd *colData[T], v *colVals, val func(int) T) {
	cd.exact = make([]bool, cd.n)
	for r := range cd.n {
		cd.values[r] = 1
		switch {
		case v.nan[r]:
			cd.nulls[r] = 0 // a NaN: no bound, not a null
		case v.null[r]:
			cd.nulls[r] = 1
		default:
			cd.nulls[r] = 0
			x := val(r)
			cd.low[r], cd.up[r], cd.hasLow[r], cd.hasUp[r] = x, x, true, true
			cd.exact[r] = true
		}
	}
}
