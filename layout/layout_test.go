package layout_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

func TestParseLayout(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want layout.Layout
	}{
		{"binpack", "binpack", layout.Layout{Strategy: layout.StrategyBinpack}},
		{"current upper case", "  CURRENT ", layout.Layout{Strategy: layout.StrategyCurrent}},
		{"sort defaults", "sort(a)", layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a"}}}},
		{
			"sort desc defaults to nulls last",
			"sort(a desc nulls last, b)",
			layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{
				{Name: "a", Desc: true, NullsLast: true}, {Name: "b"},
			}},
		},
		{
			"iceberg default per direction",
			"Sort ( a DESC , b ASC , c )",
			layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{
				{Name: "a", Desc: true, NullsLast: true}, {Name: "b"}, {Name: "c"},
			}},
		},
		{
			"explicit nulls orders against the default",
			"sort(a desc nulls first, b nulls last)",
			layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{
				{Name: "a", Desc: true}, {Name: "b", NullsLast: true},
			}},
		},
		{
			"quoted identifiers",
			`zorder("Weird Col", "say ""hi""")`,
			layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{
				{Name: "Weird Col"}, {Name: `say "hi"`},
			}},
		},
		{
			"hilbert with target size",
			"hilbert(a,b,c) target 256MiB",
			layout.Layout{Strategy: layout.StrategyHilbert, Columns: []layout.Column{
				{Name: "a"}, {Name: "b"}, {Name: "c"},
			}, TargetFileSizeBytes: 256 << 20},
		},
		{
			"curve columns may carry a nulls order",
			"hilbert(a NULLS LAST, b nulls first)",
			layout.Layout{Strategy: layout.StrategyHilbert, Columns: []layout.Column{{Name: "a", NullsLast: true}, {Name: "b"}}},
		},
		{"binpack with decimal size", "binpack target 128mb", layout.Layout{Strategy: layout.StrategyBinpack, TargetFileSizeBytes: 128e6}},
		{"whitespace everywhere", "\tzorder\n(\ta ,\r\nb\t)\n", layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := layout.Parse(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.NoError(t, got.Validate())
			again, err := layout.Parse(got.String())
			require.NoError(t, err, "reparse %q", got.String())
			require.Equal(t, got, again)
		})
	}
}

func TestParseLayoutErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantMsg string
	}{
		{"zorder(a", `layout "zorder(a": expected ")" at offset 8`},
		{"", `layout "": expected a strategy (binpack, sort, zorder, hilbert, tree, current), found end of input at offset 0`},
		{"shuffle(a)", `layout "shuffle(a)": unknown strategy "shuffle" (want binpack, sort, zorder, hilbert, tree or current) at offset 0`},
		{"sort", `layout "sort": expected "(", found end of input at offset 4`},
		{"sort()", `layout "sort()": expected a column name, found ")" at offset 5`},
		{"zorder(a)", `layout "zorder(a)": zorder needs 2 to 8 columns, got 1 at offset 6`},
		{"zorder(a,b,c,d,e,f,g,h,i)", `layout "zorder(a,b,c,d,e,f,g,h,i)": zorder needs 2 to 8 columns, got 9 at offset 6`},
		{"hilbert(a,b,c,d,e)", `layout "hilbert(a,b,c,d,e)": hilbert needs 2 to 4 columns, got 5 at offset 7`},
		{"hilbert(a)", `layout "hilbert(a)": hilbert needs 2 to 4 columns, got 1 at offset 7`},
		{"zorder(a desc, b)", `layout "zorder(a desc, b)": "desc" is only allowed in sort, not zorder at offset 9`},
		{"sort(a, A)", `layout "sort(a, A)": duplicate column "A" at offset 8`},
		{"sort(a nulls middle)", `layout "sort(a nulls middle)": expected "first" or "last" after "nulls", found "middle)" at offset 13`},
		{`sort("a)`, `layout "sort(\"a)": unterminated quoted name starting at offset 5: expected '"' at offset 8`},
		{`sort("")`, `layout "sort(\"\")": empty quoted column name at offset 5`},
		{"sort(a b)", `layout "sort(a b)": expected "," or ")", found "b)" at offset 7`},
		{"binpack(a)", `layout "binpack(a)": binpack takes no columns at offset 7`},
		{"sort(a) extra", `layout "sort(a) extra": unexpected "extra" at offset 8`},
		{"sort(a) target", `layout "sort(a) target": expected a size after "target", found end of input at offset 14`},
		{"sort(a) target 5 parsecs", `layout "sort(a) target 5 parsecs": unexpected "parsecs" at offset 17`},
		{"sort(a) target 5XB", `layout "sort(a) target 5XB": unknown size unit "XB" (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB) at offset 16`},
		{"zorder(a asc, b)", `layout "zorder(a asc, b)": "asc" is only allowed in sort, not zorder at offset 9`},
		{"sort(a) target 0", `layout "sort(a) target 0": target size must be positive at offset 15`},
		{"sort(a) target 99999999TiB", `layout "sort(a) target 99999999TiB": size 99999999TiB is out of range at offset 15`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := layout.Parse(tt.in)
			require.Error(t, err)
			require.EqualError(t, err, tt.wantMsg)
			require.ErrorIs(t, err, layout.ErrInvalidLayout)
			var se *layout.SyntaxError
			require.True(t, errors.As(err, &se))
		})
	}
}

