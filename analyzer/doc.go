// Package analyzer ranks the columns each table's queries filter on and
// proposes candidate layouts for the simulator to project.
//
// SQL parsing lives in analyzer/extract; this package starts from
// [collectors.QueryEvent]s already resolved to floe tables with
// schema-spelled columns (as the state store holds them) and from the
// table's [lake.State]. Everything here is pure: inputs in, ranking out,
// no I/O and no clock (ages are measured from RankOptions.Now, default the
// newest event).
//
// # Score
//
// [Rank] scores each column c of a table as
//
//	score(c) = Σ_q W(q) · max_{a ∈ accesses(q)} Σ_{leaf ℓ on c in a} e(ℓ) · o(ℓ) · benefit(ℓ) · (1 − sel(ℓ)) · d(ℓ)
//	W(q)     = w_cost(q) · 2^(−age(q)/half-life)
//
// where
//
//   - w_cost(q) is the bytes the query scanned (the table's own bytes when
//     the source reports them per table) over the median bytes of the
//     queries that report bytes; for a query without bytes, its elapsed
//     time over the median elapsed time of such queries; else 1. A typical
//     query weighs 1 whatever the unit, so the score's unit is "typical
//     queries fully served".
//   - age(q) is RankOptions.Now − start time (never negative); the default
//     half-life is 7 days.
//   - e(ℓ) is the evidence weight of the access's filter (or of the column
//     use for a filter column known without its predicate):
//     scanreport 1.0, pushed-filter 1.0, sql-parse 0.9, access-history 0.5,
//     analysis-refs 0.1, anything else 0.5 ([DefaultEvidenceWeights]).
//   - o(ℓ) is 1/k per enclosing OR of k branches (a leaf under OR alone
//     cannot skip a file); NOT is pushed to the leaves by De Morgan's laws,
//     and a negated leaf counts with the negated operator, so NOT (x < 5)
//     is the selective x >= 5 and NOT (x = 5) is the useless x != 5.
//   - benefit(ℓ) by operator: = 1.0, in 0.9, < <= > >= between 0.8,
//     like 'p%' 0.7, is null 0.5, a filter column without its predicate
//     (access history) 0.5; !=, not in, not between, is not null,
//     like '%p', ilike, rlike and functions min/max cannot use (lower(c),
//     coalesce(c, …)) 0; substr(c, …) × 0.5. day/month/year/hour/week/
//     quarter(ts) comparisons are ranges of ts.
//   - sel(ℓ) is the fraction of rows the leaf keeps, estimated from the
//     table's file statistics ([Stats.Selectivity]). Bare ranges on one
//     column under one AND are first intersected, so ts >= a AND ts < b
//     counts once, as the narrow range it is.
//   - d(ℓ) is the partition discount: 1 unless the current partition spec
//     already prunes the predicate. identity(c) prunes =, in, ranges and
//     is null: d = D, RankOptions.PartitionDiscount (default 0.2).
//     bucket(c) prunes = and in, truncate(c) also ranges and prefixes,
//     each only down to a bucket or prefix: d = 0.5. year/month/day/hour(ts)
//     prune ranges at their granularity g (a month is 30.44 days, a year
//     365.24): a range of width w (clamped to the column's bounds; unknown
//     literal: w ≥ g) gets d = 1 − (1 − D) · min(1, w/g), so a week on a
//     day-partitioned column is fully discounted while a one-hour range
//     keeps 97% of its benefit, since sorting within the day still serves
//     it; day(ts) = x on a day partition is a whole partition (d = D); an
//     equality on ts is finer than any partition (d = 1); is null is
//     pruned (D). Only the current spec counts; with several transforms of
//     one column the strongest discount applies.
//
// A query credits a column once: when it reads the table twice (a
// self-join) the access that credits the column most counts.
//
// Alongside the score, [ColumnRank] reports the share of the workload
// weight W whose queries filter on the column with any operator, the
// number of such queries, the operator mix (leaf weights W·e·o), the
// weighted median selectivity of its useful leaves, whether the column is
// partitioned, the fraction of the score partitions left, and a one-line
// reason.
//
// # Which events count
//
//   - State: SUCCEEDED and UNKNOWN (scan reports and access-history events
//     carry no state) by default, SUCCEEDED only with OnlySucceeded;
//     FAILED and CANCELLED never.
//   - Accesses of other tables, of metadata tables (Evidence
//     "metadata-table:…" or a "$" in the name) and write-only accesses
//     (an INSERT target: no filter, no filter column) are ignored; a query
//     with no access left is not part of the table's workload. Join
//     columns are not scored.
//   - Duplicates: events with the same (engine, query id) are one query;
//     the record with a known state, a known cost and a filter is kept
//     (Athena's API and CloudTrail share ids). An Iceberg scan report
//     shares no id with the engine's record of the same query (its id is a
//     hash of the report), so it is matched by time: when exactly one
//     engine query of the table was running when the report arrived (start
//     ≤ report ≤ end; same engine when the report names one), the report's
//     access joins that query, which then counts once with the better of
//     the two filters per column. A report that matches no query or
//     several (concurrent queries of one table) counts on its own, as does
//     a re-plan reported twice with different bodies.
//
// # Selectivity
//
// [Stats] estimate from the live data files' bounds, record, null and
// distinct counts, with a piecewise-uniform model: rows spread evenly
// between each file's lower and upper bound. String bounds are compared
// on their first 8 bytes. NDV comes from per-file distinct counts when
// writers recorded them (their maximum, a lower bound), else from the
// bounds for integers and dates (the width, capped by the rows), every row
// for floats and timestamps, and [DefaultStringNDV] for strings. Literals
// the statistics cannot place (masked scan-report values, parameters,
// expressions) take the column's typical value: equality 1/NDV of the
// non-null rows; a range, in [Rank], the weighted median selectivity of the
// workload's ranges on the column whose literals are known, else 1/3 (open)
// or 1/4 (closed), System R's defaults.
//
// # Candidates
//
// [Candidates] turns a ranking into layouts ([layout.Layout]) for the
// simulator: the top columns with at least MinShare of the workload, a
// positive score and benefit not all taken by partitions give sort(c1),
// sort(c1, c2), zorder(c1, c2[, c3]) and hilbert(c1, c2[, c3]); current and
// binpack are always there as baselines. Key columns must be top-level
// primitive columns of the current schema (package layout's encoders find
// columns by top-level name); Iceberg-exact z-order (the default) also
// rejects decimal and time columns, which are left out of z-order layouts
// (sort and hilbert keep them) unless CandidateOptions.ZOrderMode is rank.
package analyzer
