package control

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// QueryStats summarizes the queries collected per table (those f selects)
// with the counts every other verb uses: a table's Queries are its workload
// as [analyzer.Workload] selects it — the queries that read its data,
// metadata-table reads, INSERT targets and failed or cancelled queries left
// out, one per engine and query id, each Iceberg scan report folded into the
// engine query it was planned for — the queries [Analyze] ranks and
// [LoadWorkload] replays. TopColumns (at most top, 5 when top <= 0) count
// those queries per filter column as [analyzer.Rank] does. Failed, Users and
// the time range are over every stored event of the table. Tables are
// ordered busiest first, then by name.
func QueryStats(ctx context.Context, st *store.Store, f store.QueryFilter, top int, now time.Time) ([]store.TableStat, error) {
	if top <= 0 {
		top = 5
	}
	stats, err := st.TableStats(ctx, f, top)
	if err != nil {
		return nil, err
	}
	for i := range stats {
		s := &stats[i]
		id := lake.Ident{Catalog: s.Catalog, Name: s.Name}
		if s.Namespace != "" {
			id.Namespace = lake.NamespaceParts(s.Namespace)
		}
		tf := f
		tf.Table, tf.Limit = s.Table, 0
		events, err := st.WorkloadEvents(ctx, tf)
		if err != nil {
			return nil, err
		}
		wq, err := analyzer.Workload(id, events, analyzer.RankOptions{Now: now})
		if err != nil {
			return nil, fmt.Errorf("count queries of %s: %w", s.Table, err)
		}
		ranks, err := analyzer.Rank(id, nil, events, analyzer.RankOptions{Now: now})
		if err != nil {
			return nil, fmt.Errorf("count filter columns of %s: %w", s.Table, err)
		}
		s.Queries = len(wq)
		s.TopColumns = topColumns(ranks, top)
	}
	slices.SortStableFunc(stats, func(a, b store.TableStat) int {
		if c := cmp.Compare(b.Queries, a.Queries); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	return stats, nil
}

// topColumns are the top ranked columns by the queries that filter on them.
func topColumns(ranks []analyzer.ColumnRank, top int) []store.ColumnCount {
	ranks = slices.Clone(ranks)
	slices.SortStableFunc(ranks, func(a, b analyzer.ColumnRank) int {
		if c := cmp.Compare(b.Queries, a.Queries); c != 0 {
			return c
		}
		return strings.Compare(a.Column, b.Column)
	})
	out := []store.ColumnCount{}
	for _, r := range ranks[:min(top, len(ranks))] {
		out = append(out, store.ColumnCount{Column: r.Column, Queries: r.Queries, Ops: slices.Sorted(maps.Keys(r.OpMix))})
	}
	return out
}
