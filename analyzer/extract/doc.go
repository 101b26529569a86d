// Package extract finds the tables and predicates of SQL statements in the
// Trino, Athena, Spark SQL, Snowflake and DuckDB dialects.
//
// It is a dialect-aware tokenizer plus a tolerant structural parser. It never
// fails a statement: where it meets syntax it does not know, or text that was
// truncated, it records a warning and keeps what it could extract. [Parse] is
// the entry point; [Result.MarshalContract] renders the stable JSON that
// `floe extract --output json` prints; the collectors turn [Result.Scans]
// into per-table filters of their QueryEvents.
//
// # Output
//
//   - Tables: every base table read or written, once per (name, alias, time
//     travel). CTE names, derived tables, UNNEST / LATERAL VIEW / FLATTEN,
//     VALUES and table functions (read_parquet, iceberg_scan, TABLE(…),
//     stages, file paths) are not tables; the file-reading ones add a
//     warning. Metadata tables (Spark db.t.snapshots, Trino "t$snapshots")
//     are tables with [TableRef.Metadata] set and a QualifiedName ending in
//     "$snapshots", so callers can map them to the base table. Write targets
//     (INSERT, CTAS, MERGE, UPDATE, DELETE, DDL) have Write set.
//   - Predicates: every leaf "column op literals" in WHERE, JOIN … ON,
//     HAVING, QUALIFY, MERGE WHEN conditions, subqueries and every UNION
//     branch, in source order. A leaf reached through a CTE or derived table
//     that maps to several base tables (a UNION) is reported once per table.
//   - Joins: the equalities between columns of two table references (ON,
//     WHERE, USING), join keys being layout candidates too.
//   - Scans: one per base-table reference in a query block, with the part of
//     the block's conditions that a scan of that table alone can evaluate, as
//     a [pexpr.Node] tree that keeps AND / OR / NOT. Files no scan's filter can
//     match need not be read.
//
// # Grammar subset
//
// Statements: SELECT (with WITH [RECURSIVE], UNION / INTERSECT / EXCEPT /
// MINUS [ALL | DISTINCT] [BY NAME], ORDER BY, LIMIT, OFFSET, FETCH, QUALIFY,
// WINDOW, Spark CLUSTER / DISTRIBUTE / SORT BY, Snowflake TOP, DuckDB
// FROM-first and GROUP BY ALL), VALUES, TABLE t, INSERT [INTO | OVERWRITE
// [TABLE] [INTO]] … [PARTITION (…)] [BY NAME] query, CREATE [OR REPLACE] …
// TABLE | VIEW … [WITH (…)] AS query, MERGE INTO … USING … ON … WHEN …,
// UPDATE … SET … [FROM …] WHERE …, DELETE FROM … [USING …] WHERE …,
// EXPLAIN [ANALYZE], PREPARE x FROM stmt, EXECUTE IMMEDIATE 'stmt' (the
// string is parsed), UNLOAD (query), COPY (query) TO, Spark CACHE [LAZY]
// TABLE t [OPTIONS (…)] [AS] query (the query's reads; CACHE TABLE t alone
// reads nothing), and DDL / session statements (ALTER, DROP, TRUNCATE, DESCRIBE, OPTIMIZE,
// VACUUM, MSCK, USE, SET, SHOW, CALL, …), which yield at most their target
// table. Several ';'-separated statements are merged into one Result.
//
// FROM items: [catalog.]schema.table [FOR VERSION | TIMESTAMP AS OF x |
// VERSION AS OF x | AT(…) | BEFORE(…)] [TABLESAMPLE | SAMPLE | USING SAMPLE
// …] [[AS] alias [(columns)]]; (subquery) alias; LATERAL; UNNEST(…) [WITH
// ORDINALITY]; LATERAL VIEW [OUTER] f(…) t AS c…; TABLE(…); f(…) table
// functions; 'file' and @stage; dbt {{ ref('m') }} and {{ source('s', 't') }}
// (read as tables s.t / m); joins of every kind (INNER, LEFT / RIGHT / FULL
// [OUTER], CROSS, NATURAL, SEMI, ANTI, ASOF, POSITIONAL) with ON or USING,
// and parenthesized joins.
//
// Tokens per dialect: "x" is an identifier except in Spark, where it is a
// string; `x` is an identifier everywhere; 'it”s' everywhere, with backslash
// escapes in Spark and Snowflake, E'…' (escapes), r'…' (raw, Spark), $$…$$
// and $tag$…$tag$; comments --, /* */ (nested in Spark and DuckDB) and
// Snowflake //; numbers 1, 1.5, .5, 1e5, 0x1F, 1_000 and Spark 10L / 1.5D /
// 1BD; placeholders ?, $1, :name, :1, ${var}, Snowflake session variables
// $name, and Jinja {{ … }} (a parameter: the predicate is kept with an
// opaque value), with {% … %} and {# … #} skipped with a warning; operators
// <> != == <=> :: || -> ->> and the LIKE family ~ ~~ !~~.
//
// # Literals
//
// Values are typed: DATE '…' (date), TIMESTAMP [WITH TIME ZONE] '…',
// TIMESTAMPTZ '…' (timestamp), INTERVAL '7' DAY / INTERVAL 7 DAYS / INTERVAL
// '7 days' (interval "7 day"), cast('…' AS date), '…'::date, to_date('…'),
// to_timestamp('…') (date / timestamp), numbers with their sign, true /
// false, null, strings, and placeholders (param). Constant arithmetic is
// folded when it is exact: numbers + - ×, date ± interval in days, weeks,
// months (clamped to the month's end), quarters or years, timestamp ±
// interval. Anything else without a column — current_date - interval '7'
// day, now(), a scalar subquery — is pexpr.KindUnknown with its source text.
//
// # Transforms
//
// A column wrapped in casts and functions is still a predicate on that
// column; the outermost function names the transform (a cast around
// another transform keeps the inner one):
//
//	date_trunc('day', c), date_trunc(day, c), trunc(c, 'MM')   day, month, … (the unit)
//	date(c), to_date(c), cast(c AS date), c::date              day
//	year(c), month(c), day(c), hour(c), week(c), quarter(c)    year, month, day, hour, week, quarter
//	extract(year FROM c), date_part('year', c)                 year (the field)
//	lower(c), upper(c)                                         lower, upper
//	substr / substring / left / right (c, …)                   substr
//	coalesce / nvl / ifnull (c, …)                             coalesce
//	cast(c AS varchar), c::string, to_timestamp(c), c AT TIME ZONE …  cast
//	c[1], c:path, json_extract_scalar(c, …), element_at(c, …)  subscript
//	DuckDB s['f'], struct_extract(s, 'f'); s.f everywhere       the column path s.f, no transform
//	any other scalar function of one column and literals       its name (date_format, cardinality, …)
//
// Aggregates and window functions are not columns: HAVING count(*) > 1 is an
// opaque term. Reversed comparisons are normalized (5 < x is x > 5).
// regexp_like(c, p) / rlike(c, p) / regexp_matches are rlike; starts_with(c,
// 's') is like 's%'; Snowflake c [NOT] LIKE|ILIKE ANY|ALL (p1, p2, …) is the OR
// (ANY) or AND (ALL) of one like leaf per pattern; contains(c, 's') is like '%s%' except in Trino and
// Athena, where it tests array membership and stays opaque. A bare boolean
// column is c = true. Column-to-column comparisons (joins), EXISTS, CASE and
// UDF calls are [pexpr.NodeOpaque].
//
// # Scope rules
//
//   - A column qualified by an alias, a table name or a schema.table suffix
//     binds to that FROM item in the innermost query block that has it,
//     else in an enclosing block (correlated subquery).
//   - An unqualified column binds to the one FROM item that declares it
//     (derived-table or CTE output, UNNEST / LATERAL VIEW column list); if
//     none declares it, to the one item that may have it (a base table, a
//     SELECT * derived table); if no item of the block may have it, to the
//     enclosing block. Otherwise its table is "*". With [Options.Schemas]
//     a base table whose columns are known has the column or not, so the
//     one table of a comma FROM list that has it wins, a correlated outer
//     column the inner tables lack binds outward, and a column two tables
//     have is "*" with an "ambiguous" warning.
//   - A column of a CTE or derived table maps to the base column when the
//     CTE's output column is a column term (possibly renamed or under a
//     transform such as date_trunc, through SELECT * and nested CTEs,
//     across every UNION branch; an equi-join through it fans out to every
//     branch); a base column whose table is not known keeps its base name
//     under "*"; when it is an expression (sum(x) AS total) the leaf is
//     opaque. Each CTE is resolved once, however often it is referenced.
//   - The flat predicate list shows a leaf under NOT with the negated
//     operator (NOT (a = 1) is a != 1); scans keep the NOT.
//
// # Scan filters
//
// A condition of a query block is restricted to each scan it mentions: leaves
// of other tables and opaque terms become TRUE inside AND and OR, and a NOT
// is kept only when its whole subtree belongs to the scan. The result is
// implied by the condition, so pruning with it never drops a matching row.
// Outer joins limit where a condition applies: LEFT JOIN … ON filters only
// the right side, RIGHT JOIN … ON only the left, FULL JOIN … ON neither, an
// anti join's ON only the excluded side; in WHERE, IS NULL and coalesce
// leaves do not filter a null-extended side. Conditions on a CTE or derived
// table are pushed into its base scans through plain output columns, except
// when the subquery has LIMIT / FETCH, the CTE is referenced more than once
// or is recursive, or the reference is correlated. QUALIFY and MERGE WHEN
// conditions are reported as predicates but never filter a scan; MERGE's ON
// filters the target only.
//
// # Known limits
//
//   - Column names are as written; case folding and canonical spelling are
//     the caller's (ingest resolves names against the Iceberg schema).
//   - Without [Options.Schemas] an unqualified column with several candidate
//     base tables is "*".
//   - A filter on a derived table with window functions is pushed through a
//     plain output column even when it is not the window's partition key.
//   - Snowflake / DuckDB select-list aliases used in WHERE / QUALIFY are
//     replaced by their column term (date_trunc('day', ts) AS d is day(ts));
//     an alias of any other expression (count(*) AS n) makes the comparison
//     opaque, even if a base table had a column of that name.
//   - PIVOT / UNPIVOT, MATCH_RECOGNIZE, multi-table INSERT ALL and
//     procedural scripts (Snowflake scripting) are skipped with a warning;
//     UDF and lambda bodies are not analysed.
//   - Nesting deeper than 200 levels stops the parse with a warning.
//   - Warnings are capped at 20 per input.
package extract
