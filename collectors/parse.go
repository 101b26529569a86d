package collectors

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/floe-project/floe/expr"
)

// ParseTime parses the timestamp forms found in query logs and returns it
// in UTC: RFC 3339 / ISO-8601 ("2024-05-01T12:51:33.512Z"), SQL-style text
// with an offset ("2024-05-01 12:51:30.123456+00", "… -0700", "… UTC"),
// text without a zone (taken as UTC) and decimal epoch seconds
// ("1714567890.123000000").
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("parse time: empty")
	}
	if c := s[0]; c >= '0' && c <= '9' && !strings.ContainsAny(s, "-:T ") {
		return EpochSeconds(s)
	}
	if t, ok := expr.ParseTime(s); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("parse time %q: unknown layout", s)
}

// EpochSeconds parses decimal epoch seconds ("1714567890.123000000"),
// exactly to the nanosecond, as Jackson writes java.time.Instant.
func EpochSeconds(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse epoch seconds %q: %w", s, err)
	}
	var ns int64
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		f, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || f < 0 {
			return time.Time{}, fmt.Errorf("parse epoch seconds %q: bad fraction", s)
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	if n < -1e11 || n > 1e11 {
		return time.Time{}, fmt.Errorf("parse epoch seconds %q: out of range", s)
	}
	return time.Unix(n, ns).UTC(), nil
}

// EpochMillis converts epoch milliseconds to a UTC time.
func EpochMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// ParseDuration parses the duration forms of query logs: decimal seconds
// ("3.377000000", as Jackson writes java.time.Duration), airlift strings
// ("3.38s", "1.20m", "150.00ms", "2.00d", "10us") and ISO-8601 ("PT1M3.5S").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("parse duration: empty")
	}
	if s[0] == 'P' || s[0] == 'p' || (len(s) > 1 && s[0] == '-' && (s[1] == 'P' || s[1] == 'p')) {
		return isoDuration(s)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return secondsDuration(f)
	}
	if num, ok := strings.CutSuffix(s, "d"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil {
			return 0, fmt.Errorf("parse duration %q: %w", s, err)
		}
		return secondsDuration(f * 86400)
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		return 0, fmt.Errorf("parse duration %q: %w", s, err)
	}
	return d, nil
}

func secondsDuration(f float64) (time.Duration, error) {
	if f != f || f > 9e9 || f < -9e9 {
		return 0, fmt.Errorf("parse duration: %v seconds out of range", f)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// isoDuration parses PnDTnHnMn.nS (java.time.Duration.toString).
func isoDuration(s string) (time.Duration, error) {
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	rest := strings.ToUpper(s[1:])
	var total float64
	inTime := false
	num := ""
	for _, r := range rest {
		switch {
		case r == 'T':
			inTime = true
		case r == '-' || r == '.' || unicode.IsDigit(r):
			num += string(r)
		default:
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("parse duration %q: %w", s, err)
			}
			num = ""
			switch {
			case r == 'D' && !inTime:
				total += f * 86400
			case r == 'H' && inTime:
				total += f * 3600
			case r == 'M' && inTime:
				total += f * 60
			case r == 'S' && inTime:
				total += f
			default:
				return 0, fmt.Errorf("parse duration %q: unexpected %q", s, r)
			}
		}
	}
	if num != "" {
		return 0, fmt.Errorf("parse duration %q: trailing number", s)
	}
	if neg {
		total = -total
	}
	return secondsDuration(total)
}

// HasPlaceholder reports whether sql has a bind parameter — ? (JDBC,
// Trino, Athena, DuckDB) or $n (DuckDB, PostgreSQL style) — outside string
// literals, quoted identifiers ("…", `…`) and comments (-- and /* */), so
// that a logged prepared statement is marked as a template. Snowflake's
// dialect binds :name and quotes with $$, so collectors/snowflake keeps a
// reader of its own (hasBind).
func HasPlaceholder(sql string) bool {
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '?':
			return true
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			return true
		case c == '\'' || c == '"' || c == '`':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return false
			}
			i += j
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += j + 3
		}
	}
	return false
}
