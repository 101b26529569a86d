package lake

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// SpecText prints a partition spec as Spark and Trino DDL write it —
// "day(ts), bucket(16, id)", "region" for identity — with column names
// from schema; "unpartitioned" for none. (iceberg-go's own String prints
// field ids over several lines, which breaks a text table.)
func SpecText(spec iceberg.PartitionSpec, schema *iceberg.Schema) string {
	if spec.IsUnpartitioned() {
		return "unpartitioned"
	}
	var parts []string
	for _, f := range spec.Fields() {
		parts = append(parts, transformText(f.Transform, columnNames(schema, f.SourceIDs)))
	}
	return strings.Join(parts, ", ")
}

// SortOrderText prints a sort order as "ts desc nulls last, id"; the null
// order is printed only where it is not Iceberg's default for the
// direction (first for asc, last for desc). "unsorted" for none.
func SortOrderText(order table.SortOrder, schema *iceberg.Schema) string {
	if order.IsUnsorted() {
		return "unsorted"
	}
	var parts []string
	for _, f := range order.Fields() {
		s := transformText(f.Transform, columnNames(schema, f.SourceIDs))
		def := table.NullsFirst
		if f.Direction == table.SortDESC {
			s, def = s+" desc", table.NullsLast
		}
		switch {
		case f.NullOrder == def:
		case f.NullOrder == table.NullsLast:
			s += " nulls last"
		default:
			s += " nulls first"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func columnNames(schema *iceberg.Schema, ids []int) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		name, ok := schema.FindColumnName(id)
		if !ok {
			name = "field " + strconv.Itoa(id)
		}
		names[i] = name
	}
	return strings.Join(names, ", ")
}

func transformText(t iceberg.Transform, cols string) string {
	switch t := t.(type) {
	case iceberg.IdentityTransform:
		return cols
	case iceberg.BucketTransform:
		return fmt.Sprintf("bucket(%d, %s)", t.NumBuckets, cols)
	case iceberg.TruncateTransform:
		return fmt.Sprintf("truncate(%d, %s)", t.Width, cols)
	default:
		return fmt.Sprintf("%s(%s)", t, cols)
	}
}
