package extract

import (
	"strconv"
	"strings"

	pexpr "github.com/floe-project/floe/expr"
)

// foldCall evaluates a date function of constants: Spark's date_add(d, n),
// date_sub(d, n) and add_months(d, n), Trino's date_add(unit, n, d),
// Snowflake's DATEADD(unit, n, d) and DuckDB's date_add(d, interval). ok
// is false for anything else.
func (r *resolver) foldCall(e *expr) (pexpr.Value, bool) {
	arg := func(k int) (pexpr.Value, bool) {
		if k >= len(e.args) {
			return pexpr.Value{}, false
		}
		v, ok := r.value(e.args[k])
		if !ok {
			return v, false
		}
		switch v.Kind {
		case pexpr.KindString:
			// '2020-03-01' where a date is expected is that date.
			if t, ok := pexpr.ParseDate(v.Text); ok {
				return pexpr.Value{Kind: pexpr.KindDate, Text: t.Format(pexpr.DateLayout)}, true
			}
			if _, ok := pexpr.ParseTime(v.Text); ok {
				return pexpr.Value{Kind: pexpr.KindTimestamp, Text: v.Text}, true
			}
		case pexpr.KindDate, pexpr.KindTimestamp, pexpr.KindNumber, pexpr.KindInterval:
			return v, true
		}
		return v, false
	}
	count := func(v pexpr.Value) (int, bool) {
		if v.Kind != pexpr.KindNumber {
			return 0, false
		}
		n, err := strconv.Atoi(v.Text)
		return n, err == nil
	}
	add := func(base pexpr.Value, n int, unit string) (pexpr.Value, bool) {
		if base.Kind != pexpr.KindDate && base.Kind != pexpr.KindTimestamp {
			return pexpr.Value{}, false
		}
		return fold(base, "+", pexpr.Value{Kind: pexpr.KindInterval, Text: strconv.Itoa(n) + " " + unit})
	}
	switch e.name {
	case "date_add", "date_sub", "adddate", "subdate", "dateadd", "timestampadd", "timeadd", "add_months":
	default:
		return pexpr.Value{}, false
	}
	sign := 1
	if e.name == "date_sub" || e.name == "subdate" {
		sign = -1
	}
	switch len(e.args) {
	case 2:
		base, ok1 := arg(0)
		v, ok2 := arg(1)
		if !ok1 || !ok2 {
			return pexpr.Value{}, false
		}
		if v.Kind == pexpr.KindInterval {
			op := "+"
			if sign < 0 {
				op = "-"
			}
			return fold(base, op, v)
		}
		n, ok := count(v)
		if !ok {
			return pexpr.Value{}, false
		}
		if e.name == "add_months" {
			return add(base, n, pexpr.UnitMonth)
		}
		return add(base, sign*n, pexpr.UnitDay)
	case 3:
		unit := strings.ToLower(unitOf(e.args[0]))
		if !pexpr.IsUnit(unit) || e.name == "add_months" {
			return pexpr.Value{}, false
		}
		v, ok1 := arg(1)
		base, ok2 := arg(2)
		n, ok3 := count(v)
		if !ok1 || !ok2 || !ok3 {
			return pexpr.Value{}, false
		}
		return add(base, sign*n, pexpr.NormUnit(unit))
	}
	return pexpr.Value{}, false
}

// retype types string literals compared with a date or timestamp column
// of a known type ('2000-02-01' on a DATE column is that date), as the
// engine casts them.
func retype(typ string, vals []pexpr.Value) []pexpr.Value {
	var out []pexpr.Value
	for i, v := range vals {
		nv := pexpr.CastString(typ, v)
		if nv == v {
			continue
		}
		if out == nil {
			out = append([]pexpr.Value(nil), vals...)
		}
		out[i] = nv
	}
	if out == nil {
		return vals
	}
	return out
}
