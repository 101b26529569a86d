package spark

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/floe-project/floe/rewriter"
)

// quoteIdent quotes one identifier part for Spark SQL: backticks, with an
// embedded backtick doubled. Inside backticks Spark's lexer ends the
// identifier only at a single backtick, so quotes, semicolons, comment
// markers and newlines are plain characters there.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// quoteString quotes s as a Spark SQL string literal. Spark's lexer reads
// a backslash as an escape inside a literal (whatever
// spark.sql.parser.escapedStringLiterals says, the pair `\'` never ends
// the literal), so a backslash is doubled and a quote escaped with one.
// With the default escapedStringLiterals=false the value Spark sees is s
// exactly; with it set, backslashes would stay doubled, which is why floe
// needs the default (documented in doc.go).
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ { // bytewise: both specials are ASCII
		switch s[i] {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		default:
			b.WriteByte(s[i])
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// tableArg is the procedures' table argument: a string literal holding the
// namespace levels and the table name as a multipart identifier, each
// part in backticks, so that a dot, quote or backtick in a name stays
// part of that name when Iceberg parses the string.
func tableArg(t rewriter.EngineTable) string {
	parts := make([]string, 0, len(t.Namespace)+1)
	for _, n := range t.Namespace {
		parts = append(parts, quoteIdent(n))
	}
	parts = append(parts, quoteIdent(t.Name))
	return quoteString(strings.Join(parts, "."))
}

// procedure is `<catalog>`.system.<name>.
func procedure(t rewriter.EngineTable, name string) string {
	return quoteIdent(t.Catalog) + ".system." + name
}

// timestampLiteral is a Spark TIMESTAMP literal of t in UTC with an
// explicit zone, so that Spark's session time zone does not move it.
func timestampLiteral(t time.Time) string {
	return "TIMESTAMP '" + t.UTC().Format("2006-01-02 15:04:05.000000") + "Z'"
}

// checkTable rejects a table name Spark cannot be given: an empty part, or
// a NUL byte anywhere (which no quoting can carry through every layer
// between here and the catalog).
func checkTable(t rewriter.EngineTable) error {
	var errs []error
	if t.Catalog == "" {
		errs = append(errs, errors.New("engine catalog is empty"))
	}
	if len(t.Namespace) == 0 {
		errs = append(errs, errors.New("namespace is empty"))
	}
	if t.Name == "" {
		errs = append(errs, errors.New("table name is empty"))
	}
	for _, p := range append(append([]string{t.Catalog}, t.Namespace...), t.Name) {
		if strings.IndexByte(p, 0) >= 0 {
			errs = append(errs, fmt.Errorf("name %q contains a NUL byte", p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return rewriter.MarkInvalidOptions(fmt.Errorf("spark: table %s: %w", t, err))
	}
	return nil
}

// checkName rejects a NUL byte in a column name.
func checkName(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return rewriter.MarkInvalidOptions(fmt.Errorf("spark: %s %q contains a NUL byte", what, s))
	}
	if s == "" {
		return rewriter.MarkInvalidOptions(fmt.Errorf("spark: %s is empty", what))
	}
	return nil
}
