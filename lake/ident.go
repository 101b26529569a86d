package lake

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/iceberg-go/table"
)

// Ident names a table: a floe catalog, a namespace (possibly nested) and a
// table name. Iceberg allows any characters in each part; [Ident.String]
// writes them in floe's identifier syntax (see [JoinParts]) and
// [ParseIdent] reads it back.
type Ident struct {
	Catalog   string
	Namespace []string
	Name      string
}

// String is catalog.namespace.name in floe's identifier syntax: parts
// joined with dots, a part that is not plain (see [QuotePart]) in double
// quotes — local.db.events, local.db."my.table", local."a.b".t. It is the
// canonical text of the table: floe stores runs, plans, alerts and leases
// under it, policies match it and the API and dashboard print it.
// [ParseIdent] reads it back to the same Ident.
func (i Ident) String() string {
	parts := make([]string, 0, len(i.Namespace)+2)
	if i.Catalog != "" {
		parts = append(parts, i.Catalog)
	}
	parts = append(parts, i.Namespace...)
	parts = append(parts, i.Name)
	return JoinParts(parts...)
}

// NamespaceString is the namespace in floe's identifier syntax ("db",
// "a.b" for the nested namespace a → b, `"a.b"` for the one namespace
// called a.b); "" for no namespace.
func (i Ident) NamespaceString() string { return JoinParts(i.Namespace...) }

// TableIdent is the iceberg-go identifier (namespace…, name).
func (i Ident) TableIdent() table.Identifier {
	return append(slices.Clone(i.Namespace), i.Name)
}

// QuotePart returns one part of an identifier (a catalog, namespace level
// or table name) as floe writes it: as is when it is plain, else between
// double quotes with each double quote doubled, as SQL quotes
// identifiers ("my.table", "say ""hi"""). A part is plain when it is not
// empty and holds no dot, double quote, whitespace or control character;
// every other character (letters of any script, digits, '_', '-', '$', …)
// is written as is.
func QuotePart(part string) string {
	if plainPart(part) {
		return part
	}
	return `"` + strings.ReplaceAll(part, `"`, `""`) + `"`
}

// plainPart reports whether part can be written unquoted.
func plainPart(part string) bool {
	if part == "" {
		return false
	}
	for _, r := range part {
		if r == '.' || r == '"' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// JoinParts writes parts in floe's identifier syntax: each part through
// [QuotePart], joined with dots. [SplitParts] reverses it.
func JoinParts(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(QuotePart(p))
	}
	return b.String()
}

// SplitParts reads a name in floe's identifier syntax into its parts:
// parts are separated by dots; a part in double quotes may hold any
// characters, a double quote written twice (local.db."my.table" is
// local, db, my.table). An unquoted part is the text up to the next dot:
// it must not be empty, hold a double quote, or start or end with
// whitespace. Surrounding whitespace of the whole name is ignored. The
// error names the first problem and where it is.
func SplitParts(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty name")
	}
	var parts []string
	i := 0
	for {
		var part string
		if s[i] == '"' {
			var b strings.Builder
			open := i
			i++
			closed := false
			for i < len(s) {
				if s[i] != '"' {
					b.WriteByte(s[i])
					i++
					continue
				}
				if i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i += 2
					continue
				}
				i++
				closed = true
				break
			}
			if !closed {
				return nil, fmt.Errorf("unbalanced quote: the part quoted at byte %d is not closed", open+1)
			}
			if i < len(s) && s[i] != '.' {
				return nil, fmt.Errorf("unexpected %q after the quoted part %s at byte %d: want a dot between parts",
					nextRune(s[i:]), QuotePart(b.String()), i+1)
			}
			part = b.String()
		} else {
			start := i
			for i < len(s) && s[i] != '.' {
				if s[i] == '"' {
					return nil, fmt.Errorf("double quote inside the unquoted part at byte %d: quote the whole part, doubling the quote (%s)",
						i+1, QuotePart(unquotedUpToDot(s[start:])))
				}
				i++
			}
			part = s[start:i]
			if part == "" {
				return nil, fmt.Errorf("empty part at byte %d (write an empty name as \"\")", start+1)
			}
			if r, _ := utf8.DecodeRuneInString(part); unicode.IsSpace(r) {
				return nil, fmt.Errorf("part %q at byte %d starts with whitespace: quote it (%s)", part, start+1, QuotePart(part))
			}
			if r, _ := utf8.DecodeLastRuneInString(part); unicode.IsSpace(r) {
				return nil, fmt.Errorf("part %q at byte %d ends with whitespace: quote it (%s)", part, start+1, QuotePart(part))
			}
		}
		parts = append(parts, part)
		if i == len(s) {
			return parts, nil
		}
		i++ // the dot
		if i == len(s) {
			return nil, fmt.Errorf("empty part at byte %d: the name ends with a dot", i+1)
		}
	}
}

// unquotedUpToDot is s up to its first dot, for suggesting a quoted form.
func unquotedUpToDot(s string) string {
	if j := strings.IndexByte(s, '.'); j >= 0 {
		return s[:j]
	}
	return s
}

// nextRune is the first character of s, for messages.
func nextRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

// NamespaceParts reads a namespace written in floe's identifier syntax
// (what [Ident.NamespaceString] writes) into its levels. Text that is not
// in that syntax — an engine's own spelling of a nested namespace — is
// split at each dot, as floe read every namespace before it quoted any.
func NamespaceParts(s string) []string {
	if parts, err := SplitParts(s); err == nil {
		return parts
	}
	return strings.Split(s, ".")
}

// ParseIdent reads a table name in floe's identifier syntax (see
// [SplitParts]): "ns.table", "catalog.ns.table", or more parts for a
// nested namespace; a part holding a dot is quoted (db."my.table",
// "a.b".t). A first part equal to one of catalogs (case-insensitively)
// names the catalog when at least three parts are given; otherwise
// defaultCatalog is used. The text [Ident.String] writes parses back to
// the same Ident.
func ParseIdent(s string, catalogs []string, defaultCatalog string) (Ident, error) {
	parts, err := SplitParts(s)
	if err != nil {
		return Ident{}, fmt.Errorf("table name %q: %w", s, err)
	}
	id := Ident{Catalog: defaultCatalog}
	if len(parts) >= 3 {
		for _, c := range catalogs {
			if strings.EqualFold(c, parts[0]) {
				id.Catalog = c
				parts = parts[1:]
				break
			}
		}
	}
	if len(parts) < 2 {
		return Ident{}, fmt.Errorf("table name %q: want namespace.table or catalog.namespace.table (quote a part that holds a dot: db.\"my.table\")", s)
	}
	id.Namespace = parts[:len(parts)-1]
	id.Name = parts[len(parts)-1]
	if id.Catalog == "" {
		return Ident{}, fmt.Errorf("table name %q: no catalog given and no default catalog", s)
	}
	return id, nil
}
