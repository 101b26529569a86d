package pqdict

import (
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// DefaultMaxRatio is the largest distinct/non-null ratio, at row-group scale,
// at which a column is dictionary-encoded.
const DefaultMaxRatio = 0.5

// ScaledDistinctRatio estimates distinct/non-null values of the flat column
// sampled by arr over rows rows (see the package documentation); ok is false
// for types where the question does not apply (boolean, nested).
func ScaledDistinctRatio(arr arrow.Array, rows int64) (ratio float64, ok bool) {
	switch arr.DataType().ID() {
	case arrow.BOOL, arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.MAP, arrow.FIXED_SIZE_LIST, arrow.EXTENSION:
		return 0, false
	}
	var (
		seed            = maphash.MakeSeed()
		seen            = make(map[uint64]struct{})
		valid, halfSeen int
		half            = arr.Len() / 2
	)
	for i := range arr.Len() {
		if i == half {
			halfSeen = len(seen)
		}
		if arr.IsNull(i) {
			continue
		}
		valid++
		seen[maphash.String(seed, arr.ValueStr(i))] = struct{}{}
	}
	if valid == 0 {
		return 0, true
	}
	d := float64(len(seen))
	if halfSeen == 0 || rows <= int64(valid) {
		return d / float64(valid), true
	}
	beta := min(max(math.Log2(d/float64(halfSeen)), 0), 1)
	scaledValid := float64(valid) * float64(rows) / float64(arr.Len())
	return min(d*math.Pow(scaledValid/float64(valid), beta), scaledValid) / scaledValid, true
}
