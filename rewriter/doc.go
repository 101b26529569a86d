// Package rewriter executes approved layout plans against Iceberg tables.
//
// This file set is the native engine: it rewrites one group of data files
// (normally one partition) into files ordered by a layout key, within a fixed
// memory budget, and returns the new [iceberg.DataFile]s without committing
// them (committing, retrying and conflict handling live beside it).
//
// The layout key is the [layout.Encoder] of the plan's layout, the key the
// simulator projected with. Rank z-order and Hilbert keys use the plan's
// [layout.Quantiles] when it has them (the cells that were projected), else
// quantiles fitted on a sample read by internal/sample, sized and seeded as
// the simulator's projection sample. The rewriter imports no other stage.
//
// # Pipeline of one group
//
//	scan (iceberg-go ReadTasks, 32 files per call, deletes applied; or, in a
//	group with coded columns, the rewriter's own read of each file no delete
//	applies to) → dictionary codes → Sorter (external merge sort by Keyer)
//	→ rolling Parquet writer → []iceberg.DataFile
//
// What runs in parallel: the scan decodes files on its own workers; while the
// next run fills (layout keys computed, entries sorted), the previous one is
// copied into key order and spilled on a background goroutine, several
// columns at once. The Parquet encoder, fed through a small channel, gives
// every column its own goroutine and queue (flat schemas; nested ones go
// through pqarrow one column at a time), so a column busy compressing a page
// holds no other up and the columns only wait for each other when a row
// group is flushed. The final merge hands its merged rows to the encoder
// uncopied (a pickBatch names which rows of which spilled batches), and each
// column gathers them into a scratch buffer it reuses when its turn comes.
// So decode, key+sort and spill overlap while runs form, and merge and
// encode overlap after; [RewriteGroups] runs several groups at once,
// splitting the memory budget.
//
// Row counts are checked, so nothing is lost silently: the live rows read
// from every chunk of inputs must equal the sum of their manifest
// record_count when no delete applies, and otherwise lie between that sum
// less the record_count of the position deletes and deletion vectors that
// apply (no lower bound for files with equality deletes) and the sum itself;
// the rows written must equal the rows read. A failing chunk is read again
// file by file to name the file, its partition and both counts
// ([ErrInputMismatch]); read errors name the file and partition too.
//
// Content is checked, so nothing is changed silently: every live row read
// (deletes applied) is digested as the read yields it, before anything else
// sees it, and once the output files are closed they are read back through
// iceberg-go's scan, as an engine reads them (columns by field id, on the Go
// allocator, not the [PagePool]), and digested the same way. The digest
// (internal/rowsum) is a row count, the sum and xor of one hash per row and
// one sum per column, all order independent, so a sort or a clustering
// changes nothing of it while a changed byte, a lost or duplicated row or
// values recombined across rows do. Unequal digests fail the group with
// [ErrContentMismatch] before anything is committed, naming the output
// files and the columns that differ; the files are kept, with an evidence
// record under the table's [EvidenceDir], for someone to look at.
// [CommitGroups] commits no group without a passed check ([ContentCheck])
// that counts every row of its outputs, and the replace snapshot records
// the digest in its summary ([PropContent]). What the check covers is the
// rewriter's own work and the bytes on storage: sort, dictionary codes,
// gathers, Parquet encoding and compression, the files themselves. What it
// cannot cover is the read it digests: a fault inside iceberg-go's scan
// (applying deletes, decoding) reaches both sides alike; the row bounds
// above and the tests against DuckDB, which reads the same files with its
// own reader, are what guard that. Reading back costs about one more
// decode of the output and two digests (see bench/rewrite for the figure).
//
// # Where the CPU goes
//
// Measured on 2M TPC-H lineitem-like rows (16 columns, 5 of them strings) in
// 80 files, sorted by two columns at a 512 MiB budget, 11 CPU-s in all (20.5
// before the hand-written gather): Parquet encoding about 40% (zstd alone
// 17%, dictionary hashing 10%), copying rows into key order when runs are
// spilled 20%, Parquet decoding 10%, layout keys 5-10% (Hilbert the most),
// the run sort 7%, the merge 4-8%. Rows are copied by hand (gather.go), not
// with compute.Take: a kernel dispatch and a goroutine per column, builders
// growing as they go, and one source at a time, so that a merged batch had to
// be taken piecewise, concatenated and permuted again, was 38% of the CPU. A
// sorted run is copied one column of the whole run at a time: its rows are
// read in key order, at random, and random reads within one column's values
// hit the cache far more often than reads across whole rows. Sort entries and
// merge cursors carry the first 16 bytes of the key, so most comparisons are
// two integer compares; runs are merged through a loser tree. When every key
// of a run fits in those 16 bytes (sorts on a few fixed-width columns,
// z-order and Hilbert keys) the run is radix-sorted instead, one stable pass
// per key byte that varies.
//
// At 10M such rows in 400 files (bench/rewrite, 512 MiB, 128 MiB files) a
// CPU profile of the sort (FLOE_BENCH_CPUPROFILE, the code of commit
// 3141ad2, 2 cores of a Turin-class VM whose faults cost 16 us) split its
// 21.5 CPU-s over 12.7 s of wall time, by the work each sample fell in:
// Parquet encoding 43% (zstd 22 points of it, gathering the merged rows
// into the columns' scratch 6), decoding the input 19% (zstd 3 points),
// copying each run into key order before it is spilled 14%, writing spill
// files 8% (write(2) into the page cache, most of it), row keys, sort
// entries and the radix sort 7%, the merge 3%, GC marking 2%, reading the
// spills back 1%. The same binary without the [PagePool] (commit 803755f,
// profiled the same hour: 21.1 CPU-s over 12.1 s, a lighter moment of the
// machine) had decoding at 23%, more of it growing and zeroing fresh
// buffers, and 183k minor faults against 112k. An earlier profile (commit ca0e3b9,
// an EPYC VM with 13.7 us faults: 18.4 CPU-s over 10.1 s) had encoding at
// 40%, decoding 23%, the run copy 14%, spill writes 4%. The profile before the merged rows reached the writer uncopied
// (commit 455113e: 22.8 CPU-s over 13.0 s) had the gathers at 20%, merged
// batches 6 points of it, and allocation at 9%, most of it zeroing new
// large Arrow buffers (Arrow relies on zeroed memory). The Hilbert rewrite
// of the same table (profile of commit 24822c4) took 27.2 CPU-s: its keys
// are 5% and the producer goroutine that computes them 14% (10% in the
// sort). An older profile, before runs were radix-sorted and before the
// encoder gave every column its own goroutine, had 47 CPU-s: gathers 25%,
// zstd 20%, the rest of encoding 12%, the comparison sort 8%. Sampled every
// half second, both cores stay 85-100% busy from the first second to the
// last, so what is left to win is CPU, not overlap; and on these shared
// machines the same run's CPU-seconds vary noticeably from one run to the
// next (20.6 to 26.9 CPU-s for one binary within an hour, the day the
// merged rows went uncopied), so a change worth a few percent needs several
// paired runs, on a quiet machine, to see.
//
// The same rows in 30 daily partitions (bench/rewrite's partitioned shape,
// two groups of 333k rows at a time with 256 MiB each, no spills; profile
// of commit d1cd202, sort(l_shipdate, l_orderkey)) took 19.2 CPU-s over
// 10.0 s: Parquet encoding 26% (zstd 17%), decoding the input 17% (zstd
// 4%), gathering runs into key order 15%, allocation 14% (zeroing 11%: most
// of it fresh Arrow buffers, which a group of 30 allocates 30 times, and
// builders growing by reallocation), system calls 6%, the radix sort 2%, GC
// marking 3%. With the sort's key and entry buffers lent from one group to
// the next (RunBuffers), growing them is 0.23 CPU-s (1.2%) of that zeroing
// (an earlier profile, before the lending, had about 6%); the Arrow buffers
// are the larger part left, and recycling them needs an
// allocator that zeroes what it hands back, which is what the remaining
// zeroing costs anyway, less the page faults.
//
// A profile of the same partitioned sort at commit 3ace837 (zstd encoders
// with a 2 MiB window; 18.3 CPU-s over 9.6 s) has: Parquet encoding 42%,
// of which zstd 26 points, the dictionary columns 8; decoding the input
// 19% (zstd 4, byte arrays appended one at a time into arrow-go's
// BinaryBuilder 8); gathering runs into key order 16% (byte arrays 11,
// mostly memmove of values at random addresses); row keys 4%, the radix
// sort 3%, GC marking 3%. Of the rest, arrow-go's page buffers (its
// encoding package's pool, on the Go heap) growing by copy and being
// zeroed on release are about 4%, and the frame checksum zstd wrote and
// checked 0.7% (turned off at cdd11d7 and back on at 7b035e3: it is the
// only check a damaged page meets on iceberg-go's read path, see
// zstdPageCodec). What was left was mostly zstd at level 3, the same level
// DuckDB compresses at with libzstd, and copies whose cost is their cache
// misses; the one larger lever was the low-cardinality strings
// (l_shipmode, l_shipinstruct, the flags): decoded byte by byte, gathered
// at random, hashed again by the writer. That lever is now pulled: see
// Dictionary codes below. In six alternating rounds of bench/rewrite's
// partitioned sort (floe-only children; exploratory, not a committed
// result) the medians were 16.7 CPU-s before, 15.3 with the codes
// (hashing moved from the writer to the reader, copies smaller) and 14.4
// with the files' dictionary pages read as such, walls 8.8, 8.0 and
// 7.5 s. A profile of that sort at commit 83f4262 (13.7 CPU-s over 7.2 s,
// both cores busy throughout) splits it: zstd encoding 29%, the rest of
// encoding about 12% (dictionary flushes 4 of it), decoding the input 14%
// (zstd 5), copying each run into key order 12% (fixed-width gathers at
// random, their cache misses most of it), row keys and entries 4%, GC 4%,
// the radix sort 3%, system calls 3%; coding the strings is under 1%.
// Against DuckDB that is 1.88x on this sort and 1.93x on Hilbert in the
// result at b309e7d, 1.97x and 2.18x in the one at 6e3c306 (decoding a
// directly read file's columns on one goroutine when each group has a core
// of its own) and 2.04x and 2.09x at db5f357 (a dictionary column's index
// buffer sized for the row group at once): the sort sits at the edge of
// what the machine's noise moves, and no single item above but zstd, whose
// level is the table's and DuckDB's, is worth a few percent. Before the
// first group starts, iceberg-go plans the scan: 0.17 s of the 7.2 s for
// this table's 400 single-file manifests (timed alone, twmb/avro compiling
// each manifest's schema anew), with both cores busy, and its table/substrait
// package's init takes 0.1 s of every floe process (GODEBUG=inittrace=1).
// RewriteGroups runs two of those groups at once, one per core; in a
// floe-only run of the same sort at 7b035e3 (the benchmark's test binary,
// exploratory, one rep each) one group at a time took 15.6 s against
// 10.1 s and peaked at 423 MiB against 630: holding two groups is what
// keeps both cores busy, and why floe's peak is not a third of DuckDB's,
// which sorts one day's partition at a time.
//
// The latest profile of that partitioned sort (commit e6e6a78, after the
// sort's buffers left the Go heap and the page pool began moving trimmed
// reader buffers; 15.9 CPU-s over 8.6 s, a busy hour of the machine, whose
// benchmark run of the same code took 13.7 CPU-s) splits it: zstd
// encoding 32%, decoding the input 17% (zstd 4), gathering runs into key
// order 10%, the writer's dictionary flushes 4%, row keys and entries 5%,
// GC marking 5%, system calls 4% (reads of the input files most of it),
// the radix sort 3%, and the pool's reallocations 3% (the moves of trimmed
// buffers about 1 point of it). zstd, at the table's level and DuckDB's,
// is a third; the rest is spread thin.
//
// Much of what a profile files under zeroing and system calls is page
// faults: on those VMs the first touch of a fresh page costs 11-14 us
// (bench.Machine.PageFaultMicros: 13.7 in rewrite.json at baecfed, 12.0 in
// the one at ee0e07b), the CPU's instruction that touched it gets the
// sample, and a sort of 10M rows at 512 MiB takes about 0.2M minor faults,
// roughly its peak resident set once, so about a tenth of its CPU. Two things that looked like spill costs
// were not (profile of commit 65a478a and paired floe-only runs of
// bench-rewrite at it, one rep each, exploratory and not committed as results):
// pointing the spill directory at tmpfs left the CPU-s per million rows
// where they were (2.10-2.12 against 2.02-2.23 on ext4), and bounding a
// spill file's dirty pages with sync_file_range(2), which cut write(2)'s
// system time 5-10x in a standalone test, made no difference inside the
// rewrite (2.07-2.15 against 2.08-2.09). Lowering GOGC to 50 cut the peak
// resident set by a sixth but not the faults (166k against 180-189k) and
// cost more in marking.
//
// More that did not pay, from floe-only runs of bench-rewrite's sort (CPU-s
// of one rep each, the new code against the old in alternating pairs;
// exploratory, not committed as results):
//
//   - Picking a run that never spilled instead of copying it (the
//     partitioned shape): in batches of 8,192 rows 21.4 and 22.0 CPU-s
//     against 17.9-19.2, because the dictionary columns then looked their
//     values up where they lay, a loop whose branches depend on the loaded
//     value and so waits for each cache miss, where a copy's tight loop has
//     many misses in flight; as one batch of the whole run 17.0 and 18.6
//     against 17.0 and 16.8, with a peak resident set of 831 and 846 MiB
//     against 760 and 738, the run being held until its last column was
//     encoded.
//   - Cutting every column's last page in parallel before a row group's
//     close, which compresses them one column after the other: 22.7 and
//     23.2 against 22.5 and 23.2 (partitioned 19.6 and 17.6 against 20.2
//     and 17.3): the close's CPU moves, and no core was idle during it.
//   - Scan batches of 32,768 rows instead of 8,192: 16.3-17.7 against
//     16.5-17.1 partitioned, 18.8-19.3 against 18.9-19.3 unpartitioned,
//     four pairs each.
//   - Looking byte arrays up in dictionaries of up to 8 values by
//     comparing them instead of hashing them for the map: 18.5-19.3
//     against 18.6-19.5, four pairs.
//   - GOGC=200 in the partitioned shape: the same CPU, a peak resident set
//     of 983-1035 MiB against 688-762.
//
// # Dictionary codes
//
// A sorted group carries its low-cardinality strings as int32 codes from
// the scan to the writer (columnCodes). On the group's first batch the
// writer names the string and binary columns it would dictionary-encode
// (its pqdict rule, or the table's per-column setting), less the layout's
// key columns (a keyer that does not name them, [layout.Encoder] does, gets
// none); each batch is then coded against a codebook per column, values
// numbered in order of first appearance, before the sort sees it. Sort
// runs, spill files, the merge and the gathers move four-byte codes where
// they moved an offset and the bytes of each value, each read at a random
// place; the writer's dictionary takes a row's value by its code
// (dictColumn.addCodes: a slice lookup where it hashed the bytes) and writes
// the dictionary and indices it would have written from the values, and a
// column written plain gets its values back (decodeColumn). The codes are
// the group's own and never reach a file: TestRewriteGroupCodesLowCardinalityStrings
// rewrites tables with and without them, spilling and not, and requires the
// same rows in the same order. A codebook holds at most a dictionary page
// (write.parquet.dict-size-bytes, plain-encoded size): a column that outgrows
// it would be written plain anyway, so the group, which has written nothing
// yet (a sort writes after its last input row), is read again without codes
// (GroupStats.Reads is then 2). The books are Go memory outside the tracked
// budget, at most a dictionary page per coded column.
//
// The files of such a group that no delete applies to are read by the
// rewriter itself (parquetFiles), with arrow-go's Parquet reader asked for
// dictionary arrays of the string columns: a dictionary-encoded page then
// gives indices, and a row's code is its dictionary value's, each value
// looked up once (encodeColumn), where iceberg-go's scan, which sets its
// own read properties, decoded every row's bytes. It takes a file only when
// nothing of the scan's work is needed: a whole Parquet file of a table of
// format version 2 or less, every column of the scan found among its flat
// columns by field id and of the scan's very Arrow type. A column added
// since, a promoted type, a file without field ids, nested columns and any
// delete leave the file to iceberg-go (TestRewriteGroupReadsEvolvedFiles,
// TestRewriteGroupPassesWithDeletes). Each file read so has its rows checked
// against its record_count, and a read error names it, as for iceberg-go's
// reads (TestRewriteGroupNamesUnreadableInput); GroupStats.DirectReads
// counts them. Until the codes are settled on the first batch every string
// column but the keys comes as a dictionary array; after, only the coded
// ones, and a batch's other dictionary arrays get their values back. A
// column is asked for as a dictionary only where the footer's page
// encoding stats say every data page of it is dictionary-encoded
// (dictPagesOnly): arrow-go reads one that fell back to plain pages by
// hashing each value into a dictionary, so such a column comes as values
// and is coded by hashing them, as are the files iceberg-go reads.
//
// # Memory
//
// Every Arrow allocation of the engine goes through one [TrackingAllocator],
// so the budget is measured, not estimated: the scan's, the sort's, the
// spill reader's and the Parquet encoder's (its pages and dictionaries,
// through parquet.WithAllocator; they used to be on the Go heap, uncounted,
// and arrow-go's encoders still keep a small pool of their own there).
// Under it sits a [PagePool]: buffers of 32 KiB and
// more are mapped by floe in transparent huge pages and reused the moment
// they are released, instead of waiting on the Go heap for a collection.
// In paired floe-only runs of bench-rewrite's sort (one rep each, old and
// new binaries alternating; exploratory, see bench/results for committed
// figures) it cut the minor page faults from 187-201k to 108-123k and the
// CPU-seconds by 13-18%, unpartitioned and partitioned alike, at the same
// peak resident set. [RewriteGroup] gives three
// quarters of GroupOptions.MemoryBytes to the [Sorter], an eighth to the
// Parquet writer's buffered row group (row groups are sized to fit, with the
// 4 bytes a row each dictionary column holds until the flush) and leaves
// the rest to the scan's in-flight batches and the hand-over queue. Inside the
// sorter, each of the two live in-memory runs (one filling, one being sorted
// and spilled) gets a quarter of its share — the first run half, since
// nothing is being spilled while it fills, so a group of up to half the
// sort's share (a day's partition, typically) is sorted without spilling — and the merge's read buffers (FanIn
// spilled batches, sized from the measured bytes per row) another quarter;
// more runs than FanIn are merged in intermediate passes, so the bound holds
// whatever the table size. Copying a run into key order releases each input
// column once it is copied, so a run grows by at most the few columns being
// copied at the time. Keys and row entries (40 bytes a row, and as much again
// for the radix sort's scratch) are counted in the run's share and handed
// from each spilled run to the next, and from one group to the next of a
// [RewriteGroups] worker ([RunBuffers]). From 1 MiB up they are mappings of
// their own outside the Go heap: they hold no pointers, and on the heap they
// were live data that the collector's pacing doubled (at GOGC=100 the heap
// grows to twice what is live before a collection). In bench/rewrite's
// partitioned shape they were 68 of the 127 MB live on the Go heap at its
// peak; moving them cut the peak resident set from 493-557 to 407-429 MiB
// in paired floe-only runs of the sort (three pairs, exploratory), and
// unpartitioned from 611-636 to 504-509 MiB (two pairs). It is not free:
// the same pacing that doubled them spaced the collections by them, so the
// partitioned sort collected 144 times where it had 69 (GODEBUG=gctrace=1,
// 1.15 against 0.69 CPU-s of collector work), and each collection empties
// the sync.Pools arrow-go and the zstd codec keep their buffers in. Five
// pairs put the CPU 3% higher. The spans materialize copies by (12 bytes a
// row, 8% of the bytes that rewrite allocated on the Go heap, grown by
// append per chunk) now go with the run's other buffers, which brought it
// to 134 collections and, in four triples of old, mapped and mapped with
// spans, the CPU back within the machine's noise of where it was.
// The pool also moves a buffer that is cut down to a smaller class
// ([PagePool.Reallocate]). arrow-go's record reader reserves the next power
// of two of the values a batch may read, so a batch of 8,192 rows that
// crosses a data page reserves 16,384, and trims the buffer when it hands
// it over; the pool used to keep the trim in place, and every fixed-width
// column of a scanned batch held a block twice its size (an instrumented
// run of bench/rewrite's partitioned sort: 649 blocks of 128 KiB out at
// once, 81 MB, for 8-byte columns of 64 KiB). The tracked bytes counted
// the trimmed length, so neither the budget nor the peak Arrow bytes saw
// it. Moving them costs a copy of each such column; in four pairs of
// floe-only runs of that sort (exploratory) the peak resident set went
// from 445-466 to 401-438 MiB and the CPU from 13.6-13.8 to 13.0-13.3 s,
// the freed blocks being reused while still in cache.
// Run buffers that wait for the next run (the set a spilling sort keeps
// while it fills the other, a worker's set while its group is encoded, and
// the radix sort's scratch once a run is sorted) give their pages back and
// keep their mappings, where the kernel gives huge pages: faulting them in
// again is a fault per 2 MiB. In paired floe-only runs of bench/rewrite
// (exploratory) the unpartitioned sort peaked at 378-381 MiB against
// 495-508, the partitioned one at 351-383 against 386-422, for CPU within
// the machine's noise. Dropping the pages of the page pool's empty slabs
// the same way was tried and cost 15-20% more CPU, a third of it system
// time: slabs empty and fill again far more often than runs end.
//
// What the partitioned sort's peak is made of (bench/rewrite's shape, two
// groups at once; the code of e6e6a78 sampled every 20 ms, the breakdown at
// the highest VmRSS, two runs, exploratory): of 409-410 MiB, 71-72 are the
// binary's own pages (RssFile: the kernel maps its text in large folios),
// 143-159 the Go runtime's (objects 43-56 MB, of which 25-37 live at the
// last collection; 66-75 MB of free spans the runtime keeps for the heap's
// next growth, most of the rest), 118-138 the page pool's mappings and 73
// the run buffers' (two workers' entries, radix scratch, keys and spans;
// waiting ones now give their pages back, see above).
//
// Why that is not a third of DuckDB's 592-665 MiB (197-222), measured at
// baa70d9 (exploratory; the idle figure is in the committed results):
//
//   - An idle floe process is 72 MiB (bench/results, "baseline RSS"): 55
//     of the binary's pages that package initialisation touches (RssFile;
//     the cloud SDKs, protobuf registries and grammars iceberg-go links)
//     and 18 of anonymous memory, before a table is opened.
//   - The Go runtime's share is mostly live data, not slack. At the peak of
//     its retained memory (runtime/metrics every 20 ms): 85 MiB of heap
//     objects (58 live at the last mark, a heap goal of 118), 48 of freed
//     spans not yet returned, 11 unused in spans. A heap profile at the
//     highest live heap puts arrow-go's Go-allocated buffers (the encoders'
//     PooledBufferWriter, arrays under 32 KiB) at 39%, the buffered row
//     group's compressed pages (bytes.Buffer growth in arrow-go's
//     bufferedPageWriter) at 15% and the zstd encoders at 20%.
//   - Squeezing it costs the throughput target. Three rounds alternating
//     with the stock binary: a Go memory limit of 100 MiB took 16-55 MiB
//     off the peak for 33-63% more CPU; 160 MiB changed nothing beyond
//     the noise; GOGC=50 took 20-69 MiB off for 1-36% more CPU.
//
// So without the page pool's 118-138 MiB (the groups' rows) at all, the
// binary, the Go runtime and the sort's entries would still come to
// 72 + 143 + 73 = 288 MiB, past a third of DuckDB's. Getting there needs
// all of them cut at once: the rows (sort the key columns alone, then read,
// gather and write one column at a time), the sort's entries (40 bytes a
// row and as much scratch, where a short key needs 24) and the encoders' Go
// memory (a column-at-a-time writer streams its pages instead of buffering
// the row group). Projected from the figures above that lands at 220-240
// MiB, the edge of the target, and puts the 2x at risk: the key columns
// are decoded twice, and the coded columns (read as dictionary indices)
// would have to be carried through a gather of one column at a time.
//
// Rows with equal keys keep their input order. The merged rows waiting in the writer's queues hold the spilled
// batches they come from, where they used to hold copies of the same rows;
// the scratch the writer's columns gather them into (one per column encoding
// at once, as large as one column of a merged batch) is Go memory outside
// the tracked budget.
//
// # Spill files
//
// Sorted runs are written as uncompressed Arrow IPC streams with the row keys
// as an extra binary column: IPC round-trips every Arrow type exactly and is
// read back one batch at a time, and stored keys spare the merge from
// recomputing them. Writing and reading them back is 3-4% of the CPU on
// local disk, so no codec is used. All spill files of a sort are removed when
// its iterator returns, also on error, cancellation or early stop.
//
// # Output files
//
// Files are written in the table's schema with Iceberg field ids (the file
// pqarrow.FileWriter writes: its Parquet schema and ARROW:schema metadata),
// under the table's data location and partition path, and described with
// iceberg-go's own statistics code (table.DataFileFromMetadata), which honours
// the table's metrics configuration. A file is rolled over when its flushed
// bytes plus the estimated size of its buffered row group reach the target;
// row groups are a fraction of the target, so files land within a few percent
// of it. Dictionary encoding is enabled per column only where a sample shows
// few distinct values; such a column is held as dictionary indices until its
// row group is flushed, then written a page at a time (writer_dict.go). The
// codec and its level are the table's
// (write.parquet.compression-codec and -level); with the level unset, zstd
// runs at klauspost/compress's SpeedDefault, the counterpart of zstd level 3,
// which is also the default level of DuckDB's Parquet writer
// (ZSTD_CLEVEL_DEFAULT), so benchmarks against DuckDB compare like with like.
// The package registers its own zstd codec with arrow-go (zstd.go): the
// same encoder options and bytes, but a 2 MiB window instead of 8 MiB, since
// each page is compressed alone; arrow-go's encoders each held a 16 MiB
// history buffer, reallocated whenever a collection emptied their pool.
//
// # Row lineage (format version 3)
//
// On a table of format version 3 or later every row has a _row_id and a
// _last_updated_sequence_number, and the spec ("Row Lineage") has a row
// moved to another data file keep both: a compaction modifies no row. A
// file may hold them as columns (field ids 2147483540 and 2147483539, as a
// copy-on-write rewrite writes them) or not (an append); a row without a
// value inherits one, _row_id as its file's first_row_id plus its position
// in the file, _last_updated_sequence_number as its manifest entry's data
// sequence number. So a group of such a table is read with iceberg-go's
// table.WithRowLineage (readOptions), which gives both after the table's
// columns, the value stored or else the inherited one, computed before
// deletes drop rows; they travel through the scan, the sort, its spills and
// its merge like any column; and the writer writes them as columns of every
// new file, described with statistics as iceberg-go's own RewriteDataFiles
// describes them ([WriterOptions.RowLineage]). A row whose file has no
// first_row_id (a table just upgraded from version 2, before its first
// snapshot of version 3) has no _row_id: it is written null and takes an id
// of its new file's range.
//
// The new files' manifest entries carry no first_row_id, as the spec has a
// writer leave it for added files: the commit (iceberg-go's manifest list
// writer) gives each new data manifest a range from the table's next-row-id,
// so each new file has a range of ids of its own; the ids the file holds win
// over it on read, and the range keeps any id a reader does inherit unique.
// The format version is never changed, and tables of versions 1 and 2 are
// written without the columns. The content check digests both columns on
// both sides (the read back, of files no snapshot holds yet, takes them from
// the files alone), so a rewrite that lost or moved a row's lineage fails
// before it commits. Files of a v3 table are always read by iceberg-go's
// scan: the rewriter's own Parquet read (parquetFiles) does not compute
// inherited values. The columns cost 16 bytes a row in memory and spills,
// and on storage what two more int64 columns cost.
//
// # Committing rewritten groups
//
// [CommitGroups] turns groups written by [RewriteGroup] into replace
// snapshots (iceberg-go's RewriteFiles), GroupsPerCommit groups each; a
// commit is kept when a later one fails. Before every attempt it reloads the
// table and checks each group against the head:
//
//   - every input data file is still live, and
//   - no delete file unknown at the base state may apply to an input: one
//     naming an input as its referenced data file, any other delete in an
//     input's partition, or an equality delete of an unpartitioned spec.
//
// A group failing the check is skipped ([ErrStaleGroup]) and its outputs are
// reported as orphans; it is never committed, so a concurrent delete can
// never be undone by a rewrite that read the rows before it. Catalogs other
// than REST report a lost race as a plain "requirement failed" error rather
// than table.ErrCommitFailed, so iceberg-go never retries them itself:
// [IsRetryableCommitError] recognises both, and the batch is re-validated and
// re-staged on the new head with jittered backoff, MaxAttempts at most.
// Delete files made dead by the batch ([DeadDeletes]) are removed in the same
// snapshot; keeping one that might still apply is always the safe choice.
// The new files get the commit's sequence number, above every existing
// delete's, so no existing delete applies to them.
//
// Just before each catalog commit the batch checks that the run's [Lease]
// has not lapsed and that every file it adds exists with the size it was
// written with ([ErrMissingOutput]): a file removed underneath the run fails
// the commit instead of becoming a dangling reference. The table's declared
// layout ([Declaration]: the floe.layout property and, for a sort, the
// default sort order) is staged in the same transaction as the files, so it
// changes only together with files written in it. The manifests staged for
// an attempt the catalog did not take are removed, and [Compact] removes the
// output files that no commit took (unless the table references them: a
// commit whose answer was lost).
//
// # Runs in flight: leases and spill directories
//
// [Compact] and [RewriteManifests] first write a lease (a JSON file under
// <table location>/.floe/runs/, hidden from Spark's and Iceberg Java's
// orphan removal) and renew it every TTL/4 until they end. Orphan removal
// reads the leases before the table's references, both when planning and
// again before deleting, and keeps every unreferenced file modified since a
// live run started (less [LeaseClockSkew]). Because a run writes its lease
// before any file and releases it only after its commit, each of its files
// is either protected by a lease that orphan removal read or referenced by
// metadata it read afterwards. A killed run's lease lapses after its TTL and
// is then removed with the run's orphans. Writers that are not floe hold no
// lease; for them the age floor is the protection, as in Iceberg.
//
// Sort spills go to a per-run directory, <temp>/floe-run-<run id>, locked
// with flock for the run's lifetime ([RunDir]). A killed process drops its
// lock, so the next run, or floe orphans --apply, removes the directory
// ([SweepRunDirs]).
//
// # Maintenance
//
// Each step has a planner that changes nothing (the dry run) and an
// executor:
//
//   - [PlanExpire] / [Expire]: snapshots selected with Iceberg's semantics
//     (refs, their min-snapshots-to-keep, max-snapshot-age-ms and
//     max-ref-age-ms, then the table properties) against an injected clock,
//     removed by id with every ref asserted unchanged; the files deleted are
//     those the expired snapshots reach and neither the committed metadata
//     nor any [Sibling] ([ExpireOptions.Siblings]) references. Siblings are
//     read when planning, before the commit (one that cannot be read
//     refuses the expiry, [ErrSiblingUnknown]) and again before deleting;
//     [ExpireOptions.KeepFiles] expires from metadata only.
//   - [PlanOrphans] / [DeleteOrphans]: files under the table location that
//     no snapshot, manifest, metadata file or statistics file references —
//     of the table, or of a [Sibling], another catalog entry whose location
//     overlaps it, which the caller supplies ([OrphanOptions.Siblings]) —
//     older than the age floor (24 h unless forced) and not needed by a
//     live run (see above); leases, references and siblings are read again
//     before deleting, and a sibling that cannot be read refuses the
//     removal ([ErrSiblingUnknown]). A floe run's uncommitted output is
//     taken whatever its age only when the run was on this very table
//     ([OrphanOptions.Table], [OrphanOptions.RunTable]): a run on a sibling
//     committed, or not, to the sibling. docs/orphans.md has the rules.
//   - [PlanManifests] / [RewriteManifests]: data manifests clustered by
//     partition to a target size; already clustered manifests are left
//     alone, so a repeated run commits nothing.
package rewriter
