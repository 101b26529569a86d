// Package layout is the layout vocabulary: the [Layout] a plan names (its [Strategy], key
// columns ([Column]) and target file size, with the text form [Parse] reads and
// [Layout.String] prints), the order-preserving row keys every layout is sorted by
// ([Encoder], [NewEncoder]: linear sort, Iceberg-exact and rank z-order, Hilbert), and the
// per-column [Quantiles] that rank z-order and Hilbert keys are built on ([FitQuantiles]).
//
// # Role
//
// The analyzer proposes layouts, the simulator orders a sample by their keys to project what
// a rewrite would skip, and the rewriter orders the rows it writes by the same keys, so that
// what was projected is what gets written. The three stages speak this package's types and
// none of them imports another to get them. It imports no floe package: its inputs are layout
// text, Arrow schemas and record batches; its outputs are layouts, encoders, keys and
// quantiles. Everything here is pure: no I/O, no clocks, no global state.
//
// # Layouts
//
// A [Layout] names a [Strategy] (binpack, sort, zorder, hilbert, tree, current), its key columns and
// a target file size. [Parse] reads the text form `sort(a desc nulls last, b)`,
// `zorder(a, b)`, `hilbert(a, b, c) target 256MiB`, `binpack`, `current`; [Layout.String] prints
// it back so that the two round-trip. Sort columns follow Iceberg's default nulls order:
// ascending → NULLS FIRST, descending → NULLS LAST.
//
// # Keys
//
// All layouts share one abstraction, [Encoder]: AppendKey appends a byte string per row such
// that bytes.Compare orders rows the way the layout does. The rewriter's external sort and the
// simulator therefore sort with the same comparison, and a key can be spilled, merged and
// compared without knowing the schema. [NewEncoder] binds a layout to an Arrow schema (columns
// matched case-insensitively) and fails up front, naming the column, for types the layout
// cannot encode. binpack and current have empty keys: a stable sort keeps the input order.
//
// Sort keys are memcomparable. Each column contributes one marker byte (0x00 null first, 0x01
// value, 0xFF null last) and then its value: integers, dates, times and decimals as big-endian
// two's complement with the sign bit flipped (unsigned integers as is); floats as their IEEE
// bits with all bits flipped for negatives and the sign bit flipped for positives, every NaN
// canonicalized so that NaN sorts after +Inf (as Iceberg and Spark sort), and -0 encoded as +0
// so the two tie (as Spark SQL orders them); timestamps of any unit as microseconds since the
// epoch (nanosecond timestamps keep their sub-microsecond remainder in 2 extra bytes, so they
// stay strictly ordered; seconds and milliseconds saturate at the int64 range of
// microseconds); decimal128/256 as the unscaled value (a column has one scale); strings and
// binaries with 0x00 escaped as 0x00 0xFF and a 0x00 0x00 terminator, so that a prefix sorts
// before its extensions and the next column starts cleanly; fixed-size binaries and UUIDs as
// their bytes; dictionaries by their values. A descending column is the bitwise complement of
// its ascending encoding, terminator included, and the marker bytes are chosen so that
// 0x00 < 0x01, 0xFE (complemented 0x01) < 0xFF: nulls go first or last in either direction.
//
// # Z-order: Iceberg-exact and rank-normalized
//
// [ZOrderIcebergExact], the default, reproduces Iceberg's Spark action
// (rewrite_data_files(strategy => 'zorder')) bit for bit: SparkZOrderUDF maps each column to
// ZOrderByteUtils "ordered bytes" and [InterleaveBits] interleaves them round-robin, most
// significant bit first, skipping columns that have run out of bytes. Per column: integers of
// any width are widened to a long and written as 8 big-endian bytes with the sign bit flipped;
// floats are widened to double and written as doubleToLongBits(v) ^ ((bits >> 63) |
// Long.MIN_VALUE) (NaN canonical, and here -0 sorts just before +0; releases before Iceberg
// PR #17071 shifted by 31, see EncoderOptions.IcebergLegacyFloatBytes); booleans are 0x81 or
// 0x00 followed by seven zero bytes; dates are day numbers (unix_date); timestamps with a time
// zone are cast to a long by Spark, which yields whole seconds (floorDiv of the micros), not
// microseconds — floe follows Spark, so rows within one second tie on that column; timestamps
// without a time zone (Spark's TimestampNTZType, accepted since Iceberg PR #15778; older
// releases reject them) are microseconds; strings are their UTF-8 bytes cut before the first
// character that does not fit whole in VarLengthContribution bytes (default 8) and
// zero-padded; binaries are truncated or zero-filled to the same length; UUIDs, which Iceberg
// hands to Spark as strings, contribute their canonical text. Nulls contribute all-zero bytes
// (for booleans too, as since Iceberg PR #17669; older releases threw on a null boolean).
// Types the UDF has no case for (decimals, times, nested types, and Arrow-only ones such as
// uint64) are rejected by Iceberg and by this mode alike, with an error naming the column.
//
// Iceberg's mapping has no normalization, so a column's influence depends on its raw bit
// width. Interleaving walks the bits from the top, and the top bits of a small-range column
// (a date is a day number of about 15 significant bits in a 64-bit long; a quantity has 6) are
// the same for every row, so the first several dozen interleaved bits are decided by the wider
// columns alone: Z(date, id) behaves like a sort on id. A string's first byte varies at the top,
// so a string column dominates every numeric one and Z(…, string) is "sort by the first
// character, then interleave the rest". TestIcebergZOrderRawWidthProblem in zorder_test.go
// shows it.
//
// [ZOrderRank] fixes this the way Delta Lake's liquid clustering does (range_partition_id per
// column before interleaving): [FitQuantiles] fits per-column boundaries on a sample (default
// [DefaultQuantileBuckets] buckets, Delta uses 1000), each value is replaced by its bucket id
// (binary search; nulls get a slot of their own, first or last), and the slots of every column
// are scaled evenly onto the same power-of-two range, so that the top bit of every coordinate
// splits its column near the median. Interleaving those coordinates gives every column the same
// share of the key whatever its type, width or skew. Heavy hitters collapse equal boundaries,
// so a value that fills several buckets' worth of the sample stays in one bucket.
//
// # Hilbert
//
// hilbert layouts always use quantile coordinates (2 to [MaxHilbertColumns] columns) and map
// them through John Skilling's transform (AxesToTranspose, "Programming the Hilbert curve",
// 2004), then read the transposed bits most significant first ([AppendHilbertIndex]). Unlike
// Z-order, consecutive Hilbert indices are always grid neighbours, so a file (a run of the
// curve) covers fewer, more compact regions; published comparisons and floe's probe show a few
// points more files skipped than Z-order at the same columns. Iceberg's open Hilbert pull
// request feeds raw ZOrderByteUtils bytes into the same transform and so inherits the raw-width
// problem; floe does not emulate it.
//
// # Tree
//
// A tree layout, `tree(ts, account_id, kind)`, names the columns a learner may cut on; the
// learned [Tree] is data, like [Quantiles]: internal nodes with a range cut `col < v` or
// `col <= v` ([TreeCut], v in the column's ascending sort-key encoding, [ValueKey], so a cut
// is one bytes.Compare on the same memcomparable bytes the sort keys use; nulls go left,
// NaN right) or a set cut `col IN (v1, v2, …)` (the values so encoded, sorted, at most
// [MaxTreeSetValues]; a row's value key is looked up by binary search, over integers when
// the encoding is at most 8 bytes wide, or compared with each value of a set of up to 8;
// nulls go right, as the predicate is not true of them), leaves numbered from left to right, each with a sort column. The key of a
// row is its leaf's number, 4 bytes big-endian, then the sort key of that leaf's column, so
// the rewriter's external sort groups rows by leaf, in leaf order, and orders each leaf
// by its column without knowing about trees. The tree is persisted in a plan
// ([Tree.MarshalJSON]) with each column's type fingerprint, and [UnmarshalTree] checks it
// against the schema and refuses anything that is not a well-formed tree (at most
// [MaxTreeLeaves] leaves and [MaxTreeDepth] levels) with an error, never a panic. The
// rewriter records the same JSON with the table it rewrote, and names the tree its files
// were routed by with [Tree.Fingerprint], so later compactions route new rows into the
// same leaves. The learner lives in package simulator, where the workload and the sample
// meet; so does simulator.ExplainTree, which fills the [TreeExplanation] every renderer
// prints (its words from [TreeExplanation.Lines]; a cut's value printed as a literal by
// [Tree.CutPredicate] and [FormatValueKey]).
//
// # Invariants
//
//   - For an [Encoder] e and rows x, y of records with e's schema, bytes.Compare(key(x),
//     key(y)) is the layout's order (sort: property-tested against a direct comparator over
//     every supported type, both directions and both nulls orders).
//   - Encoders and [Quantiles] are immutable and safe for concurrent use; AppendKey only
//     appends to dst and allocates nothing once dst has capacity (except for a temporary
//     buffer when a rank or Hilbert key column holds a string longer than about 60 bytes).
//   - Bad input (a record of another schema, a row out of range, an unsupported type) is an
//     error naming the column, never a panic.
package layout
