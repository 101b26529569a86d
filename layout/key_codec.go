package layout

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
)

// ascCodec returns the ascending memcomparable encoder of non-null values of type dt:
//
//   - signed integers, date32/date64, time32/time64, duration, decimal32/64: big-endian two's
//     complement of the full width with the sign bit flipped;
//   - unsigned integers: big-endian;
//   - float16/32/64: IEEE bits, all bits flipped for negatives and only the sign bit for
//     positives; every NaN is canonicalized to one positive NaN (sorting after +Inf, as Iceberg
//     and Spark do) and -0 to +0 (so -0 and +0 tie, as in Spark SQL ordering);
//   - bool: 0x00 / 0x01;
//   - timestamp: microseconds since the epoch (s and ms are scaled, saturating at the int64
//     range); nanosecond timestamps add 2 bytes with the sub-microsecond remainder so that they
//     stay strictly ordered;
//   - decimal128/256: the unscaled value as big-endian two's complement with the sign bit
//     flipped (ordering matches the decimal value because a column has a single scale);
//   - string and binary (all offset widths and views): the bytes with 0x00 escaped as
//     0x00 0xFF, then a 0x00 0x00 terminator, so that a prefix sorts before its extensions;
//   - fixed-size binary (and UUID): the raw bytes;
//   - dictionary: the encoding of the dictionary value; extension types: of their storage.
func ascCodec(dt arrow.DataType) (valueFn, error) {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		inner, err := ascCodec(t.ValueType)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			d, ok := arr.(*array.Dictionary)
			if !ok {
				return dst, mismatch(arr, "dictionary")
			}
			return inner(dst, d.Dictionary(), d.GetValueIndex(row))
		}, nil
	case arrow.ExtensionType:
		inner, err := ascCodec(t.StorageType())
		if err != nil {
			return nil, err
		}
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			e, ok := arr.(array.ExtensionArray)
			if !ok {
				return dst, mismatch(arr, t.ExtensionName())
			}
			return inner(dst, e.Storage(), row)
		}, nil
	case *arrow.TimestampType:
		return timestampCodec(t.Unit), nil
	}
	switch dt.ID() {
	case arrow.INT8:
		return signedCodec[int8, *array.Int8](), nil
	case arrow.INT16:
		return signedCodec[int16, *array.Int16](), nil
	case arrow.INT32:
		return signedCodec[int32, *array.Int32](), nil
	case arrow.INT64:
		return signedCodec[int64, *array.Int64](), nil
	case arrow.DATE32:
		return signedCodec[arrow.Date32, *array.Date32](), nil
	case arrow.DATE64:
		return signedCodec[arrow.Date64, *array.Date64](), nil
	case arrow.TIME32:
		return signedCodec[arrow.Time32, *array.Time32](), nil
	case arrow.TIME64:
		return signedCodec[arrow.Time64, *array.Time64](), nil
	case arrow.DURATION:
		return signedCodec[arrow.Duration, *array.Duration](), nil
	case arrow.DECIMAL32:
		return signedCodec[decimal.Decimal32, *array.Decimal32](), nil
	case arrow.DECIMAL64:
		return signedCodec[decimal.Decimal64, *array.Decimal64](), nil
	case arrow.UINT8:
		return unsignedCodec[uint8, *array.Uint8](), nil
	case arrow.UINT16:
		return unsignedCodec[uint16, *array.Uint16](), nil
	case arrow.UINT32:
		return unsignedCodec[uint32, *array.Uint32](), nil
	case arrow.UINT64:
		return unsignedCodec[uint64, *array.Uint64](), nil
	case arrow.FLOAT16:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Float16)
			if !ok {
				return dst, mismatch(arr, "float16")
			}
			return appendFloat32(dst, a.Value(row).Float32()), nil
		}, nil
	case arrow.FLOAT32:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Float32)
			if !ok {
				return dst, mismatch(arr, "float32")
			}
			return appendFloat32(dst, a.Value(row)), nil
		}, nil
	case arrow.FLOAT64:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Float64)
			if !ok {
				return dst, mismatch(arr, "float64")
			}
			return appendFloat64(dst, a.Value(row)), nil
		}, nil
	case arrow.BOOL:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Boolean)
			if !ok {
				return dst, mismatch(arr, "bool")
			}
			if a.Value(row) {
				return append(dst, 1), nil
			}
			return append(dst, 0), nil
		}, nil
	case arrow.DECIMAL128:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Decimal128)
			if !ok {
				return dst, mismatch(arr, "decimal128")
			}
			v := a.Value(row)
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())^(1<<63))
			return binary.BigEndian.AppendUint64(dst, v.LowBits()), nil
		}, nil
	case arrow.DECIMAL256:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.Decimal256)
			if !ok {
				return dst, mismatch(arr, "decimal256")
			}
			w := a.Value(row).Array() // little-endian words
			dst = binary.BigEndian.AppendUint64(dst, w[3]^(1<<63))
			dst = binary.BigEndian.AppendUint64(dst, w[2])
			dst = binary.BigEndian.AppendUint64(dst, w[1])
			return binary.BigEndian.AppendUint64(dst, w[0]), nil
		}, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(interface{ Value(int) string })
			if !ok {
				return dst, mismatch(arr, "string")
			}
			return appendEscaped(dst, a.Value(row)), nil
		}, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(interface{ Value(int) []byte })
			if !ok {
				return dst, mismatch(arr, "binary")
			}
			return appendEscaped(dst, a.Value(row)), nil
		}, nil
	case arrow.FIXED_SIZE_BINARY:
		return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
			a, ok := arr.(*array.FixedSizeBinary)
			if !ok {
				return dst, mismatch(arr, "fixed_size_binary")
			}
			return append(dst, a.Value(row)...), nil
		}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
}

