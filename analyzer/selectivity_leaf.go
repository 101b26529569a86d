package analyzer

import (
	"github.com/floe-project/floe/expr"
	"strings"
	"time"
)

// Benefit of a predicate leaf by operator: how much a layout clustered on
// the column can help a query skip files, before selectivity. Equality and
// narrow ranges help most; predicates min/max statistics cannot use help
// nothing.
const (
	BenefitEq         = 1.0 // =, like without wildcard, transform(c) = x
	BenefitIn         = 0.9 // in (k values)
	BenefitRange      = 0.8 // <, <=, >, >=, between
	BenefitLikePrefix = 0.7 // like 'abc%', starts-with
	BenefitIsNull     = 0.5 // is null: prunes files with no nulls
	BenefitUnknownOp  = 0.5 // a filter column known without its predicate (access history)
	// BenefitSubstr scales predicates on substr/left(c, …): a layout on c
	// clusters them, but few engines turn them into file pruning.
	BenefitSubstr = 0.5
)

// leafKind is what a predicate leaf asks of the column.
type leafKind int

const (
	kindEq      leafKind = iota // = / in: vals known, unknown more
	kindRange                   // ranges: ivs known, unknown more
	kindNull                    // is null
	kindNotNull                 // is not null
	kindNotEq                   // != / not in
	kindNone                    // helps nothing: leading-wildcard like, rlike, not like, functions
	kindUnknown                 // a filter column without its predicate
)

// leaf is one predicate leaf interpreted against its column.
type leaf struct {
	column  string // as written, or canonical when the column is known
	ops     []string
	kind    leafKind
	benefit float64
	vals    []float64
	ivs     []interval
	unknown int  // values / ranges whose literal is unknown
	between bool // unknown ranges are closed
	// mergeable: a bare range with one known interval, which an AND may
	// intersect with other ranges on the same column.
	mergeable bool
}

// negate returns the operator of NOT (c op x).
func negate(op expr.Op) expr.Op {
	n, _ := expr.Negate(op)
	return n
}

// makeLeaf interprets p (negated when neg) against column c (nil when the
// table has no such column or no statistics).
func (s *Stats) makeLeaf(p *expr.Pred, neg bool) leaf {
	op := p.Op
	if neg {
		op = negate(op)
	}
	c := s.column(p.Column)
	cls := clsOther
	l := leaf{column: p.Column}
	if c != nil {
		cls = c.cls
		l.column = c.name
	}
	tr := strings.ToLower(strings.TrimSpace(p.Transform))
	unit, isTrunc := expr.TruncUnit(tr)
	if isTrunc {
		tr = unit // Spark's and Iceberg's plural names: days(ts), hours(ts)
	}
	label := string(op)
	factor := 1.0
	switch {
	case tr == "" || tr == "cast":
	case isTrunc && (cls == clsTS || cls == clsDate):
		l.ops = []string{tr + " " + label}
		return truncLeaf(l, op, tr, p.Values, cls)
	case tr == "substr" || tr == "left":
		factor = BenefitSubstr
		cls = clsOther // the literal is a piece of the value: use typical estimates
		label = tr + " " + label
	default:
		l.ops = []string{tr + " " + label}
		l.kind = kindNone
		return l
	}
	l.ops = []string{label}
	switch op {
	case expr.OpEq, expr.OpIn:
		l.kind, l.benefit = kindEq, BenefitEq
		if op == expr.OpIn {
			l.benefit = BenefitIn
		}
		for _, v := range p.Values {
			if x, ok := valueNumber(v, cls); ok {
				l.vals = append(l.vals, x)
			} else {
				l.unknown++
			}
		}
		if len(p.Values) == 0 {
			l.unknown = 1
		}
	case expr.OpLt, expr.OpLtEq, expr.OpGt, expr.OpGtEq, expr.OpBetween:
		l.kind, l.benefit = kindRange, BenefitRange
		l.between = op == expr.OpBetween
		iv, ok := rangeOf(op, p.Values, cls)
		if ok {
			l.ivs = []interval{iv}
			l.mergeable = factor == 1
		} else {
			l.unknown = 1
		}
	case expr.OpLike:
		l = likeLeaf(l, p.Values, cls)
	case expr.OpIsNull:
		l.kind, l.benefit = kindNull, BenefitIsNull
	case expr.OpIsNotNull:
		l.kind = kindNotNull
	case expr.OpNotEq, expr.OpNotIn:
		l.kind = kindNotEq
		for _, v := range p.Values {
			if x, ok := valueNumber(v, cls); ok {
				l.vals = append(l.vals, x)
			} else {
				l.unknown++
			}
		}
	default: // not between, not like, ilike, rlike and their negations
		l.kind = kindNone
	}
	l.benefit *= factor
	return l
}

