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
// Files end at the target size: the writer closes a file at a row-group
// boundary once its bytes come within half a row group of the target, and
// the last file of a group takes the rest when that keeps it within
// [layout.TailAllowance] over the target. A tree's files end at its
// leaves instead: the tree encoder's keys begin with the row's leaf number
// ([layout.LeafOfKey]), so the sorter counts each leaf's rows as it keys
// them and cuts its output batches where a leaf ends (the final merge and
// the single run alike; nothing more is held), and the writer closes its
// file when a new leaf's rows begin and splits each leaf into files of
// equal rows, as many as make a file's size nearest the target at the
// bytes per row measured so far ([layout.LeafFilesFor]: a leaf of 2.3
// files' bytes is two files of 1.15, not two full ones and a small rest).
// No file holds rows of two leaves, so every file's min/max lie inside its
// leaf's cuts. A group of an older partition spec, whose keys begin with
// the row's new partition, is cut at the target size as before. The
// simulator projects the same cut.
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
// sees it, and once the output files are closed they are read back as an
// engine reads them (columns by field id, on the Go allocator, not the
// [PagePool]) by the check's own Parquet read, which keeps dictionary-coded
// strings coded (checkReader; iceberg-go's scan for a file it does not
// take), and digested the same way. The digest
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
// # Sorting and copying rows
//
// Sort entries and merge cursors carry the first 16 bytes of the key, so
// most comparisons are two integer compares; runs are merged through a
// loser tree. When every key of a run fits in those 16 bytes (sorts on a
// few fixed-width columns, z-order and Hilbert keys) the run is
// radix-sorted instead, one stable pass per key byte that varies. Rows with
// equal keys keep their input order.
//
// Rows are copied by hand (gather.go), not with compute.Take, which
// dispatches a kernel and a goroutine per column, grows builders as it
// goes and takes one source at a time, so that a merged batch had to be
// taken piecewise, concatenated and permuted again. A sorted run is copied
// one column of the whole run at a time: its rows are read in key order, at
// random, and random reads within one column's values hit the cache far
// more often than reads across whole rows.
//
// Where the CPU and the memory go, measured on bench/rewrite's tables, and
// what was tried and did not pay, is in docs/rewriter-performance.md.
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
// through parquet.WithAllocator; arrow-go's encoders still keep a small
// pool of their own on the Go heap). Under it sits a [PagePool]: buffers of
// 32 KiB and more are mapped by floe in transparent huge pages and reused
// the moment they are released, instead of waiting on the Go heap for a
// collection. The pool also moves a buffer that is cut down to a smaller
// class ([PagePool.Reallocate]): arrow-go's record reader reserves the next
// power of two of the values a batch may read and trims the buffer when it
// hands it over, and a trim kept in place would hold a block twice its size
// that the tracked bytes, counting the trimmed length, never see.
//
// [RewriteGroup] gives three quarters of GroupOptions.MemoryBytes to the
// [Sorter], an eighth to the Parquet writer's buffered row group (row groups
// are sized to fit, with the 4 bytes a row each dictionary column holds
// until the flush) and leaves the rest to the scan's in-flight batches and
// the hand-over queue. Inside the sorter, each of the two live in-memory
// runs (one filling, one being sorted and spilled) gets a quarter of its
// share — the first run half, since nothing is being spilled while it
// fills, so a group of up to half the sort's share (a day's partition,
// typically) is sorted without spilling — and the merge's read buffers
// (FanIn spilled batches, sized from the measured bytes per row) another
// quarter; more runs than FanIn are merged in intermediate passes, so the
// bound holds whatever the table size. Copying a run into key order
// releases each input column once it is copied, so a run grows by at most
// the few columns being copied at the time.
//
// Keys and row entries (40 bytes a row, and as much again for the radix
// sort's scratch) and the spans materialize copies by (12 bytes a row) are
// counted in the run's share and handed from each spilled run to the next,
// and from one group to the next of a [RewriteGroups] worker
// ([RunBuffers]). From 1 MiB up they are mappings of their own outside the
// Go heap: they hold no pointers, and on the heap they were live data that
// the collector's pacing doubled (at GOGC=100 the heap grows to twice what
// is live before a collection). Run buffers that wait for the next run (the
// set a spilling sort keeps while it fills the other, a worker's set while
// its group is encoded, and the radix sort's scratch once a run is sorted)
// give their pages back and keep their mappings, where the kernel gives
// huge pages: faulting them in again is a fault per 2 MiB. The page pool's
// empty slabs keep their pages: they empty and fill again far more often
// than runs end.
//
// Outside the tracked budget, in Go memory: the scratch the writer's
// columns gather merged rows into (one per column encoding at once, as
// large as one column of a merged batch), the codebooks of dictionary
// codes (at most a dictionary page per coded column) and arrow-go's
// encoders' own pool. The merged rows waiting in the writer's queues hold
// the spilled batches they come from, where they used to hold copies of
// the same rows. [RewriteGroups] holds a group per core at once (its
// Parallelism, splitting the budget between them), which is what keeps
// every core busy; docs/rewriter-performance.md says what one at a time
// costs and what a rewrite's peak resident set is made of.
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
