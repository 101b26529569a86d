package spark

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// token is one Spark SQL token: kind is ident (bare or backquoted, text
// unquoted), string (text unescaped), number, punct or comment.
type token struct{ kind, text string }

// lex splits s into Spark SQL tokens, the way Spark's lexer does for what
// floe writes: backquoted identifiers end at a single backtick (a doubled
// one is a backtick), string literals at an unescaped quote (backslash
// escapes the next character), comments run to the end of the line or
// the closing */.
func lex(t testing.TB, s string) []token {
	t.Helper()
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "--") || strings.HasPrefix(s[i:], "/*"):
			out = append(out, token{"comment", s[i:]})
			return out
		case c == '`':
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(s) {
					t.Fatalf("unterminated identifier in %q", s)
				}
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			out = append(out, token{"ident", b.String()})
			i = j + 1
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(s) {
					t.Fatalf("unterminated string in %q", s)
				}
				if s[j] == '\\' {
					j++
					if j >= len(s) {
						t.Fatalf("dangling escape in %q", s)
					}
					b.WriteByte(s[j])
					continue
				}
				if s[j] == '\'' {
					break
				}
				b.WriteByte(s[j])
			}
			out = append(out, token{"string", b.String()})
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			out = append(out, token{"ident", s[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'E' || s[j] == 'D' || s[j] == '+') {
				j++
			}
			out = append(out, token{"number", s[i:j]})
			i = j
		case strings.HasPrefix(s[i:], "=>") || strings.HasPrefix(s[i:], ">=") || strings.HasPrefix(s[i:], "<="):
			out = append(out, token{"punct", s[i : i+2]})
			i += 2
		case strings.ContainsRune("(),.=<>-;", rune(c)):
			out = append(out, token{"punct", string(c)})
			i++
		default:
			t.Fatalf("unexpected %q at %d in %q", c, i, s)
		}
	}
	return out
}

// shape renders tokens as kind:text, identifiers and strings as kinds
// only, so that a test can compare a statement's structure.
func shape(toks []token) string {
	parts := make([]string, len(toks))
	for i, tk := range toks {
		switch tk.kind {
		case "ident", "string":
			if tk.kind == "ident" && isKeyword(tk.text) {
				parts[i] = tk.text
			} else {
				parts[i] = tk.kind
			}
		default:
			parts[i] = tk.text
		}
	}
	return strings.Join(parts, " ")
}

func isKeyword(s string) bool {
	switch s {
	case "CALL", "system", "rewrite_data_files", "table", "strategy", "sort_order", "options", "where", "map",
		"AND", "OR", "IS", "NULL":
		return true
	}
	return false
}

func TestQuoting(t *testing.T) {
	cases := []struct{ in, ident, str string }{
		{"plain", "`plain`", "'plain'"},
		{"it's", "`it's`", `'it\'s'`},
		{"a`b", "`a``b`", "'a`b'"},
		{`back\slash`, "`back\\slash`", `'back\\slash'`},
		{"semi;--x/*y*/", "`semi;--x/*y*/`", "'semi;--x/*y*/'"},
		{"new\nline", "`new\nline`", "'new\nline'"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			require.Equal(t, c.ident, quoteIdent(c.in))
			require.Equal(t, c.str, quoteString(c.in))
			require.Equal(t, []token{{"ident", c.in}}, lex(t, quoteIdent(c.in)))
			require.Equal(t, []token{{"string", c.in}}, lex(t, quoteString(c.in)))
		})
	}
}

func TestTimestampLiteralIsUTC(t *testing.T) {
	at := time.Date(2024, 3, 1, 12, 30, 0, 123456000, time.FixedZone("x", 2*3600))
	require.Equal(t, "TIMESTAMP '2024-03-01 10:30:00.123456Z'", timestampLiteral(at))
}

func TestCheckTableRejectsNUL(t *testing.T) {
	for _, tbl := range []rewriter.EngineTable{
		{Catalog: "c", Namespace: []string{"n\x00"}, Name: "t"},
		{Catalog: "c\x00", Namespace: []string{"n"}, Name: "t"},
		{Catalog: "c", Namespace: []string{"n"}, Name: "t\x00"},
		{Catalog: "c", Name: "t"},
	} {
		_, err := compactSQL(rewriter.CompactJob{Table: tbl})
		require.ErrorIs(t, err, rewriter.ErrInvalidOptions, "%q", tbl)
	}
	_, err := compactSQL(rewriter.CompactJob{
		Table:   rewriter.EngineTable{Catalog: "c", Namespace: []string{"n"}, Name: "t"},
		Options: rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a\x00"}}}},
	})
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
}

