package pqdict

import (
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
		seen            = make(map[uint64]struct{}, arr.Len())
		valid, halfSeen int
		half            = arr.Len() / 2
		hash            = valueHash(arr, maphash.MakeSeed())
	)
	for i := range arr.Len() {
		if i == half {
			halfSeen = len(seen)
		}
		if arr.IsNull(i) {
			continue
		}
		valid++
		seen[hash(i)] = struct{}{}
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

// valueHash returns a function hashing value i of arr, so that two values
// hash alike exactly when they are equal (up to 64-bit collisions): the
// bytes of a binary or fixed-width value, a dictionary entry's hash for a
// dictionary array's index. Other types are hashed by their printed value.
// The writer asks about every column of every group's first batch, and
// printing each value (ValueStr) cost 2% of bench/rewrite's partitioned
// sort; hashing the bytes tells the same values apart, except floating
// zeros and NaNs of different bits, which count as distinct.
func valueHash(arr arrow.Array, seed maphash.Seed) func(i int) uint64 {
	switch a := arr.(type) {
	case *array.String:
		return func(i int) uint64 { return maphash.String(seed, a.Value(i)) }
	case *array.LargeString:
		return func(i int) uint64 { return maphash.String(seed, a.Value(i)) }
	case *array.Binary:
		return func(i int) uint64 { return maphash.Bytes(seed, a.Value(i)) }
	case *array.LargeBinary:
		return func(i int) uint64 { return maphash.Bytes(seed, a.Value(i)) }
	case *array.FixedSizeBinary:
		return func(i int) uint64 { return maphash.Bytes(seed, a.Value(i)) }
	case *array.Dictionary:
		dict := a.Dictionary()
		of := valueHash(dict, seed)
		hashes := make([]uint64, dict.Len())
		for j := range hashes {
			if dict.IsValid(j) {
				hashes[j] = of(j)
			}
		}
		return func(i int) uint64 { return hashes[a.GetValueIndex(i)] }
	}
	if fw, ok := arr.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth() >= 8 && fw.BitWidth()%8 == 0 {
		if bufs := arr.Data().Buffers(); len(bufs) == 2 && bufs[1] != nil {
			w, off := fw.BitWidth()/8, arr.Data().Offset()
			vals := bufs[1].Bytes()
			return func(i int) uint64 { return maphash.Bytes(seed, vals[(off+i)*w:(off+i+1)*w]) }
		}
	}
	return func(i int) uint64 { return maphash.String(seed, arr.ValueStr(i)) }
}
