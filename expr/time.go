package expr

import (
	"strings"
	"time"
)

// The date/time units: the singular lower-case names [NormUnit] returns,
// that intervals carry ("7 day") and that truncating transforms are named
// by ([Pred.Transform] "month" for date_trunc('month', ts)).
const (
	UnitYear        = "year"
	UnitQuarter     = "quarter"
	UnitMonth       = "month"
	UnitWeek        = "week"
	UnitDay         = "day"
	UnitHour        = "hour"
	UnitMinute      = "minute"
	UnitSecond      = "second"
	UnitMillisecond = "millisecond"
	UnitMicrosecond = "microsecond"
)

// unitSpellings maps the spellings engines accept for a unit (Snowflake's
// abbreviations, plurals; lower case) to the unit.
var unitSpellings = map[string]string{
	"y": UnitYear, "yy": UnitYear, "yyy": UnitYear, "yyyy": UnitYear, "yr": UnitYear, "yrs": UnitYear,
	"year": UnitYear, "years": UnitYear,
	"q": UnitQuarter, "qtr": UnitQuarter, "qtrs": UnitQuarter, "quarter": UnitQuarter, "quarters": UnitQuarter,
	"mm": UnitMonth, "mon": UnitMonth, "mons": UnitMonth, "month": UnitMonth, "months": UnitMonth,
	"w": UnitWeek, "wk": UnitWeek, "weekofyear": UnitWeek, "woy": UnitWeek, "wy": UnitWeek, "week": UnitWeek,
	"weeks": UnitWeek,
	"d":     UnitDay, "dd": UnitDay, "dayofmonth": UnitDay, "day": UnitDay, "days": UnitDay,
	"h": UnitHour, "hh": UnitHour, "hr": UnitHour, "hrs": UnitHour, "hour": UnitHour, "hours": UnitHour,
	"m": UnitMinute, "mi": UnitMinute, "min": UnitMinute, "mins": UnitMinute, "minute": UnitMinute,
	"minutes": UnitMinute,
	"s":       UnitSecond, "sec": UnitSecond, "secs": UnitSecond, "second": UnitSecond, "seconds": UnitSecond,
	"ms": UnitMillisecond, "msec": UnitMillisecond, "millisecond": UnitMillisecond, "milliseconds": UnitMillisecond,
	"us": UnitMicrosecond, "usec": UnitMicrosecond, "microsecond": UnitMicrosecond, "microseconds": UnitMicrosecond,
}

// NormUnit maps a date/time unit spelling ('days', QTR, "wk") to its unit
// name; text that is no unit comes back lower-cased with quotes and spaces
// trimmed.
func NormUnit(s string) string {
	s = strings.ToLower(strings.Trim(s, "'\" "))
	if u, ok := unitSpellings[s]; ok {
		return u
	}
	return s
}

// IsUnit reports whether s spells a date/time unit.
func IsUnit(s string) bool {
	_, ok := unitSpellings[strings.ToLower(strings.Trim(s, "'\" "))]
	return ok
}

// truncUnits are the units a transform can truncate a date or timestamp to.
var truncUnits = map[string]bool{UnitYear: true, UnitQuarter: true, UnitMonth: true, UnitWeek: true, UnitDay: true, UnitHour: true}

// TruncUnit returns the unit a transform truncates a date or timestamp to:
// the extractor's names (year, quarter, month, week, day, hour) and
// Iceberg's and Spark's plural partition transforms (days, hours). ok is
// false for any other transform.
func TruncUnit(transform string) (unit string, ok bool) {
	tr := strings.ToLower(strings.TrimSpace(transform))
	if truncUnits[tr] {
		return tr, true
	}
	if u := strings.TrimSuffix(tr, "s"); truncUnits[u] {
		return u, true
	}
	return "", false
}

