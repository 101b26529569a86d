package collectors_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2024, 5, 1, 12, 51, 30, 123000000, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"2024-05-01T12:51:30.123Z", want, false},
		{"2024-05-01T14:51:30.123+02:00", want, false},
		{"1714567890.123000000", want, false},
		{"1714567890.123", want, false},
		{"2024-05-01 12:51:30.123+00", want, false},
		{"2024-05-01 05:51:30.123 -0700", want, false},
		{"2024-05-01 12:51:30.123 UTC", want, false},
		{"2024-05-01 12:51:30.123", want, false},
		{"1714567890", want.Truncate(time.Second), false},
		{"yesterday", time.Time{}, true},
		{"", time.Time{}, true},
		{"99999999999999999999", time.Time{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := collectors.ParseTime(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, time.UTC, got.Location())
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"3.377000000", 3377 * time.Millisecond, false},
		{"3.38s", 3380 * time.Millisecond, false},
		{"150.00ms", 150 * time.Millisecond, false},
		{"1.50m", 90 * time.Second, false},
		{"2.00d", 48 * time.Hour, false},
		{"PT1M3.5S", 63500 * time.Millisecond, false},
		{"P1DT1H", 25 * time.Hour, false},
		{"PT", 0, false},
		{"1x", 0, true},
		{"PT1Q", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := collectors.ParseDuration(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300<<10)
	lr := collectors.NewLineReader(strings.NewReader("a\r\n" + long + "\n\nlast"))
	var got []string
	for {
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, len(got)+1, n)
		got = append(got, string(line))
	}
	require.Equal(t, []string{"a", long, "", "last"}, got)
}

func TestReadJSONRecords(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		recs    []string
		lines   []int
		indexes []int
		bad     int
	}{
		{"ndjson", "{\"a\":1}\n\n{\"a\":2}\n", []string{`{"a":1}`, `{"a":2}`}, []int{1, 3}, []int{0, 0}, 0},
		{"array", " [ {\"a\":1}, {\"a\":2} ]", []string{`{"a":1}`, `{"a":2}`}, []int{1, 1}, []int{1, 2}, 0},
		{"pretty array", "[\n  {\"a\":1},\n  {\n    \"a\":2\n  }\n]\n", []string{`{"a":1}`, "{\n    \"a\":2\n  }"}, []int{2, 3}, []int{1, 2}, 0},
		{"pretty stream", "{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}\n", []string{"{\n  \"a\": 1\n}", "{\n  \"a\": 2\n}"}, []int{1, 4}, []int{1, 2}, 0},
		{"broken array", "[{\"a\":1}, {\"a\":", []string{`{"a":1}`}, []int{1}, []int{1}, 1},
		{"two arrays", "[{\"a\":1}]\n[{\"a\":2},\n{\"a\":3}]\n", []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, []int{1, 2, 2}, []int{1, 2, 3}, 0},
		{"array after documents", "{\n\"a\":1}\n[{\"a\":2}]", []string{"{\n\"a\":1}", `{"a":2}`}, []int{1, 3}, []int{1, 2}, 0},
		{"byte order mark", "\ufeff{\"a\":1}\n", []string{`{"a":1}`}, []int{1}, []int{0}, 0},
		{"byte order mark, pretty", "\ufeff{\n\"a\":1}\n", []string{"{\n\"a\":1}"}, []int{1}, []int{1}, 0},
		{"empty", "  \n", nil, nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var recs []string
			var lines, idx []int
			bad := 0
			err := collectors.ReadJSONRecords(t.Context(), "f", strings.NewReader(tc.in), func(rec []byte, pos collectors.BadRecord) error {
				recs = append(recs, string(bytes.TrimSpace(rec)))
				lines = append(lines, pos.Line)
				idx = append(idx, pos.Index)
				require.Equal(t, "f", pos.File)
				return nil
			}, func(collectors.BadRecord) error {
				bad++
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, tc.recs, recs)
			require.Equal(t, tc.lines, lines)
			require.Equal(t, tc.indexes, idx)
			require.Equal(t, tc.bad, bad)
		})
	}

	t.Run("bad record at its line", func(t *testing.T) {
		var got []collectors.BadRecord
		err := collectors.ReadJSONRecords(t.Context(), "f.json", strings.NewReader("{\n  \"a\": 1\n}\n{\n  \"a\": 2,\n  \"b\" 3\n}\n"),
			func([]byte, collectors.BadRecord) error { return nil },
			func(b collectors.BadRecord) error { got = append(got, b); return nil })
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, 6, got[0].Line)
		require.True(t, strings.HasPrefix(got[0].Error(), "f.json:6: invalid JSON"), got[0].Error())
	})
}

func TestJSONLine(t *testing.T) {
	data := []byte("{\n  \"a\": 1,\n  \"b\" 2\n}")
	var v any
	err := json.Unmarshal(data, &v)
	require.Error(t, err)
	require.Equal(t, 3, collectors.JSONLine(data, err))
	require.Equal(t, 1, collectors.JSONLine(data, errors.New("other")))
}

func TestStableID(t *testing.T) {
	require.Equal(t, collectors.StableID("a", "b"), collectors.StableID("a", "b"))
	require.NotEqual(t, collectors.StableID("ab", ""), collectors.StableID("a", "b"))
	require.Len(t, collectors.StableID("x"), 24)
}
