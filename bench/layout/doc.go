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
// Invariants the tests hold: current is projected exactly (same file bounds); arrival
// order skips almost nothing; the top-column sort skips a large share; every layout's
// |projected − actual| is small. BenchmarkLayout runs the full size and writes
// bench/results/layout.json.
package layout