// rangeOf reads the interval of a bare range predicate.
func rangeOf(op expr.Op, vals []expr.Value, cls class) (interval, bool) {
	var iv interval
	if len(vals) == 0 {
		return iv, false
	}
	x, ok := valueNumber(vals[0], cls)
	if !ok {
		return iv, false
	}
	switch op {
	case expr.OpLt, expr.OpLtEq:
		iv = interval{hi: x, hiSet: true, hiIncl: op == expr.OpLtEq}
	case expr.OpGt, expr.OpGtEq:
		iv = interval{lo: x, loSet: true, loIncl: op == expr.OpGtEq}
	case expr.OpBetween:
		if len(vals) < 2 {
			return iv, false
		}
		y, ok := valueNumber(vals[1], cls)
		if !ok {
			return iv, false
		}
		iv = interval{lo: x, hi: y, loSet: true, hiSet: true, loIncl: true, hiIncl: true}
	}
	return iv, true
}

// likeLeaf interprets c like 'pattern': a leading wildcard helps nothing,
// a prefix is a range of strings, no wildcard is an equality. An unknown
// pattern (a masked scan-report starts-with) is taken as a prefix.
func likeLeaf(l leaf, vals []expr.Value, cls class) leaf {
	if len(vals) == 0 || vals[0].Kind == expr.KindParam || vals[0].Kind == expr.KindUnknown {
		l.kind, l.benefit, l.unknown, l.between = kindRange, BenefitLikePrefix, 1, true
		l.ops = []string{"like-prefix"}
		return l
	}
	pat := vals[0].Text
	cut := strings.IndexAny(pat, "%_")
	switch {
	case cut == 0:
		l.kind = kindNone
		l.ops = []string{"like"} // leading wildcard
	case cut < 0:
		l.kind, l.benefit = kindEq, BenefitEq
		l.ops = []string{"="}
		if cls == clsString {
			l.vals = []float64{stringKey([]byte(pat))}
		} else {
			l.unknown = 1
		}
	default:
		l.kind, l.benefit, l.between = kindRange, BenefitLikePrefix, true
		l.ops = []string{"like-prefix"}
		if cls == clsString {
			prefix := pat[:cut]
			hi := prefix + strings.Repeat("\xff", 8)
			l.ivs = []interval{{lo: stringKey([]byte(prefix)), hi: stringKey([]byte(hi)), loSet: true, hiSet: true, loIncl: true, hiIncl: true}}
		} else {
			l.unknown = 1
		}
	}
	return l
}

// truncLeaf interprets unit(c) op x on a date or timestamp column c as a
// range of c: day(ts) = '2026-11-01' is ts in [2026-11-01, 2026-11-02).
func truncLeaf(l leaf, op expr.Op, unit string, vals []expr.Value, cls class) leaf {
	switch op {
	case expr.OpEq, expr.OpIn:
		l.kind, l.benefit = kindRange, BenefitEq
		if op == expr.OpIn {
			l.benefit = BenefitIn
		}
		for _, v := range vals {
			t, ok := truncValue(v, unit)
			if !ok {
				l.unknown++
				continue
			}
			u := expr.TruncTime(t, unit)
			l.ivs = append(l.ivs, interval{lo: timeNumber(u, cls), hi: timeNumber(expr.NextTime(u, unit), cls), loSet: true, hiSet: true, loIncl: true})
		}
		if len(vals) == 0 {
			l.unknown = 1
		}
		l.mergeable = op == expr.OpEq && len(l.ivs) == 1
		return l
	case expr.OpLt, expr.OpLtEq, expr.OpGt, expr.OpGtEq, expr.OpBetween:
		l.kind, l.benefit = kindRange, BenefitRange
		l.between = op == expr.OpBetween
		iv, ok := truncRange(op, vals, unit, cls)
		if !ok {
			l.unknown = 1
			return l
		}
		l.ivs, l.mergeable = []interval{iv}, true
		return l
	case expr.OpIsNull:
		l.kind, l.benefit = kindNull, BenefitIsNull
	case expr.OpIsNotNull:
		l.kind = kindNotNull
	default:
		l.kind = kindNone
	}
	return l
}

// truncRange maps unit(c) op x to an interval of c: with u the start of
// x's unit and x aligned when x == u, unit(c) < x is c < x (aligned) or
// c < next(u); unit(c) <= x is c < next(u); > x is c >= next(u); >= x is
// c >= x (aligned) or c >= next(u).
func truncRange(op expr.Op, vals []expr.Value, unit string, cls class) (interval, bool) {
	bound := func(v expr.Value, upper, incl bool) (float64, bool) {
		t, ok := truncValue(v, unit)
		if !ok {
			return 0, false
		}
		u := expr.TruncTime(t, unit)
		aligned := u.Equal(t)
		if (upper && !incl && aligned) || (!upper && incl && aligned) {
			return timeNumber(u, cls), true
		}
		return timeNumber(expr.NextTime(u, unit), cls), true
	}
	if len(vals) == 0 {
		return interval{}, false
	}
	switch op {
	case expr.OpLt, expr.OpLtEq:
		x, ok := bound(vals[0], true, op == expr.OpLtEq)
		return interval{hi: x, hiSet: true}, ok
	case expr.OpGt, expr.OpGtEq:
		x, ok := bound(vals[0], false, op == expr.OpGtEq)
		return interval{lo: x, loSet: true, loIncl: true}, ok
	case expr.OpBetween:
		if len(vals) < 2 {
			return interval{}, false
		}
		lo, ok1 := bound(vals[0], false, true)
		hi, ok2 := bound(vals[1], true, true)
		return interval{lo: lo, hi: hi, loSet: true, hiSet: true, loIncl: true}, ok1 && ok2
	}
	return interval{}, false
}

