// Package extract finds the tables and predicates of one SQL statement in
// the Trino, Athena, Spark SQL, Snowflake and DuckDB dialects.
//
// It is a dialect-aware tokenizer plus a tolerant structural parser: it never
// fails a whole statement, and where it meets syntax it does not know it
// records a warning and keeps what it could extract.
package extract
