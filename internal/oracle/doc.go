// Package oracle checks, independently of the code under test, that a
// rewrite lost and duplicated no row: "nothing lost".
//
// A [Sum] is a row count plus two order-independent digests of every row
// over all columns: the sum of row hashes modulo 2^64 and their xor. The xor
// alone would cancel a duplicated pair of rows; the sum does not.
//
// Three paths compute a Sum:
//   - [ChecksumIceberg] reads a table through iceberg-go's own scan, with
//     position deletes, equality deletes and deletion vectors applied, and
//     hashes rows in Go.
//   - [ChecksumApplied] applies the deletes itself: [PlanLive] plans the
//     current snapshot by the spec's rules (which delete applies to which
//     data file: a deletion vector to its data file, which then takes no
//     position delete file; position and equality deletes by partition and
//     data sequence number), reads position delete files with arrow-go's
//     Parquet reader and decodes deletion vectors with iceberg-go's dv
//     package (the blob format, nothing of its planning); the data files
//     are read with arrow-go's Parquet reader and the rows hashed as
//     ChecksumIceberg hashes them, so the two agree on a table iceberg-go
//     reads right.
//   - Checksum, ChecksumLive and ChecksumTable (build tag duckdb) read the
//     Parquet files with DuckDB's own reader through duckdb-go and hash rows
//     with DuckDB's hash(). ChecksumLive applies the position delete files
//     it is given by an anti-join on (file path, row position);
//     ChecksumTable anti-joins the positions [PlanLive] found deleted, by
//     deletion vectors and position delete files alike, and refuses tables
//     with live equality deletes ([ErrUnsupportedDeletes]) — compare those
//     through ChecksumApplied or ChecksumIceberg.
//
// The DuckDB path uses another hash function, so its Sum is only
// comparable with a Sum from the same path: compare "before" and "after" a
// rewrite through each path separately. ChecksumPreferDuckDB takes DuckDB's
// path when the build has it, iceberg-go's otherwise.
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
