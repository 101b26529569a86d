// Package snowflake reads Snowflake's SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY
// and ACCESS_HISTORY exports into [collectors.QueryEvent]s.
//
// Inputs are the forms Snowsight, SnowSQL, the Snowflake CLI and COPY INTO
// unloads write: CSV (RFC 4180, quoted cells may span lines), TSV, a JSON
// array of objects, or NDJSON. Column names match case-insensitively.
// VARIANT/ARRAY cells may be JSON values or JSON text in a string.
//
// QUERY_HISTORY rows give the SQL (flagged SQLTruncated when it reaches
// Snowflake's 100,000-character limit), the session's database and schema
// as defaults, state, times (TIMESTAMP_LTZ text with its offset, converted
// to UTC; text without an offset is taken as UTC) and cost figures.
// ACCESS_HISTORY rows give the tables: a column in BASE_OBJECTS_ACCESSED
// but not in DIRECT_OBJECTS_ACCESSED was read without being projected, so
// it was filtered or joined on, and becomes a [collectors.RoleFilter] use
// with evidence [collectors.EvidenceAccessHistory]; a column in
// DIRECT_OBJECTS_ACCESSED becomes a projection. Identifiers are kept as
// reported (upper case unless quoted); matching them to Iceberg names is
// case-insensitive later.
//
// The two views are joined on QUERY_ID. A row holding columns of both (an
// export of a SQL join) is one complete event. When they come as two
// files, use a [Joiner]: it is a [collectors.Parser] that holds each half
// until the other arrives, emits the joined event then, and emits the
// halves that never met on [Joiner.Flush]. [Parser] is the stateless
// per-file form; it emits every row at once, so the two halves of a query
// read from two files would share one (source, query id) and the second
// would be dropped as a duplicate — use it for single-view files only.
//
// [Poll] reads the same two views live through Snowflake's SQL API over
// HTTPS with a [Client] (key-pair JWT or OAuth), joined in one statement
// and mapped through the same row mapping, so its events equal the export
// files'. It keeps a START_TIME watermark: each query is returned by one
// poll, and a failed poll leaves the watermark where it was. The fake of
// the API for tests is package snowfake. See docs/snowflake.md.
package snowflake