func TestLayoutValidate(t *testing.T) {
	tests := []struct {
		name    string
		l       layout.Layout
		wantErr string
	}{
		{"ok sort", layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a", Desc: true}}}, ""},
		{"unknown", layout.Layout{Strategy: "shuffle"}, `unknown strategy "shuffle"`},
		{"binpack with columns", layout.Layout{Strategy: layout.StrategyBinpack, Columns: []layout.Column{{Name: "a"}}}, "binpack takes no columns"},
		{"zorder desc", layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "a", Desc: true}, {Name: "b"}}}, "only allowed in sort"},
		{"empty name and duplicate", layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: ""}, {Name: "x"}, {Name: "X"}}}, "empty column name\nduplicate column \"X\""},
		{"negative size", layout.Layout{Strategy: layout.StrategyBinpack, TargetFileSizeBytes: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, layout.ErrInvalidLayout)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestLayoutStringQuotesWhatItMust(t *testing.T) {
	l := layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{
		{Name: "desc", Desc: true, NullsLast: true}, {Name: "9lives", NullsLast: true}, {Name: "ünï cödé"}, {Name: "ok_1", Desc: true, NullsLast: true},
	}, TargetFileSizeBytes: 1536}
	require.Equal(t, `sort("desc" desc, "9lives" nulls last, "ünï cödé", ok_1 desc) target 1536`, l.String())
	got, err := layout.Parse(l.String())
	require.NoError(t, err)
	require.Equal(t, l, got)
}

func TestLayoutStringPicksShortestSize(t *testing.T) {
	for size, want := range map[int64]string{
		128e6: "128MB", 512 << 20: "512MiB", 1 << 40: "1TiB", 3e12: "3TB", 1000: "1KB", 1023: "1023", 1024: "1024", 5 << 30: "5GiB",
	} {
		l := layout.Layout{Strategy: layout.StrategyBinpack, TargetFileSizeBytes: size}
		require.Equal(t, "binpack target "+want, l.String())
		got, err := layout.Parse(l.String())
		require.NoError(t, err)
		require.Equal(t, l, got)
	}
}

func FuzzParseLayout(f *testing.F) {
	for _, s := range []string{
		"binpack", "current target 1GiB", "sort(a desc nulls last, b)", `zorder("Weird Col", b)`,
		"hilbert(a,b,c)", "zorder(a", "sort(a nulls first) target 12KB", `sort("x""y" asc)`,
	} {
		f.Add(s)
	}
	f.Add("zorder(a nulls last, b) target 128MB")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := layout.Parse(s)
		if err != nil {
			require.ErrorIs(t, err, layout.ErrInvalidLayout)
			return
		}
		require.NoError(t, l.Validate())
		again, err := layout.Parse(l.String())
		require.NoError(t, err, "reparse %q of %q", l.String(), s)
		require.Equal(t, l, again)
	})
}

func TestLayoutJSON(t *testing.T) {
	for _, spec := range []string{"sort(tenant_id, ts desc) target 64MiB", "zorder(a, b)", "binpack", "current"} {
		l, err := layout.Parse(spec)
		require.NoError(t, err)
		b, err := json.Marshal(l)
		require.NoError(t, err)
		var back layout.Layout
		require.NoError(t, json.Unmarshal(b, &back), "%s", b)
		require.Equal(t, l.String(), back.String(), "%s", b)
		var fromSpec layout.Layout
		require.NoError(t, json.Unmarshal([]byte(strconv.Quote(spec)), &fromSpec), spec)
		require.Equal(t, l.String(), fromSpec.String())
	}
}

// TestLayoutJSONShape pins the one shape a layout has in every JSON output
// of floe: every key present whatever the layout, so that a script reads
// .layout.columns or .layout.target_file_size_bytes without a null check.
func TestLayoutJSONShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   layout.Layout
		want string
	}{
		{name: "sort with a target", in: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}, TargetFileSizeBytes: 65536},
			want: `{"spec":"sort(id) target 65536","strategy":"sort","columns":[{"name":"id","desc":false,"nulls_last":false}],"target_file_size_bytes":65536}`},
		{name: "descending column", in: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "ts", Desc: true, NullsLast: true}}},
			want: `{"spec":"sort(ts desc)","strategy":"sort","columns":[{"name":"ts","desc":true,"nulls_last":true}],"target_file_size_bytes":0}`},
		{name: "binpack has an empty column list", in: layout.Layout{Strategy: layout.StrategyBinpack},
			want: `{"spec":"binpack","strategy":"binpack","columns":[],"target_file_size_bytes":0}`},
		{name: "current", in: layout.Layout{Strategy: layout.StrategyCurrent},
			want: `{"spec":"current","strategy":"current","columns":[],"target_file_size_bytes":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b))
		})
	}
}

// TestLayoutJSONEscaping: the encoder that embeds a layout decides whether
// <, > and & are escaped, as it does for its own strings.
func TestLayoutJSONEscaping(t *testing.T) {
	l, err := layout.Parse(`sort("a>b")`)
	require.NoError(t, err)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(map[string]any{"layout": l}))
	require.Contains(t, b.String(), `"name":"a>b"`)
	require.NotContains(t, b.String(), `\u003e`)
	escaped, err := json.Marshal(l)
	require.NoError(t, err)
	require.Contains(t, string(escaped), `"name":"a\u003eb"`)
}

// TestLayoutJSONLegacy: records written before layouts were objects hold
// the spec string, or "" for none; both read back.
func TestLayoutJSONLegacy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want layout.Layout
	}{
		{in: `"sort(a) target 1024"`, want: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a"}}, TargetFileSizeBytes: 1024}},
		{in: `""`, want: layout.Layout{}},
		{in: `null`, want: layout.Layout{}},
		{in: `{"strategy":"binpack"}`, want: layout.Layout{Strategy: layout.StrategyBinpack}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var got layout.Layout
			require.NoError(t, json.Unmarshal([]byte(tc.in), &got))
			require.Equal(t, tc.want, got)
		})
	}
	var got layout.Layout
	require.ErrorIs(t, json.Unmarshal([]byte(`"sort("`), &got), layout.ErrInvalidLayout)
}
