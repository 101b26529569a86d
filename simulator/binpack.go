package simulator

import (
	"math"

	"github.com/floe-project/floe/lake"
)

// Binpack's projection is built from the table's real file statistics, not from the
// sample: bin-packing concatenates a partition's files in data-sequence order and cuts
// them at the target size, so each file it writes holds whole input files and at most
// two pieces of the files at its edges, and its bounds are the union of theirs. Which
// partitions it rewrites follows the rewriter's plan (rewriter.PlanCompaction): the
// files smaller or larger than the target's cutoffs ([lake.SizeCutoffs]), when there
// are at least binpackMinInputFiles of them or one is oversized; every file of a
// partition with delete files. The rest keep their files, and a table already
// bin-packed projects exactly as current does.

// binpackMinInputFiles mirrors rewriter.CompactOptions.MinInputFiles' default.
const binpackMinInputFiles = 5

// binpackFile is one file of a projected bin-pack: the input files (indexes into
// Sample.files) it holds and the share of each one's rows.
type binpackFile struct {
	members []int
	shares  []float64
	// rewritten is false for a file the bin-pack leaves as it is.
	rewritten bool
}

// binpackFiles plans the files a bin-pack at target writes, per partition. With
// majority set, an input file cut between two outputs is given whole to the one
// holding more of its rows (the other bound of the cut's effect on the projection).
func (s *Sample) binpackFiles(target int64, majority bool) []binpackFile {
	small, large := lake.SizeCutoffs(target)
	var out []binpackFile
	for pi, idx := range s.partFiles {
		var pick, keep []int
		largeN := 0
		for _, i := range idx {
			f := &s.files[i]
			if f.SizeBytes > large {
				largeN++
			}
			if f.SizeBytes < small || f.SizeBytes > large || s.partDeletes[pi] > 0 {
				pick = append(pick, i)
			} else {
				keep = append(keep, i)
			}
		}
		if s.partDeletes[pi] == 0 && largeN == 0 && len(pick) < max(binpackMinInputFiles, 2) {
			keep, pick = idx, nil
		}
		for _, i := range keep {
			out = append(out, binpackFile{members: []int{i}, shares: []float64{1}})
		}
		if len(pick) == 0 {
			continue
		}
		// Packed by the bytes the files hold beyond their own overhead, into files
		// that each pay it again (see fileOverhead).
		ov := int64(s.overheadAt(target))
		room := max(target-ov, 1)
		data := func(i int) int64 {
			if s.files[i].SizeBytes <= 0 {
				return 0
			}
			return max(s.files[i].SizeBytes-ov, 1)
		}
		var total int64
		for _, i := range pick {
			total += data(i)
		}
		k := max(1, int(math.Ceil(float64(total)/float64(room))))
		files := make([]binpackFile, k)
		for j := range files {
			files[j].rewritten = true
		}
		var at int64 // bytes before the current input file
		for _, i := range pick {
			size := data(i)
			if size <= 0 {
				files[min(k-1, int(at/room))].add(i, 1)
				continue
			}
			first, last := int(at/room), int((at+size-1)/room)
			first, last = min(first, k-1), min(last, k-1)
			if majority && first != last {
				best, bestShare := first, 0.0
				for j := first; j <= last; j++ {
					if sh := overlap(at, at+size, int64(j)*room, int64(j+1)*room, j == k-1) / float64(size); sh > bestShare {
						best, bestShare = j, sh
					}
				}
				files[best].add(i, 1)
			} else {
				for j := first; j <= last; j++ {
					files[j].add(i, overlap(at, at+size, int64(j)*room, int64(j+1)*room, j == k-1)/float64(size))
				}
			}
			at += size
		}
		for _, f := range files {
			if len(f.members) > 0 {
				out = append(out, f)
			}
		}
	}
	return out
}

func (b *binpackFile) add(i int, share float64) {
	b.members = append(b.members, i)
	b.shares = append(b.shares, share)
}

