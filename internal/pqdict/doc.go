// Package pqdict decides whether a column should be dictionary-encoded in a
// Parquet file, from a sample of its values. The rewriter's writer uses it to
// choose encodings, and the simulator uses the same rule to estimate how many
// bytes a rewrite will write, so both agree on what a file costs.
//
// The rule: dictionary-encode when the column's distinct/non-null ratio at
// the scale of a row group is at most [DefaultMaxRatio]. The ratio in a small
// sample misjudges a column of a bounded domain — 2,500 ship dates in a
// 2,000-row batch look unique (ratio 0.7), yet a 100,000-row row group holds
// the same 2,500 (ratio 0.025) and is far smaller dictionary-encoded — so
// [ScaledDistinctRatio] extrapolates the distinct count from its growth
// between the first half of the sample and all of it: d(rows) = d(n) ·
// (rows/n)^β with β = log2(d(n)/d(n/2)) clamped to [0, 1]. A key-like column
// (β ≈ 1, every row a new value) keeps its ratio; a saturating one shrinks.
package pqdict
