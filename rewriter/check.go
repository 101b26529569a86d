package rewriter

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// CheckLayout reports, all at once and before any data is read, why layout l
// cannot order the rows of a table with schema sch under z-order key mode:
// a column the schema lacks, a nested column (addr.city: only top-level
// columns key a layout, as the key encoders read top-level Arrow columns), a
// struct, list or map column, or a type the strategy cannot encode
// (Iceberg-exact z-order takes no decimal, time or uuid; see
// [layout.CheckSchema]). Each problem names the column and its type. The
// error wraps [ErrInvalidOptions]. Compaction ([PlanCompaction]) and the
// simulator's callers check a layout with it; current and binpack have no
// columns and always pass.
func CheckLayout(sch *iceberg.Schema, l layout.Layout, mode layout.ZOrderMode) error {
	if err := l.Validate(); err != nil {
		return MarkInvalidOptions(err)
	}
	if len(l.Columns) == 0 {
		return nil
	}
	if sch == nil {
		return MarkInvalidOptions(fmt.Errorf("layout %s: the table has no schema", l))
	}
	arrowSch, err := table.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		return fmt.Errorf("layout %s: arrow schema: %w", l, err)
	}
	var errs []error
	for _, c := range l.Columns {
		f, ok := sch.FindFieldByNameCaseInsensitive(c.Name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("no column %q (the table has %s)", c.Name, topLevelColumns(sch)))
		case !slices.ContainsFunc(sch.Fields(), func(t iceberg.NestedField) bool { return t.ID == f.ID }):
			errs = append(errs, fmt.Errorf("column %q (%s) is nested: a layout keys on top-level columns only", c.Name, f.Type))
		default:
			if _, prim := f.Type.(iceberg.PrimitiveType); !prim {
				errs = append(errs, fmt.Errorf("column %q is a %s: a layout keys on primitive columns only", f.Name, f.Type))
				continue
			}
			one := layout.Layout{Strategy: l.Strategy, Columns: []layout.Column{c}}
			if err := layout.CheckSchema(one, arrowSch, mode); err != nil {
				errs = append(errs, fmt.Errorf("column %q (%s): %w", f.Name, f.Type, unwrapColumn(err)))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return MarkInvalidOptions(fmt.Errorf("layout %s: %w", l, errors.Join(errs...)))
}

// unwrapColumn drops layout's own "strategy column name:" prefix, which
// CheckLayout says with the Iceberg type instead, keeping the sentinel.
func unwrapColumn(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

func topLevelColumns(sch *iceberg.Schema) string {
	var names []string
	for _, f := range sch.Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// CheckCompaction reports, all at once, every reason opts cannot compact the
// table in st: the options' own ([CompactOptions.Validate]), a layout the
// schema cannot key ([CheckLayout]), and Partitions naming a partition the
// table has no data file in. [PlanCompaction] runs it first, so a dry run
// refuses what the real run would. The error wraps [ErrInvalidOptions].
func CheckCompaction(st *lake.State, opts CompactOptions) error {
	var errs []error
	if err := opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := needTree(opts); err != nil {
		errs = append(errs, err)
	}
	if l := opts.Layout; st.Metadata != nil && l.Strategy != "" {
		if err := CheckLayout(st.Metadata.CurrentSchema(), l, opts.ZOrderMode); err != nil {
			errs = append(errs, err)
		}
	}
	if len(opts.Partitions) > 0 {
		have := map[string]bool{}
		for _, f := range st.DataFiles {
			have[f.PartitionKey] = true
		}
		var missing []string
		for _, p := range opts.Partitions {
			if !have[p] {
				missing = append(missing, fmt.Sprintf("%q", p))
			}
		}
		if len(missing) > 0 {
			errs = append(errs, MarkInvalidOptions(fmt.Errorf("partition %s matches no data file of %s (partition keys are spelled as 'floe health' prints them, e.g. %s)",
				strings.Join(missing, ", "), st.Ident, examplePartition(st))))
		}
	}
	return errors.Join(errs...)
}

func examplePartition(st *lake.State) string {
	for _, f := range st.DataFiles {
		if f.PartitionKey != "" {
			return f.PartitionKey
		}
	}
	return "(the table is unpartitioned: leave --partition out)"
}

// needTree refuses a tree layout without its learned tree: a rewrite has no
// workload to learn one from. A plan carries the tree it projected, and a
// table rewritten into a tree records it ([RecordedTree]).
func needTree(opts CompactOptions) error {
	if opts.Layout.Strategy != layout.StrategyTree || opts.Tree != nil {
		return nil
	}
	return MarkInvalidOptions(fmt.Errorf("layout %s needs its learned tree, and the table records none for it: simulate or plan it with the workload (floe plan), then run the plan", opts.Layout))
}
