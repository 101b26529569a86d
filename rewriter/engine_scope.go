package rewriter

import (
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/floe-project/floe/lake"
)

// PartitionScopes states each of partitions (keys as lake.File.PartitionKey
// prints them, such as "ts_day=2026-11-01") on its source columns, for an
// engine that selects a scoped rewrite's partitions with a predicate: an
// identity field gives its value, a year, month, day or hour field the UTC
// range [Lower, Upper) of its date or timestamp column, truncate[W] on an
// int or long column its truncated value, a null value Null. Void fields
// select every row and are left out. The values come from a data file of
// st in the partition.
//
// A partition that cannot be selected that way — a bucket transform, a
// truncate on anything but an int or long, a field of several source
// columns, or a partition of an older spec whose fields differ from the
// current spec's — is an error wrapping [ErrScopeUnsupported] that names the
// partition and the transform; a key that matches no data file is an
// [ErrInvalidOptions]. Every problem is reported at once. Duplicate keys are
// returned once, in the order first given.
func PartitionScopes(st *lake.State, partitions []string) ([]PartitionScope, error) {
	if st == nil || st.Metadata == nil {
		return nil, errors.New("partition scopes: no table state")
	}
	md := st.Metadata
	schema := md.CurrentSchema()
	current := md.PartitionSpec()
	byKey := make(map[string]*lake.File, len(partitions))
	for _, k := range partitions {
		byKey[k] = nil
	}
	for i := range st.DataFiles {
		f := &st.DataFiles[i]
		if p, ok := byKey[f.PartitionKey]; ok && p == nil {
			byKey[f.PartitionKey] = f
		}
	}
	var (
		out  []PartitionScope
		errs []error
		seen = make(map[string]bool, len(partitions))
	)
	for _, key := range partitions {
		if seen[key] {
			continue
		}
		seen[key] = true
		f := byKey[key]
		if f == nil {
			errs = append(errs, MarkInvalidOptions(fmt.Errorf("partition %q matches no data file of %s", key, st.Ident)))
			continue
		}
		spec := md.PartitionSpecByID(int(f.SpecID))
		if spec == nil || spec.NumFields() == 0 {
			errs = append(errs, MarkInvalidOptions(fmt.Errorf("partition %q: the table is not partitioned", key)))
			continue
		}
		if spec.ID() != current.ID() && !spec.CompatibleWith(&current) {
			errs = append(errs, fmt.Errorf("%w: partition %q was written under partition spec %d, whose fields differ from the current spec %d",
				ErrScopeUnsupported, key, spec.ID(), current.ID()))
			continue
		}
		scope := PartitionScope{Key: key}
		ok := true
		for _, field := range spec.Fields() {
			pv, skip, err := partitionValue(schema, field, f.Partition)
			if err != nil {
				errs = append(errs, fmt.Errorf("partition %q field %s (%s): %w", key, field.Name, field.Transform, err))
				ok = false
				continue
			}
			if !skip {
				scope.Fields = append(scope.Fields, pv)
			}
		}
		if ok {
			out = append(out, scope)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// partitionValue states one partition field's value of a file on its
// source column; skip is set for a void field, which selects every row.
func partitionValue(schema *iceberg.Schema, field iceberg.PartitionField, values map[int]any) (pv PartitionValue, skip bool, err error) {
	if _, ok := field.Transform.(iceberg.VoidTransform); ok {
		return pv, true, nil
	}
	if len(field.SourceIDs) != 1 {
		return pv, false, fmt.Errorf("%w: the field has %d source columns", ErrScopeUnsupported, len(field.SourceIDs))
	}
	col, ok := schema.FindColumnName(field.SourceIDs[0])
	if !ok {
		return pv, false, fmt.Errorf("%w: source column %d is not in the current schema", ErrScopeUnsupported, field.SourceIDs[0])
	}
	typ, _ := schema.FindTypeByID(field.SourceIDs[0])
	pv = PartitionValue{Column: col, SourceType: typ.String(), Transform: field.Transform.String()}
	v := values[field.FieldID]
	pv.Null = v == nil
	switch t := field.Transform.(type) {
	case iceberg.IdentityTransform:
		pv.Value = v
		return pv, false, nil
	case iceberg.TruncateTransform:
		switch typ.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
			pv.Value = v
			return pv, false, nil
		}
		return pv, false, fmt.Errorf("%w: truncate on a %s column selects no range of it", ErrScopeUnsupported, typ)
	case iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform, iceberg.HourTransform:
		switch typ.(type) {
		case iceberg.DateType:
			if _, hour := t.(iceberg.HourTransform); hour {
				return pv, false, fmt.Errorf("%w: hour of a date column", ErrScopeUnsupported)
			}
		case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		default:
			return pv, false, fmt.Errorf("%w: %s of a %s column", ErrScopeUnsupported, t, typ)
		}
		if pv.Null {
			return pv, false, nil
		}
		n, err := ordinal(v)
		if err != nil {
			return pv, false, err
		}
		pv.Lower, pv.Upper = timeRange(t, n)
		return pv, false, nil
	default:
		return pv, false, fmt.Errorf("%w: no predicate on %s selects a %s partition", ErrScopeUnsupported, col, t)
	}
}

// ordinal is a time transform's partition value: years, months, days or
// hours since 1970-01-01 00:00 UTC. iceberg-go v0.7.0 holds day values as
// iceberg.Date (DayTransform's result type is date) and the others as
// int32; manifests read back may give either form.
func ordinal(v any) (int64, error) {
	switch n := v.(type) {
	case iceberg.Date:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	}
	return 0, fmt.Errorf("%w: unexpected partition value %v (%T)", ErrScopeUnsupported, v, v)
}

// timeRange is the UTC range [lower, upper) of the source column a time
// transform's partition value n stands for.
func timeRange(t iceberg.Transform, n int64) (lower, upper time.Time) {
	epoch := time.Unix(0, 0).UTC()
	switch t.(type) {
	case iceberg.YearTransform:
		lower = epoch.AddDate(int(n), 0, 0)
		return lower, lower.AddDate(1, 0, 0)
	case iceberg.MonthTransform:
		lower = epoch.AddDate(0, int(n), 0)
		return lower, lower.AddDate(0, 1, 0)
	case iceberg.DayTransform:
		lower = epoch.AddDate(0, 0, int(n))
		return lower, lower.AddDate(0, 0, 1)
	default: // hour
		lower = epoch.Add(time.Duration(n) * time.Hour)
		return lower, lower.Add(time.Hour)
	}
}
