package expr_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/expr"
)

// One unit table for the parser, the ranking and the replay; the replay's
// copy knew only year, month, day and hour, and not the plural transforms.
func TestTruncUnit(t *testing.T) {
	for _, tc := range []struct {
		transform, unit string
		ok              bool
	}{
		{"year", "year", true}, {"quarter", "quarter", true}, {"month", "month", true}, {"week", "week", true},
		{"day", "day", true}, {"hour", "hour", true}, {"days", "day", true}, {"Hours", "hour", true},
		{"months", "month", true}, {"minute", "", false}, {"cast", "", false}, {"substr", "", false}, {"", "", false},
	} {
		u, ok := expr.TruncUnit(tc.transform)
		require.Equal(t, tc.ok, ok, tc.transform)
		require.Equal(t, tc.unit, u, tc.transform)
	}
}

func TestNormUnit(t *testing.T) {
	for in, want := range map[string]string{
		"QTR": "quarter", "quarters": "quarter", "'wk'": "week", "weekofyear": "week", "days": "day", "dd": "day",
		"mm": "month", "mi": "minute", "m": "minute", "yyyy": "year", "ms": "millisecond", "us": "microsecond",
		"fortnight": "fortnight", " Decade ": "decade",
	} {
		require.Equal(t, want, expr.NormUnit(in), in)
	}
	require.True(t, expr.IsUnit("Quarters"))
	require.False(t, expr.IsUnit("fortnight"))
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestTruncAndNextTime(t *testing.T) {
	ts := time.Date(2024, 5, 16, 13, 45, 0, 0, time.UTC) // a Thursday
	for _, tc := range []struct {
		unit        string
		start, next time.Time
	}{
		{"year", date("2024-01-01"), date("2025-01-01")},
		{"quarter", date("2024-04-01"), date("2024-07-01")},
		{"month", date("2024-05-01"), date("2024-06-01")},
		{"week", date("2024-05-13"), date("2024-05-20")},
		{"day", date("2024-05-16"), date("2024-05-17")},
		{"hour", time.Date(2024, 5, 16, 13, 0, 0, 0, time.UTC), time.Date(2024, 5, 16, 14, 0, 0, 0, time.UTC)},
	} {
		start := expr.TruncTime(ts, tc.unit)
		require.Equal(t, tc.start, start, tc.unit)
		require.Equal(t, tc.next, expr.NextTime(start, tc.unit), tc.unit)
	}
}

func TestAddUnits(t *testing.T) {
	for _, tc := range []struct {
		from  string
		n     int
		unit  string
		want  string
		valid bool
	}{
		{"2024-01-31", 1, "month", "2024-02-29", true},
		{"2024-05-31", -1, "quarter", "2024-02-29", true},
		{"2024-02-29", 1, "year", "2025-02-28", true},
		{"2024-03-01", -30, "day", "2024-01-31", true},
		{"2024-03-01", 2, "week", "2024-03-15", true},
		{"2024-03-01", 1, "fortnight", "2024-03-01", false},
		{"2024-03-01", 200000, "day", "2024-03-01", false},
	} {
		got, ok := expr.AddUnits(date(tc.from), tc.n, tc.unit)
		require.Equal(t, tc.valid, ok, tc)
		require.Equal(t, tc.want, got.Format(time.DateOnly), tc)
	}
	got, ok := expr.AddUnits(time.Date(2024, 1, 31, 10, 30, 0, 0, time.UTC), 1, "month")
	require.True(t, ok)
	require.Equal(t, time.Date(2024, 2, 29, 10, 30, 0, 0, time.UTC), got, "months keep the time of day")
}

// One literal reader for the ranking and the replay; the replay's copy
// refused offsets like "+00", the ranking's refused minute precision.
func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2024-05-01":                    date("2024-05-01"),
		"2002-2-1":                      date("2002-02-01"),
		"2024-05-01 12:30:00":           time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		"2024-05-01 12:30":              time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		"2024-05-01T12:30":              time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		"2024-05-01T12:30:00.5Z":        time.Date(2024, 5, 1, 12, 30, 0, 5e8, time.UTC),
		"2024-05-01 12:30:00.123456+00": time.Date(2024, 5, 1, 12, 30, 0, 123456000, time.UTC),
		"2024-05-01 14:30:00 +0200":     time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		" 2024-05-01 12:30:00 UTC ":     time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
	} {
		got, ok := expr.ParseTime(in)
		require.True(t, ok, in)
		require.True(t, want.Equal(got), "%s: %s", in, got)
	}
	for _, in := range []string{"", "1714567890", "yesterday", "2024-13-01", "05/01/2024"} {
		_, ok := expr.ParseTime(in)
		require.False(t, ok, in)
	}
}
