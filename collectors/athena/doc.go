// Package athena reads Amazon Athena query history into
// [collectors.QueryEvent]s.
//
// Three inputs are supported:
//
//   - [APIParser] (source "athena-api"): GetQueryExecution and
//     BatchGetQueryExecution responses, as the service sends them (times
//     are JSON numbers of epoch seconds) or as the AWS CLI and
//     json.Marshal of the Go SDK types print them (times are ISO-8601
//     strings). A file may hold one response, a JSON array, or NDJSON.
//   - [CloudTrailParser] (source "cloudtrail"): CloudTrail log files
//     ({"Records":[…]}, NDJSON of records, or a JSON array), keeping only
//     successful athena.amazonaws.com StartQueryExecution calls. These
//     carry the SQL, the session defaults and the query id, but no
//     statistics and no final state (State is UNKNOWN).
//   - [Poll]: the live API, ListQueryExecutions newest first and
//     BatchGetQueryExecution in chunks of 50, incremental by a watermark.
//
// Athena reports no tables or columns: events carry the SQL text, the
// default catalog and database, and the query's cost figures; tables and
// predicates come later from parsing the SQL. Catalog and database names
// are lower-cased (Glue stores them lower case; Athena resolves them
// case-insensitively) and an absent catalog defaults to "awsdatacatalog".
// Failed and cancelled queries are kept with their state. Queries still
// QUEUED or RUNNING are skipped, in files and by [Poll] alike: events are
// deduplicated on (source, query id) keeping the first, so an unfinished
// record would hide the finished one read later. [Poll] keeps its
// watermark below them so a later poll sees them done.
package athena
