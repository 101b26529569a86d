package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TableSpend is what the rewriting steps of one table's runs spent in a
// window ([Store.Spend]).
type TableSpend struct {
	// Table is the table's name as its newest run in the window spelled it.
	Table string `json:"table"`
	// RewrittenBytes and RewriteCPUMillis are the sums of the steps'
	// [StepRecord.RewrittenBytes] and [StepRecord.RewriteCPUMillis].
	RewrittenBytes   int64 `json:"rewritten_bytes"`
	RewriteCPUMillis int64 `json:"rewrite_cpu_ms"`
}

// spendQuery is [Store.Spend]'s: the steps that rewrote something of the
// runs that ended at or after its first argument (through runs_ended), and
// of those still running or queued (through runs_live), each step through
// the steps' primary key. A run is in one part or the other: an ended run
// has neither status.
const spendQuery = `SELECT r.table_key, r.table_name, r.started_at, s.rewritten_bytes, s.rewrite_cpu_ms
FROM runs r JOIN run_steps s ON s.run_id = r.id
WHERE r.ended_at >= ? AND s.rewritten_bytes + s.rewrite_cpu_ms > 0
UNION ALL
SELECT r.table_key, r.table_name, r.started_at, s.rewritten_bytes, s.rewrite_cpu_ms
FROM runs r JOIN run_steps s ON s.run_id = r.id
WHERE r.status IN ('running', 'queued') AND s.rewritten_bytes + s.rewrite_cpu_ms > 0`

// Spend is what the rewriting steps of every table's runs spent since
// since: those of the runs that ended since, and of the runs still going.
// It reads only those runs (one query through the runs_ended and runs_live
// indexes), by table, in no particular order; a table that spent nothing
// is not listed.
func (s *Store) Spend(ctx context.Context, since time.Time) (out []TableSpend, err error) {
	rows, err := s.db.QueryContext(ctx, spendQuery, since.UTC().UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read the spend since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	idx := map[string]int{}
	newest := map[string]int64{}
	for rows.Next() {
		var (
			key, name  string
			started    int64
			bytes, cpu int64
		)
		if err := rows.Scan(&key, &name, &started, &bytes, &cpu); err != nil {
			return nil, fmt.Errorf("read the spend: %w", err)
		}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, TableSpend{Table: name})
		}
		if started > newest[key] {
			newest[key], out[i].Table = started, name
		}
		out[i].RewrittenBytes += bytes
		out[i].RewriteCPUMillis += cpu
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the spend: %w", err)
	}
	return out, nil
}
