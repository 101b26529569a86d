// Package simulator projects how a candidate layout of an Iceberg table would serve the
// workload recorded in query telemetry, without moving any data.
//
// # Role
//
// The simulator sits between the analyzer (which ranks the columns a table is filtered on and
// proposes candidate layouts) and the plan (which a person or a policy approves before the
// rewriter touches data). For each candidate it
//
//  1. builds an order-preserving key per row (package layout: [layout.Layout],
//     [layout.Encoder]),
//  2. samples or streams the predicate columns of the table,
//  3. sorts the rows by key and cuts them into projected files at the target file size, keeping
//     each projected file's per-column min/max (truncated as Iceberg truncates string bounds),
//  4. replays the logged queries against those min/max statistics to count the files each
//     query would skip, and
//  5. reports a projection (files and bytes read, skip ratio) with its error bars.
//
// The layout vocabulary of step 1 — layouts and their text form, the key encoders (linear,
// Iceberg-exact and rank z-order, Hilbert) and the quantiles rank keys are built on — lives
// in package layout, which the analyzer and the rewriter speak too. Steps 2 to 5 (sampling,
// projected file boundaries, query replay, projections and error bars) live here, in
// sample.go, project.go, replay*.go, measure.go and workload.go; see Projection below.
// [TakeSample], [Project] and [Measure] read the table; the rest is pure: no I/O, no clocks,
// no global state.
//
// # Projection
//
// A workload is a list of [Query] values, one per logged query of one table, each with
// the filter its scan of that table could push down ([WorkloadFromSQL] reads a file of
// ';'-separated statements, [WorkloadFromEvents] uses resolved query events). Filters are
// bound once to the table's schema: columns are matched case-insensitively (an unknown
// column, or one of a type replay does not bound — decimal, binary, fixed, uuid, time,
// nested — makes its leaf "may match"); NOT is pushed into the leaves (De Morgan, negated
// operators: NOT(x < 5) is x >= 5, NOT(x between a and b) is x < a OR x > b) so that every
// term that cannot be bound sits in a positive position and replacing it by "may match" is
// always conservative; literals are typed against the column (a number against a date is
// a day number and against a timestamp epoch microseconds, as Spark prints pushed
// filters; date and timestamp text without a zone is UTC; a fraction against an integer
// column is left unbound); day/month/year/hour of a date or timestamp column become a
// range of the column (date_trunc('day', ts) = DATE '2026-11-01' is ts in [2026-11-01,
// 2026-11-02); year(ts) = 2026 the year); LIKE 'abc%' is a prefix, LIKE without wildcards
// an equality.
//
// Replay evaluates a bound tree on each file's per-column lower/upper bounds, null and
// value counts with exactly the rules of iceberg-go's inclusive metrics evaluator, so that
// replay on the real current files ([ProjectCurrent], [FilesRead]) keeps the same files as
// tbl.Scan(table.WithRowFilter(…)).PlanFiles ([Measure], the ground truth, built on
// [ToIcebergExpr] from the same bound tree). In particular != and NOT IN never skip (a
// bound need not be a value of the column), comparisons and IN skip a file whose values are
// all null, IS NULL needs a null count that is not zero, IS NOT NULL skips only an all-null
// file, an IN list longer than 200 values only skips all-null files, and an empty file is
// never read. Planning also has a partition stage (the filter projected onto the
// partition spec and evaluated on each file's partition tuple), and a file is kept only
// when both stages keep it; replay models that stage for identity partitions (the value
// decides != and NOT IN and NOT LIKE 'p%' exactly) and for year/month/day/hour partitions
// (the value bounds the source column), with a null partition value comparing below every
// value, as iceberg-go's partition evaluator compares it. Bucket and truncate partitions
// are not modelled, which can only make replay read more files than planning. This
// agreement is tested on random predicate trees over a real unpartitioned table and over
// one partitioned by identity(region) and day(ts).
//
// For speed each column's files are indexed twice: ordered by lower bound (ascending) and
// by upper bound (descending), with a bitset checkpoint every 64 files of each order. The
// files a range leaf keeps ("lower ≤ hi", "upper ≥ lo") are a prefix of each order, found by
// binary search and materialized as one checkpoint copy plus fewer than 64 bit sets; AND
// and OR are word-wise over the bitsets. A query costs O(leaves · (log n + n/64)) instead of
// O(leaves · n).
//
// A candidate layout is projected from a [Sample] ([TakeSample]): a seeded sample of the
// table's live rows (deletes applied), holding only the predicate and layout columns,
// stratified by partition (package internal/sample): every partition gets
// RowsPerProjectedFile rows per file the rewrite would write in it and at least
// MinFraction of its rows, the whole capped at MaxRows (memory is bounded whatever the
// table's size); within a partition a share of its files is read, chosen with
// probability proportional to their rows, and thinned so that each of the partition's
// rows is equally likely to be kept. [Project] sizes the sample by the precision the
// decision needs: while a sampled candidate's SamplingErrorPP is wider than
// ProjectOptions.PrecisionPP (1 pp), it samples again with four times the rows per
// projected file (twice at most, never past MaxRows). [ProjectSample] orders each
// partition's sampled rows by the layout key ([layout.NewEncoder]; rank z-order and
// Hilbert fit [layout.FitQuantiles] on the sample and record them in
// [Projection.Quantiles], which a plan hands to the rewrite so that it cuts the cells
// that were projected), cuts them as the rewriter's writer fills files (each full at the
// target size, the last holding the rest), and takes each projected file's min/max, null
// and value counts for every predicate column — with string bounds truncated as the
// table's metrics mode truncates them — and its partition's tuple, so that the partition
// stage of planning prunes projected files as it prunes today's.
//
// Binpack is not projected from the sample: bin-packing concatenates a partition's files
// in data-sequence order, so each file it writes holds whole input files and pieces of
// two, and its bounds are the union of theirs, taken from the manifests. Which partitions
// it rewrites follows the rewriter's plan (small or oversized files, at least five of
// them); a table already bin-packed projects exactly what current does.
//
// Error bars. [Projection.SamplingErrorPP] is the bootstrap's: the sample is resampled
// Replicates (24) times, within each partition, by its sampled files with replacement
// (by rows, a Poisson(1) count each, in a partition whose every file was read), each
// resample is cut and replayed like the sample, and the bar is |mean − estimate| + 2 ×
// the standard deviation of the resamples' skip rates. [Projection.ErrorPP] adds how far
// the skip rate moves when every file is cut 1/16 of a file earlier or later (the
// writer closes a file within half of one of its eight row groups). Binpack's bar is how
// far its projection moves when each input file cut between two outputs goes whole to
// one. A projection with fewer than ThinRowsPerFile (20) sampled rows per projected file
// is marked [Projection.SampleThin], with [Projection.SampleNote] saying so; simulate
// prints "thin*" and the note instead of a number. [Projection.SizeErrorPP], also in
// ErrorPP, is the size model's part (below): how far the skip rate moves when the
// rewrite writes 10% more or fewer bytes than projected, the model's largest error on
// real rewrites (8.7%) with a margin; it is zero unless that changes a partition's file count,
// and large where a partition's bytes sit at a multiple of the target (a table
// compacted to one file per day, rewritten at the same target, writes one file or two
// a day as its bytes fall below or above it).
//
// The bound. For each query and partition, the sampled rows are judged one by one on
// their own values (a file per row, exact bounds, the same replay rules) and the count
// scaled to the partition's rows; a query matching M rows of a partition whose files
// hold R rows each reads at least ceil(M / R) of them under any order.
// [QueryResult.BoundFiles] is that sum per query, [Projection.MeanBoundFiles] its
// weighted mean and [Projection.BoundRatio] files read ÷ bound (1 is the best any layout
// with that many files could do).
//
// The box model. The bound lets each query have the table cut for it alone; a
// workload on several columns that do not narrow one another cannot have that.
// [Sample.BoxBound] prices the best grid of min/max files for the whole workload at
// once, under a model (independent columns, queries falling where the rows are, slabs
// for thresholds and rare values at a column's end, correlated columns merged): what
// a layout of that many files can be expected to reach (docs/layouts.md).
//
// # Trees
//
// A tree layout (`tree(ts, account_id, kind)`, [layout.Tree]) is learned from the workload
// before it is projected: [LearnTree] partitions the sample's rows greedily, top down, by
// cuts taken from the workload's own range and equality literals on the layout's columns
// (a literal true of less than a file's rows stretched to one file's rows) and, on
// low-cardinality columns, set cuts of the values the workload names with = and IN
// (`status IN ('error', 'timeout')`, see tree_set.go for which sets), each node
// taking the cut whose two sides, each sorted on the node's best column and cut into
// files, let the (weighted) queries skip the most rows beyond the node's own files, by
// the same min/max rules replay applies to files; a node is never cut on its own sort
// column, and stops when a side would hold fewer rows than one projected file or no cut
// gains. The one leaf smaller than a file is a tie cut's: rare values beyond a column's
// dominant one (error codes on 0.5% of the rows, every other row 0), which no cut can
// fill to a file, go into a leaf of their own, cut first, on any column. Each leaf is sorted by the column that lets its files skip the most. [ProjectSample]
// then orders the sample by the tree's keys (leaf, then the leaf's column) and cuts it as
// the rewrite writes a tree: each leaf of each partition alone, into as many files of
// equal rows as make a file nearest the target ([layout.LeafFilesFor]; a leaf of 2.3
// files' bytes is two files), so no projected file holds rows of two leaves and the file
// count is the leaves' sum. It projects that like any other layout, bound (at that file
// count) and error bars included (the bars hold the tree fixed: they do not count the
// variance of learning it; the size model's part counts the leaves whose file count the
// bytes could change, and there is no slack of where a file ends, which the writer
// settles by rows). The learned tree is in [Projection.Tree] for the
// plan to hand to the rewrite; a [TreeCache] reuses it for the same sampled rows and
// learning workload. ProjectOptions.TreeWorkload learns it from another draw of the
// workload than the one projected, as an honest evaluation does.
//
// [ExplainTree] says the learned tree in words a person can check, once, into
// [Projection.TreeExplanation], which every renderer prints: leaves, depth, rows per leaf
// and the top cuts, each with the rows on its sides (every sampled row routed by the
// tree's own key, scaled to the table) and the share of the projected workload's queries
// that read the cut's rows as one file but skip one side's, replayed on those rows'
// min/max as replay treats files.
//
// # File count after a rewrite
//
// A layout that clusters values compresses better: sorted by ship date, a lineitem
// table's date column becomes runs and its receipt date, correlated, a narrow range per
// file, and the rewrite writes 15–30% fewer bytes, so fewer files of the target size,
// each spanning a wider key range; a layout that scatters a column today's order
// clusters (time-ordered event timestamps under a sort on tenant) writes more. Cutting
// the projection into as many files as today's bytes fill made every file boundary land
// in the wrong place. So [Projection.SizeRatio] estimates the bytes written, column by
// column, as the rewriter writes them (zstd; dictionary-encoded where package pqdict's
// rule, judged at row-group scale, says so, else plain), in the layout's order and in
// today's (each partition's sampled rows in arrival order), and scales each column's
// bytes today (the manifests' column_sizes) by the ratio of the two: what the model gets
// wrong about a column in both orders cancels, and a column the layout leaves as random
// as today keeps today's bytes. A sample is sparse, and an order's locality shows at the
// table's density, not the sample's, so each order is brought to the table's density
// first. A dictionary-encoded column is encoded at the sample's density and at half of
// it and its bytes per row extrapolated as C · density^−α, α fitted from the two points
// and clamped to [0, 1] (a sorted column of few values halves its bytes per row when its
// runs double, α = 1; a column the order leaves random stays put, α = 0). A plain column
// (numbers, dates, timestamps) is not run-length encoded, and what zstd makes of a
// sparse sample follows no law of the density (sorted timestamps sampled 1 in 8 took
// more bytes than 1 in 16), so the rows the table holds between two neighbouring sampled
// rows are filled in (synthPlain in size.go): drawn between the two, in order, where the
// column runs one way through four sampled rows, else between two of the partition's
// sampled values at random, at the decimal resolution the sample shows; the filled-in
// column is encoded. On 200,000 time-ordered timestamps (a tenth late) sampled 1 in 20
// it comes out 9% above the table's bytes and within 1% for the same values in no order
// or for amounts in cents, sorted or not (TestPlainBytesPerRow); on bench/layout's
// streaming shape by day the bytes written were projected within 6.5%, within 8.7% on
// tables whose files iceberg-go's appends wrote (today's bytes then come from another
// writer, whose encodings the ratio takes for the rewriter's) (sort on tenant:
// 0.97 projected, 0.93 written; Iceberg-exact z-order on tenant and amount, which
// scatters the timestamps: 1.04 and 1.09, where the model before, keeping plain columns
// at today's bytes, said 0.83). String columns written plain, columns not sampled and
// files without column sizes keep today's bytes.
//
// A file also takes bytes its rows do not: its footer (each row group's and column's
// metadata and statistics, the schema) and its row groups' page headers and dictionary
// pages, which it pays however few rows it holds, so a table of many small files holds
// far more bytes than its rows need. Each file's overhead is estimated from today's
// files (fileOverhead in size.go): the intercept of file bytes against file rows,
// fitted over the files by least squares, no less than the mean footer the manifests
// show (file bytes minus column sizes) and no more than the smallest file; where rows
// hardly vary across files the intercept is not determined and the footer is taken.
// A partition's rows then hold its bytes less its files' overhead, the rewrite writes
// them at the ratio above, and each file it writes pays the overhead again (counted at
// most half the target): a partition's files are ceil(rows' bytes × ratio / (target −
// overhead)), and [Projection.SizeRatio] is what that writes over today's bytes.
// Binpack packs its input files the same way, by the bytes beyond their overhead (its
// SizeRatio stays 1: it keeps the order). On bench/layout's streaming shape by day as
// appended (a day's file plus a small file of late events) and compacted to five small
// files a day, every candidate's file count is then the rewrite's and every projection
// within 2 pp of the measurement (before, z-order projected 57 and 52 files where 30
// were written, 9.4 and 8.5 pp off; binpack 53 where 33 were written); the bytes of the
// second are still overstated (0.70–0.84 projected, 0.55–0.63 written; binpack wrote
// 0.64), since the intercept of a table whose files all hold eight row groups does not
// see how a larger row group compresses better. Where a partition's bytes sit at the
// target a few percent of size error still flips its file count: at 600k rows compacted
// to three files a day, z-order projected 1.02 of today's bytes where 0.98 were written,
// 57 files where 31 were, 16.4 pp off inside its 17.5 pp bar (SizeErrorPP is that case;
// bench/results/layout-stream-30files-by-day-compacted-few.json).
//
// Bias and error bound. A projected file's true range contains the range of its sampled
// rows, so naive sample min/max is optimistic (it can only overstate skipping). By order
// statistics, the unsampled rows of a file lie, in key order, between the last sampled
// row of the previous file and the first of the next; each projected file's range is
// therefore widened to those two neighbours (within its partition), which covers the true
// range of the leading key column and part of the gap of the others. [Projection.BiasPP]
// is the naive projection's skip rate minus the widened one: how optimistic naive min/max
// was for this layout and workload.
//
// # Cost
//
// [Project] reads one sample for every candidate and projects the candidates
// concurrently, one per core. What the candidates share is computed once on the
// [Sample]: each column's keyed values (the string ranks included) and each quantile fit
// (a z-order and a Hilbert candidate on the same columns cut the same cells). What stays
// per candidate is its key, the sort (a radix sort on the partition and the key's first
// 16 bytes when every key fits them, as the keys of a sort on a column or two, z-order
// and Hilbert do), the size model's encodes and the cuts (the projection, the naive one
// and the bootstrap replicates). The size model's encodes were a third of planning's
// CPU while every layout took and hashed each sampled string twice; a string column is
// now coded once per sample (its distinct values and each row's index) and each layout
// hands the Parquet writer a dictionary array of int32 codes, which writes the same
// bytes up to page headers (see coded in size.go). The sample is bounded
// (sample.Options.MaxRows rows, read from at most FileOversampling times that many), so
// the cost of planning levels off as the table grows while a rewrite's does not:
// bench/plan measures both on one table (bench/results/plan.json).
//
// # Invariants
//
//   - Projected files are cut from a sample ordered by the same [layout.Encoder] keys the
//     rewriter sorts by, and rank z-order and Hilbert projections record the
//     [layout.Quantiles] they were cut with, so a plan can hand the rewrite the very cells
//     it projected.
//   - Replay is conservative: a filter term it cannot bind is "may match", so it never skips
//     a file iceberg-go's scan planning would read (checked against [Measure] on random
//     predicate trees).
//   - Bad input (an unknown column, a layout that does not validate, an unsupported type) is
//     an error naming it, never a panic.
package simulator
