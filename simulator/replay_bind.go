package simulator

import (
	pexpr "github.com/floe-project/floe/expr"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
)

// leafOp is the operator of a bound predicate leaf, after NOT has been pushed down.
type leafOp uint8

const (
	opLT leafOp = iota
	opLE
	opGT
	opGE
	opEQ
	opNE
	opIn
	opNotIn
	opIsNull
	opNotNull
	opStartsWith
	opNotStartsWith
)

// colKind says how the values of a bound column are keyed: order-preserving uint64
// (integers, dates, timestamps, floats, booleans) or their bytes (strings).
type colKind uint8

const (
	kindU64 colKind = iota
	kindStr
)

// boundCol is a column of the table that the workload filters on.
type boundCol struct {
	fieldID int
	name    string // as the schema spells it (full dotted name)
	typ     iceberg.PrimitiveType
	kind    colKind
}

// leaf is one bound predicate: a column, an operator and typed values. For opIn and
// opNotIn the values are sorted and deduplicated.
type leaf struct {
	col  int // index into binding.cols
	op   leafOp
	u    []uint64
	s    []string
	lits []iceberg.Literal
}

type exprKind uint8

const (
	exTrue exprKind = iota // may match: no filter, or a term floe cannot bound
	exLeaf
	exAnd
	exOr
)

// expr is a bound predicate tree in negation normal form: NOTs have been pushed into the
// leaves (De Morgan, negated operators), and every term that cannot be bound is exTrue,
// so that replacing it by "may match" is always conservative.
type expr struct {
	kind exprKind
	leaf leaf
	kids []*expr
}

var trueExpr = &expr{kind: exTrue}

// binding resolves column names of predicate trees against one Iceberg schema; the
// columns it has seen are numbered in order of first use.
type binding struct {
	schema *iceberg.Schema
	cols   []boundCol
	byID   map[int]int
}

func newBinding(schema *iceberg.Schema) *binding {
	return &binding{schema: schema, byID: map[int]int{}}
}

// column resolves name case-insensitively; ok is false for an unknown or non-primitive
// column, or one of a type replay cannot bound (decimal, binary, fixed, uuid, time,
// nested types).
func (b *binding) column(name string) (int, bool) {
	f, ok := b.schema.FindFieldByNameCaseInsensitive(name)
	if !ok {
		return 0, false
	}
	if i, ok := b.byID[f.ID]; ok {
		return i, true
	}
	pt, ok := f.Type.(iceberg.PrimitiveType)
	if !ok {
		return 0, false
	}
	kind := kindU64
	switch pt.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.BooleanType:
	case iceberg.StringType:
		kind = kindStr
	default:
		return 0, false
	}
	full, _ := b.schema.FindColumnName(f.ID)
	b.cols = append(b.cols, boundCol{fieldID: f.ID, name: full, typ: pt, kind: kind})
	b.byID[f.ID] = len(b.cols) - 1
	return len(b.cols) - 1, true
}

// bind turns an extracted predicate tree into a bound tree in negation normal form. A nil
// node (no filter) binds to exTrue.
func (b *binding) bind(n *pexpr.Node) *expr {
	return b.bindNode(n, false)
}

func (b *binding) bindNode(n *pexpr.Node, neg bool) *expr {
	if n == nil {
		return trueExpr
	}
	switch n.Kind {
	case pexpr.NodeNot:
		if len(n.Children) != 1 {
			return trueExpr
		}
		return b.bindNode(n.Children[0], !neg)
	case pexpr.NodeAnd, pexpr.NodeOr:
		isAnd := (n.Kind == pexpr.NodeAnd) != neg
		kids := make([]*expr, 0, len(n.Children))
		for _, c := range n.Children {
			kids = append(kids, b.bindNode(c, neg))
		}
		return combine(isAnd, kids)
	case pexpr.NodePred:
		if n.Pred == nil {
			return trueExpr
		}
		return b.bindPred(n.Pred, neg)
	default:
		return trueExpr
	}
}

