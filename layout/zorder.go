package layout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// icebergPrimitiveSize is ZOrderByteUtils.PRIMITIVE_BUFFER_SIZE: every non-string column
// contributes 8 bytes to an Iceberg z-order value.
const icebergPrimitiveSize = 8

// InterleaveBits appends to dst the first size bytes of the bits of columns interleaved
// round-robin, most significant bit first: bit 7 of byte 0 of every column, then bit 6 of byte
// 0 of every column, and so on; a column that has run out of bytes is skipped. size is capped
// at the total length of the columns. This is bit-exact with Iceberg's
// ZOrderByteUtils.interleaveBits.
func InterleaveBits(dst []byte, columns [][]byte, size int) []byte {
	total := 0
	for _, c := range columns {
		total += len(c)
	}
	size = max(min(size, total), 0)
	if n := len(columns); n >= 1 && n <= 8 && total == n*len(columns[0]) {
		if equal := allLen(columns, len(columns[0])); equal {
			return interleaveEqual(dst, columns, size)
		}
	}
	start := len(dst)
	dst = grow(dst, size)[:start+size]
	out := dst[start:]
	clear(out)
	outBits := size * 8
	k := 0
	for byteIdx := 0; k < outBits; byteIdx++ {
		for bit := 7; bit >= 0 && k < outBits; bit-- {
			for _, c := range columns {
				if byteIdx >= len(c) {
					continue
				}
				if k == outBits {
					break
				}
				out[k>>3] |= (c[byteIdx] >> bit & 1) << (7 - k&7)
				k++
			}
		}
	}
	return dst
}

func allLen(columns [][]byte, n int) bool {
	for _, c := range columns {
		if len(c) != n {
			return false
		}
	}
	return true
}

// spreadTables[n][b] moves bit i of the byte b to bit n·i, for n = 1 … 8 columns.
var spreadTables = func() (t [9][256]uint64) {
	for n := 1; n <= 8; n++ {
		for b := range 256 {
			for i := range 8 {
				t[n][b] |= uint64(b>>i&1) << (n * i)
			}
		}
	}
	return t
}()

// interleaveEqual is InterleaveBits for 1 to 8 columns of one length: byte k of every column
// becomes n output bytes at once through a spread table.
func interleaveEqual(dst []byte, columns [][]byte, size int) []byte {
	n := len(columns)
	table := &spreadTables[n]
	start := len(dst)
	length := len(columns[0])
	// Each step writes 8 bytes of which the first n are kept; 8 bytes of slack absorb the rest.
	dst = grow(dst, n*length+8)[:start+n*length+8]
	out := dst[start:]
	shift := uint(64 - 8*n)
	for k := range length {
		var acc uint64
		for c, col := range columns {
			acc |= table[col[k]] << (n - 1 - c)
		}
		binary.BigEndian.PutUint64(out[k*n:], acc<<shift)
	}
	return dst[:start+size]
}

// interleave2x8 interleaves two 8-byte columns (the common case of Iceberg z-order on two
// primitive columns) with bit spreading instead of a per-bit loop.
func interleave2x8(dst []byte, a, b []byte) []byte {
	x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b)
	hi := spread32(uint32(x>>32))<<1 | spread32(uint32(y>>32))
	lo := spread32(uint32(x))<<1 | spread32(uint32(y))
	dst = binary.BigEndian.AppendUint64(dst, hi)
	return binary.BigEndian.AppendUint64(dst, lo)
}

