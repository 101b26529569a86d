package rewriter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// ErrConflict means the table moved underneath an operation: refresh the
// table, re-validate and replay. [CommitGroups] handles it itself, with
// bounded attempts and backoff; callers see it only when the attempts are
// exhausted. Test with errors.Is.
var ErrConflict = errors.New("rewriter: table changed concurrently")

// ErrStaleGroup wraps [ErrConflict]: one group's input files are no longer
// live in the table's head, or a delete file added after the group was read
// may apply to them. Replaying cannot help; the group is skipped (its output
// files become orphans) and reported, never committed. Returned in
// [SkippedGroup.Err]; test with errors.Is.
var ErrStaleGroup = fmt.Errorf("%w: group inputs changed since they were read", ErrConflict)

// ErrNothingCommitted wraps [ErrConflict]: a compaction had groups to
// rewrite and committed none of them, every one skipped (lost its commit
// races, or its inputs changed under it). [Compact] returns it with its
// result, so that the step is a failure (retried with backoff, its
// partitions first), never a compaction that counts as done. Test with
// errors.Is.
var ErrNothingCommitted = fmt.Errorf("%w: compaction committed nothing", ErrConflict)

// ErrInvariant means floe found the table or its own bookkeeping in a state
// that must not happen (for example, only some output files of one commit
// are live). Stop work on the table and alert; never retry. Test with
// errors.Is.
var ErrInvariant = errors.New("rewriter: invariant violated")

// ErrLeaseLost wraps [ErrInvariant]: a run's lease lapsed (it could not be
// renewed for a whole TTL), so another process may have taken the run for
// dead and removed its files. [Compact] returns it instead of committing.
var ErrLeaseLost = fmt.Errorf("%w: run lease lapsed", ErrInvariant)

// ErrMissingOutput wraps [ErrInvariant]: a file a rewrite is about to
// commit is gone or has another size than it was written with (removed by
// an operator or by orphan removal that could not see the run). Returned
// by [CommitGroups] before it commits; test with errors.Is.
var ErrMissingOutput = fmt.Errorf("%w: output file missing before commit", ErrInvariant)

// ErrInputMismatch wraps [ErrInvariant]: an input data file read back with
// more live rows than its manifest entry's record_count, or fewer than that
// count less what its delete files can remove (exactly record_count when no
// delete applies), as when the file was replaced or cut short on storage.
// The error names the file, its partition and both counts. Returned by
// [RewriteGroup] (and so [RewriteGroups] and [Compact]) before anything is
// committed; the table needs repair, not a retry. Test with errors.Is.
var ErrInputMismatch = fmt.Errorf("%w: input data file does not match its manifest entry", ErrInvariant)

// ErrInvalidOptions means the options asked of a rewrite cannot work on
// this table: a layout column the schema lacks or the strategy cannot
// encode, a partition that matches no file, a memory bound below the
// minimum. It is the caller's input that is wrong, found before any data is
// read or written ([CheckCompaction], [CheckLayout],
// [CompactOptions.Validate]); a CLI reports it as a usage error. Test with
// errors.Is.
var ErrInvalidOptions = errors.New("rewriter: invalid options")

// ErrLayoutUnsupported wraps [ErrInvalidOptions]: the engine chosen for a
// compaction cannot write its layout (Trino writes no z-order or Hilbert
// curve, Iceberg's Spark procedure no Hilbert curve). Returned by an
// [Engine]'s Compact before it sends anything; the message names the
// engines that can. Pick another engine for the table; retrying cannot
// help. Test with errors.Is; check [Engine.CanWrite] first to avoid it.
var ErrLayoutUnsupported = fmt.Errorf("%w: layout not supported by the engine", ErrInvalidOptions)

// ErrStaleTree wraps [ErrInvalidOptions]: the learned tree a table records
// ([PropLayoutTree]) no longer fits the table's schema — a column it cuts or
// sorts on was dropped, renamed or changed type since it was learned.
// [RecordedTree] returns it, naming the column. A compaction into the
// table's tree layout cannot route rows into its leaves until the table is
// planned again (floe plan), and floe never falls back to another layout
// without saying so; retrying cannot help. Test with errors.Is.
var ErrStaleTree = fmt.Errorf("%w: the table's recorded tree no longer fits its schema", ErrInvalidOptions)

// MarkInvalidOptions marks err as [ErrInvalidOptions] without adding the
// sentinel's text to its message: errors.Is(MarkInvalidOptions(err),
// ErrInvalidOptions) holds, and the message is err's. Nil stays nil.
func MarkInvalidOptions(err error) error {
	if err == nil {
		return nil
	}
	return invalidOptionsError{err}
}

type invalidOptionsError struct{ err error }

func (e invalidOptionsError) Error() string        { return e.err.Error() }
func (e invalidOptionsError) Unwrap() error        { return e.err }
func (e invalidOptionsError) Is(target error) bool { return target == ErrInvalidOptions }

// ErrUnsafeAge is returned by [PlanOrphans] when the requested minimum file
// age is below the 24 h safety floor and Force is not set: files younger
// than the longest write job may belong to a commit still in flight.
var ErrUnsafeAge = errors.New("rewriter: orphan age below the 24h safety floor")

// ErrSiblingUnknown means orphan removal or snapshot expiry cannot prove a
// file unreferenced: another catalog entry whose location overlaps the
// table's (a [Sibling]), or one that may, could not be read — its metadata
// or manifests unreadable, its catalog unreachable — so the files it
// references are unknown. [PlanOrphans], [DeleteOrphans], [PlanExpire] and
// [Expire] return it, wrapped with the entry's or the catalog's name, and
// delete nothing ([Expire] expires nothing either, unless the entry became
// unreadable between its commit and its deletion: then the snapshots stay
// expired and their files stay in place). Make the entry readable (or drop
// it from its catalog) and run again, or expire with
// [ExpireOptions.KeepFiles]; retrying alone helps only when the failure
// was transient. Test with errors.Is.
var ErrSiblingUnknown = errors.New("rewriter: a catalog entry that may share the table location cannot be read")

// IsRetryableCommitError reports whether a commit error from iceberg-go or a
// catalog means "the table moved; reload and try again": a wrapped
// [table.ErrCommitFailed] (REST 409s, the SQL catalog's lost compare-and-swap),
// the plain "requirement failed" error the SQL, Hive, Glue and Hadoop
// catalogs return for a stale base, [table.ErrCommitDiverged], or floe's own
// [ErrConflict] other than [ErrStaleGroup]. Everything else, including
// context cancellation, is not retryable.
func IsRetryableCommitError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrStaleGroup) || errors.Is(err, ErrInvariant) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, table.ErrCommitFailed) || errors.Is(err, table.ErrCommitDiverged) || errors.Is(err, ErrConflict) {
		return true
	}
	return strings.Contains(err.Error(), "requirement failed")
}

// ErrScopeUnsupported means a partition of a scoped rewrite cannot be stated
// as a predicate on its source columns (a bucket or a string truncate
// transform, a field on several source columns, or a file written under an
// older partition spec whose fields differ from the current one). Returned
// by [PartitionScopes], naming the partition and the transform. A
// distributed engine can then not be told to rewrite exactly that
// partition: refuse the scoped rewrite on that engine (or run it natively).
// Test with errors.Is.
var ErrScopeUnsupported = errors.New("rewriter: partition cannot be selected by a predicate on its source columns")
