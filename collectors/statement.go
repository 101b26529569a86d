package collectors

import "strings"

// The statement types of QueryEvent.StatementType. Each parser maps what
// its engine reports (Trino's queryType and updateType, Snowflake's
// QUERY_TYPE, Athena's SubstatementType, Spark's plan) onto these, and
// falls back to [ClassifyStatement] on the SQL text.
const (
	StatementSelect = "SELECT"
	StatementInsert = "INSERT"
	StatementMerge  = "MERGE"
	StatementUpdate = "UPDATE"
	StatementDelete = "DELETE"
	// StatementCTAS is CREATE TABLE … AS query (and CREATE OR REPLACE).
	StatementCTAS = "CTAS"
	// StatementDDL is any other statement that defines or changes tables,
	// views or grants.
	StatementDDL = "DDL"
	// StatementOther is everything else: SHOW, EXPLAIN, CALL, SET, USE.
	StatementOther = "OTHER"
)

// statementNames are the names engines give the statement types, upper
// case, with '_' or ' ' between words: Athena's SubstatementType,
// Snowflake's QUERY_TYPE, Trino's queryType and updateType.
var statementNames = map[string]string{
	"SELECT":                 StatementSelect,
	"INSERT":                 StatementInsert,
	"INSERT_INTO":            StatementInsert,
	"MULTI_TABLE_INSERT":     StatementInsert,
	"MERGE":                  StatementMerge,
	"MERGE_INTO":             StatementMerge,
	"UPDATE":                 StatementUpdate,
	"DELETE":                 StatementDelete,
	"CTAS":                   StatementCTAS,
	"CREATE_TABLE_AS_SELECT": StatementCTAS,
}

// StatementTypeNamed returns the statement type an engine's name for it
// stands for ("INSERT_INTO", "multi_table_insert", "CREATE TABLE AS
// SELECT"), and false for a name that is no statement type of its own
// (empty, "UNKNOWN", "DATA_DEFINITION" and other engine-specific names,
// which the engine's parser maps).
func StatementTypeNamed(name string) (string, bool) {
	n := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(name), " ", "_"))
	t, ok := statementNames[n]
	return t, ok
}

// leadingKeywords gives the statement type of a statement's first
// keyword; CREATE and REPLACE are CTAS or DDL by what follows.
var leadingKeywords = map[string]string{
	"SELECT": StatementSelect, "WITH": StatementSelect, "VALUES": StatementSelect, "TABLE": StatementSelect, "FROM": StatementSelect,
	"INSERT": StatementInsert,
	"MERGE":  StatementMerge,
	"UPDATE": StatementUpdate,
	"DELETE": StatementDelete,
	"ALTER":  StatementDDL, "DROP": StatementDDL, "TRUNCATE": StatementDDL, "COMMENT": StatementDDL,
	"GRANT": StatementDDL, "REVOKE": StatementDDL, "MSCK": StatementDDL, "OPTIMIZE": StatementDDL, "VACUUM": StatementDDL,
	"SHOW": StatementOther, "DESCRIBE": StatementOther, "DESC": StatementOther, "EXPLAIN": StatementOther,
	"CALL": StatementOther, "CACHE": StatementOther, "UNCACHE": StatementOther, "SET": StatementOther,
	"USE": StatementOther, "REFRESH": StatementOther, "ANALYZE": StatementOther, "EXECUTE": StatementOther,
	"PREPARE": StatementOther, "DEALLOCATE": StatementOther, "RESET": StatementOther,
}

// ClassifyStatement returns the statement type of sql from its first
// keyword (after comments and opening parentheses): one of the Statement
// constants. CREATE [OR REPLACE] TABLE is CTAS when an AS outside
// parentheses is followed by a query. It is a keyword peek, not a parse.
func ClassifyStatement(sql string) string {
	first := firstWord(sql)
	switch first {
	case "CREATE", "REPLACE":
		if isCTAS(sql) {
			return StatementCTAS
		}
		return StatementDDL
	}
	if t, ok := leadingKeywords[first]; ok {
		return t
	}
	return StatementOther
}

// IsStatement reports whether text starts with a SQL statement's keyword,
// including those of type OTHER (SHOW, CALL, SET…): it tells a statement
// from free text such as a Spark job's call site "collect at Job.scala:42".
func IsStatement(text string) bool {
	w := firstWord(text)
	_, ok := leadingKeywords[w]
	return ok || w == "CREATE" || w == "REPLACE"
}

// skipComment returns the index after the comment starting at sql[i], or
// i when none starts there, and false when the comment does not end.
func skipComment(sql string, i int) (int, bool) {
	switch {
	case strings.HasPrefix(sql[i:], "--"):
		j := strings.IndexByte(sql[i:], '\n')
		if j < 0 {
			return len(sql), false
		}
		return i + j + 1, true
	case strings.HasPrefix(sql[i:], "/*"):
		j := strings.Index(sql[i+2:], "*/")
		if j < 0 {
			return len(sql), false
		}
		return i + 2 + j + 2, true
	}
	return i, true
}

func isSQLWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= '0' && c <= '9'
}

// firstWord returns the first word of sql, upper-cased, after white space,
// comments, semicolons and opening parentheses; "" when something else
// comes first.
func firstWord(sql string) string {
	for i := 0; i < len(sql); {
		c := sql[i]
		if j, ok := skipComment(sql, i); j != i || !ok {
			if !ok {
				return ""
			}
			i = j
			continue
		}
		switch {
		case c == '(' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';':
			i++
		case isSQLWordByte(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(sql) && isSQLWordByte(sql[j]) {
				j++
			}
			return strings.ToUpper(sql[i:j])
		default:
			return ""
		}
	}
	return ""
}

// isCTAS reports whether a CREATE statement creates a table from a query:
// TABLE, then AS outside parentheses, quotes and comments, followed by
// SELECT, WITH, VALUES, TABLE, FROM or a parenthesis.
func isCTAS(sql string) bool {
	sawTable, sawAS := false, false
	depth := 0
	for i := 0; i < len(sql); {
		if j, ok := skipComment(sql, i); j != i || !ok {
			if !ok {
				return false
			}
			i = j
			continue
		}
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			if sawAS && depth == 0 {
				return true
			}
			depth++
			i++
		case c == ')':
			depth--
			i++
		case c == '\'' || c == '"' || c == '`':
			if sawAS && depth == 0 {
				return false
			}
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 2
		case isSQLWordByte(c):
			j := i
			for j < len(sql) && isSQLWordByte(sql[j]) {
				j++
			}
			w := strings.ToUpper(sql[i:j])
			i = j
			if depth != 0 {
				continue
			}
			switch {
			case sawAS:
				switch w {
				case "SELECT", "WITH", "VALUES", "TABLE", "FROM":
					return true
				}
				return false
			case w == "TABLE":
				sawTable = true
			case w == "AS" && sawTable:
				sawAS = true
			}
		default:
			if sawAS && depth == 0 {
				return false
			}
			i++
		}
	}
	return false
}
