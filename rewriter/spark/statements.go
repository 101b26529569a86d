package spark

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// arg is one named argument of a procedure call, its value already SQL.
type arg struct{ name, value string }

func call(t rewriter.EngineTable, proc string, args ...arg) string {
	var b strings.Builder
	b.WriteString("CALL ")
	b.WriteString(procedure(t, proc))
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.name)
		b.WriteString(" => ")
		b.WriteString(a.value)
	}
	b.WriteByte(')')
	return b.String()
}

// mapLiteral is Spark's map('k1', 'v1', …) of string pairs, in kv's order.
func mapLiteral(kv ...string) string {
	quoted := make([]string, len(kv))
	for i, s := range kv {
		quoted[i] = quoteString(s)
	}
	return "map(" + strings.Join(quoted, ", ") + ")"
}

// compactSQL is the rewrite_data_files call for job, or an error wrapping
// [rewriter.ErrLayoutUnsupported] for a layout Spark cannot write.
func compactSQL(job rewriter.CompactJob) (string, error) {
	if err := checkTable(job.Table); err != nil {
		return "", err
	}
	l := job.Options.Layout
	args := []arg{{"table", tableArg(job.Table)}}
	switch l.Strategy {
	case "", layout.StrategyBinpack:
		args = append(args, arg{"strategy", quoteString("binpack")})
	case layout.StrategySort:
		args = append(args, arg{"strategy", quoteString("sort")})
		if len(l.Columns) > 0 {
			order, err := sortOrder(l.Columns)
			if err != nil {
				return "", err
			}
			args = append(args, arg{"sort_order", quoteString(order)})
		}
	case layout.StrategyZOrder:
		if job.Options.ZOrderMode != layout.ZOrderIcebergExact {
			return "", fmt.Errorf("spark: %s with %s z-order keys on %s: Spark writes only Iceberg's own z-order (engines that can: native): %w",
				l, job.Options.ZOrderMode, job.Table, rewriter.ErrLayoutUnsupported)
		}
		cols := make([]string, len(l.Columns))
		for i, c := range l.Columns {
			if err := checkName("layout column", c.Name); err != nil {
				return "", err
			}
			cols[i] = quoteIdent(c.Name)
		}
		args = append(args,
			arg{"strategy", quoteString("sort")},
			arg{"sort_order", quoteString("zorder(" + strings.Join(cols, ", ") + ")")})
	default:
		return "", fmt.Errorf("spark: layout %s on %s: Iceberg's Spark procedure has no %s strategy (engines that can: native): %w",
			l, job.Table, l.Strategy, rewriter.ErrLayoutUnsupported)
	}
	args = append(args, arg{"options", mapLiteral(compactOptions(job)...)})
	if job.Scope != nil {
		where, err := wherePredicate(job.Scope)
		if err != nil {
			return "", fmt.Errorf("spark: scope of %s: %w", job.Table, err)
		}
		if where != "" {
			args = append(args, arg{"where", quoteString(where)})
		}
	}
	return call(job.Table, "rewrite_data_files", args...), nil
}

// compactOptions are rewrite_data_files' options from floe's: the target
// size (the plan's, which has the table's default filled in), the minimum
// input files, and partial progress with one commit per GroupsPerBatch of
// floe's planned groups (rounded up), so that Spark commits as often as
// the native engine would.
func compactOptions(job rewriter.CompactJob) []string {
	var kv []string
	target := job.Plan.TargetFileSizeBytes
	if target <= 0 {
		target = job.Options.TargetFileSizeBytes
	}
	if target <= 0 {
		target = job.Options.Layout.TargetFileSizeBytes
	}
	if target > 0 {
		kv = append(kv, "target-file-size-bytes", strconv.FormatInt(target, 10))
	}
	if job.Options.MinInputFiles > 0 {
		kv = append(kv, "min-input-files", strconv.Itoa(job.Options.MinInputFiles))
	}
	kv = append(kv, "partial-progress.enabled", "true",
		"partial-progress.max-commits", strconv.Itoa(maxCommits(len(job.Plan.Groups), job.Options.GroupsPerBatch)))
	return kv
}

// maxCommits is ceil(groups / perBatch), at least 1; perBatch <= 0 is 1.
func maxCommits(groups, perBatch int) int {
	if perBatch <= 0 {
		perBatch = 1
	}
	return max(1, (groups+perBatch-1)/perBatch)
}

