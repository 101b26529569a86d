// Package spark is floe's Spark engine: a [rewriter.Engine] that runs the
// maintenance steps floe planned as Iceberg's Spark procedures, over one
// Spark Connect session ([Open]; the client is
// github.com/apache/spark-connect-go). floe still plans every step from
// the table's metadata; the engine only turns the plan into one CALL per
// step (two for orphans), runs it, and reports what the procedure
// returned as a [*rewriter.EngineReport]: each statement with its Spark
// Connect operation id, and the procedure's integer result columns as
// metrics by column name (columns an Iceberg version adds or lacks are
// simply present or absent).
//
// # Statements
//
//	Compact           CALL `cat`.system.rewrite_data_files(table => '`ns`.`t`', strategy => …,
//	                       [sort_order => …,] options => map(…)[, where => '…'])
//	Expire            CALL `cat`.system.expire_snapshots(table => …, older_than => TIMESTAMP '…Z', retain_last => N)
//	RemoveOrphans     CALL `cat`.system.remove_orphan_files(table => …, older_than => TIMESTAMP '…Z'[, location => …]
//	                       [, equal_schemes => map(…)][, equal_authorities => map(…)], dry_run => true)
//	                  then the same call without dry_run
//	RewriteManifests  CALL `cat`.system.rewrite_manifests(table => …)
//	Ping              SELECT 1
//
// Timestamps are written in UTC with an explicit zone, so Spark's session
// time zone does not move floe's cutoffs. older_than is left out when
// zero and retain_last when not positive (Iceberg's defaults apply);
// orphan removal without a cutoff is refused.
//
// # Layouts
//
// binpack is strategy => 'binpack'. sort is strategy => 'sort' with
// sort_order => '`a` DESC NULLS LAST, `b` ASC NULLS FIRST', every
// direction and null order spelled out (floe's defaults are ascending,
// nulls first). zorder is strategy => 'sort' with sort_order =>
// 'zorder(`a`, `b`)', Iceberg's own z-order, which is floe's
// iceberg-exact z-order. Hilbert (Iceberg's Spark procedure has no Hilbert
// curve) and a rank z-order are refused by Compact before any statement is
// sent, with an error wrapping [rewriter.ErrLayoutUnsupported]: the
// native engine writes them. [Engine.CanWrite] answers the same for a
// strategy.
//
// # What maps from floe's options
//
//	target-file-size-bytes        the plan's target size (the table's default already filled in)
//	min-input-files               CompactOptions.MinInputFiles, when set
//	partial-progress.enabled      always true
//	partial-progress.max-commits  ceil(len(Plan.Groups) / GroupsPerBatch), at least 1: Spark
//	                              commits about as often as the native engine would, each
//	                              commit keeping what it rewrote if a later one fails
//	where                         job.Scope, when set (below)
//
// A plan with no groups, or an empty non-nil scope, sends nothing.
// Spark chooses the files itself within the scope, with the same
// thresholds floe plans with; CompactOptions' budget and memory knobs
// have no Spark counterpart beyond the scope.
//
// # The where predicate
//
// A scope is the conjunction of its partition fields, parenthesized; the
// scopes are OR-ed. An identity field is `col` = literal (string, number,
// boolean, DATE, TIMESTAMP, X'…' binary), or `col` IS NULL for a null
// partition; a year, month, day or hour field bounds the source column,
// `col` >= lower AND `col` < upper, with DATE literals for a date
// column, TIMESTAMP_NTZ for timestamp and TIMESTAMP '…Z' for timestamptz.
// void fields select nothing out. bucket and truncate fields carry no
// value to compare with and are left out, so such a scope selects every
// partition agreeing on its other fields (a superset: more may be
// rewritten than planned, never less); a scope only bucket or truncate
// fields would narrow is refused rather than rewrite the whole table.
//
// # Quoting
//
// Every identifier is in backticks with embedded backticks doubled; every
// string literal is single-quoted with backslash and quote escaped by a
// backslash (Spark's default; floe assumes
// spark.sql.parser.escapedStringLiterals=false, under which Spark reads
// back exactly the value floe wrote). The table argument is a string Iceberg
// parses as a multipart identifier, so its parts are backticked inside the
// literal ('`ns`.`t`'), and the where predicate is SQL inside a string, so
// it is quoted twice: its identifiers and literals first, then the whole
// as one string literal. A name holding a quote, semicolon, comment
// marker, backtick or newline thus stays a name; a NUL byte is refused.
// The unit tests and FuzzCompactStatement check the statement's token
// structure against a small Spark SQL lexer.
//
// # Orphans: dry run, then delete
//
// RemoveOrphans first runs the procedure with dry_run => true and keeps its
// listing in the report (at most [rewriter.MaxReportedFiles] paths, all
// counted in DryRunCount); if any listed file lies under one of the job's
// ExcludePrefixes, for which the procedure has no argument, it stops there
// with an error wrapping [rewriter.ErrInvalidOptions] and deletes
// nothing. Otherwise, unless ctx ended meanwhile, it runs the real removal
// with the same cutoff (which the control plane has moved before every
// live floe run, so files of a run in flight are never old enough). The
// real run lists again: files that turned old enough between the two
// calls go too.
//
// # Cancellation and errors
//
// The engine builds the client's gRPC connection itself and watches every
// ExecutePlan request as it goes out: it tags it (floe-<uuid>) and notes
// the operation id the client chose. When ctx ends, or the statement's
// [Config.Timeout] passes, the engine sends Spark Connect's Interrupt for
// that operation id on the same connection (the client has no interrupt
// call; the request is built from the message types the client registers)
// and returns an error wrapping ctx's error that names the operation. A
// statement Spark fails returns a [*StatementError] with Spark's message,
// error class, SQL state and the operation id. The token goes only into
// the bearer credentials of the TLS connection; no error or String of
// [Config] prints it.
package spark
