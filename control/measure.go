package control

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// Measure counts the files each query of the table's workload reads today,
// with iceberg-go's own scan planning: the ground truth [Project]'s
// "current" is judged against. st may be nil when opts.SQL is set.
func Measure(ctx context.Context, st *store.Store, id lake.Ident, tbl *table.Table, opts WorkloadOptions) (simulator.MeasureResult, Workload, error) {
	w, err := LoadWorkload(ctx, st, id, opts)
	if err != nil {
		return simulator.MeasureResult{}, w, err
	}
	res, err := simulator.Measure(ctx, tbl, w.Queries)
	if err != nil {
		return res, w, fmt.Errorf("measure %s: %w", id, err)
	}
	res.Table = id.String()
	return res, w, nil
}
