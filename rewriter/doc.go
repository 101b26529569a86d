// Package rewriter executes approved layout plans against Iceberg tables.
//
// This file set is the native engine: it rewrites one group of data files
// (normally one partition) into files ordered by a layout key, within a fixed
// memory budget, and returns the new [iceberg.DataFile]s without committing
// them (committing, retrying and conflict handling live beside it).
//
// # Pipeline of one group
//
//	scan (iceberg-go ReadTasks, deletes applied) → Sorter (external merge sort
//	by Keyer) → rolling Parquet writer → []iceberg.DataFile
//
// What runs in parallel: the scan decodes files on its own workers; runs are
// sorted and spilled on a background goroutine while the next run fills; the
// Parquet encoder runs on its own goroutine fed through a small channel, so
// decode, sort/merge and encode overlap; [RewriteGroups] runs several groups
// (and therefore several writers) at once, splitting the memory budget.
//
// # Memory
//
// Every Arrow allocation of the engine goes through one [TrackingAllocator],
// so the budget is measured, not estimated. [RewriteGroup] gives three
// quarters of GroupOptions.MemoryBytes to the [Sorter], an eighth to the
// Parquet writer's buffered row group (row groups are sized to fit) and leaves
// the rest to the scan's in-flight batches and the hand-over queue. Inside the
// sorter, each of the two live in-memory runs (one filling, one being sorted
// and spilled) gets a quarter of its share and the merge's read buffers (FanIn
// spilled batches, sized from the measured bytes per row) another quarter;
// more runs than FanIn are merged in intermediate passes, so the bound holds
// whatever the table size. Keys and row entries live in Go slices and are
// counted in the run's share. Rows with equal keys keep their input order.
//
// # Spill files
//
// Sorted runs are written as Arrow IPC streams with the row keys as an extra
// binary column: IPC round-trips every Arrow type exactly and is read back one
// batch at a time, and stored keys spare the merge from recomputing them. All
// spill files of a sort are removed when its iterator returns, also on error,
// cancellation or early stop.
//
// # Output files
//
// Files are written with pqarrow in the table's schema with Iceberg field ids,
// under the table's data location and partition path, and described with
// iceberg-go's own statistics code (table.DataFileFromMetadata), which honours
// the table's metrics configuration. A file is rolled over when its flushed
// bytes plus the estimated size of its buffered row group reach the target;
// row groups are a fraction of the target, so files land within a few percent
// of it. Dictionary encoding is enabled per column only where a sample shows
// few distinct values.//
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
// # Maintenance
//
// Each step has a planner that changes nothing (the dry run) and an
// executor:
//
//   - [PlanExpire] / [Expire]: snapshots selected with Iceberg's semantics
//     (refs, their min-snapshots-to-keep, max-snapshot-age-ms and
//     max-ref-age-ms, then the table properties) against an injected clock,
//     removed by id with every ref asserted unchanged; the files deleted are
//     those the expired snapshots reach and the committed metadata does not.
//   - [PlanOrphans] / [DeleteOrphans]: files under the table location that
//     no snapshot, manifest, metadata file or statistics file references,
//     older than the age floor (24 h unless forced) and outside the staging
//     paths of runs in progress; references are read again before deleting.
//   - [PlanManifests] / [RewriteManifests]: data manifests clustered by
//     partition to a target size; already clustered manifests are left
//     alone, so a repeated run commits nothing.
package rewriter