// spread32 moves bit i of v to bit 2i.
func spread32(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// icebergZOrderEncoder reproduces SparkZOrderUDF + ZOrderByteUtils.
type icebergZOrderEncoder struct {
	keyBase
	fns     []valueFn // append exactly widths[i] bytes for a non-null value
	widths  []int
	total   int // sum of widths
	outSize int // min(total, MaxOutputBytes)
}

func newIcebergZOrderEncoder(b keyBase, opts EncoderOptions) (*icebergZOrderEncoder, error) {
	varLen := opts.VarLengthContribution
	if varLen == 0 {
		varLen = DefaultVarLengthContribution
	}
	e := &icebergZOrderEncoder{keyBase: b}
	var errs []error
	for _, c := range b.cols {
		if c.spec.NullsLast {
			errs = append(errs, fmt.Errorf("column %q: nulls last cannot be expressed in Iceberg-exact z-order (Iceberg encodes nulls as zero bytes, which sort first); use rank z-order (ZOrderRank)", c.name))
			continue
		}
		fn, w, err := icebergContribution(c.typ, varLen, opts.IcebergLegacyFloatBytes)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %q: %w", c.name, err))
			continue
		}
		e.fns = append(e.fns, fn)
		e.widths = append(e.widths, w)
		e.total += w
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	e.outSize = e.total
	if opts.MaxOutputBytes > 0 {
		e.outSize = min(e.total, opts.MaxOutputBytes)
	}
	return e, nil
}

func (e *icebergZOrderEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	if err := e.check(rec, row); err != nil {
		return dst, err
	}
	base := len(dst)
	// Contributions go after dst, the interleaved value after them, and the value is then
	// moved down to base. Growing first keeps every slice below pointing at one array.
	dst = grow(dst, e.total+e.outSize+8) // +8: interleaveEqual writes whole words
	var cols [MaxZOrderColumns][]byte
	for i, c := range e.cols {
		arr := rec.Column(c.index)
		start := len(dst)
		if nullAt(arr, row) {
			dst = dst[:start+e.widths[i]]
			clear(dst[start:])
		} else {
			var err error
			dst, err = e.fns[i](dst, arr, row)
			if err != nil {
				return dst[:base], fmt.Errorf("encode column %q row %d: %w", c.name, row, err)
			}
		}
		cols[i] = dst[start:len(dst):len(dst)]
	}
	mid := len(dst)
	if len(e.cols) == 2 && e.widths[0] == 8 && e.widths[1] == 8 && e.outSize == 16 {
		dst = interleave2x8(dst, cols[0], cols[1])
	} else {
		dst = InterleaveBits(dst, cols[:len(e.cols)], e.outSize)
	}
	n := copy(dst[base:], dst[mid:])
	return dst[:base+n], nil
}

// icebergContribution returns the function appending a non-null value's ordered bytes as
// SparkZOrderUDF computes them, and their width. Nulls contribute width zero bytes.
func icebergContribution(dt arrow.DataType, varLen int, legacyFloat bool) (valueFn, int, error) {
	signShift := uint(63)
	if legacyFloat {
		signShift = 31
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		inner, w, err := icebergContribution(t.ValueType, varLen, legacyFloat)
		if err != nil {
			return nil, 0, err
		}
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			d, ok := arr.(*array.Dictionary)
			if !ok {
				return dst, mismatch(arr, "dictionary")
			}
			return inner(dst, d.Dictionary(), d.GetValueIndex(row))
		}, w, nil
	case *extensions.UUIDType:
		// Iceberg hands UUID columns to Spark as strings: the canonical lower-case form.
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*extensions.UUIDArray)
			if !ok {
				return dst, mismatch(arr, "uuid")
			}
			// The canonical form is ASCII, so Java's encoder and a plain truncation agree.
			var buf [36]byte
			return appendTruncateOrFill(dst, canonicalUUID(&buf, a.Value(row)), varLen), nil
		}, varLen, nil
	case *arrow.TimestampType:
		unit, ntz := t.Unit, t.TimeZone == ""
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Timestamp)
			if !ok {
				return dst, mismatch(arr, "timestamp")
			}
			v := int64(a.Value(row))
			if ntz {
				// TimestampNTZType (Iceberg PR #15778): microseconds of the local date-time.
				return appendJavaLong(dst, TimestampMicros(v, unit)), nil
			}
			// TimestampType: Spark's cast to LongType gives whole seconds (floorDiv of micros).
			secs, _ := floorDivMod(v, unitsPerSecond(unit))
			return appendJavaLong(dst, secs), nil
		}, icebergPrimitiveSize, nil
	case arrow.ExtensionType:
		return nil, 0, fmt.Errorf("%w: extension type %s has no Spark equivalent in Iceberg's z-order", ErrUnsupportedType, t.ExtensionName())
	}
	switch dt.ID() {
	case arrow.INT8:
		return javaLongCodec[int8, *array.Int8](), icebergPrimitiveSize, nil
	case arrow.INT16:
		return javaLongCodec[int16, *array.Int16](), icebergPrimitiveSize, nil
	case arrow.INT32:
		return javaLongCodec[int32, *array.Int32](), icebergPrimitiveSize, nil
	case arrow.INT64:
		return javaLongCodec[int64, *array.Int64](), icebergPrimitiveSize, nil
	case arrow.UINT8:
		return javaLongCodec[uint8, *array.Uint8](), icebergPrimitiveSize, nil
	case arrow.UINT16:
		return javaLongCodec[uint16, *array.Uint16](), icebergPrimitiveSize, nil
	case arrow.UINT32:
		return javaLongCodec[uint32, *array.Uint32](), icebergPrimitiveSize, nil
	case arrow.DATE32:
		// unix_date(col): days since the epoch.
		return javaLongCodec[arrow.Date32, *array.Date32](), icebergPrimitiveSize, nil
	case arrow.DATE64:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Date64)
			if !ok {
				return dst, mismatch(arr, "date64")
			}
			days, _ := floorDivMod(int64(a.Value(row)), 86_400_000)
			return appendJavaLong(dst, days), nil
		}, icebergPrimitiveSize, nil
	case arrow.FLOAT32:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Float32)
			if !ok {
				return dst, mismatch(arr, "float32")
			}
			return appendJavaDouble(dst, float64(a.Value(row)), signShift), nil
		}, icebergPrimitiveSize, nil
	case arrow.FLOAT64:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Float64)
			if !ok {
				return dst, mismatch(arr, "float64")
			}
			return appendJavaDouble(dst, a.Value(row), signShift), nil
		}, icebergPrimitiveSize, nil
	case arrow.BOOL:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Boolean)
			if !ok {
				return dst, mismatch(arr, "bool")
			}
			var first byte
			if a.Value(row) {
				first = 0x81 // (byte) -127
			}
			return append(dst, first, 0, 0, 0, 0, 0, 0, 0), nil
		}, icebergPrimitiveSize, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(interface{ Value(int) string })
			if !ok {
				return dst, mismatch(arr, "string")
			}
			return appendJavaUTF8(dst, a.Value(row), varLen), nil
		}, varLen, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(interface{ Value(int) []byte })
			if !ok {
				return dst, mismatch(arr, "binary")
			}
			return appendTruncateOrFill(dst, a.Value(row), varLen), nil
		}, varLen, nil
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return nil, 0, fmt.Errorf("%w: %s: Iceberg's Spark z-order rejects decimals; use rank z-order (ZOrderRank), which orders decimals exactly, or cast the column to a long of its unscaled value", ErrUnsupportedType, dt)
	case arrow.UINT64:
		return nil, 0, fmt.Errorf("%w: uint64 has no Spark equivalent (Spark's LongType is signed); use rank z-order (ZOrderRank)", ErrUnsupportedType)
	}
	return nil, 0, fmt.Errorf("%w: %s is not one of the types Iceberg's Spark z-order accepts (integers, floats, boolean, string, binary, date, timestamp)", ErrUnsupportedType, dt)
}

