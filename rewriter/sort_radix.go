package rewriter

// radixSortEnts sorts ents as compareEnts does when every key fits in the
// 16-byte prefix (klen <= 16): by (p0, p1), then by key length (a zero-padded
// shorter key sorts before a longer one with the same prefix), then in input
// order. It is a least-significant-digit radix sort, one stable pass per byte
// of the prefix (and one for the length, when lengths differ), skipping the
// bytes every key shares. Layout keys are short and fixed-width (a sort on a
// date and an integer is 14 bytes, a z-order or Hilbert key 8), and the
// comparison sort it replaces spent about 25 comparisons of 40-byte entries
// per row. scratch must hold len(ents) entries; the sorted entries are
// returned, in ents or in scratch.
func radixSortEnts(ents, scratch []rowEnt) []rowEnt {
	if len(ents) < 2 {
		return ents
	}
	// digit 0 is the key length; digits 1..16 are the prefix bytes, least
	// significant (p1's last byte) first.
	var counts [17][256]int
	for i := range ents {
		e := &ents[i]
		counts[0][e.klen]++
		for d := range 8 {
			counts[1+d][byte(e.p1>>(8*d))]++
			counts[9+d][byte(e.p0>>(8*d))]++
		}
	}
	src, dst := ents, scratch[:len(ents)]
	for d := range counts {
		c := &counts[d]
		if varies := c[digitOf(&src[0], d)] != len(src); !varies {
			continue
		}
		var pos [256]int
		sum := 0
		for v, n := range c {
			pos[v] = sum
			sum += n
		}
		for i := range src {
			v := digitOf(&src[i], d)
			dst[pos[v]] = src[i]
			pos[v]++
		}
		src, dst = dst, src
	}
	return src
}

// digitOf is digit d of e for radixSortEnts.
func digitOf(e *rowEnt, d int) byte {
	switch {
	case d == 0:
		return byte(e.klen)
	case d <= 8:
		return byte(e.p1 >> (8 * (d - 1)))
	default:
		return byte(e.p0 >> (8 * (d - 9)))
	}
}
