// Package layout is the layout evaluation harness: it checks the simulator's projected
// skip rates against the skip rates of real rewrites.
//
// Protocol ([Evaluate]):
//  1. Generate TPC-H-lineitem-like rows ([Generate], seeded) in arrival order, every key
//     random as a stream would write them, and append them as F files to one fresh
//     unpartitioned Iceberg table per candidate layout (same rows, same order).
//  2. Draw two workloads from TPC-H-like templates with randomized parameters
//     ([WorkloadSQL]): one on the train seed, one on the eval seed. Both go through the
//     real Trino SQL extractor ([Workload]).
//  3. Project every candidate on the original table with simulator.Project for both
//     workloads (train: what a recommender would see; eval: held-out parameters).
//  4. Rewrite each candidate's own table with rewriter.PlanCompaction and
//     rewriter.Compact at one target file size (table bytes / FilesAfter), then measure
//     the eval workload with simulator.Measure (iceberg-go's scan planning on the real
//     manifests) and record projected, actual and |projected − actual| per query.
//
// Config.ZOrderMode picks the z-order key for projection and rewrite alike (Hilbert is
// always rank-normalized, so only rank z-order is a fair match for it).
//
// Invariants TestLayoutHarnessSmall holds at 200k rows / 40 files: current is projected
// exactly (same file bounds); arrival order skips ≤ 5%; sort(l_shipdate) skips ≥ 40%;
// every layout's |projected − actual| ≤ 5 pp and every rewrite leaves ≥ 16 files.
// BenchmarkLayout (FLOE_BENCH_ROWS, FLOE_BENCH_FILES, FLOE_BENCH_ZORDER) prints and
// records whether the research targets hold: sort ≥ 60%, arrival ≤ 1%, Hilbert ≥ z-order
// + 1.5 pp, mean per-query |error| ≤ 2 pp, p95 ≤ 5 pp. It writes
// bench/results/layout.json (layout-iceberg-exact.json for Iceberg-exact z-order).
//
// The template mix bounds the sort target: three of seven template draws (part key
// point and IN lookups, order key ranges) cannot use a ship-date order, so
// sort(l_shipdate) tops out near 4/7 of queries skipped and the ≥ 60% target, set on
// the TPC-H templates, is not reachable with this workload by construction.
package layout