type signedInt interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type unsignedInt interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// appendUint appends the low width bytes of u, big-endian.
func appendUint(dst []byte, u uint64, width int) []byte {
	switch width {
	case 1:
		return append(dst, byte(u))
	case 2:
		return binary.BigEndian.AppendUint16(dst, uint16(u))
	case 4:
		return binary.BigEndian.AppendUint32(dst, uint32(u))
	default:
		return binary.BigEndian.AppendUint64(dst, u)
	}
}

func signedCodec[T signedInt, A interface {
	arrow.Array
	Value(int) T
}]() valueFn {
	var zero T
	width := int(unsafe.Sizeof(zero))
	sign := uint64(1) << (8*width - 1)
	return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
		a, ok := arr.(A)
		if !ok {
			return dst, mismatch(arr, fmt.Sprintf("%T", zero))
		}
		return appendUint(dst, uint64(int64(a.Value(row)))^sign, width), nil
	}
}

func unsignedCodec[T unsignedInt, A interface {
	arrow.Array
	Value(int) T
}]() valueFn {
	var zero T
	width := int(unsafe.Sizeof(zero))
	return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
		a, ok := arr.(A)
		if !ok {
			return dst, mismatch(arr, fmt.Sprintf("%T", zero))
		}
		return appendUint(dst, uint64(a.Value(row)), width), nil
	}
}

// timestampCodec encodes a timestamp of the given unit as microseconds since the epoch.
func timestampCodec(unit arrow.TimeUnit) valueFn {
	return func(dst []byte, arr arrow.Array, row int) ([]byte, error) {
		a, ok := arr.(*array.Timestamp)
		if !ok {
			return dst, mismatch(arr, "timestamp")
		}
		v := int64(a.Value(row))
		dst = binary.BigEndian.AppendUint64(dst, uint64(TimestampMicros(v, unit))^(1<<63))
		if unit == arrow.Nanosecond {
			_, rem := floorDivMod(v, 1_000)
			dst = binary.BigEndian.AppendUint16(dst, uint16(rem))
		}
		return dst, nil
	}
}

func saturatingMul(v, m int64) int64 {
	switch {
	case v > math.MaxInt64/m:
		return math.MaxInt64
	case v < math.MinInt64/m:
		return math.MinInt64
	default:
		return v * m
	}
}

// floorDivMod returns floor(a/b) and the non-negative remainder, for b > 0.
func floorDivMod(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// canonicalNaN64 is the NaN Java's Double.doubleToLongBits returns for every NaN.
const canonicalNaN64 = 0x7ff8000000000000

func orderedFloat64Bits(f float64) uint64 {
	var u uint64
	switch {
	case f != f:
		u = canonicalNaN64
	case f == 0:
		u = 0
	default:
		u = math.Float64bits(f)
	}
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

func appendFloat64(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(dst, orderedFloat64Bits(f))
}

func appendFloat32(dst []byte, f float32) []byte {
	var u uint32
	switch {
	case f != f:
		u = 0x7fc00000
	case f == 0:
		u = 0
	default:
		u = math.Float32bits(f)
	}
	if u>>31 == 1 {
		u = ^u
	} else {
		u |= 1 << 31
	}
	return binary.BigEndian.AppendUint32(dst, u)
}

// appendEscaped appends s with 0x00 escaped as 0x00 0xFF and a 0x00 0x00 terminator.
func appendEscaped[S string | []byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xFF)
		}
	}
	return append(dst, 0, 0)
}