// canonicalUUID writes u as Java's UUID.toString does: lower-case hex in 8-4-4-4-12 groups.
func canonicalUUID(buf *[36]byte, u [16]byte) []byte {
	const hexDigits = "0123456789abcdef"
	j := 0
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[j] = '-'
			j++
		}
		buf[j], buf[j+1] = hexDigits[b>>4], hexDigits[b&0xF]
		j += 2
	}
	return buf[:]
}

// TimestampMicros converts a timestamp of the given unit to microseconds,
// flooring nanoseconds and saturating at the int64 range: the value the
// layout keys order timestamps by, which the simulator's projection uses
// too so that it cuts the cells the rewrite cuts.
func TimestampMicros(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return saturatingMul(v, 1_000_000)
	case arrow.Millisecond:
		return saturatingMul(v, 1_000)
	case arrow.Nanosecond:
		q, _ := floorDivMod(v, 1_000)
		return q
	default:
		return v
	}
}

func unitsPerSecond(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1
	case arrow.Millisecond:
		return 1_000
	case arrow.Microsecond:
		return 1_000_000
	default:
		return 1_000_000_000
	}
}

// appendJavaLong is ZOrderByteUtils.wholeNumberOrderedBytes: putLong(v ^ Long.MIN_VALUE).
func appendJavaLong(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

func javaLongCodec[T signedInt | unsignedInt, A interface {
	arrow.Array
	Value(int) T
}]() valueFn {
	return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
		a, ok := arr.(A)
		if !ok {
			var zero T
			return dst, mismatch(arr, fmt.Sprintf("%T", zero))
		}
		return appendJavaLong(dst, int64(a.Value(row))), nil
	}
}

