package athena

import (
	"strings"
)

// statementType names the kind of statement from Athena's
// SubstatementType when it is known, else from the SQL's first keyword.
// statementType is Athena's coarse DML|DDL|UTILITY, used as the fallback.
func statementType(sub, statement, sql string) string {
	switch strings.ToUpper(sub) {
	case "SELECT":
		return "SELECT"
	case "INSERT", "INSERT_INTO":
		return "INSERT"
	case "CREATE_TABLE_AS_SELECT", "CTAS":
		return "CTAS"
	case "MERGE", "MERGE_INTO":
		return "MERGE"
	case "UPDATE":
		return "UPDATE"
	case "DELETE":
		return "DELETE"
	}
	words := leadingWords(sql, 8)
	if len(words) > 0 {
		switch words[0] {
		case "SELECT", "WITH", "VALUES", "TABLE":
			return "SELECT"
		case "INSERT":
			return "INSERT"
		case "MERGE":
			return "MERGE"
		case "UPDATE":
			return "UPDATE"
		case "DELETE":
			return "DELETE"
		case "CREATE":
			if isCTAS(sql) {
				return "CTAS"
			}
			return "DDL"
		case "DROP", "ALTER", "MSCK", "OPTIMIZE", "VACUUM":
			return "DDL"
		}
	}
	if strings.EqualFold(statement, "DDL") {
		return "DDL"
	}
	return "OTHER"
}

// isCTAS reports whether a CREATE statement is CREATE TABLE … AS
// followed by a query.
func isCTAS(sql string) bool {
	words := leadingWords(sql, 64)
	if len(words) < 3 {
		return false
	}
	sawTable := false
	for i, w := range words {
		switch {
		case w == "TABLE":
			sawTable = true
		case sawTable && w == "AS" && i+1 < len(words):
			switch words[i+1] {
			case "SELECT", "WITH", "(", "VALUES", "TABLE":
				return true
			}
		}
	}
	return false
}

// leadingWords returns up to n upper-cased words of sql, skipping
// comments and opening parentheses before the first word. Quoted text
// stops the scan; "(" after the first word is returned as a word.
func leadingWords(sql string, n int) []string {
	var words []string
	i := 0
	for i < len(sql) && len(words) < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return words
			}
			i += j + 1
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return words
			}
			i += j + 4
		case c == '(':
			if len(words) > 0 {
				words = append(words, "(")
			}
			i++
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			words = append(words, strings.ToUpper(sql[i:j]))
			i = j
		default:
			if len(words) == 0 {
				return nil
			}
			i++
		}
	}
	return words
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
