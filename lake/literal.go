package lake

import (
	"bytes"
	"cmp"
	"strings"

	"github.com/apache/iceberg-go"
)

// CompareLiterals orders two bound values of the same column. ok is false
// when the two are of different or unordered kinds (a schema change between
// files, a geometry bound), in which case callers must treat the ranges as
// overlapping — the safe answer for pruning.
func CompareLiterals(a, b iceberg.Literal) (c int, ok bool) {
	switch x := a.(type) {
	case iceberg.BoolLiteral:
		if y, ok := b.(iceberg.BoolLiteral); ok {
			return cmp.Compare(boolInt(bool(x)), boolInt(bool(y))), true
		}
	case iceberg.Int32Literal:
		switch y := b.(type) {
		case iceberg.Int32Literal:
			return cmp.Compare(x, y), true
		case iceberg.Int64Literal:
			return cmp.Compare(int64(x), int64(y)), true
		}
	case iceberg.Int64Literal:
		switch y := b.(type) {
		case iceberg.Int64Literal:
			return cmp.Compare(x, y), true
		case iceberg.Int32Literal:
			return cmp.Compare(int64(x), int64(y)), true
		}
	case iceberg.Float32Literal:
		switch y := b.(type) {
		case iceberg.Float32Literal:
			return cmp.Compare(x, y), true
		case iceberg.Float64Literal:
			return cmp.Compare(float64(x), float64(y)), true
		}
	case iceberg.Float64Literal:
		switch y := b.(type) {
		case iceberg.Float64Literal:
			return cmp.Compare(x, y), true
		case iceberg.Float32Literal:
			return cmp.Compare(float64(x), float64(y)), true
		}
	case iceberg.DateLiteral:
		if y, ok := b.(iceberg.DateLiteral); ok {
			return cmp.Compare(x, y), true
		}
	case iceberg.TimeLiteral:
		if y, ok := b.(iceberg.TimeLiteral); ok {
			return cmp.Compare(x, y), true
		}
	case iceberg.TimestampLiteral:
		if y, ok := b.(iceberg.TimestampLiteral); ok {
			return cmp.Compare(x, y), true
		}
	case iceberg.TimestampNsLiteral:
		if y, ok := b.(iceberg.TimestampNsLiteral); ok {
			return cmp.Compare(x, y), true
		}
	case iceberg.StringLiteral:
		if y, ok := b.(iceberg.StringLiteral); ok {
			return strings.Compare(string(x), string(y)), true
		}
	case iceberg.BinaryLiteral:
		if y, ok := b.(iceberg.BinaryLiteral); ok {
			return bytes.Compare(x, y), true
		}
	case iceberg.FixedLiteral:
		if y, ok := b.(iceberg.FixedLiteral); ok {
			return bytes.Compare(x, y), true
		}
	case iceberg.UUIDLiteral:
		if y, ok := b.(iceberg.UUIDLiteral); ok {
			return bytes.Compare(x[:], y[:]), true
		}
	case iceberg.DecimalLiteral:
		if y, ok := b.(iceberg.DecimalLiteral); ok {
			return x.Comparator()(iceberg.Decimal(x), iceberg.Decimal(y)), true
		}
	}
	return 0, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
