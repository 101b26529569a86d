package trino

import (
	"strings"
)

// splitExecute returns the SQL to analyze for a query text and its
// preparedQuery. Clients that pass arguments send "EXECUTE stmt USING …"
// (preparedQuery holds the template) or, on newer servers,
// "EXECUTE IMMEDIATE '<sql>' USING …". params are the USING values as
// written (string literals unquoted).
func splitExecute(query, prepared string) (sql string, params []string, template bool) {
	q := strings.TrimSpace(query)
	isExec := len(q) > 8 && strings.EqualFold(q[:7], "EXECUTE") && (q[7] == ' ' || q[7] == '\t' || q[7] == '\n')
	var words []string
	if isExec {
		params = usingParams(query)
		words = strings.Fields(q[:min(len(q), 64)])
	}
	switch {
	case prepared != "":
		return prepared, params, strings.Contains(prepared, "?")
	case isExec && len(words) > 1 && strings.EqualFold(words[1], "IMMEDIATE"):
		rest := strings.TrimSpace(query[strings.Index(strings.ToUpper(query), "IMMEDIATE")+len("IMMEDIATE"):])
		if lit, _, ok := quoted(rest); ok {
			return lit, params, strings.Contains(lit, "?")
		}
	}
	return query, params, false
}

// quoted reads a SQL string literal at the start of s ('it”s'), returning
// its value and the rest of s.
func quoted(s string) (val, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", s, false
}

// usingParams splits the USING list of an EXECUTE statement on top-level
// commas, outside quotes and parentheses.
func usingParams(query string) []string {
	i := indexKeywordOutsideQuotes(query, "USING")
	if i < 0 {
		return nil
	}
	list := query[i+len("USING"):]
	var out []string
	depth, start := 0, 0
	inQuote := false
	flush := func(end int) {
		p := strings.TrimSpace(list[start:end])
		if v, rest, ok := quoted(p); ok && strings.TrimSpace(rest) == "" {
			p = v
		}
		if p != "" {
			out = append(out, p)
		}
	}
	for j := 0; j < len(list); j++ {
		c := list[j]
		switch {
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			flush(j)
			start = j + 1
		}
	}
	flush(len(list))
	return out
}

func indexKeywordOutsideQuotes(s, kw string) int {
	inQuote := false
	for i := 0; i+len(kw) <= len(s); i++ {
		if s[i] == '\'' {
			inQuote = !inQuote
			continue
		}
		if inQuote || !strings.EqualFold(s[i:i+len(kw)], kw) {
			continue
		}
		before := i == 0 || s[i-1] == ' ' || s[i-1] == '\n' || s[i-1] == '\t' || s[i-1] == ')'
		after := i+len(kw) == len(s) || s[i+len(kw)] == ' ' || s[i+len(kw)] == '\n' || s[i+len(kw)] == '\t'
		if before && after {
			return i
		}
	}
	return -1
}
