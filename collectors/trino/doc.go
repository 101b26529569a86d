// Package trino reads Trino query telemetry into [collectors.QueryEvent]s.
//
// Two sources:
//
//   - trino-event ([EventParser]): QueryCompletedEvent JSON as the HTTP event
//     listener posts it (plain object, Instants as decimal epoch seconds or
//     ISO-8601) and as the Kafka event listener writes it (wrapped in
//     {"eventPayload": …, "eventMetadata": …}), one per line, as a JSON
//     array or as pretty-printed objects. QueryCreatedEvent and split
//     events in the same file are skipped: only completed queries count.
//     PrestoDB's QueryCompletedEvent is read too and stored with engine
//     presto: it writes durations as whole milliseconds (Trino: decimal
//     seconds, airlift strings or ISO-8601) and times as epoch
//     milliseconds. An event marked as Presto's by a 0.x serverVersion or
//     its own fields (queryType beside context, metadata.updateQueryType)
//     has its whole-number durations in milliseconds, whatever its times
//     say (test suites log placeholder instants). Otherwise a whole-number
//     wallTime — bare, quoted ("67795") or with a zero fraction — is taken
//     in the unit that brings it closer to endTime − createTime (without
//     both, or on a tie: milliseconds when bare, else seconds), and a
//     millisecond unit marks the event as Presto's.
//   - trino-runtime ([RuntimeParser]): exports of system.runtime.queries as
//     CSV (with header) or JSON (NDJSON or array), as the CLI writes them.
//     These carry SQL and times only.
//
// Tables come from metadata.tables (every column the analyzer resolved,
// role referenced, evidence analysis-refs; directlyReferenced → Direct) and
// ioMetadata.inputs (snapshot id, bytes and rows per table). Columns named
// in the plan's "constraint on [...]" were enforced by the Iceberg connector
// and get role filter with evidence pushed-filter. Trino's JSON has no
// WHERE-clause structure: predicates come later from the SQL text
// (metadata.query, or preparedQuery for EXECUTE) during ingestion.
package trino