// sortOrder is rewrite_data_files' sort_order for a sort layout: each
// column in backticks with its direction and null order spelled out, since
// floe's defaults (ascending, nulls first) need not be Iceberg's.
func sortOrder(cols []layout.Column) (string, error) {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if err := checkName("layout column", c.Name); err != nil {
			return "", err
		}
		dir, nulls := "ASC", "NULLS FIRST"
		if c.Desc {
			dir = "DESC"
		}
		if c.NullsLast {
			nulls = "NULLS LAST"
		}
		parts[i] = quoteIdent(c.Name) + " " + dir + " " + nulls
	}
	return strings.Join(parts, ", "), nil
}

// wherePredicate is the Spark SQL predicate selecting the scopes' rows:
// each scope the conjunction of its fields, parenthesized, the scopes
// OR-ed. It is "" when a scope constrains nothing (an unpartitioned table,
// or only void fields): that scope is the whole table.
//
// Identity fields compare to their value (IS NULL for a null partition);
// year, month, day and hour fields bound the source column to [Lower,
// Upper). bucket and truncate fields carry no value to compare with, so
// they are left out: the predicate then selects every partition that
// agrees on the other fields, a superset of the scope (more files may be
// rewritten than floe planned, never fewer). A scope that nothing but
// bucket or truncate fields would narrow is refused, since it would
// rewrite the whole table.
func wherePredicate(scopes []rewriter.PartitionScope) (string, error) {
	var ors []string
	var errs []error
	for _, s := range scopes {
		var ands []string
		widened := false
		for _, f := range s.Fields {
			p, err := fieldPredicate(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("partition %s: %w", s.Key, err))
				continue
			}
			if p == "" && !f.Null && f.Transform != "void" {
				widened = true
			}
			if p != "" {
				ands = append(ands, p)
			}
		}
		if len(ands) == 0 {
			if widened {
				errs = append(errs, rewriter.MarkInvalidOptions(fmt.Errorf(
					"partition %s: only bucket or truncate fields, which a Spark predicate cannot select", s.Key)))
				continue
			}
			return "", errors.Join(errs...) // the whole table
		}
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	if len(ors) == 0 {
		// An empty, non-nil scope: nothing. The caller never gets here
		// (Compact returns early), but a predicate that selects nothing is
		// the honest answer.
		return "false", nil
	}
	return strings.Join(ors, " OR "), nil
}

// fieldPredicate is one partition field's predicate, or "" when it cannot
// narrow the scope (void, bucket, truncate).
func fieldPredicate(f rewriter.PartitionValue) (string, error) {
	if err := checkName("partition column", f.Column); err != nil {
		return "", err
	}
	col := quoteIdent(f.Column)
	transform := f.Transform
	if i := strings.IndexByte(transform, '['); i >= 0 {
		transform = transform[:i]
	}
	switch transform {
	case "void", "bucket", "truncate":
		return "", nil
	}
	if f.Null {
		return col + " IS NULL", nil
	}
	switch transform {
	case "identity":
		lit, err := literal(f.Value, f.SourceType)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", f.Column, err)
		}
		return col + " = " + lit, nil
	case "year", "month", "day", "hour":
		if f.Lower.IsZero() || f.Upper.IsZero() {
			return "", fmt.Errorf("column %s: %s partition without bounds", f.Column, f.Transform)
		}
		lo, err := timeLiteral(f.Lower, f.SourceType)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", f.Column, err)
		}
		hi, err := timeLiteral(f.Upper, f.SourceType)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", f.Column, err)
		}
		return col + " >= " + lo + " AND " + col + " < " + hi, nil
	default:
		return "", fmt.Errorf("column %s: unknown transform %q", f.Column, f.Transform)
	}
}

// timeLiteral is t as a literal of the column's type: DATE for date,
// TIMESTAMP_NTZ for timestamp (a local date-time, which floe states in
// UTC), TIMESTAMP with an explicit UTC zone for timestamptz.
func timeLiteral(t time.Time, sourceType string) (string, error) {
	t = t.UTC()
	switch sourceType {
	case "date":
		return "DATE '" + t.Format(time.DateOnly) + "'", nil
	case "timestamp", "timestamp_ns":
		return "TIMESTAMP_NTZ '" + t.Format("2006-01-02 15:04:05.000000") + "'", nil
	case "timestamptz", "timestamptz_ns":
		return timestampLiteral(t), nil
	default:
		return "", fmt.Errorf("time bounds on a %s column", sourceType)
	}
}