// combine builds AND (isAnd) or OR of kids, simplifying true terms: AND drops them, OR
// becomes true. Nested nodes of the same kind are flattened.
func combine(isAnd bool, kids []*expr) *expr {
	kind := exOr
	if isAnd {
		kind = exAnd
	}
	out := make([]*expr, 0, len(kids))
	for _, k := range kids {
		switch {
		case k.kind == exTrue:
			if !isAnd {
				return trueExpr
			}
		case k.kind == kind:
			out = append(out, k.kids...)
		default:
			out = append(out, k)
		}
	}
	switch len(out) {
	case 0:
		return trueExpr
	case 1:
		return out[0]
	}
	return &expr{kind: kind, kids: out}
}

var simpleOps = map[pexpr.Op]leafOp{
	pexpr.OpEq: opEQ, pexpr.OpNotEq: opNE, pexpr.OpLt: opLT, pexpr.OpLtEq: opLE,
	pexpr.OpGt: opGT, pexpr.OpGtEq: opGE,
}

func (b *binding) bindPred(p *pexpr.Pred, neg bool) *expr {
	op := p.Op
	if neg {
		var ok bool
		if op, ok = pexpr.Negate(op); !ok {
			return trueExpr // no negation known: may match
		}
	}
	col, ok := b.column(p.Column)
	if !ok {
		return trueExpr
	}
	if p.Transform != "" {
		return b.bindTransform(col, p, op)
	}
	switch op {
	case pexpr.OpIsNull, pexpr.OpIsNotNull:
		if len(p.Values) != 0 {
			return trueExpr
		}
		lo := opIsNull
		if op == pexpr.OpIsNotNull {
			lo = opNotNull
		}
		return &expr{kind: exLeaf, leaf: leaf{col: col, op: lo}}
	case pexpr.OpBetween, pexpr.OpNotBetween:
		if len(p.Values) != 2 {
			return trueExpr
		}
		if op == pexpr.OpBetween {
			return combine(true, []*expr{b.cmpLeaf(col, opGE, p.Values[0]), b.cmpLeaf(col, opLE, p.Values[1])})
		}
		return combine(false, []*expr{b.cmpLeaf(col, opLT, p.Values[0]), b.cmpLeaf(col, opGT, p.Values[1])})
	case pexpr.OpIn, pexpr.OpNotIn:
		if len(p.Values) == 0 {
			return trueExpr
		}
		lo := opIn
		if op == pexpr.OpNotIn {
			lo = opNotIn
		}
		return b.setLeaf(col, lo, p.Values)
	case pexpr.OpLike, pexpr.OpNotLike:
		if len(p.Values) != 1 || p.Values[0].Kind != pexpr.KindString || b.cols[col].kind != kindStr {
			return trueExpr
		}
		prefix, exact, ok := likePrefix(p.Values[0].Text)
		if !ok {
			return trueExpr
		}
		if exact {
			o := opEQ
			if op == pexpr.OpNotLike {
				o = opNE
			}
			return b.cmpLeaf(col, o, pexpr.Value{Kind: pexpr.KindString, Text: prefix})
		}
		o := opStartsWith
		if op == pexpr.OpNotLike {
			o = opNotStartsWith
		}
		return &expr{kind: exLeaf, leaf: leaf{col: col, op: o, s: []string{prefix}, lits: []iceberg.Literal{iceberg.StringLiteral(prefix)}}}
	}
	if lo, ok := simpleOps[op]; ok && len(p.Values) == 1 {
		return b.cmpLeaf(col, lo, p.Values[0])
	}
	return trueExpr
}

// likePrefix reads a LIKE pattern: "abc%" is a prefix, "abc" (no wildcard) is an
// equality; anything else (a wildcard inside, an underscore, a backslash) is not usable.
func likePrefix(pat string) (prefix string, exact, ok bool) {
	if strings.ContainsAny(pat, "_\\") {
		return "", false, false
	}
	i := strings.IndexByte(pat, '%')
	if i < 0 {
		return pat, true, true
	}
	if strings.Trim(pat[i:], "%") != "" {
		return "", false, false
	}
	return pat[:i], false, true
}