// truncValue reads the literal of a truncation predicate: a date or
// timestamp, or a year number for year(c).
func truncValue(v expr.Value, unit string) (time.Time, bool) {
	if t, ok := parseTimeValue(v); ok {
		return t, true
	}
	if unit == "year" && v.Kind == expr.KindNumber {
		if y, ok := valueNumber(v, clsInt); ok && y >= 1 && y <= 9999 && y == float64(int(y)) {
			return time.Date(int(y), 1, 1, 0, 0, 0, 0, time.UTC), true
		}
	}
	return time.Time{}, false
}

// timeNumber is t on the number line of a date (days) or timestamp
// (microseconds) column.
func timeNumber(t time.Time, cls class) float64 {
	if cls == clsDate {
		return float64(t.Unix() / 86400)
	}
	return float64(t.UnixMicro())
}

// estimate is the fraction of rows l keeps, and whether the table's
// statistics answered (false: a default or typical value was used).
func (s *Stats) estimate(l *leaf) (float64, bool) {
	return s.estimateWith(l, -1)
}

// estimateWith is estimate with typicalRange, when not negative, standing
// in for a range whose literal is unknown.
func (s *Stats) estimateWith(l *leaf, typicalRange float64) (float64, bool) {
	c := s.column(l.column)
	switch l.kind {
	case kindEq, kindNotEq:
		var sel float64
		known := l.unknown == 0
		for _, v := range l.vals {
			f, ok := c.eqFraction(v, s.rows)
			if !ok {
				f, known = c.typicalEq(), false
			}
			sel += f
		}
		sel += float64(l.unknown) * c.typicalEq()
		if l.kind == kindNotEq {
			return clamp01(1 - sel), known
		}
		return clamp01(sel), known
	case kindRange:
		var sel float64
		known := l.unknown == 0
		for _, iv := range l.ivs {
			f, ok := c.rangeFraction(iv, s.rows)
			if !ok {
				f, known = defaultRange(iv.closed()), false
			}
			sel += f
		}
		unknownRange := defaultRange(l.between)
		if typicalRange >= 0 {
			unknownRange = typicalRange
		}
		sel += float64(l.unknown) * unknownRange
		return clamp01(sel), known
	case kindNull:
		return c.nullFraction()
	case kindNotNull:
		f, ok := c.nullFraction()
		return 1 - f, ok
	case kindUnknown:
		if c != nil && (c.cls == clsTS || c.cls == clsFloat || c.cls == clsTime) {
			return DefaultRangeSelectivity, false
		}
		return c.typicalEq(), false
	}
	return 1, true
}

func defaultRange(closed bool) float64 {
	if closed {
		return DefaultBetweenSelectivity
	}
	return DefaultRangeSelectivity
}

// Selectivity estimates the fraction of the table's rows that predicate
// leaf p keeps, from the table's file statistics. fromStats is false when
// a default or the column's typical value stood in: an unknown column, a
// masked or parameter literal, a column without bounds, or an operator
// statistics cannot estimate.
//
//   - c = x: over the files whose bounds contain x, non-null records over
//     the file's NDV (distinct counts when the file has them, else the
//     bounds' width for integers and dates capped by the records, every
//     value distinct for floats and timestamps, [DefaultStringNDV] for
//     strings); in (x1…xk) sums k equalities.
//   - ranges and between: for each file, its non-null records times the
//     fraction of [lower, upper] the range covers (values spread evenly in
//     a file: a piecewise-uniform distribution).
//   - like 'p%': the range of strings starting with p; like 'p' is an
//     equality; like '%p' keeps everything.
//   - is null: null counts over records; is not null: the rest.
//   - day / month / year / hour / week / quarter (c) compared with a date
//     or timestamp: the range of c that the truncation covers.
//   - An unknown literal: the column's typical equality (non-null fraction
//     over its NDV) or [DefaultRangeSelectivity] / [DefaultBetweenSelectivity].
//
// Files without bounds for the column are assumed to behave like the
// files with bounds.
func (s *Stats) Selectivity(p expr.Pred) (fraction float64, fromStats bool) {
	l := s.makeLeaf(&p, false)
	return s.estimate(&l)
}
