package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TableStat summarizes the stored queries of one table.
type TableStat struct {
	// Table is catalog.namespace.name as the catalog spells it.
	Table string `json:"table"`
	// Catalog, Namespace and Name are Table's parts (Namespace joined with
	// dots), as stored.
	Catalog   string `json:"-"`
	Namespace string `json:"-"`
	Name      string `json:"-"`
	// Queries counts distinct events that read or wrote the table
	// (metadata-table reads excluded); Failed those that failed or were
	// cancelled.
	Queries int `json:"queries"`
	Failed  int `json:"failed"`
	// Users counts distinct non-empty users.
	Users     int       `json:"users"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	// TopColumns are the columns predicates filter on most, by number of
	// queries, most used first.
	TopColumns []ColumnCount `json:"top_columns"`
}

// ColumnCount is how many queries filtered a column, and with which
// operators (sorted).
type ColumnCount struct {
	Column  string   `json:"column"`
	Queries int      `json:"queries"`
	Ops     []string `json:"ops"`
}

// TableStats summarizes, per table, the events f selects: query and user
// counts and the top predicate columns (at most top per table; top <= 0
// means 5). Queries, Failed, FirstSeen and LastSeen count the events
// folded by [Store.PruneEvents] too; Users and TopColumns, which folded
// events do not keep, only the raw ones. With f.Table set only that table is summarized. f.Limit caps
// the number of tables. Tables are ordered by query count (busiest first),
// then name.
func (s *Store) TableStats(ctx context.Context, f QueryFilter, top int) (out []TableStat, err error) {
	if top <= 0 {
		top = 5
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("table stats: begin: %w", err)
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	limit := f.Limit
	f.Limit = 0
	where, args := f.where()
	cond := " AND ta.metadata = ''"
	if where == "" {
		cond = " WHERE ta.metadata = ''"
	}
	// With a table filter, summarize that table only, not the other tables
	// its queries joined.
	predCond, predArgs := "", []any{}
	if f.Table != "" {
		key := filterKey(f.Table)
		c, cargs := tableMatch("ta.table_key", key)
		cond += " AND " + c
		c, _ = tableMatch("p.table_key", key)
		predCond = " AND " + c
		predArgs = cargs
	}
	tableArgs := append(append([]any{}, args...), predArgs...)
	q := `SELECT ta.table_key, min(ta.catalog), min(ta.namespace), min(ta.name), count(DISTINCT e.id),
	count(DISTINCT CASE WHEN e.state IN ('FAILED', 'CANCELLED') THEN e.id END),
	count(DISTINCT nullif(e.user_name, '')), min(e.start_time), max(e.start_time)
FROM query_events e JOIN table_accesses ta ON ta.event_id = e.id` + where + cond + `
GROUP BY ta.table_key`
	rows, err := tx.QueryContext(ctx, q, tableArgs...)
	if err != nil {
		return nil, fmt.Errorf("table stats: %w", err)
	}
	idx := map[string]int{}
	var keys []string
	for rows.Next() {
		var (
			key, cat, ns, name string
			st                 TableStat
			first, last        int64
		)
		if err := rows.Scan(&key, &cat, &ns, &name, &st.Queries, &st.Failed, &st.Users, &first, &last); err != nil {
			return nil, errors.Join(fmt.Errorf("table stats: %w", err), rows.Close())
		}
		st.Table = tableName(cat, ns, name)
		st.Catalog, st.Namespace, st.Name = cat, ns, name
		st.FirstSeen = fromNanos(sql.NullInt64{Int64: first, Valid: first != 0})
		st.LastSeen = fromNanos(sql.NullInt64{Int64: last, Valid: last != 0})
		st.TopColumns = []ColumnCount{}
		idx[key] = len(out)
		keys = append(keys, key)
		out = append(out, st)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("table stats: %w", err)
	}
	out, keys, err = foldedTableStats(ctx, tx, f, out, keys, idx)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(out[b].Queries, out[a].Queries); c != 0 {
			return c
		}
		return strings.Compare(keys[a], keys[b])
	})
	if limit > 0 && len(order) > limit {
		order = order[:limit]
	}
	sorted := make([]TableStat, len(order))
	clear(idx)
	for i, j := range order {
		sorted[i] = out[j]
		idx[keys[j]] = i
	}
	out = sorted
	if len(out) == 0 {
		return out, nil
	}
	q = `SELECT p.table_key, p.column_name, count(DISTINCT p.event_id), ` + s.d.distinctList("p.op") + `
FROM predicates p JOIN query_events e ON e.id = p.event_id` + where
	if where == "" && predCond != "" {
		q += " WHERE TRUE"
	}
	q += predCond + `
GROUP BY p.table_key, p.column_name ORDER BY p.table_key, 3 DESC, 2`
	rows, err = tx.QueryContext(ctx, q, tableArgs...)
	if err != nil {
		return nil, fmt.Errorf("table stats: predicate columns: %w", err)
	}
	for rows.Next() {
		var (
			key string
			cc  ColumnCount
			ops sql.NullString
		)
		if err := rows.Scan(&key, &cc.Column, &cc.Queries, &ops); err != nil {
			return nil, errors.Join(fmt.Errorf("table stats: predicate columns: %w", err), rows.Close())
		}
		i, ok := idx[key]
		if !ok || len(out[i].TopColumns) >= top {
			continue
		}
		cc.Ops = strings.Split(ops.String, ",")
		slices.Sort(cc.Ops)
		out[i].TopColumns = append(out[i].TopColumns, cc)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("table stats: predicate columns: %w", err)
	}
	return out, nil
}

// foldedTableStats adds the folded events f selects to the per-table
// stats out (whose table keys are keys, indexed by idx): their counts of
// queries and failures and their first and last start times. Folded
// events keep no user, so Users counts raw events only.
func foldedTableStats(ctx context.Context, tx *txn, f QueryFilter, out []TableStat, keys []string, idx map[string]int) ([]TableStat, []string, error) {
	where, args := f.foldedWhere()
	cond := " WHERE TRUE"
	if where != "" {
		cond = ""
	}
	if f.Table != "" {
		c, cargs := tableMatch("ta.table_key", filterKey(f.Table))
		cond += " AND " + c
		args = append(args, cargs...)
	}
	rows, err := tx.QueryContext(ctx, `SELECT ta.table_key, min(ta.catalog), min(ta.namespace), min(ta.name), count(DISTINCT e.id),
	count(DISTINCT CASE WHEN e.state IN ('FAILED', 'CANCELLED') THEN e.id END), min(e.start_time), max(e.start_time)
FROM folded_events e JOIN folded_shape_tables ta ON ta.shape_id = e.shape_id`+where+cond+`
GROUP BY ta.table_key`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("table stats: folded events: %w", err)
	}
	for rows.Next() {
		var (
			key, cat, ns, name string
			queries, failed    int
			first, last        int64
		)
		if err := rows.Scan(&key, &cat, &ns, &name, &queries, &failed, &first, &last); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("table stats: folded events: %w", err), rows.Close())
		}
		firstT := fromNanos(sql.NullInt64{Int64: first, Valid: first != 0})
		lastT := fromNanos(sql.NullInt64{Int64: last, Valid: last != 0})
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			keys = append(keys, key)
			out = append(out, TableStat{Table: tableName(cat, ns, name), Catalog: cat, Namespace: ns, Name: name,
				FirstSeen: firstT, LastSeen: lastT, TopColumns: []ColumnCount{}})
		}
		st := &out[i]
		st.Queries += queries
		st.Failed += failed
		if !firstT.IsZero() && (st.FirstSeen.IsZero() || firstT.Before(st.FirstSeen)) {
			st.FirstSeen = firstT
		}
		if lastT.After(st.LastSeen) {
			st.LastSeen = lastT
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, fmt.Errorf("table stats: folded events: %w", err)
	}
	return out, keys, nil
}

func nonEmpty(parts ...string) []string {
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// EventsMark is a fingerprint of the events a [QueryFilter] selects, cheap
// to read: how many there are, how many have ended, and the largest id.
// Storing an event the filter selects changes it — a new event adds to
// Events and raises MaxID; one that replaces its unfinished record keeps
// Events but adds to Ended — so a result computed from those events still
// holds while their mark is the same.
type EventsMark struct {
	Events int64 `json:"events"`
	Ended  int64 `json:"ended"`
	MaxID  int64 `json:"max_id"`
}

// EventsMark reads the mark of the events f selects (f.Limit is ignored).
func (s *Store) EventsMark(ctx context.Context, f QueryFilter) (EventsMark, error) {
	f.Limit = 0
	where, args := f.where()
	var m EventsMark
	err := s.db.QueryRowContext(ctx, `SELECT count(*), count(e.end_time), coalesce(max(e.id), 0) FROM query_events e`+where, args...).
		Scan(&m.Events, &m.Ended, &m.MaxID)
	if err != nil {
		return EventsMark{}, s.redact(fmt.Errorf("read events mark: %w", err))
	}
	return m, nil
}
