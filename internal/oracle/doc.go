// Package oracle checks, independently of the code under test, that a
// rewrite lost and duplicated no row: "nothing lost".
//
// A [Sum] is a row count plus two order-independent digests of every row
// over all columns: the sum of row hashes modulo 2^64 and their xor. The xor
// alone would cancel a duplicated pair of rows; the sum does not.
//
// Two independent paths compute a Sum:
//   - [ChecksumIceberg] reads a table through iceberg-go's own scan, with
//     position deletes, equality deletes and deletion vectors applied, and
//     hashes rows in Go.
//   - Checksum, ChecksumLive and ChecksumTable (build tag duckdb) read the
//     Parquet files with DuckDB's own reader through duckdb-go and hash rows
//     with DuckDB's hash(). ChecksumLive applies position deletes by an
//     anti-join on (file path, row position); equality deletes and deletion
//     vectors are not applied there, and ChecksumTable refuses tables that
//     have them live ([ErrUnsupportedDeletes]) — compare those through
//     ChecksumIceberg.
//
// The two paths use different hash functions, so a Sum is only comparable
// with a Sum from the same path: compare "before" and "after" a rewrite
// through each path separately. ChecksumPreferDuckDB takes DuckDB's path
// when the build has it, iceberg-go's otherwise.
//
// RowLineageParquet (arrow-go's Parquet reader) and RowLineage (build tag
// duckdb, DuckDB's) read the row lineage (format version 3) of every row
// of a list of data files, keyed by a column: the values the files hold,
// else those the spec has a reader inherit from each file's manifest entry,
// computed here and not by iceberg-go.
//
// OrderViolations (build tag duckdb) counts adjacent rows out of key order
// across a list of files read back by DuckDB, which checks that a rewrite's
// files are globally ordered.
package oracle
