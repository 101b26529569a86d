package analyzer

import (
	"fmt"
	"math"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
)

// WorkloadQuery is one query of a table's workload: the event, folded as
// [Workload] describes, and its weight.
type WorkloadQuery struct {
	Event  collectors.QueryEvent
	Weight float64
}

// Workload is the table's workload as [Rank] counts it, for the simulator
// to replay: the same selection (metadata-table reads and failed queries
// dropped, one record per engine and query id, each Iceberg scan report
// folded into the engine query it was sent for) and the same weights
// (cost × recency, see [RankOptions]). Ranking and projection therefore
// judge one workload. Each query's event holds only its reads of the
// table — the folded scan reports' alone when it has any, since a report
// is the filter Iceberg planned the scan with. Workload does no I/O.
func Workload(table lake.Ident, events []collectors.QueryEvent, opts RankOptions) ([]WorkloadQuery, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("select workload of %s: %w", table, err)
	}
	opts = opts.withDefaults()
	queries := foldScanReports(selectQueries(table, events, opts))
	if len(queries) == 0 {
		return nil, nil
	}
	weighQueries(queries, opts)
	out := make([]WorkloadQuery, len(queries))
	for i := range queries {
		q := &queries[i]
		ev := *q.ev
		accesses := q.accesses
		if len(q.reports) > 0 {
			accesses = q.reports
		}
		ev.Tables = make([]collectors.TableAccess, len(accesses))
		for j, a := range accesses {
			ev.Tables[j] = *a
			ev.Tables[j].Write = false
		}
		// The simulator counts a weight of zero as 1; an age that
		// underflows the recency factor must still weigh (almost) nothing.
		out[i] = WorkloadQuery{Event: ev, Weight: max(q.weight, math.SmallestNonzeroFloat64)}
	}
	return out, nil
}
