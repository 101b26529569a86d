package trino

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// errNUL is returned for a name or literal holding a NUL byte, which no
// quoting can carry to Trino intact.
var errNUL = errors.New("contains a NUL byte")

// quoteIdent quotes s as a Trino delimited identifier: in double quotes,
// with every embedded double quote doubled. Inside a delimited identifier
// Trino's lexer ends the token only at a lone double quote, so semicolons,
// comment markers and newlines stay part of the name.
func quoteIdent(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty identifier")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", fmt.Errorf("identifier %q %w", s, errNUL)
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`, nil
}

// quoteString quotes s as a Trino string literal: in single quotes, with
// every embedded single quote doubled.
func quoteString(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", fmt.Errorf("string %q %w", s, errNUL)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
}

// tableName is t as "catalog"."schema"."table". Trino's Iceberg connector
// has one schema level, so a table in a nested namespace cannot be named.
func tableName(t rewriter.EngineTable) (string, error) {
	if len(t.Namespace) != 1 {
		return "", fmt.Errorf("table %s: Trino's Iceberg schemas are one namespace level, this table has %d", t, len(t.Namespace))
	}
	parts := []string{t.Catalog, t.Namespace[0], t.Name}
	quoted := make([]string, len(parts))
	for i, p := range parts {
		q, err := quoteIdent(p)
		if err != nil {
			return "", fmt.Errorf("table %s: %w", t, err)
		}
		quoted[i] = q
	}
	return strings.Join(quoted, "."), nil
}

// sortEntry is one sorted_by entry: the quoted column, its direction and
// nulls order, as the connector's sort field parser reads them ('"c" DESC
// NULLS LAST'). Both are always spelled out, so the entry means the same
// whatever Trino's defaults.
func sortEntry(col string, c layout.Column) (string, error) {
	id, err := quoteIdent(col)
	if err != nil {
		return "", err
	}
	dir, nulls := "ASC", "NULLS FIRST"
	if c.Desc {
		dir = "DESC"
	}
	if c.NullsLast {
		nulls = "NULLS LAST"
	}
	return quoteString(id + " " + dir + " " + nulls)
}

// setSortedBy is the statement that makes cols the table's sort order.
func setSortedBy(tbl string, cols []string, spec []layout.Column) (string, error) {
	entries := make([]string, len(cols))
	for i := range cols {
		e, err := sortEntry(cols[i], spec[i])
		if err != nil {
			return "", fmt.Errorf("sort column %q: %w", spec[i].Name, err)
		}
		entries[i] = e
	}
	return "ALTER TABLE " + tbl + " SET PROPERTIES sorted_by = ARRAY[" + strings.Join(entries, ", ") + "]", nil
}

// dataSize prints n bytes as a Trino data size: whole mebibytes as "NMB"
// (Trino's units are binary), anything else in bytes, "NB".
func dataSize(n int64) string {
	const mib = 1 << 20
	if n > 0 && n%mib == 0 {
		return strconv.FormatInt(n/mib, 10) + "MB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// optimize is the optimize statement: files smaller than thresholdBytes
// are rewritten, in the partitions scope selects (all when nil).
func optimize(tbl string, thresholdBytes int64, scope []rewriter.PartitionScope) (string, error) {
	stmt := "ALTER TABLE " + tbl + " EXECUTE optimize(file_size_threshold => '" + dataSize(thresholdBytes) + "')"
	if scope == nil {
		return stmt, nil
	}
	where, err := scopePredicate(scope)
	if err != nil {
		return "", err
	}
	return stmt + " WHERE " + where, nil
}

// retention prints a duration as whole seconds, "Ns".
func retention(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// scopePredicate ORs the scopes' predicates, each a parenthesized AND of
// its fields' predicates on their source columns: the only form Trino's
// optimize accepts, a filter the connector enforces on partitions.
func scopePredicate(scope []rewriter.PartitionScope) (string, error) {
	if len(scope) == 0 {
		return "", errors.New("scoped rewrite without partitions")
	}
	ors := make([]string, 0, len(scope))
	for _, s := range scope {
		ands := make([]string, 0, len(s.Fields))
		for _, f := range s.Fields {
			p, err := fieldPredicate(f)
			if err != nil {
				return "", fmt.Errorf("partition %q column %q (%s): %w", s.Key, f.Column, f.Transform, err)
			}
			ands = append(ands, p)
		}
		if len(ands) == 0 {
			return "", fmt.Errorf("partition %q: no field selects it", s.Key)
		}
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return strings.Join(ors, " OR "), nil
}

func fieldPredicate(f rewriter.PartitionValue) (string, error) {
	col, err := quoteIdent(f.Column)
	if err != nil {
		return "", err
	}
	if f.Null {
		return col + " IS NULL", nil
	}
	switch {
	case f.Transform == "identity":
		lit, err := literal(f.SourceType, f.Value)
		if err != nil {
			return "", err
		}
		return col + " = " + lit, nil
	case strings.HasPrefix(f.Transform, "truncate["):
		w, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(f.Transform, "truncate["), "]"), 10, 64)
		if err != nil || w <= 0 {
			return "", fmt.Errorf("bad truncate width in %q", f.Transform)
		}
		lo, ok := asInt64(f.Value)
		if !ok {
			return "", fmt.Errorf("truncate value %v (%T) is not an integer", f.Value, f.Value)
		}
		return fmt.Sprintf("%s >= %d AND %s < %d", col, lo, col, lo+w), nil
	case f.Transform == "year" || f.Transform == "month" || f.Transform == "day" || f.Transform == "hour":
		if f.Lower.IsZero() || f.Upper.IsZero() {
			return "", errors.New("time partition without bounds")
		}
		lo, err := timeLiteral(f.SourceType, f.Lower)
		if err != nil {
			return "", err
		}
		hi, err := timeLiteral(f.SourceType, f.Upper)
		if err != nil {
			return "", err
		}
		return col + " >= " + lo + " AND " + col + " < " + hi, nil
	}
	return "", fmt.Errorf("%w: Trino cannot select a %s partition", rewriter.ErrScopeUnsupported, f.Transform)
}

// timeLiteral is a bound of a time partition as a literal of the source
// column's Trino type: DATE for date, TIMESTAMP for timestamp (Trino's
// timestamp(6)), TIMESTAMP … UTC for timestamptz (timestamp(6) with time
// zone).
func timeLiteral(sourceType string, t time.Time) (string, error) {
	t = t.UTC()
	switch sourceType {
	case "date":
		return "DATE '" + t.Format("2006-01-02") + "'", nil
	case "timestamp":
		return "TIMESTAMP '" + t.Format("2006-01-02 15:04:05.000000") + "'", nil
	case "timestamptz":
		return "TIMESTAMP '" + t.Format("2006-01-02 15:04:05.000000") + " UTC'", nil
	}
	return "", fmt.Errorf("%w: Trino has no type for a %s column", rewriter.ErrScopeUnsupported, sourceType)
}

// literal is an identity partition value as a Trino literal of the source
// column's type.
func literal(sourceType string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return quoteString(x)
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int32, int64, int:
		n, _ := asInt64(x)
		return strconv.FormatInt(n, 10), nil
	case float32:
		return "REAL '" + strconv.FormatFloat(float64(x), 'g', -1, 32) + "'", nil
	case float64:
		return "DOUBLE '" + strconv.FormatFloat(x, 'g', -1, 64) + "'", nil
	case iceberg.Date:
		return timeLiteral("date", x.ToTime())
	case iceberg.Timestamp:
		if sourceType != "timestamp" && sourceType != "timestamptz" {
			return "", fmt.Errorf("timestamp value for a %s column", sourceType)
		}
		return timeLiteral(sourceType, x.ToTime())
	case iceberg.Decimal:
		return "DECIMAL '" + decimalString(x) + "'", nil
	case uuid.UUID:
		return "UUID '" + x.String() + "'", nil
	case []byte:
		return "X'" + hex.EncodeToString(x) + "'", nil
	}
	return "", fmt.Errorf("%w: no Trino literal for %v (%T) of a %s column", rewriter.ErrScopeUnsupported, v, v, sourceType)
}

func decimalString(d iceberg.Decimal) string {
	b := d.Val.BigInt()
	neg := b.Sign() < 0
	s := new(big.Int).Abs(b).String()
	if d.Scale > 0 {
		for len(s) <= d.Scale {
			s = "0" + s
		}
		s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}