// overlap is the length of [a, b) ∩ [c, d), with d unbounded when open.
func overlap(a, b, c, d int64, open bool) float64 {
	if open {
		d = max(d, b)
	}
	return float64(max(0, min(b, d)-max(a, c)))
}

// binpackSet builds the fileSet of a projected bin-pack from the real statistics of
// the input files (in, built over s.files): each output's bounds are the union of its
// members', its counts their shares' sums.
func binpackSet(in *fileSet, plan []binpackFile, b *binding) *fileSet {
	fs := newFileSet(len(plan), b)
	var part *fileSet
	if in.part != nil {
		part = newFileSet(len(plan), b)
	}
	for j, f := range plan {
		var size, records float64
		for k, i := range f.members {
			size += f.shares[k] * float64(in.size[i])
			records += f.shares[k] * float64(in.records[i])
		}
		fs.size[j], fs.records[j] = int64(math.Round(size)), int64(math.Round(records))
		for ci := range b.cols {
			mergeCol(fs.cols[ci], in.cols[ci], j, f)
			if part != nil {
				mergeCol(part.cols[ci], in.part.cols[ci], j, f)
			}
		}
	}
	fs.finish()
	if part != nil {
		copy(part.size, fs.size)
		copy(part.records, fs.records)
		part.finish()
		fs.part = part
	}
	return fs
}

func mergeCol(dst, src colIndex, j int, f binpackFile) {
	switch d := dst.(type) {
	case *colData[uint64]:
		mergeInto(d, src.(*colData[uint64]), j, f)
	case *colData[string]:
		mergeInto(d, src.(*colData[string]), j, f)
	}
}

// mergeInto sets file j of dst to the union of src's files f.members: the least lower
// and greatest upper bound over the members that hold a value (none when one of them
// has no bound), nulls and values summed by share (unknown when one is unknown), and
// exact when every member holds the same single value.
func mergeInto[T uint64 | string](dst, src *colData[T], j int, f binpackFile) {
	hasLow, hasUp, exact := true, true, true
	var low, up T
	seen := false
	var nulls, values float64
	knownNulls, knownValues := true, true
	anyNull := false
	for k, i := range f.members {
		sh := f.shares[k]
		if src.nulls[i] < 0 {
			knownNulls = false
		} else {
			nulls += sh * float64(src.nulls[i])
			anyNull = anyNull || src.nulls[i] > 0
		}
		if src.values[i] < 0 {
			knownValues = false
		} else {
			values += sh * float64(src.values[i])
		}
		exact = exact && src.exact != nil && src.exact[i]
		if src.nullsOnly(i) {
			continue
		}
		if !src.hasLow[i] {
			hasLow = false
		} else if !seen || src.low[i] < low {
			low = src.low[i]
		}
		if !src.hasUp[i] {
			hasUp = false
		} else if !seen || src.up[i] > up {
			up = src.up[i]
		}
		seen = true
	}
	if seen {
		dst.low[j], dst.hasLow[j] = low, hasLow
		dst.up[j], dst.hasUp[j] = up, hasUp
	} else if src.exact != nil && len(f.members) > 0 && src.exact[f.members[0]] {
		// A null identity partition value: keep the partition view's encoding.
		i := f.members[0]
		dst.low[j], dst.up[j], dst.hasLow[j], dst.hasUp[j] = src.low[i], src.up[i], src.hasLow[i], src.hasUp[i]
	}
	if knownNulls {
		dst.nulls[j] = int64(math.Round(nulls))
		if anyNull && dst.nulls[j] == 0 {
			dst.nulls[j] = 1
		}
	}
	if knownValues {
		dst.values[j] = int64(math.Round(values))
	}
	if exact && seen && dst.low[j] == dst.up[j] {
		if dst.exact == nil {
			dst.exact = make([]bool, dst.n)
		}
		dst.exact[j] = true
	}
}
