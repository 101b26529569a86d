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
// passes every event once to a sink, counting bad records per file (and
// keeping a few of each, [DefaultMaxBadPerFile]). One input never fails
// the others unless CollectOptions.Strict.
//
// What a live deployment hands floe is expected, not an error:
//   - a Spark rolling log directory with no events_N_* part yet (only
//     appstatus_*, or empty) is an [Input] with a Note, skipped;
//   - a log still being written (.inprogress, or a rolling directory whose
//     appstatus is in progress) may end in a cut-off line or inside a
//     compressed block or frame (Spark's zstd frame stays open until the
//     application ends): it is read up to its last complete record and
//     counted in Stats.TruncatedTails. Nothing keeps an offset: the grown
//     file is read again next time, and the store replaces an execution
//     collected while it was running. A finished file cut off is an error,
//     after what it held was read;
//   - compression is peeled by magic bytes, nested too (gzip of zstd); a
//     UTF-8 byte order mark is skipped; a file of white space is empty;
//   - [ReadJSONRecords] reads every document of a multi-document file and
//     gives each record its line, so bad records say file:line.
//
// Statement types are the Statement* constants: parsers map what their
// engine reports ([StatementTypeNamed]) and fall back to
// [ClassifyStatement] on the SQL text. The pushed-down filter texts of
// Spark and DuckDB are parsed by collectors/filtertext, each engine
// declaring its dialect.
// Engine table names are mapped to floe catalog tables at ingest
// (collectors/ingest), against the configured catalogs. Parsers share [ReadJSONRecords], [LineReader], [ParseTime],
// [ParseDuration], [ClassifyStatement], [HasPlaceholder] and [StableID]; the conformance suite
// every parser runs is in collectors/collectortest.
package collectors