func TestWherePredicate(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name   string
		scopes []rewriter.PartitionScope
		want   string
	}{
		{"identity and day", []rewriter.PartitionScope{{Key: "k", Fields: []rewriter.PartitionValue{
			{Column: "region", SourceType: "string", Transform: "identity", Value: "eu"},
			{Column: "ts", SourceType: "timestamptz", Transform: "day", Lower: day(1), Upper: day(2)},
		}}}, "(`region` = 'eu' AND `ts` >= TIMESTAMP '2024-01-01 00:00:00.000000Z' AND `ts` < TIMESTAMP '2024-01-02 00:00:00.000000Z')"},
		{"or of scopes, null, date, ntz", []rewriter.PartitionScope{
			{Key: "a", Fields: []rewriter.PartitionValue{{Column: "region", Transform: "identity", Null: true}}},
			{Key: "b", Fields: []rewriter.PartitionValue{{Column: "d", SourceType: "date", Transform: "month", Lower: day(1), Upper: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}}},
			{Key: "c", Fields: []rewriter.PartitionValue{{Column: "t", SourceType: "timestamp", Transform: "hour", Lower: day(1), Upper: day(1).Add(time.Hour)}}},
		}, "(`region` IS NULL) OR (`d` >= DATE '2024-01-01' AND `d` < DATE '2024-02-01') OR (`t` >= TIMESTAMP_NTZ '2024-01-01 00:00:00.000000' AND `t` < TIMESTAMP_NTZ '2024-01-01 01:00:00.000000')"},
		{"bucket widens", []rewriter.PartitionScope{{Key: "k", Fields: []rewriter.PartitionValue{
			{Column: "id", SourceType: "long", Transform: "bucket[16]"},
			{Column: "n", SourceType: "long", Transform: "identity", Value: int64(-7)},
		}}}, "(`n` = -7)"},
		{"void only is the whole table", []rewriter.PartitionScope{{Key: "k", Fields: []rewriter.PartitionValue{
			{Column: "x", Transform: "void", Null: true},
		}}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := wherePredicate(c.scopes)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
	_, err := wherePredicate([]rewriter.PartitionScope{{Key: "k", Fields: []rewriter.PartitionValue{{Column: "id", Transform: "bucket[4]"}}}})
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
}

func TestLiterals(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{true, "TRUE"}, {int32(5), "5"}, {float64(1.5), "1.5E+00D"},
		{[]byte{0xde, 0xad}, "X'dead'"}, {`o'\`, `'o\'\\'`},
	} {
		got, err := literal(c.v, "")
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
}

// hostile are names that would change a naively built statement.
var hostile = []string{
	"it's", "a`b", "x; DROP TABLE y", "c -- comment", "d /* c */", "new\nline", `back\slash`, `\'`, "``", "'", "a.b",
}

func TestHostileNamesKeepTheStatementShape(t *testing.T) {
	for _, name := range hostile {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) { checkCompactShape(t, name, name, name, name) })
	}
}

// checkCompactShape builds a sorted, scoped compaction of ns.tbl on
// column col with the identity value val and checks its structure and
// that every name and value comes back out unchanged.
func checkCompactShape(t testing.TB, ns, tbl, col, val string) {
	job := rewriter.CompactJob{
		Table:   rewriter.EngineTable{Catalog: "cat", Namespace: []string{ns}, Name: tbl},
		Plan:    rewriter.CompactPlan{Groups: make([]rewriter.PlannedGroup, 3), TargetFileSizeBytes: 100},
		Options: rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: col, Desc: true}}}},
		Scope:   []rewriter.PartitionScope{{Fields: []rewriter.PartitionValue{{Column: col, SourceType: "string", Transform: "identity", Value: val}}}},
	}
	stmt, err := compactSQL(job)
	if strings.ContainsRune(ns+tbl+col+val, 0) {
		require.Error(t, err)
		return
	}
	require.NoError(t, err)
	toks := lex(t, stmt)
	require.Equal(t, "CALL ident . system . rewrite_data_files ( table => string , strategy => string , sort_order => string , options => map ( string , string , string , string , string , string ) , where => string )",
		shape(toks), stmt)
	require.Equal(t, "cat", toks[1].text)
	// The table argument is a multipart identifier of exactly ns and tbl.
	require.Equal(t, []token{{"ident", ns}, {"punct", "."}, {"ident", tbl}}, lex(t, toks[9].text))
	require.Equal(t, "sort", toks[13].text)
	require.Equal(t, []token{{"ident", col}, {"ident", "DESC"}, {"ident", "NULLS"}, {"ident", "FIRST"}}, lex(t, toks[17].text))
	where := lex(t, toks[len(toks)-2].text)
	require.Equal(t, []token{{"punct", "("}, {"ident", col}, {"punct", "="}, {"string", val}, {"punct", ")"}}, where)
}

func FuzzCompactStatement(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, "t", "c", h)
		f.Add("ns", h, h, "v")
	}
	f.Add("n\x00", "t", "c", "v")
	f.Fuzz(func(t *testing.T, ns, tbl, col, val string) {
		if ns == "" || tbl == "" || col == "" {
			t.Skip()
		}
		checkCompactShape(t, ns, tbl, col, val)
	})
}
