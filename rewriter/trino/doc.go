// Package trino is floe's Trino engine: it runs the maintenance steps floe
// planned as statements on a Trino cluster the team already runs, through
// the Iceberg connector's table procedures, and reports each statement with
// Trino's query id. floe decides what a step does (see [rewriter.Engine]);
// Trino only does it, and the control plane verifies the snapshot Trino
// committed afterwards.
//
// # Statements
//
// Every table is named "catalog"."schema"."table", each part a delimited
// identifier (embedded double quotes doubled) and every string a literal
// in single quotes (embedded single quotes doubled), so no name can change
// a statement's structure; names holding a NUL byte are refused, and so are
// tables in nested namespaces (Trino's Iceberg schemas are one level).
//
//   - Compact, sort layout:
//     ALTER TABLE t SET PROPERTIES sorted_by = ARRAY['"c1" ASC NULLS FIRST', '"c2" DESC NULLS LAST'],
//     which stays the table's sort order, then the optimize below.
//   - Compact: ALTER TABLE t EXECUTE optimize(file_size_threshold => '512MB')
//     [WHERE (…) OR (…)]. optimize rewrites the files smaller than the
//     threshold, which is the job's target file size; the size of the files
//     it writes is the table's write.target-file-size-bytes (or the session
//     property <catalog>.target_max_file_size), not an argument. A scoped
//     job ORs one parenthesized AND per partition, on the partitions'
//     source columns: col = literal for identity, col >= lower AND col <
//     upper (DATE or TIMESTAMP literals) for year/month/day/hour, a range
//     for truncate on integers, col IS NULL for a null value. Trino accepts
//     only a WHERE its connector enforces on partitions; it fails the
//     statement ("Unexpected FilterNode") otherwise, for instance on a
//     column that only a newer partition spec partitions by.
//   - Expire: ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => 'Ns').
//   - RemoveOrphans: ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => 'Ns').
//   - RewriteManifests: ALTER TABLE t EXECUTE optimize_manifests (Trino 470+).
//   - Ping: SELECT 1.
//
// Result rows become the report's metrics: (metric_name, metric_value)
// rows, as remove_orphan_files (Trino 478+) and optimize (481+) return
// them, or integer columns under their names (an older EXECUTE's "rows").
//
// # What Trino cannot do
//
// Trino writes binpack, sort (through sorted_by) and the current layout; it
// has no z-order or Hilbert curve, so such a compaction is refused before
// any statement is sent ([rewriter.ErrLayoutUnsupported]; native and spark
// can). Its expire_snapshots takes no retain_last on the releases floe
// targets: Iceberg keeps the table's history.expire.min-snapshots-to-keep
// newest snapshots, and when the job asks for more the engine moves the
// cutoff back to the oldest snapshot it must keep; the report's Notes say
// so. Retention thresholds are whole seconds measured from Trino's clock,
// so the engine rounds up and adds a minute: Trino may keep a little more
// than floe planned, never less. Trino refuses thresholds under
// iceberg.expire-snapshots.min-retention and
// iceberg.remove-orphan-files.min-retention (both 7d by default) with its
// own error, which the engine returns as a [QueryError] with Trino's
// message, error name and query id.
//
// # Cancellation and secrets
//
// Each statement runs under its ctx, and [Config.Timeout] when set. When
// ctx ends, trino-go-client (v1.1.0) sends DELETE /v1/query/<id> as it
// stops polling; if it had no chance to, the engine sends DELETE to the
// query's last nextUri itself. The error wraps ctx's error and names the
// query id. The password ([Config.Password]) goes to Trino as HTTP basic
// auth, over https only (the client refuses it otherwise); it is redacted
// from every error and String.
package trino
