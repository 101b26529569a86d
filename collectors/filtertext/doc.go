// Package filtertext parses the filter texts engines print for the
// predicates they pushed into a table scan — Spark's Iceberg scan
// description ("[filters=a IS NOT NULL, a >= 19814]") and DuckDB's
// TABLE_SCAN Filters in a JSON profile ("(d >= '2024-02-01'::DATE)") — into
// predicate trees of package expr.
//
// Both texts are the same small language: comparisons, [NOT] IN lists,
// [NOT] LIKE, IS [NOT] NULL, NOT, AND, OR and parentheses over columns and
// literals. What differs between engines is a [Dialect]: how identifiers
// are quoted, whether the text is a comma-separated list of filters,
// markers such as DuckDB's "optional:", literal casts (DuckDB's ::TYPE),
// functions around a column (Spark's day(ts), bucket[16](id),
// isnotnull(x#12)) and how a printed column becomes a column name. Each
// engine's sub-package of collectors declares its Dialect and calls
// [Dialect.Parse].
package filtertext
