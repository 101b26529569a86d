// Package bench holds floe's reproducible benchmarks. Each compares floe
// with a peer on the same input in the same run, prints medians and ratios,
// and writes a JSON result to bench/results/. Machines here are shared and
// noisy: read the ratios, not a lone absolute time.
//
// Every result records its machine (Machine): the CPU model, its vector
// extensions (cpu_features: avx2, avx512f, asimd, sve, …) and the family
// they make it (cpu_family: amd64-avx512, amd64-avx2, arm64-neon, …), the
// commit, the load average before and after, and what a page fault costs.
// A vectorized peer gains more from wider vectors than floe's row loops do,
// so figures are quoted per family, never carried from one to another.
//
// Sub-packages: rewrite (native compaction against DuckDB on the same
// files, an unpartitioned table and one in 30 daily partitions); layout
// (projected against measured file skipping of the layout candidates);
// health (table health on 50,000 files and 2,000 snapshots
// against iceberg-go's own scan planning over the same manifests); measure
// (`floe measure` on the demo's web.events and workload: manifests read
// once into lake.ScanIndex against one iceberg-go PlanFiles per query);
// collectstore (storing collected query events in SQLite against
// PostgreSQL, the state store's two drivers); telemetry (ingestion events/s
// per telemetry source from real-format logs, the store's bytes per
// million events raw and folded for ad-hoc queries and for repeated
// dashboards, and its size as the clock passes the telemetry history); plan (projecting every layout
// candidate against one rewrite of the same table, at 6M and 60M rows);
// scale (the daemon's passes over 1,000 and 10,000 generated tables —
// first, nothing changed, a tenth changed, after a restart — against the
// same daemon without change detection, and the table list and dashboard
// at that size); manifests (reading the manifests of 1,000 generated
// tables with floe's lake.ManifestReader against iceberg-go's reader).
package bench
