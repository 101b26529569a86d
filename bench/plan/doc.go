// Package plan is the planning benchmark: how long projecting every layout
// candidate takes against one rewrite of the same table, and whether that
// stays flat as the table grows.
//
// Protocol ([Run]):
//  1. Build (or reuse, see bench/rewrite's PrepareDataset) a TPC-H
//     lineitem table of each size, FilesPerMillion input files per million
//     rows.
//  2. Draw the TPC-H workload of bench/layout (ten templates, qgen's
//     ranges) through the real Trino extractor.
//  3. Time simulator.Project of the workload's five non-current candidates
//     (binpack, two sorts, z-order, Hilbert) at one target file size, the
//     one that cuts the smallest table into FilesAfter files, held fixed as
//     the table grows as a table property is; and, apart, the sample it
//     projects from (simulator.TakeSample), so the I/O and the CPU part
//     are both visible.
//  4. Time one real rewrite of the same table, rewriter.RewriteGroup by
//     sort(l_shipdate) at the same target size and a 512 MiB budget, whose
//     files are scored against the workload (their written bounds, as the
//     table would list them committed) beside the projection of the same
//     layout, then removed (nothing is committed).
//
// The figure that matters is project_over_rewrite: all candidates'
// projection over one rewrite, per size; the sample's rows are bounded
// (sample.Options.MaxRows, and FileOversampling times that read), so
// projection time levels off while rewrite time grows with the table. The
// bound costs accuracy only if the projection drifts from the rewrite it
// stands for: rewrite_query_error_pp shows, per size, how far.
// BenchmarkPlan (FLOE_BENCH_PLAN_ROWS, default 6000000,60000000;
// FLOE_BENCH_REPS, default 3; FLOE_BENCH_DIR, default a floe-bench
// directory under the system temp dir; FLOE_BENCH_CPUPROFILE, a directory
// for one CPU profile of the projections per size) writes
// bench/results/plan.json.
package plan
