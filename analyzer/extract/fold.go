package extract

import (
	pexpr "github.com/floe-project/floe/expr"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// fold evaluates constant arithmetic the extractor can do exactly:
// number ± × number (decimal), and date ± interval in days, weeks, months
// or years. ok is false for anything else (the caller keeps the text with
// pexpr.KindUnknown).
func fold(l pexpr.Value, op string, r pexpr.Value) (pexpr.Value, bool) {
	switch {
	case l.Kind == pexpr.KindNumber && r.Kind == pexpr.KindNumber:
		return foldNumber(l.Text, op, r.Text)
	case l.Kind == pexpr.KindDate && r.Kind == pexpr.KindInterval && (op == "+" || op == "-"):
		return foldDate(l.Text, op, r.Text)
	case l.Kind == pexpr.KindInterval && r.Kind == pexpr.KindDate && op == "+":
		return foldDate(r.Text, op, l.Text)
	case l.Kind == pexpr.KindTimestamp && r.Kind == pexpr.KindInterval && (op == "+" || op == "-"):
		return foldTimestamp(l.Text, op, r.Text)
	}
	return pexpr.Value{}, false
}

func foldNumber(a, op, b string) (pexpr.Value, bool) {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return pexpr.Value{}, false
	}
	z := new(big.Rat)
	switch op {
	case "+":
		z.Add(x, y)
	case "-":
		z.Sub(x, y)
	case "*":
		z.Mul(x, y)
	default:
		return pexpr.Value{}, false
	}
	scale := decimals(a)
	if op == "*" {
		scale += decimals(b)
	} else if d := decimals(b); d > scale {
		scale = d
	}
	if scale == 0 && z.IsInt() {
		return pexpr.Value{Kind: pexpr.KindNumber, Text: z.Num().String()}, true
	}
	return pexpr.Value{Kind: pexpr.KindNumber, Text: z.FloatString(scale)}, true
}

func decimals(s string) int {
	if strings.ContainsAny(s, "eE") {
		return 6
	}
	if k := strings.IndexByte(s, '.'); k >= 0 {
		return len(s) - k - 1
	}
	return 0
}

// interval reads an interval's canonical text ("7 day") as a count and
// unit, negated for op "-".
func interval(op, text string) (int, string, bool) {
	f := strings.Fields(text)
	if len(f) != 2 {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, "", false
	}
	if op == "-" {
		n = -n
	}
	return n, f[1], true
}

func foldDate(date, op, iv string) (pexpr.Value, bool) {
	t, err := time.Parse(pexpr.DateLayout, date)
	if err != nil {
		return pexpr.Value{}, false
	}
	n, unit, ok := interval(op, iv)
	if !ok {
		return pexpr.Value{}, false
	}
	switch unit {
	case pexpr.UnitDay, pexpr.UnitWeek, pexpr.UnitMonth, pexpr.UnitQuarter, pexpr.UnitYear:
	default:
		return pexpr.Value{}, false // a date plus hours is a timestamp: left unknown
	}
	if t, ok = pexpr.AddUnits(t, n, unit); !ok {
		return pexpr.Value{}, false
	}
	return pexpr.Value{Kind: pexpr.KindDate, Text: t.Format(pexpr.DateLayout)}, true
}

// timestampLayouts are the literal forms foldTimestamp understands; the
// result keeps the input's layout.
var timestampLayouts = [...]string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02"}

func foldTimestamp(ts, op, iv string) (pexpr.Value, bool) {
	for _, layout := range timestampLayouts {
		t, err := time.Parse(layout, ts)
		if err != nil {
			continue
		}
		n, unit, ok := interval(op, iv)
		if !ok {
			return pexpr.Value{}, false
		}
		switch unit {
		case pexpr.UnitMillisecond, pexpr.UnitMicrosecond:
			return pexpr.Value{}, false
		}
		if t, ok = pexpr.AddUnits(t, n, unit); !ok {
			return pexpr.Value{}, false
		}
		return pexpr.Value{Kind: pexpr.KindTimestamp, Text: t.Format(layout)}, true
	}
	return pexpr.Value{}, false
}
