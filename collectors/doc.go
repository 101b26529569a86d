// Package collectors turns the query logs of Trino, Spark, Athena, Snowflake,
// DuckDB and Iceberg REST scan reports into normalized [QueryEvent]s.
//
// Each source is a sub-package implementing [Parser]. This package holds the
// shared model, the file opener (plain, gzip, zstd; file, directory, glob,
// Spark rolling event-log directories), content detection, per-source
// deduplication keys and the resolution of engine table names to Iceberg
// tables.
//
// The entry point is [Collect]: it expands paths with [Open], detects each
// input's format with [Detect] (or uses a forced source), parses it, and
// passes every event once to a sink, counting bad records per file. A
// cut-off last line of an in-progress log is expected and not counted.
// Engine table names are mapped to floe catalog tables at ingest
// (control/ingest), against the configured catalogs. Parsers share [ReadJSONRecords], [LineReader], [ParseTime],
// [ParseDuration], [ClassifyStatement], [HasPlaceholder] and [StableID]; the conformance suite
// every parser runs is in collectors/collectortest.
package collectors
