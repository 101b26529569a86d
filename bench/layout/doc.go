// Package layout is the layout evaluation harness: it checks the simulator's projected
// skip rates against the skip rates of real rewrites.
//
// Protocol ([Evaluate]):
//  1. Generate TPC-H-lineitem-like rows ([Generate], seeded) in arrival order, every key
//     random as a stream would write them, and append them as F files to a fresh
//     unpartitioned Iceberg table; every other candidate gets its own table over the
//     same files (added in one commit, same order).
//  2. Draw two workloads from the templates of a [Workload] with randomized parameters:
//     one on the train seed, one on the eval seed. Both go through the real Trino SQL
//     extractor ([Workload.Queries]). [TPCH] — the default — is the ten TPC-H queries
//     with a literal lineitem predicate and qgen's ranges, the workload the research
//     targets are defined on; [Mixed] adds key lookups a date order cannot serve.
//  3. Project every candidate on the original table with simulator.Project for both
//     workloads (train: what a recommender would see; eval: held-out parameters).
//  4. Rewrite each candidate's own table with rewriter.PlanCompaction and
//     rewriter.Compact at one target file size (table bytes / FilesAfter), then measure
//     the eval workload with simulator.Measure (iceberg-go's scan planning on the real
//     manifests) and record projected, actual and |projected − actual| per query, and
//     the projected and written bytes (the size model that decides the file count).
//
// The lineitem workloads' candidates include a tree over the columns they filter on, as
// the skewed and fleet shapes' do (issue 46): on TPC-H that is the comparison with the
// qd-tree paper's greedy tree (71% of blocks skipped on SF1, the best sort 61%).
//
// Shapes: the lineitem shape (TPC-H and Mixed workloads), [Stream], a skewed
// streaming shape (Zipf tenants, events in time order, a tenth late), and two skewed
// multi-dimensional shapes with a tree candidate: [Skewed], the one the tree learner
// was tuned on, and [Fleet], written after it and not tuned on; Config.Partitioned
// partitions by month(l_shipdate) or day(event_ts), and Config.Compacted bin-packs the
// table with the real rewriter first, to one file per partition or a few, the shape
// most production tables have after routine maintenance. Each Row carries the
// projection's error bar, its sampling part, whether the measurement fell within it,
// its basis, files read ÷ the bound and files read ÷ the box model
// (simulator.BoxBound: the best grid of min/max files under a model of independent
// columns, with slabs for thresholds and correlated columns merged; docs/layouts.md
// says why the per-query bound is out of reach for workloads on several columns, and
// how far the tree is from the model). TestLayoutHarnessShapes runs the streaming
// shape by day as appended, compacted to one file per day and to a few, and
// unpartitioned, and the TPC-H shape unpartitioned after compaction, and holds every
// candidate within 2 pp of the measurement and within its error bar (-short: one file
// per day alone, the shape where a day's bytes sit at the target and the file count
// turns on the size model).
//
// Config.ZOrderMode picks the z-order key for projection and rewrite alike (Hilbert is
// always rank-normalized, so only rank z-order is a fair match for it).
//
// Test-sized runs, 200k rows / 40 files rewritten to about 20: TestLayoutHarnessSmall
// (TPC-H workload) holds current projected exactly (same file bounds), arrival order ≤ 1%,
// sort(l_shipdate) ≥ 58% (T2 at ~30 files), mean per-query |error| ≤ 2 pp (T7), every
// layout's |projected − actual| ≤ 5 pp and every rewrite ≥ 16 files;
// TestLayoutHarnessSmallMixed holds Hilbert ≥ rank z-order + 1.5 pp (T4), actual and
// projected.
// BenchmarkLayout (FLOE_BENCH_ROWS, default 6M; FLOE_BENCH_FILES, default 240 input
// files; FLOE_BENCH_FILES_AFTER, default 120; FLOE_BENCH_WORKLOAD, tpch, mixed,
// stream, skewed or fleet; FLOE_BENCH_ZORDER; FLOE_BENCH_PARTITIONED, the shape's
// partition transform — day for stream, month for the lineitem shape — or none;
// FLOE_BENCH_COMPACTED, one or few, see Config.Compacted; FLOE_BENCH_SEEDS, the data,
// train and eval seeds, default 7,1,2, for a fresh table and workload, named in the
// result's file) prints and records whether the targets hold: on the
// lineitem shape as appended, unpartitioned, the research targets sort ≥ 60% at about
// 120 files per 6M rows (≥ 58% at about 30), arrival ≤ 1%, Hilbert ≥ z-order + 1.5 pp;
// on every shape mean per-query |error| ≤ 2 pp, p95 ≤ 5 pp, and every candidate within
// 2 pp of its measurement and within its error bar. Per candidate the result holds the
// projected and measured skip, the error bar (and its sampling and size-model parts),
// whether the measurement fell within it and within 2 pp, and the files and bytes
// projected and written. It writes bench/results/layout.json (suffixed with the workload,
// file count, z-order mode, partitioning and compaction when they are not the
// defaults). With a tree candidate it also prints and records, per template, the files
// the tree and the best sort or curve read (measured) and the tree's bound. The streaming shape by day compacted to a few files per day,
// bench/results/layout-stream-30files-by-day-compacted-few.json, comes from
//
//	FLOE_BENCH_WORKLOAD=stream FLOE_BENCH_ROWS=600000 FLOE_BENCH_FILES=60 \
//	FLOE_BENCH_FILES_AFTER=30 FLOE_BENCH_PARTITIONED=day FLOE_BENCH_COMPACTED=few \
//	go test -tags duckdb -run '^$' -bench BenchmarkLayout -benchtime 1x -timeout 30m ./bench/layout/
package layout
