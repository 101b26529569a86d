package simulator

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// MeasuredQuery is the ground truth for one query: the data files iceberg-go's scan
// planning keeps for its pushed-down filter.
type MeasuredQuery struct {
	// ID is the query's [Query.ID].
	ID string `json:"id"`
	// FilesScanned is the number of distinct data files PlanFiles returned.
	FilesScanned int `json:"files_scanned"`
	// Pushed is false when nothing of the filter could be pushed down (the whole table
	// is planned).
	Pushed bool `json:"pushed"`
}

// MeasureResult is the JSON contract of `floe measure`.
type MeasureResult struct {
	// Table names the table measured.
	Table string `json:"table"`
	// FilesTotal is the number of live data files of the current snapshot.
	FilesTotal int `json:"files_total"`
	// Queries holds one entry per query, in input order.
	Queries []MeasuredQuery `json:"queries"`
	// SkippedPct is the weighted mean over queries of 1 − scanned/total, in percent.
	SkippedPct float64 `json:"skipped_pct"`
}

// Measure plans every query against tbl as it is now with iceberg-go's own scan planning
// (tbl.Scan(table.WithRowFilter(…)).PlanFiles) and counts the distinct data files kept:
// the ground truth projections are judged against. Each filter is converted with
// [ToIcebergExpr] (unconvertible terms are "may match"). PlanFiles can split a large
// file into several tasks; files are counted once by path.
func Measure(ctx context.Context, tbl *table.Table, queries []Query) (MeasureResult, error) {
	res := MeasureResult{Table: tableName(tbl), Queries: make([]MeasuredQuery, 0, len(queries))}
	if tbl.CurrentSnapshot() == nil {
		for _, q := range queries {
			res.Queries = append(res.Queries, MeasuredQuery{ID: q.ID})
		}
		return res, nil
	}
	all, err := plannedFiles(ctx, tbl.Scan())
	if err != nil {
		return MeasureResult{}, fmt.Errorf("measure %s: plan full scan: %w", res.Table, err)
	}
	res.FilesTotal = len(all)
	schema := tbl.Schema()
	var wsum float64
	for _, q := range queries {
		if err := ctx.Err(); err != nil {
			return MeasureResult{}, fmt.Errorf("measure %s: %w", res.Table, err)
		}
		e, pushed := ToIcebergExpr(q.Filter, schema)
		n := len(all)
		if pushed {
			files, err := plannedFiles(ctx, tbl.Scan(table.WithRowFilter(e)))
			if err != nil {
				return MeasureResult{}, fmt.Errorf("measure %s: plan query %s: %w", res.Table, q.ID, err)
			}
			n = len(files)
		}
		res.Queries = append(res.Queries, MeasuredQuery{ID: q.ID, FilesScanned: n, Pushed: pushed})
		w := q.Weight
		if w <= 0 {
			w = 1
		}
		wsum += w
		if res.FilesTotal > 0 {
			res.SkippedPct += w * (1 - float64(n)/float64(res.FilesTotal))
		}
	}
	if wsum > 0 {
		res.SkippedPct = 100 * res.SkippedPct / wsum
	}
	return res, nil
}

func plannedFiles(ctx context.Context, scan *table.Scan) (map[string]bool, error) {
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	files := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		files[t.File.FilePath()] = true
	}
	return files, nil
}

func tableName(tbl *table.Table) string {
	id := tbl.Identifier()
	s := ""
	for i, p := range id {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}
