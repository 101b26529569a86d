package layout

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// CheckSchema reports, all at once, why the columns of layout l cannot key
// records of schema with z-order key mode (the layout's shape is
// [Layout.Validate]'s to check): a column the schema lacks ([ErrColumnNotFound]) or
// one whose type the strategy cannot encode ([ErrUnsupportedType]), each
// error naming the column and its type. It is the check [NewEncoder] and
// [FitQuantiles] would fail on, made before any data is read: sort, Hilbert
// and rank z-order take every type the sort key orders (numbers, decimals,
// dates, times, timestamps, booleans, strings, binary, UUID); Iceberg-exact
// z-order takes only what Iceberg's Spark z-order accepts. Nested and list
// types key no layout.
func CheckSchema(l Layout, schema *arrow.Schema, mode ZOrderMode) error {
	if schema == nil {
		return errors.New("check layout: nil schema")
	}
	var errs []error
	for _, c := range l.Columns {
		i, err := findField(schema, c.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := schema.Field(i)
		if l.Strategy == StrategyZOrder && mode == ZOrderIcebergExact {
			_, _, err = icebergContribution(f.Type, 8, false)
		} else {
			_, err = ascCodec(f.Type)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s column %q: %w", l.Strategy, f.Name, err))
		}
	}
	return errors.Join(errs...)
}
