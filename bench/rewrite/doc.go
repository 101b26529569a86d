// Package rewrite benchmarks floe's native compaction (rewriter.RewriteGroup)
// against DuckDB on the same input, in the same run.
//
// # What is compared
//
// A seeded generator ([PrepareDataset]) writes an unpartitioned Iceberg
// table of TPC-H lineitem-like rows as many small files through iceberg-go
// appends (SQL catalog on SQLite, file:// warehouse), cached on disk between
// runs. For each layout (a linear sort, zorder, hilbert) both engines
// rewrite every row of the table into globally ordered Parquet files:
//
//   - floe reads the table's files as one group and runs
//     rewriter.RewriteGroup with a memory budget (512 MiB by default) and a
//     128 MiB target file size. The files are written under the table's data
//     location and not committed.
//   - DuckDB runs the order-correct equivalent: CREATE TEMP TABLE s AS
//     SELECT * FROM read_parquet([...]) ORDER BY key, then one
//     COPY (SELECT ... FROM s LIMIT n OFFSET k) per output file, with n taken from the file floe
//     wrote at the same position, so both sides cut the same files. A single
//     multi-file COPY ... ORDER BY would write files whose key ranges
//     overlap. DuckDB runs with its defaults (threads = cores, memory limit
//     80% of RAM) and writes zstd, the codec floe writes.
//
// # Partitioned
//
// BenchmarkRewritePartitioned takes the same rows in daily partitions
// (day(l_receiptdate), 30 by default, [DatasetOptions.Partitions]) in the
// streaming shape: each appended file holds one day's rows. floe reads the
// table's files grouped by partition and rewrites one group per partition
// with rewriter.RewriteGroups, as many at once as there are cores, the
// memory budget split between them. DuckDB rewrites the same partitions one
// after the other, each with its own sorted temp table (all threads on one
// sort) and its files cut at floe's row counts for that partition. Both
// engines' files are checked for order within each partition.
//
// DuckDB has no z-order or Hilbert function. For those layouts its input is
// a copy of the table's files with one extra binary column, _floe_key,
// holding floe's own key for the row ([Dataset.KeyedCopy], computed before
// the timed run with the same simulator encoder and quantiles); DuckDB sorts
// by that column and leaves it out of the files it writes. DuckDB therefore
// does not pay for computing z-order or Hilbert keys, floe does, and DuckDB
// reads one more column. For the sort layout both read the same files.
//
// # The Parquet floor
//
// With [Config.Floor] each repetition also runs a third engine,
// [EngineFloor], in floe's pure-Go child right after floe: it reads the
// table's files with arrow-go's Parquet reader (pqarrow) and writes their
// rows in file order, unsorted, through floe's own rewriter.Writer, with
// the options floe's rewrite of the same group would give it
// (rewriter.GroupOptions.WriterOptions: codec and level, row-group bytes,
// file target and cuts by the same rule, the same dictionary rule), and
// partitions spread over workers as rewriter.RewriteGroups spreads them
// (rewriter.GroupOptions.Share). It is the cost of decoding and encoding
// these rows, which floe cannot go below without changing the bytes it
// writes; what floe spends above it is the layout's work (keys, sort,
// spills, gathers) and the content check. Its files are checked to hold
// the input's rows (digest); being unsorted they compress less, so they
// are bigger and cut after fewer rows than floe's. One difference favours
// floe: floe carries low-cardinality strings as dictionary codes from the
// scan to its writer, while the floor's writer hashes every value into
// its dictionaries (see runFloor).
//
// # CPU by phase
//
// With [Config.Phases] the first run of floe and of the floor per layout
// writes a runtime/pprof CPU profile, read with github.com/google/pprof's
// profile package ([SplitProfile]). Each sample is given a [Phase] by the
// functions on its stack ([ClassifyStack]): Parquet decode, key encoding,
// sort (with spills), gather, encode, compression, the content check
// (verify) and other, from rules over package and function names tried in
// order on each function, the leaf-most function some rule names deciding
// (so memmove or the allocator count for the phase that called them), except
// that a sample under floe's content check counts for the check whatever
// it does, and so does one of a goroutine the check started (iceberg-go's
// scan workers reading the output back), which carries the rewriter's
// pprof label (rewriter.ProfileLabelPhase) instead of the check on its
// stack. A phase's CPU-seconds per million rows are its share of the
// samples times the engine's median CPU-seconds per million rows.
// docs/rewriter-profile.md is generated from the committed result
// ([WriteProfileDoc]); TestProfileDocIsCurrent keeps it current.
//
// # How it is measured
//
// Each engine runs in a child process. floe's is a pure-Go executable,
// bench/rewrite/floechild, built with CGO_ENABLED=0 at the start of the
// run ([BuildFloeChild]) as the floe binary is; DuckDB's is the
// benchmark's own test binary, which links DuckDB, re-executed. Both get
// [ChildEnv] holding a JSON [Job] ([Run], [ServeChild]). Until commit
// 7b035e3 floe ran in the test binary too, and carried DuckDB's idle
// resident set (about 125 MiB) in its peak; the pure-Go child idles at
// about 80 MiB, most of it iceberg-go's and its cloud SDKs' package
// initialisation (iceberg-go's table/substrait alone allocates about 32 MB
// at init), which every floe process pays. The parent records the child's
// wall time and user+system CPU (getrusage of the waited child); the child
// reports its own peak resident set (VmHWM of /proc/self/status) just
// before it exits. ru_maxrss is not used for the peak: Go starts children
// with CLONE_VM|CLONE_VFORK, and exec keeps the high-water mark of the
// address space it leaves, the parent's, so a child of a big parent would
// report at least the parent's RSS. An [EngineIdle] job in each child
// measures its baseline (idle_floe_child_rss_mib,
// idle_duckdb_child_rss_mib). floe's child sets the soft heap limit floe
// compact --memory sets (rewriter.HeapLimit of the budget: 896 MiB at
// 512 MiB, above what the runs here reach, so it does not bind).
//
// # What is recorded
//
// Each layout runs FLOE_BENCH_REPS times (3 by default), floe, the floor,
// then DuckDB in each repetition. The result holds the medians, the min and max of both
// engines' wall times and of the per-repetition throughput ratio (a ratio
// taken within one repetition sees the same machine load on both sides),
// each engine's CPU-seconds per million rows (it depends on the CPU, not on
// the number of cores, so it travels between machines better than a wall
// time), each engine's minor page faults (ru_minflt: about one per page of
// its peak resident set, each costing the machine's
// bench.Machine.PageFaultMicros; DuckDB, which holds the table in memory,
// takes several times floe's), both engines' output bytes and their ratio
// (floe's files must stay within 5% of DuckDB's: a faster setting that
// writes bigger files is no win), floe's tracked Arrow peak and the most
// its rewriter.PagePool had mapped at once (peak_arrow_mib, peak_pool_mib:
// the part of its resident set that is Arrow buffers), and the machine
// block of bench.Result (CPU model, cores, commit, load before and after,
// cost of a page fault).
//
// # What is checked
//
// After a run the parent reads every output file back: [CheckOrder]
// recomputes the layout key of each row with the simulator's encoder and
// counts adjacent rows out of key order across the files in order (zero
// means globally ordered), and the row multiset of the outputs must equal
// the input's ([Digest], or internal/oracle's DuckDB checksum when built
// with the duckdb tag).
package rewrite