func (b *binding) cmpLeaf(col int, op leafOp, v pexpr.Value) *expr {
	lit, u, s, ok := typedValue(b.cols[col].typ, v)
	if !ok {
		return trueExpr
	}
	return &expr{kind: exLeaf, leaf: leaf{col: col, op: op, u: []uint64{u}, s: []string{s}, lits: []iceberg.Literal{lit}}}
}

func (b *binding) setLeaf(col int, op leafOp, vals []pexpr.Value) *expr {
	type item struct {
		u   uint64
		s   string
		lit iceberg.Literal
	}
	items := make([]item, 0, len(vals))
	for _, v := range vals {
		lit, u, s, ok := typedValue(b.cols[col].typ, v)
		if !ok {
			return trueExpr
		}
		items = append(items, item{u, s, lit})
	}
	str := b.cols[col].kind == kindStr
	slices.SortFunc(items, func(x, y item) int {
		if str {
			return strings.Compare(x.s, y.s)
		}
		return cmpU64(x.u, y.u)
	})
	items = slices.CompactFunc(items, func(x, y item) bool { return x.u == y.u && x.s == y.s })
	l := leaf{col: col, op: op}
	for _, it := range items {
		l.u = append(l.u, it.u)
		l.s = append(l.s, it.s)
		l.lits = append(l.lits, it.lit)
	}
	return &expr{kind: exLeaf, leaf: l}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bindTransform maps a predicate on year/quarter/month/week/day/hour of a date or timestamp column to
// a range of the column itself: day(ts) = DATE '2026-11-01' → ts ∈ [2026-11-01, 2026-11-02).
// year(ts) = 2026 (a number, as extract(year from ts) gives) is the year's range. Any
// other transform, or a literal that is not the start of a unit, may match.
func (b *binding) bindTransform(col int, p *pexpr.Pred, op pexpr.Op) *expr {
	unit, ok := pexpr.TruncUnit(p.Transform)
	if !ok {
		return trueExpr
	}
	c := b.cols[col]
	isDate := false
	switch c.typ.(type) {
	case iceberg.DateType:
		isDate = true
		if unit == "hour" {
			return trueExpr
		}
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
	default:
		return trueExpr
	}
	// rng gives [start, end) of the unit named by v, in the column's own value space.
	rng := func(v pexpr.Value) (lo, hi pexpr.Value, ok bool) {
		var start time.Time
		switch {
		case v.Kind == pexpr.KindNumber && unit == "year":
			y, err := strconv.Atoi(v.Text)
			if err != nil || y < 1 || y > 9999 {
				return lo, hi, false
			}
			start = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		case v.Kind == pexpr.KindDate || v.Kind == pexpr.KindTimestamp || v.Kind == pexpr.KindString:
			t, ok := pexpr.ParseTime(v.Text)
			if !ok {
				return lo, hi, false
			}
			start = pexpr.TruncTime(t, unit)
			if !start.Equal(t) {
				return lo, hi, false
			}
		default:
			return lo, hi, false
		}
		end := pexpr.NextTime(start, unit)
		if isDate {
			return pexpr.Value{Kind: pexpr.KindDate, Text: start.Format(time.DateOnly)},
				pexpr.Value{Kind: pexpr.KindDate, Text: end.Format(time.DateOnly)}, true
		}
		const f = "2006-01-02 15:04:05"
		return pexpr.Value{Kind: pexpr.KindTimestamp, Text: start.Format(f)},
			pexpr.Value{Kind: pexpr.KindTimestamp, Text: end.Format(f)}, true
	}
	one := func(o pexpr.Op, v pexpr.Value) *expr {
		lo, hi, ok := rng(v)
		if !ok {
			return trueExpr
		}
		switch o {
		case pexpr.OpEq:
			return combine(true, []*expr{b.cmpLeaf(col, opGE, lo), b.cmpLeaf(col, opLT, hi)})
		case pexpr.OpNotEq:
			return combine(false, []*expr{b.cmpLeaf(col, opLT, lo), b.cmpLeaf(col, opGE, hi)})
		case pexpr.OpLt:
			return b.cmpLeaf(col, opLT, lo)
		case pexpr.OpLtEq:
			return b.cmpLeaf(col, opLT, hi)
		case pexpr.OpGt:
			return b.cmpLeaf(col, opGE, hi)
		case pexpr.OpGtEq:
			return b.cmpLeaf(col, opGE, lo)
		}
		return trueExpr
	}
	switch op {
	case pexpr.OpEq, pexpr.OpNotEq, pexpr.OpLt, pexpr.OpLtEq, pexpr.OpGt, pexpr.OpGtEq:
		if len(p.Values) != 1 {
			return trueExpr
		}
		return one(op, p.Values[0])
	case pexpr.OpBetween:
		if len(p.Values) != 2 {
			return trueExpr
		}
		return combine(true, []*expr{one(pexpr.OpGtEq, p.Values[0]), one(pexpr.OpLtEq, p.Values[1])})
	case pexpr.OpNotBetween:
		if len(p.Values) != 2 {
			return trueExpr
		}
		return combine(false, []*expr{one(pexpr.OpLt, p.Values[0]), one(pexpr.OpGt, p.Values[1])})
	case pexpr.OpIn, pexpr.OpNotIn:
		if len(p.Values) == 0 {
			return trueExpr
		}
		kids := make([]*expr, 0, len(p.Values))
		for _, v := range p.Values {
			if op == pexpr.OpIn {
				kids = append(kids, one(pexpr.OpEq, v))
			} else {
				kids = append(kids, one(pexpr.OpNotEq, v))
			}
		}
		return combine(op == pexpr.OpNotIn, kids)
	}
	return trueExpr
}

// typedValue converts a literal to the column's type: the Iceberg literal (for
// [ToIcebergExpr]) and the order-preserving key replay compares. ok is false when the
// literal cannot be typed exactly (a fraction against an integer column, text against a
// number, a parameter), which makes the leaf "may match".
//
// Number literals against a date column are day numbers, and against a timestamp column
// epoch microseconds (nanoseconds for timestamp_ns): that is how Spark's pushed filters
// print them. Date and timestamp literals without a zone are UTC.
func typedValue(t iceberg.PrimitiveType, v pexpr.Value) (lit iceberg.Literal, u uint64, s string, ok bool) {
	switch v.Kind {
	case pexpr.KindNull, pexpr.KindParam, pexpr.KindUnknown, pexpr.KindInterval:
		return nil, 0, "", false
	}
	switch t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		if v.Kind != pexpr.KindNumber && v.Kind != pexpr.KindString {
			return nil, 0, "", false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v.Text), 10, 64)
		if err != nil {
			return nil, 0, "", false
		}
		if _, is32 := t.(iceberg.Int32Type); is32 {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, 0, "", false
			}
			return iceberg.Int32Literal(int32(n)), intKey(n), "", true
		}
		return iceberg.Int64Literal(n), intKey(n), "", true
	case iceberg.Float32Type, iceberg.Float64Type:
		if v.Kind != pexpr.KindNumber && v.Kind != pexpr.KindString {
			return nil, 0, "", false
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Text), 64)
		if err != nil || math.IsNaN(f) {
			return nil, 0, "", false
		}
		if _, is32 := t.(iceberg.Float32Type); is32 {
			f32 := float32(f)
			if float64(f32) != f {
				return nil, 0, "", false // not representable: comparisons would round
			}
			return iceberg.Float32Literal(f32), floatKey(float64(f32)), "", true
		}
		return iceberg.Float64Literal(f), floatKey(f), "", true
	case iceberg.BooleanType:
		if v.Kind != pexpr.KindBool {
			return nil, 0, "", false
		}
		bv := strings.EqualFold(v.Text, "true")
		if bv {
			return iceberg.BoolLiteral(true), 1, "", true
		}
		return iceberg.BoolLiteral(false), 0, "", true
	case iceberg.StringType:
		if v.Kind != pexpr.KindString {
			return nil, 0, "", false
		}
		return iceberg.StringLiteral(v.Text), 0, v.Text, true
	case iceberg.DateType:
		var days int64
		switch v.Kind {
		case pexpr.KindNumber:
			n, err := strconv.ParseInt(v.Text, 10, 32)
			if err != nil {
				return nil, 0, "", false
			}
			days = n
		case pexpr.KindDate, pexpr.KindString:
			tm, ok := pexpr.ParseDate(v.Text)
			if !ok {
				return nil, 0, "", false
			}
			days = tm.Unix() / 86400
		default:
			return nil, 0, "", false
		}
		return iceberg.DateLiteral(iceberg.Date(int32(days))), intKey(days), "", true
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		nanos := false
		switch t.(type) {
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			nanos = true
		}
		var n int64
		switch v.Kind {
		case pexpr.KindNumber:
			x, err := strconv.ParseInt(v.Text, 10, 64)
			if err != nil {
				return nil, 0, "", false
			}
			n = x
			if nanos {
				if x > math.MaxInt64/1000 || x < math.MinInt64/1000 {
					return nil, 0, "", false
				}
				n = x * 1000
			}
		case pexpr.KindDate, pexpr.KindTimestamp, pexpr.KindString:
			tm, ok := pexpr.ParseTime(v.Text)
			if !ok || nanos && (tm.Year() < 1678 || tm.Year() > 2261) {
				return nil, 0, "", false
			}
			if nanos {
				n = tm.UnixNano()
			} else {
				n = tm.UnixMicro()
				if tm.Nanosecond()%1000 != 0 {
					return nil, 0, "", false
				}
			}
		default:
			return nil, 0, "", false
		}
		if nanos {
			return iceberg.TimestampNsLiteral(iceberg.TimestampNano(n)), intKey(n), "", true
		}
		return iceberg.TimestampLiteral(iceberg.Timestamp(n)), intKey(n), "", true
	}
	return nil, 0, "", false
}

