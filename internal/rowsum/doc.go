// Package rowsum digests the content of Arrow record batches, order
// independently, so that a rewrite can prove it wrote the rows it read.
//
// A [Sum] is a multiset digest: the row count, the sum (modulo 2^64) and the
// xor of one 64-bit hash per row over every column, and one sum per column of
// that column's value hashes. Two multisets of rows with equal Sums are equal
// but with a probability of about 2^-64 per changed row; the order of rows,
// and how they are cut into batches, never changes a Sum. The xor alone would
// cancel a duplicated pair of rows; the sum does not. The column sums name
// the columns that differ when two Sums do not match, and tell a changed
// value apart from values recombined across rows (every column sum equal,
// the row sums not).
//
// Values are hashed by what they mean, not by how a batch carries them, so a
// batch read one way and its rows read back another way digest alike:
//
//   - a dictionary-encoded column hashes as its values (the rewriter reads
//     low-cardinality strings as dictionary indices, and its content check
//     reads them back so where a file's pages are all dictionary-encoded,
//     while iceberg-go's scan gives plain strings): the dictionary's values
//     are hashed once per batch and each row looks its hash up;
//   - string, large string, binary, large binary and their view types hash
//     alike, as do the integer widths of one signedness; an extension type
//     (uuid) hashes as its storage;
//   - a timestamp or time is the instant, whatever the unit it is carried in;
//   - nested values (struct, list, map) hash their children in order, and
//     a null anywhere hashes differently from every value.
//
// Columns are matched by Iceberg field id where the batches' Arrow fields
// carry one (PARQUET:field_id metadata, as pqarrow reads it from a file),
// else by name (iceberg-go's scan names its columns after the table's
// current schema and carries no ids), and combined in that key's order, so
// two batches whose columns come in another order digest alike.
//
// The hashes are fixed (xxhash64 for bytes, splitmix64 finalizers), so a Sum
// is the same in every process, on every machine: it can be recorded and
// compared later.
//
// A batch is hashed a column at a time, from the columns' buffers (values,
// offsets, validity bitmaps, dictionary indices) rather than through
// arrow's per-value accessors, and short byte strings are hashed by an
// inlined copy of xxhash64: the rewriter digests every row twice (as read,
// and as read back from its output), so this is on its critical path.
// TestDigestMatchesRowWiseReference holds it to the plain row-by-row
// definition on every type.
package rowsum