// literal is an identity partition value as a Spark SQL literal.
func literal(v any, sourceType string) (string, error) {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return "", errors.New("string value contains a NUL byte")
		}
		return quoteString(v), nil
	case bool:
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int:
		return strconv.Itoa(v), nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float32:
		return doubleLiteral(float64(v)), nil
	case float64:
		return doubleLiteral(v), nil
	case iceberg.Decimal:
		return v.String() + "BD", nil
	case iceberg.Date:
		return "DATE '" + time.Unix(0, 0).UTC().AddDate(0, 0, int(v)).Format(time.DateOnly) + "'", nil
	case iceberg.Timestamp:
		return timeLiteral(time.UnixMicro(int64(v)), sourceType)
	case time.Time:
		return timeLiteral(v, sourceType)
	case uuid.UUID:
		return quoteString(v.String()), nil
	case []byte:
		return "X'" + hex.EncodeToString(v) + "'", nil
	case nil:
		return "", errors.New("identity value missing")
	default:
		return "", fmt.Errorf("identity value of type %T has no Spark literal", v)
	}
}

// doubleLiteral spells x as a Spark DOUBLE: exact (shortest round-trip
// digits), with NaN and the infinities cast from strings.
func doubleLiteral(x float64) string {
	switch {
	case math.IsNaN(x):
		return "CAST('NaN' AS DOUBLE)"
	case math.IsInf(x, 1):
		return "CAST('Infinity' AS DOUBLE)"
	case math.IsInf(x, -1):
		return "CAST('-Infinity' AS DOUBLE)"
	}
	return strconv.FormatFloat(x, 'E', -1, 64) + "D"
}

// expireSQL is the expire_snapshots call for job.
func expireSQL(job rewriter.ExpireJob) (string, error) {
	if err := checkTable(job.Table); err != nil {
		return "", err
	}
	args := []arg{{"table", tableArg(job.Table)}}
	if !job.OlderThan.IsZero() {
		args = append(args, arg{"older_than", timestampLiteral(job.OlderThan)})
	}
	if job.RetainLast > 0 {
		args = append(args, arg{"retain_last", strconv.Itoa(job.RetainLast)})
	}
	return call(job.Table, "expire_snapshots", args...), nil
}

// orphanSQL is the remove_orphan_files call for job, as a dry run or not.
// It needs the job's cutoff: without one Iceberg would pick its own (3
// days), blind to floe's leases.
func orphanSQL(job rewriter.OrphanJob, dryRun bool) (string, error) {
	if err := checkTable(job.Table); err != nil {
		return "", err
	}
	if job.OlderThan.IsZero() {
		return "", rewriter.MarkInvalidOptions(fmt.Errorf("spark: orphan removal on %s without a cutoff", job.Table))
	}
	args := []arg{
		{"table", tableArg(job.Table)},
		{"older_than", timestampLiteral(job.OlderThan)},
	}
	if loc := job.Options.Location; loc != "" {
		if strings.IndexByte(loc, 0) >= 0 {
			return "", rewriter.MarkInvalidOptions(fmt.Errorf("spark: orphan location %q contains a NUL byte", loc))
		}
		args = append(args, arg{"location", quoteString(loc)})
	}
	if m := job.Options.EqualSchemes; m != nil {
		args = append(args, arg{"equal_schemes", sortedMap(m)})
	}
	if m := job.Options.EqualAuthorities; m != nil {
		args = append(args, arg{"equal_authorities", sortedMap(m)})
	}
	if dryRun {
		args = append(args, arg{"dry_run", "true"})
	}
	return call(job.Table, "remove_orphan_files", args...), nil
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kv := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		kv = append(kv, k, m[k])
	}
	return mapLiteral(kv...)
}

// manifestsSQL is the rewrite_manifests call for job.
func manifestsSQL(job rewriter.ManifestJob) (string, error) {
	if err := checkTable(job.Table); err != nil {
		return "", err
	}
	return call(job.Table, "rewrite_manifests", arg{"table", tableArg(job.Table)}), nil
}
