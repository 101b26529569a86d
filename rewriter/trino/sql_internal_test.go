package trino

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// token is one token of a statement, as Trino's lexer splits it: a
// delimited identifier, a string literal, a word, or punctuation.
type token struct {
	kind string // "ident", "string", "word", "punct"
	text string // the unquoted value for ident and string
}

// lex splits stmt the way Trino's lexer does for the tokens floe writes.
// It fails the test on anything Trino would read as a comment, a second
// statement or an unterminated quote.
func lex(t *testing.T, stmt string) []token {
	t.Helper()
	var out []token
	for i := 0; i < len(stmt); {
		c := stmt[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				require.Less(t, j, len(stmt), "unterminated quote in %q", stmt)
				if stmt[j] == c {
					if j+1 < len(stmt) && stmt[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					break
				}
				b.WriteByte(stmt[j])
				j++
			}
			kind := "ident"
			if c == '\'' {
				kind = "string"
			}
			out = append(out, token{kind, b.String()})
			i = j + 1
		case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-', c == '/' && i+1 < len(stmt) && stmt[i+1] == '*':
			t.Fatalf("comment outside quotes in %q", stmt)
		case c == ';':
			t.Fatalf("statement separator outside quotes in %q", stmt)
		case isWord(c):
			j := i
			for j < len(stmt) && isWord(stmt[j]) {
				j++
			}
			out = append(out, token{"word", stmt[i:j]})
			i = j
		default:
			n := 1
			if strings.HasPrefix(stmt[i:], "=>") || strings.HasPrefix(stmt[i:], ">=") {
				n = 2
			}
			out = append(out, token{"punct", stmt[i : i+n]})
			i += n
		}
	}
	return out
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func word(s string) token  { return token{"word", s} }
func punct(s string) token { return token{"punct", s} }

// manifestTokens is the token structure of optimize_manifests on table
// c.s.n.
func manifestTokens(c, s, n string) []token {
	return []token{word("ALTER"), word("TABLE"), {"ident", c}, punct("."), {"ident", s}, punct("."), {"ident", n},
		word("EXECUTE"), word("optimize_manifests")}
}

func TestQuotingKeepsHostileNamesInsideTheirTokens(t *testing.T) {
	for _, name := range []string{`a"b`, "x; DROP TABLE y", "c--", "d/*", "e\nf", `'`, `""`, "plain"} {
		tbl, err := tableName(rewriter.EngineTable{Catalog: name, Namespace: []string{name}, Name: name})
		require.NoError(t, err)
		stmt := "ALTER TABLE " + tbl + " EXECUTE optimize_manifests"
		require.Equal(t, manifestTokens(name, name, name), lex(t, stmt), name)

		s, err := setSortedBy(tbl, []string{name}, []layout.Column{{Name: name, Desc: true}})
		require.NoError(t, err)
		toks := lex(t, s)
		require.Equal(t, token{"string", `"` + strings.ReplaceAll(name, `"`, `""`) + `" DESC NULLS FIRST`}, toks[len(toks)-2])
	}
	_, err := quoteIdent("a\x00b")
	require.ErrorIs(t, err, errNUL)
	_, err = quoteString("a\x00b")
	require.ErrorIs(t, err, errNUL)
}

func TestScopePredicateTokens(t *testing.T) {
	where, err := scopePredicate([]rewriter.PartitionScope{{Key: "k", Fields: []rewriter.PartitionValue{
		{Column: `r"; --`, SourceType: "string", Transform: "identity", Value: "x'; DROP TABLE t; --"},
		{Column: "n", SourceType: "long", Transform: "truncate[10]", Value: int64(20)},
	}}})
	require.NoError(t, err)
	require.Equal(t, `("r""; --" = 'x''; DROP TABLE t; --' AND "n" >= 20 AND "n" < 30)`, where)
	lex(t, where)

	_, err = scopePredicate([]rewriter.PartitionScope{{Key: "k", Fields: []rewriter.PartitionValue{{Column: "b", Transform: "bucket[4]", Value: int32(1)}}}})
	require.ErrorIs(t, err, rewriter.ErrScopeUnsupported)
}

// FuzzQuoteTableName checks that any catalog, schema and table name either
// is refused (empty, NUL) or lands in exactly the statement structure of
// optimize_manifests, with the names read back intact.
func FuzzQuoteTableName(f *testing.F) {
	for _, s := range []string{`a"b`, "x; DROP TABLE y", "c--", "d/*", "e\nf", `'`, `"`, `""";--`, "ü", "*/", "\r\n"} {
		f.Add(s, s, s)
	}
	f.Add("iceberg", "db", "events")
	f.Fuzz(func(t *testing.T, c, s, n string) {
		if !utf8.ValidString(c + s + n) {
			t.Skip()
		}
		tbl, err := tableName(rewriter.EngineTable{Catalog: c, Namespace: []string{s}, Name: n})
		if c == "" || s == "" || n == "" || strings.ContainsRune(c+s+n, 0) {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, manifestTokens(c, s, n), lex(t, "ALTER TABLE "+tbl+" EXECUTE optimize_manifests"))
	})
}

// FuzzQuoteStringLiteral checks an identity partition value always stays
// one string literal.
func FuzzQuoteStringLiteral(f *testing.F) {
	for _, s := range []string{"it's", "'; DROP TABLE t; --", "/*", "\n", "''", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			t.Skip()
		}
		p, err := fieldPredicate(rewriter.PartitionValue{Column: "c", SourceType: "string", Transform: "identity", Value: v})
		if strings.ContainsRune(v, 0) {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, []token{{"ident", "c"}, punct("="), {"string", v}}, lex(t, p))
	})
}