// intKey maps an int64 to a uint64 with the same order.
func intKey(v int64) uint64 { return uint64(v) ^ (1 << 63) }

// floatKey maps a non-NaN float64 to a uint64 with the same order (-0 as +0).
func floatKey(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// literalKey keys a file bound decoded by lake; ok is false for a bound replay cannot use
// (NaN, another type after a schema change), which then counts as absent.
func literalKey(c boundCol, lit iceberg.Literal) (u uint64, s string, ok bool) {
	switch x := lit.(type) {
	case iceberg.Int32Literal:
		return intKey(int64(x)), "", c.kind == kindU64 && isIntType(c.typ)
	case iceberg.Int64Literal:
		return intKey(int64(x)), "", c.kind == kindU64 && isIntType(c.typ)
	case iceberg.Float32Literal:
		if math.IsNaN(float64(x)) {
			return 0, "", false
		}
		return floatKey(float64(x)), "", isFloatType(c.typ)
	case iceberg.Float64Literal:
		if math.IsNaN(float64(x)) {
			return 0, "", false
		}
		return floatKey(float64(x)), "", isFloatType(c.typ)
	case iceberg.BoolLiteral:
		_, isBool := c.typ.(iceberg.BooleanType)
		if x {
			return 1, "", isBool
		}
		return 0, "", isBool
	case iceberg.DateLiteral:
		_, isDate := c.typ.(iceberg.DateType)
		return intKey(int64(x)), "", isDate
	case iceberg.TimestampLiteral:
		switch c.typ.(type) {
		case iceberg.TimestampType, iceberg.TimestampTzType:
			return intKey(int64(x)), "", true
		}
	case iceberg.TimestampNsLiteral:
		switch c.typ.(type) {
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			return intKey(int64(x)), "", true
		}
	case iceberg.StringLiteral:
		return 0, string(x), c.kind == kindStr
	}
	return 0, "", false
}

func isIntType(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		return true
	}
	return false
}

func isFloatType(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		return true
	}
	return false
}
