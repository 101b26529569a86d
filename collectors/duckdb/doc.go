// Package duckdb reads DuckDB query telemetry: the QueryLog written by
// enable_logging (normalized entries + contexts CSV pair, denormalized CSV,
// stdout TSV), JSON profiling output (1.x flat and 2.x sectioned layouts),
// the CLI's .duckdb_history, and — in builds with -tags duckdb — a .duckdb
// database file holding a table of logged queries.
//
// Sources and ids:
//
//   - duckdb-log: QueryID is a stable hash of connection id, message and the
//     timestamp. DuckDB 2.0 logs every statement twice (consecutive query ids,
//     identical message); the second entry of such a pair gets the QueryID of
//     the first, so [collectors.Collect] keeps one.
//   - duckdb-profile: one query per profile file; QueryID is a hash of the SQL
//     and the scan evidence. TABLE_SCAN Filters become a predicate tree.
//   - duckdb-history: one statement per ';'; QueryID is a hash of file base
//     name, line and text. The history has no times: StartTime is the file's
//     modification time (an upper bound), State is UNKNOWN.
//   - duckdb-db: a .duckdb file; reading it needs cgo and -tags duckdb.
//
// The log and history keep the SQL text only; predicates come later from
// the SQL extractor during ingestion.
package duckdb