// TruncTime returns the start of the unit that holds t, in UTC: ISO weeks
// start on Monday. A unit TruncUnit does not know leaves t as it is.
func TruncTime(t time.Time, unit string) time.Time {
	t = t.UTC()
	switch unit {
	case UnitYear:
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case UnitQuarter:
		return time.Date(t.Year(), (t.Month()-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC)
	case UnitMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case UnitWeek:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case UnitDay:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case UnitHour:
		return t.Truncate(time.Hour)
	}
	return t
}

// NextTime returns the start of the unit after the one that starts at t.
func NextTime(t time.Time, unit string) time.Time {
	next, ok := AddUnits(t, 1, unit)
	if !ok {
		return t
	}
	return next
}

// maxUnits bounds the count AddUnits accepts, so a garbage interval
// cannot overflow a date.
const maxUnits = 100000

// AddUnits adds n units to t as SQL engines do: months, quarters and years
// clamp the day to the end of the target month (2024-01-31 + 1 month =
// 2024-02-29) and keep the time of day. ok is false for an unknown unit or
// |n| > 100000.
func AddUnits(t time.Time, n int, unit string) (time.Time, bool) {
	if n > maxUnits || n < -maxUnits {
		return t, false
	}
	switch unit {
	case UnitYear:
		return addMonths(t, 12*n), true
	case UnitQuarter:
		return addMonths(t, 3*n), true
	case UnitMonth:
		return addMonths(t, n), true
	case UnitWeek:
		return t.AddDate(0, 0, 7*n), true
	case UnitDay:
		return t.AddDate(0, 0, n), true
	case UnitHour:
		return t.Add(time.Duration(n) * time.Hour), true
	case UnitMinute:
		return t.Add(time.Duration(n) * time.Minute), true
	case UnitSecond:
		return t.Add(time.Duration(n) * time.Second), true
	case UnitMillisecond:
		return t.Add(time.Duration(n) * time.Millisecond), true
	case UnitMicrosecond:
		return t.Add(time.Duration(n) * time.Microsecond), true
	}
	return t, false
}

func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m, 1, 0, 0, 0, 0, t.Location()).AddDate(0, n, 0)
	if last := first.AddDate(0, 1, -1).Day(); d > last {
		d = last
	}
	return time.Date(first.Year(), first.Month(), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// DateLayout is the canonical text of a date value (Value.Text of KindDate).
const DateLayout = time.DateOnly

// ParseDate reads a date literal: YYYY-MM-DD, month and day also without
// the leading zero (2002-2-1, as engines accept in CAST).
func ParseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(DateLayout, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-1-2", s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// timeLayouts are the date and timestamp literal forms SQL and engine logs
// write, the extractor's canonical form ("2006-01-02 15:04:05.999999999")
// first after the date.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999 Z07:00",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
}

// ParseTime reads a date or timestamp literal (with or without a zone
// or offset; one without is UTC) and returns it in UTC. Epoch numbers are
// not dates: text without a '-' is refused.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := ParseDate(s); ok {
		return t, true
	}
	if !strings.Contains(s, "-") {
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// CastString returns string literal v as a column of type typ (an SQL or
// Iceberg type name: date, timestamp, timestamptz, datetime…) reads it:
// '2024-04-01' on a date column is the date 2024-04-01, on a timestamp
// column its midnight. Other values, and strings that are no date or
// timestamp, are returned as they are.
func CastString(typ string, v Value) Value {
	if v.Kind != KindString {
		return v
	}
	typ = strings.ToLower(strings.TrimSpace(typ))
	text := strings.TrimSpace(v.Text)
	switch {
	case typ == "date":
		if t, ok := ParseDate(text); ok {
			return Value{Kind: KindDate, Text: t.Format(DateLayout)}
		}
	case strings.HasPrefix(typ, "timestamp") || typ == "datetime":
		if t, ok := ParseDate(text); ok {
			return Value{Kind: KindTimestamp, Text: t.Format(DateLayout) + " 00:00:00"}
		}
		if _, ok := ParseTime(text); ok {
			return Value{Kind: KindTimestamp, Text: text}
		}
	}
	return v
}
