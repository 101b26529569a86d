// Package store is floe's state store: one SQLite database (pure-Go
// modernc.org/sqlite, WAL journal, busy timeout) or one PostgreSQL
// database (pgx through database/sql) holding the query events
// the collectors read, the tables they touched, their column uses and
// predicates, the bookkeeping that makes collection incremental, and the
// plans, runs and run steps of the control plane, the state of its
// alerts (which notifications each sink received), the table leases
// that let several daemons share the work, and the table holds that stop
// a table's runs until a person resumes it.
//
// # Drivers
//
// [Open] opens a SQLite file; [OpenConfig] opens either driver
// ([DriverSQLite], [DriverPostgres]). SQLite suits one floe process, or a
// few on one machine; PostgreSQL lets floe serve replicas on several
// machines share one state. The Store has one code path over database/sql
// for both: queries are written once, in SQLite's spelling with ?
// placeholders, and a small dialect value rebinds them to $1, $2, … for
// PostgreSQL (once per query text) and spells the few fragments that
// differ (string_agg for group_concat, an identity column for rowid, array
// parameters for IN lists). Times are UTC Unix nanoseconds in 64-bit
// integers on both (BIGINT on PostgreSQL, whose INTEGER has 32 bits). The
// PostgreSQL password is never part of an error or of [Store.Describe].
//
// Events go in with a few multi-row statements per batch, not a few per
// event. SQLite gets multi-row INSERTs. PostgreSQL, where every statement
// is a round trip and each row costs the server more, gets one binary COPY
// per table, on the transaction's own connection: the batch's keys are
// looked up first (COPY has no ON CONFLICT) and the new rows' ids reserved
// from their sequences, so child rows name their parents. A key that a
// concurrent writer stores in between fails the COPY on the unique key;
// the batch is then stored again by INSERT … SELECT FROM unnest (one array
// parameter per column) with ON CONFLICT, which settles each key as it
// comes. Both paths keep the same rules for duplicates and for unfinished
// events replaced by finished ones (see [Store.InsertEvents]), and the
// same foreign keys.
//
// # Schema and migrations
//
// The schema is a numbered list of migration steps embedded in the binary,
// the same versions for both drivers (PostgreSQL runs SQLite's DDL with
// INTEGER widened to BIGINT and rowid tables given identity columns, plus
// a few statements of its own). The schema_migrations table records each
// applied version. [Open] applies the steps the database lacks, all in one
// transaction, so a database is either at its old version or at the
// binary's; opening a database written by a newer floe (a version this
// binary does not know) fails with [ErrSchemaTooNew] and changes nothing.
// Replicas starting together migrate once: SQLite's transaction takes the
// write lock when it begins, PostgreSQL's takes a transaction-scoped
// advisory lock first.
//
// # Table leases
//
// A lease says which floe process (its holder, "host:pid") may work on a
// table, until when. [Store.ClaimTables] claims up to a limit of the
// tables asked for whose lease is absent, lapsed or the caller's own;
// [Store.RenewLease] extends one while a run goes on and fails with
// [ErrLeaseLost] once another process took it over; [Store.ReleaseLease]
// frees it; [Store.TableLeases] lists them. The clock is the caller's:
// every call takes now or until explicitly.
//
// Claims are atomic. On SQLite the claim's select and update run in one
// write transaction, which SQLite serializes. On PostgreSQL the claim
// locks the free rows it takes with SELECT … FOR UPDATE SKIP LOCKED, so
// replicas claiming at the same moment pass over each other's rows instead
// of queueing behind them, and take different tables. A lease is a row
// with an expiry, not an advisory lock: an advisory lock lives as long as
// one database session, so a run of hours would pin a pooled connection,
// and a dropped connection would silently release the lock while the run
// went on. The row survives reconnects, can be shown by floe runs and the
// API ([Store.TableLeases]), and lapses by itself when its holder dies.
//
// # Queued runs and table holds
//
// A run can be recorded before it starts, with status [RunQueued] (the
// daemon's API answers with its id at once): [Store.StartRun] takes the
// queued record over exactly once, a compare-and-set on its status, and
// [Store.EndQueuedRun] ends it unstarted. A queued run has a lease like a
// running one; [Store.RecoverAbandoned] records a lapsed one cancelled.
//
// A hold ([Store.HoldTable]) is placed when a run fails a check that must
// never fail; a unique index over the active holds keeps one per table,
// whose reason is the first failure. [Store.ResumeTable] lifts it with who
// did it, and the lifted holds stay as that record ([Store.TableHolds]).
//
// # Events
//
// A query event is unique on (source, query_id): [Store.InsertEvents]
// inserts a batch in one transaction and counts events already stored as
// duplicates, so collecting the same file twice stores each event once. The
// one exception keeps in-progress logs right: an event stored while its
// query was running (State UNKNOWN, no end time) is replaced by the
// finished event when the grown log is read again.
// Times are stored as UTC Unix nanoseconds and read back in UTC. Every
// TableAccess is stored with its filter tree as the JSON of
// [expr.Node]; its predicate leaves are also flattened into the
// predicates table (canonical column, transform, op, values — up to
// [MaxIndexedValues] of them; longer lists only in the tree) for aggregate
// queries such as [Store.TableStats]. [Store.Queries] restores
// events with their accesses, column uses and filter trees.
//
// Metadata tables (t$snapshots) are stored against their base table with
// the metadata table's name in a separate column; see [collectors.MetadataEvidence].
//
// # Pruning and folded events
//
// [Store.PruneEvents] bounds the raw events: each event older than a
// cutoff is folded — reduced to what ranking and projection read of it
// (source, query id, engine, state, start and end time, elapsed time and
// bytes scanned, and per table read or written its filter tree, filter
// columns, evidence and bytes scanned; metadata-table reads, SQL text,
// users and the predicate index dropped) — and the raw event is deleted,
// in one transaction per [PruneBatch] events. [Store.WorkloadEvents] reads
// raw and folded events merged in the raw order (start time, then the
// raw id the folded event keeps).
//
// A folded event is split in two. What differs from one run of a query
// to the next — source, query id, engine, state, times, elapsed time,
// bytes scanned of the query and of each table — is a row of
// folded_events. The rest, its shape (engine version, tables, filter trees
// with their literals, filter columns, evidence), is a row of
// folded_shapes, stored once per distinct content and found by a hash of
// it, with its tables in folded_shape_tables for selection by table. A
// dashboard refreshed every five minutes folds into a row per run and one
// shape per panel.
//
// [Store.DeleteFolded] bounds the folded events: those older than a
// second cutoff (the telemetry history) are deleted, and with the last
// event of a shape the shape. The store then holds raw events of the
// retention and folded events of the history, whatever the volume of
// queries over time.
//
// The fold is exact, not an aggregate. Proof sketch: [analyzer.Rank] and
// [analyzer.Workload] are functions of the event sequence they are given
// and read of each event only the fields kept (the selection by state,
// table, metadata and write; dedup by engine and query id with richness
// from state, cost and filter; scan-report matching by engine, version,
// start and end; weights from bytes or elapsed time or duration, the
// workload's medians of those, and 2^(-age/half-life) of the start time;
// leaves from filter trees and filter columns with their evidence). The
// folded event equals the raw one on those fields (JSON round trip of the
// filter tree, as the raw store does; each event decodes its own copy of
// its shape), and WorkloadEvents keeps the raw sequence order, so every
// sum, median and tie-break sees the same operands in the same order: the
// output is the same, for every half-life and every Since/Until (start
// times are exact). An aggregate per (table, column, op), or per-day
// buckets, would break the cost medians, the dedup and either exact
// recency or the --half-life flag. Sharing shapes changes nothing of
// this: a shape is the same bytes for every event that has it.
//
// An event already folded counts as a duplicate in [Store.InsertEvents],
// so collecting it again stores nothing (until DeleteFolded deleted it).
// [Store.Size] measures the store for the floe_state_store_* metrics.
//
// # Files
//
// collect_files records each input collected (path, size, modification
// time, source, events, bad records). The ingestion pipeline skips a file
// whose size and modification time are unchanged since it was recorded; a
// file that grew is read again and the (source, query_id) uniqueness keeps
// the result idempotent.
package store
