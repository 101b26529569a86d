// Package icebergscan reads Iceberg REST scan reports (the
// ReportMetricsRequest bodies clients POST to
// /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics) into
// [collectors.QueryEvent]s, from files ([Parser]) or as a live metrics sink
// ([Handler]).
//
// Files may also hold bare ScanReports, as Iceberg's ScanReportParser
// writes them (no report-type; detected by their leading table-name and
// snapshot-id); the HTTP endpoint takes ReportMetricsRequests only, as the
// REST spec says. Like Iceberg's parser, a scan report of either shape
// needs table-name, snapshot-id, filter, schema-id, projected-field-ids,
// projected-field-names and metrics (an object; missing metrics inside it
// are fine): one without them is a bad record that names what is missing.
//
// A scan report is the strongest predicate evidence floe gets: its filter
// is the expression the engine pushed into the Iceberg scan, with real
// column names. Each report becomes one event with one [collectors.TableAccess]
// whose Filter is the report's filter as an [expr.Node] tree, whose
// columns are the filter's columns (role filter) and the projected fields
// (role projection), all with evidence [collectors.EvidenceScanReport], and
// whose metrics are the report's file and manifest counts.
//
// What a report lacks, and what this package does about it:
//   - No query id: QueryID is a stable hash of the report body, so the same
//     body collected twice is one event. One SQL query gives one report per
//     table scan (and per re-planning); they stay separate events.
//   - No time: the [Handler] uses the time it received the report; files of
//     bare bodies use [Parser.Now] (default: the time of collection). A line
//     may instead wrap the body with its capture time, see [Parser].
//   - No SQL, user or outcome: SQL is empty, State is UNKNOWN (the scan was
//     planned; how the query ended is not reported) and StatementType is
//     SELECT, since a scan report describes a read.
//   - Literals are sanitized ("(2-digit-int)", "(hash-1a2b3c4d)",
//     "(date-30-days-ago)"): such values are kept as [expr.KindUnknown]
//     with the masked text. Unmasked literals keep their JSON type.
//
// Operators map to extract's: eq =, not-eq !=, lt <, lt-eq <=, gt >, gt-eq >=,
// in, not-in, is-null, not-null "is not null", starts-with "like" with
// value "prefix%" (a masked prefix is kept as is, without the %),
// not-starts-with "not like". is-nan and not-nan have no extract operator:
// they become opaque nodes ("is_nan(col)"), which pruning treats as "may
// match", while the column still counts as filtered. Transform terms
// ({"type":"transform","transform":"day","term":"ts"}) set Pred.Transform
// to the Iceberg transform ("day", "bucket[16]", "truncate[4]"); identity is
// bare. The constant true is no filter; false is an opaque "false" node.
//
// Commit reports ("report-type":"commit-report") carry no predicates, and
// scans of metadata tables (table-name "<table>.files", ".snapshots", …)
// filter metadata columns, not the table's; both are skipped without being
// bad records, and counted.
package icebergscan
