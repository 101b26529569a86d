// Package ingest is the pipeline from query-log files to resolved events
// in the state store: `floe collect` runs it, and the telemetry endpoints
// of `floe serve` and `floe collect trino|iceberg --listen` ([Handler],
// [Serve]) take the same path for events that arrive over HTTP.
//
// [Run] opens the inputs with the collector framework ([collectors.Open],
// [collectors.Collect]: files, directories, globs, gzip / zstd, Spark
// rolling logs), detects each file's format among the wired parsers, and
// normalizes every event before storing it in batches:
//
//  1. SQL: when the event has SQL, it is parsed with the engine's dialect
//     ([Dialect]) by [extract.Parse]. Its tables and per-table scan filters
//     are merged with the tables the source reported: a filter the source
//     reported structurally (Spark / DuckDB pushed filter, Iceberg scan
//     report) beats the SQL-parsed one for the same table, and column uses
//     of both are kept with their evidence. An access's Evidence is that of
//     its Filter when it has one. Placeholders stay in the SQL and as
//     KindParam literals.
//  2. Tables: an unqualified name takes the event's default catalog and
//     schema; the engine catalog is mapped to a floe catalog by
//     [Catalogs.MapEngineCatalog]; the [Resolver] finds the table
//     case-insensitively and returns the catalog's spelling and schema
//     (once per table per run). Tables the catalogs do not know — views,
//     temp tables, CTE names — are dropped from the event and counted in
//     [Report.Unresolved]; the base tables of a view that the source
//     reported stay. Metadata tables (Trino "t$snapshots", Spark
//     db.t.snapshots) are attributed to their base table and marked with
//     [collectors.MetadataEvidence], without filter or columns, so the analyzer
//     can skip them.
//  3. Columns: filter leaves, join and filter columns and column uses are
//     renamed to the schema's spelling by case-insensitive lookup. A column
//     the schema lacks is dropped with a counted warning; its filter leaf
//     becomes an opaque term, so pruning with the filter stays sound. A
//     SQL column whose table the extractor could not tell ("*") goes to the
//     statement's single data table, else it is dropped.
//  4. Literals: Spark pushed filters' day numbers and epoch microseconds
//     become dates and timestamps ([spark.RetypeFilter]); string literals
//     compared with date / timestamp columns become typed.
//  5. Store: events are inserted in transactions of [Options.BatchSize];
//     (source, query_id) uniqueness makes re-collection idempotent, and
//     each file read to the end is recorded with its size and modification
//     time so an unchanged file is skipped next time.
//
// Malformed records are counted per file and the first [MaxBadRecords]
// kept with file:line; the rest of the file is still collected, unless
// [Options.Strict], which makes the first one fatal.
//
// # What it needs from the control plane
//
// The package sits beside the parsers it runs and imports nothing of the
// control plane (DESIGN.md: control → collectors, never back). What it
// needs of it is two small interfaces, which the control plane's types
// implement (control asserts it at compile time):
//
//   - [Catalogs]: the floe catalog names and how an engine's catalog name
//     maps onto them (floe.yaml's catalogs, default_catalog and
//     telemetry.catalog_map; control/config's Config).
//   - [Store] (and its part [EventStore], all the HTTP endpoints need):
//     inserting events idempotently, and the per-file records that make
//     collection incremental (control/store's Store).
//
// The values the two sides exchange are the shared model's:
// [collectors.QueryEvent], [collectors.FileRecord], and the metadata-table
// evidence ([collectors.MetadataEvidence]) the analyzer reads back.
//
// Ingestion parses SQL with analyzer/extract: it is the one collectors
// package allowed to (internal/lint lists the edge), because normalizing
// an event means merging the tables and filters of its SQL with what the
// source reported; the parsers themselves never parse SQL.
package ingest
