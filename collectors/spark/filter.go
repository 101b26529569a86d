package spark

import (
	"strings"

	"github.com/floe-project/floe/collectors/filtertext"
	"github.com/floe-project/floe/expr"
)

// filters is Spark's dialect of pushed-down filter text: Iceberg's
// Spark3Util.describe list, `-quoted names, transforms around columns,
// and Catalyst's spelling of a column with its expression id (x#12) and of
// null tests (isnotnull(x#12)).
var filters = filtertext.Dialect{
	Quotes:     "`",
	List:       true,
	Transforms: true,
	NullTests:  map[string]expr.Op{"isnull": expr.OpIsNull, "isnotnull": expr.OpIsNotNull},
	Opaque:     map[string]bool{"is_nan": true, "not_nan": true},
	Column:     stripExprID,
}

// ParseFilters parses the filter list Iceberg prints in a Spark scan
// description ("[filters=a IS NOT NULL, a >= 19814, groupedBy=]", the part
// after "filters=") into a predicate tree over table: the AND of the
// comma-separated filters. It returns nil for an empty list. Grammar
// (Spark3Util.describe): col IS [NOT] NULL, is_nan(col), not_nan(col),
// col <op> lit, col [NOT] LIKE 'p%', col [NOT] IN (lits), NOT (e),
// (a AND b), (a OR b), true, false; a column may be wrapped in a transform
// (day(ts), bucket[16](id)). DATE literals are day numbers and TIMESTAMP
// literals epoch microseconds; they stay Kind number here (see [Retype]).
// Catalyst's isnull(x#12) and isnotnull(x#12) are read as null tests of
// x.
func ParseFilters(table, text string) (*expr.Node, error) { return filters.Parse(table, text) }

// stripExprID removes the expression id Catalyst prints after an
// attribute's name: "order_date#12" and "id#1L" name order_date and id.
func stripExprID(s string) string {
	i := strings.LastIndexByte(s, '#')
	if i <= 0 {
		return s
	}
	id := strings.TrimRight(s[i+1:], "L")
	if id == "" || strings.Trim(id, "0123456789") != "" {
		return s
	}
	return s[:i]
}

// splitTopLevel splits on commas outside quotes, parentheses and brackets.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
