// Package demo builds floe's demo warehouse: realistic Iceberg tables whose
// structural debt floe then measures and repays.
//
//   - web.events: a clickstream table written the way a streaming job writes
//     it — hundreds of micro-batch commits of small files, partitioned by
//     day(ts) — with a skewed tenant mix.
//   - sales.orders and sales.lineitem: TPC-H rows (github.com/pingcap/go-tpc's
//     dbgen) loaded in a few large batches.
//   - crm.accounts: a merge-on-read table with position deletes.
//
// [WriteLogs] then writes a seeded, skewed query workload over those tables
// as the six telemetry sources log it (Trino event-listener JSON, a Spark
// event log, Athena API JSON, Snowflake QUERY_HISTORY/ACCESS_HISTORY CSV,
// the DuckDB query log, Iceberg REST scan reports), for floe collect.
//
// Everything is seeded, so two builds give the same rows. go-tpc's dbgen
// keeps global state, so Build must not run concurrently with itself in
// one process; it also prints "generating …" to os.Stdout, which Build
// points at the null device while dbgen runs (floe's own output goes
// through the streams it took at start).
package demo
