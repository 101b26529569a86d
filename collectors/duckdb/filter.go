package duckdb

import (
	"strings"

	"github.com/floe-project/floe/collectors/filtertext"
	"github.com/floe-project/floe/expr"
)

// filters is DuckDB's dialect of pushed-down filter text: "-quoted
// identifiers, the "optional:" marker and ::TYPE casts.
var filters = filtertext.Dialect{Quotes: `"`, Markers: []string{"optional"}, Cast: castValue}

// ParseFilter parses one entry of a DuckDB profile's TABLE_SCAN Filters
// into a predicate tree over table. It reads both layouts:
// 1.x "order_date>='2024-02-01 00:00:00'::TIMESTAMP", "a>=1 AND a<=5",
// "optional: customer_id IN (1, 3)" and 2.x "(customer_id = 3)",
// "((d >= '…'::TIMESTAMP) AND (d <= '…'::TIMESTAMP))". The "optional:"
// marker (a filter DuckDB derived from the query that it may skip) is
// dropped; the predicate still holds for every row the query returns. A
// cast literal takes its type: ::DATE is Kind date, ::TIMESTAMP… Kind
// timestamp, numeric types Kind number.
func ParseFilter(table, text string) (*expr.Node, error) { return filters.Parse(table, text) }

// castValue types a literal by the DuckDB type it is cast to.
func castValue(v expr.Value, typ string) expr.Value {
	if v.Kind == expr.KindNull {
		return v
	}
	switch {
	case typ == "DATE":
		v.Kind = expr.KindDate
	case strings.HasPrefix(typ, "TIMESTAMP"):
		v.Kind = expr.KindTimestamp
	case typ == "VARCHAR" || typ == "TEXT" || typ == "STRING":
		v.Kind = expr.KindString
	case strings.HasPrefix(typ, "INTERVAL"):
		v.Kind = expr.KindInterval
	case strings.Contains(typ, "INT") || strings.HasPrefix(typ, "DECIMAL") || typ == "DOUBLE" || typ == "FLOAT" || typ == "REAL" || typ == "NUMERIC":
		v.Kind = expr.KindNumber
	case typ == "BOOLEAN":
		v.Kind = expr.KindBool
	}
	return v
}