// appendJavaDouble is ZOrderByteUtils.floatingPointOrderedBytes: l = doubleToLongBits(v);
// l ^= (l >> shift) | Long.MIN_VALUE. doubleToLongBits maps every NaN to 0x7ff8000000000000,
// and -0.0 keeps its sign, so -0.0 sorts just before +0.0. shift is 63 since Iceberg PR #17071;
// releases before it shifted by 31 (Integer.SIZE - 1), which leaks exponent bits into the low
// word and is not order-preserving for values that share their top 31 bits.
func appendJavaDouble(dst []byte, f float64, shift uint) []byte {
	l := int64(math.Float64bits(f))
	if f != f {
		l = canonicalNaN64
	}
	l ^= (l >> shift) | math.MinInt64
	return binary.BigEndian.AppendUint64(dst, uint64(l))
}

// appendJavaUTF8 is ZOrderByteUtils.stringToOrderedBytes with Java's UTF-8 CharsetEncoder:
// the UTF-8 bytes of s, stopping before the first character that does not fit whole in n
// bytes, zero-padded to n. Invalid UTF-8 becomes U+FFFD per bad byte, as Go decodes it (Java
// may fold a malformed multi-byte sequence into one U+FFFD; Iceberg strings are valid UTF-8).
func appendJavaUTF8(dst []byte, s string, n int) []byte {
	start := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if len(dst)-start+1 > n {
				break
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if len(dst)-start+3 > n {
				break
			}
			dst = append(dst, "\uFFFD"...)
			i++
			continue
		}
		if len(dst)-start+size > n {
			break
		}
		dst = append(dst, s[i:i+size]...)
		i += size
	}
	for len(dst)-start < n {
		dst = append(dst, 0)
	}
	return dst
}

// appendTruncateOrFill is ZOrderByteUtils.byteTruncateOrFill: b truncated or zero-filled to n.
func appendTruncateOrFill(dst, b []byte, n int) []byte {
	if len(b) >= n {
		return append(dst, b[:n]...)
	}
	dst = append(dst, b...)
	for range n - len(b) {
		dst = append(dst, 0)
	}
	return dst
}

// rankZOrderEncoder interleaves quantile coordinates (see [Quantiles]) of 2 to
// MaxZOrderColumns columns.
type rankZOrderEncoder struct {
	keyBase
	coords coordMapper
}

func newRankZOrderEncoder(b keyBase, q *Quantiles) (*rankZOrderEncoder, error) {
	m, err := newCoordMapper(b, q, "rank z-order")
	if err != nil {
		return nil, err
	}
	return &rankZOrderEncoder{keyBase: b, coords: m}, nil
}

