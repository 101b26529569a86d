// Package collectors turns the query logs of Trino, Spark, Athena, Snowflake,
// DuckDB and Iceberg REST scan reports into normalized [QueryEvent]s.
//
// Each source is a sub-package implementing [Parser]. This package holds the
// shared model, the file opener (plain, gzip, zstd; file, directory, glob),
// content detection, per-source deduplication keys and the resolution of
// engine table names to Iceberg tables.
package collectors
