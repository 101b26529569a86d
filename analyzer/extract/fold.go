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

func foldDate(date, op, interval string) (pexpr.Value, bool) {
	t, err := time.Parse("2006-01-02", date)
	if err != nil {
		return pexpr.Value{}, false
	}
	f := strings.Fields(interval)
	if len(f) != 2 {
		return pexpr.Value{}, false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n > 100000 || n < -100000 {
		return pexpr.Value{}, false
	}
	if op == "-" {
		n = -n
	}
	switch f[1] {
	case "day":
		t = t.AddDate(0, 0, n)
	case "week":
		t = t.AddDate(0, 0, 7*n)
	case "month":
		t = addMonths(t, n)
	case "quarter":
		t = addMonths(t, 3*n)
	case "year":
		t = addMonths(t, 12*n)
	default:
		return pexpr.Value{}, false
	}
	return pexpr.Value{Kind: pexpr.KindDate, Text: t.Format("2006-01-02")}, true
}

// addMonths adds n months and clamps the day to the end of the target
// month, as SQL engines do (2024-01-31 + 1 month = 2024-02-29).
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	if d > last {
		d = last
	}
	return time.Date(first.Year(), first.Month(), d, 0, 0, 0, 0, time.UTC)
}

// timestampLayouts are the literal forms foldTimestamp understands; the
// result keeps the input's layout.
var timestampLayouts = [...]string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02"}

func foldTimestamp(ts, op, interval string) (pexpr.Value, bool) {
	for _, layout := range timestampLayouts {
		t, err := time.Parse(layout, ts)
		if err != nil {
			continue
		}
		f := strings.Fields(interval)
		if len(f) != 2 {
			return pexpr.Value{}, false
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n > 100000 || n < -100000 {
			return pexpr.Value{}, false
		}
		if op == "-" {
			n = -n
		}
		var d time.Duration
		switch f[1] {
		case "second":
			d = time.Duration(n) * time.Second
		case "minute":
			d = time.Duration(n) * time.Minute
		case "hour":
			d = time.Duration(n) * time.Hour
		case "day":
			t = t.AddDate(0, 0, n)
		case "week":
			t = t.AddDate(0, 0, 7*n)
		case "month", "quarter", "year":
			v, ok := foldDate(t.Format("2006-01-02"), "+", f[0]+" "+f[1])
			if !ok {
				return pexpr.Value{}, false
			}
			if op == "-" {
				v, ok = foldDate(t.Format("2006-01-02"), "-", f[0]+" "+f[1])
				if !ok {
					return pexpr.Value{}, false
				}
			}
			day, err := time.Parse("2006-01-02", v.Text)
			if err != nil {
				return pexpr.Value{}, false
			}
			t = time.Date(day.Year(), day.Month(), day.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		default:
			return pexpr.Value{}, false
		}
		t = t.Add(d)
		return pexpr.Value{Kind: pexpr.KindTimestamp, Text: t.Format(layout)}, true
	}
	return pexpr.Value{}, false
}
