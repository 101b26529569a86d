// Package store is floe's state store: one SQLite database (pure-Go
// modernc.org/sqlite, WAL journal, busy timeout) holding the query events
// the collectors read, the tables they touched, their column uses and
// predicates, the bookkeeping that makes collection incremental, and the
// plans, runs and run steps of the control plane, and the state of its
// alerts (which notifications each sink received).
//
// # Schema and migrations
//
// The schema is a numbered list of migration steps embedded in the binary.
// The schema_migrations table records each applied version. [Open] applies
// the steps the database lacks, all in one transaction, so a database is
// either at its old version or at the binary's; opening a database written
// by a newer floe (a version this binary does not know) fails with
// [ErrSchemaTooNew] and changes nothing.
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
// the metadata table's name in a separate column; see [MetadataEvidence].
//
// # Files
//
// collect_files records each input collected (path, size, modification
// time, source, events, bad records). The ingestion pipeline skips a file
// whose size and modification time are unchanged since it was recorded; a
// file that grew is read again and the (source, query_id) uniqueness keeps
// the result idempotent.
package store