func (e *rankZOrderEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	if err := e.check(rec, row); err != nil {
		return dst, err
	}
	var c [MaxZOrderColumns]uint32
	dst, err := e.coords.fill(c[:len(e.cols)], dst, rec, row)
	if err != nil {
		return dst, err
	}
	return appendInterleavedCoords(dst, c[:len(e.cols)], e.coords.bits), nil
}

// appendInterleavedCoords appends the bits-wide coordinates interleaved MSB first (bit
// bits-1 of every coordinate, then bit bits-2, …), padded with zero bits to whole bytes.
func appendInterleavedCoords(dst []byte, coords []uint32, nbits int) []byte {
	total := len(coords) * nbits
	if len(coords) == 2 && nbits <= 32 {
		v := spread32(coords[0]<<(32-nbits))<<1 | spread32(coords[1]<<(32-nbits))
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], v)
		return append(dst, buf[:(total+7)/8]...)
	}
	start := len(dst)
	n := (total + 7) / 8
	dst = grow(dst, n)[:start+n]
	out := dst[start:]
	clear(out)
	k := 0
	for b := nbits - 1; b >= 0; b-- {
		for _, c := range coords {
			out[k>>3] |= byte(c>>b&1) << (7 - k&7)
			k++
		}
	}
	return dst
}

// coordMapper turns the key columns of a row into integer coordinates of equal bit width.
// A column with k non-null buckets has k+1 slots: bucket+1 with the null slot 0 (nulls first)
// or bucket with the null slot k (nulls last). Slot v of the k+1 is scaled to
// floor(v·2^bits/(k+1)), where bits is the width the column with the most slots needs, so
// every column spans the whole coordinate range evenly: the top bit of each coordinate splits
// its column near the median, whatever its bucket count. The scaling is strictly increasing,
// so distinct slots stay distinct.
type coordMapper struct {
	cols []coordCol
	bits int
}

type coordCol struct {
	q         *quantileCol
	fn        valueFn
	index     int // in the record
	nullsLast bool
	nonNull   uint32 // number of non-null buckets
}

func newCoordMapper(b keyBase, q *Quantiles, what string) (coordMapper, error) {
	if q == nil {
		return coordMapper{}, fmt.Errorf("%s needs EncoderOptions.Quantiles (fit them with FitQuantiles on a sample)", what)
	}
	var m coordMapper
	var errs []error
	for _, c := range b.cols {
		qc, err := q.column(c.name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !arrow.TypeEqual(qc.typ, c.typ) {
			errs = append(errs, fmt.Errorf("quantiles of column %q were fitted on %s, schema has %s", c.name, qc.typ, c.typ))
			continue
		}
		fn, err := ascCodec(c.typ)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %q: %w", c.name, err))
			continue
		}
		nb := uint32(len(qc.bounds) + 1)
		m.cols = append(m.cols, coordCol{q: qc, fn: fn, index: c.index, nullsLast: c.spec.NullsLast, nonNull: nb})
		m.bits = max(m.bits, bits.Len32(nb)) // slots 0…nb
	}
	if len(errs) > 0 {
		return coordMapper{}, errors.Join(errs...)
	}
	return m, nil
}

// fill writes the coordinates of row into c. It uses dst's spare capacity as scratch and
// returns dst with its length unchanged (possibly grown).
func (m *coordMapper) fill(c []uint32, dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	base := len(dst)
	dst = grow(dst, 64)
	for i := range m.cols {
		col := &m.cols[i]
		arr := rec.Column(col.index)
		var v uint32
		if nullAt(arr, row) {
			if col.nullsLast {
				v = col.nonNull
			}
		} else {
			enc, err := col.fn(dst[base:base], arr, row)
			if err != nil {
				return dst[:base], fmt.Errorf("encode column %q row %d: %w", col.q.name, row, err)
			}
			v = uint32(col.q.bucketOf(enc))
			if !col.nullsLast {
				v++
			}
		}
		c[i] = uint32(uint64(v) << m.bits / uint64(col.nonNull+1))
	}
	return dst[:base], nil
}
