package simulator

import (
	"fmt"
	pexpr "github.com/floe-project/floe/expr"
	"io"
	"strconv"
	"strings"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
)

// Query is one workload query as replay sees it: the filter its scan of one table could
// push down. A nil Filter reads the whole table.
type Query struct {
	// ID names the query in results (the engine's query id, or "stmt-N" for a SQL file).
	ID string `json:"id"`
	// Weight is how much the query counts in weighted figures; zero or less counts as 1.
	Weight float64 `json:"weight"`
	// Filter is the predicate tree on the table's columns.
	Filter *pexpr.Node `json:"filter,omitempty"`
}

// TableMatcher reports whether a table reference (catalog, namespace and name as written,
// possibly empty) names the table a workload is built for.
type TableMatcher func(catalog, namespace, name string) bool

// MatchIdent matches references to id case-insensitively by name; a namespace or catalog
// given in the reference must match too (a multi-level namespace is compared joined with
// dots, or by its last level).
func MatchIdent(id lake.Ident) TableMatcher {
	ns := strings.Join(id.Namespace, ".")
	last := ""
	if len(id.Namespace) > 0 {
		last = id.Namespace[len(id.Namespace)-1]
	}
	return func(catalog, namespace, name string) bool {
		if !strings.EqualFold(name, id.Name) {
			return false
		}
		if namespace != "" && !strings.EqualFold(namespace, ns) && !strings.EqualFold(namespace, last) {
			return false
		}
		return catalog == "" || id.Catalog == "" || strings.EqualFold(catalog, id.Catalog)
	}
}

// WorkloadFromSQL reads ';'-separated statements (one query each) and returns, for each
// statement that reads the table, a query whose filter is the OR of the filters of all
// its scans of the table (a scan without a filter makes the whole query unfiltered).
// Statements that do not read the table are left out; warnings name statements the
// extractor could not fully parse, by their number (1-based).
func WorkloadFromSQL(r io.Reader, dialect extract.Dialect, match TableMatcher) ([]Query, []string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("read workload: %w", err)
	}
	var qs []Query
	var warns []string
	for i, stmt := range SplitStatements(string(data)) {
		res := extract.Parse(dialect, stmt)
		var filters []*pexpr.Node
		reads, whole := false, false
		for _, sc := range res.Scans {
			if sc.Table < 0 || sc.Table >= len(res.Tables) {
				continue
			}
			t := res.Tables[sc.Table]
			if t.Write || t.Metadata != "" || t.AsOf != "" || !match(t.Catalog, t.Namespace, t.Name) {
				continue
			}
			reads = true
			if sc.Filter == nil {
				whole = true
			}
			filters = append(filters, sc.Filter)
		}
		for _, w := range res.Warnings {
			warns = append(warns, fmt.Sprintf("statement %d: %s", i+1, w))
		}
		if !reads {
			continue
		}
		q := Query{ID: "stmt-" + strconv.Itoa(i+1), Weight: 1}
		if !whole {
			q.Filter = orNodes(filters)
		}
		qs = append(qs, q)
	}
	return qs, warns, nil
}

func orNodes(ns []*pexpr.Node) *pexpr.Node {
	if len(ns) == 1 {
		return ns[0]
	}
	return &pexpr.Node{Kind: pexpr.NodeOr, Children: ns}
}

// WorkloadFromEvents turns resolved query events into queries on one table: one query per
// event that reads it, its filter the OR of the event's reads of the table (an access
// without a filter makes the query unfiltered). weight gives each event's weight; nil
// weighs every event 1.
func WorkloadFromEvents(events []collectors.QueryEvent, match TableMatcher, weight func(*collectors.QueryEvent) float64) []Query {
	var qs []Query
	for i := range events {
		ev := &events[i]
		var filters []*pexpr.Node
		reads, whole := false, false
		for j := range ev.Tables {
			ta := &ev.Tables[j]
			if ta.Write || !match(ta.Catalog, ta.Namespace, ta.Name) {
				continue
			}
			reads = true
			if ta.Filter == nil {
				whole = true
			}
			filters = append(filters, ta.Filter)
		}
		if !reads {
			continue
		}
		q := Query{ID: ev.QueryID, Weight: 1}
		if q.ID == "" {
			q.ID = "event-" + strconv.Itoa(i+1)
		}
		if weight != nil {
			q.Weight = weight(ev)
		}
		if !whole {
			q.Filter = orNodes(filters)
		}
		qs = append(qs, q)
	}
	return qs
}

// SplitStatements cuts SQL text at top-level semicolons, ignoring those inside quotes,
// quoted identifiers and comments; blank statements are dropped.
func SplitStatements(sql string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(sql[start:end]); s != "" {
			out = append(out, s)
		}
	}
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; c {
		case '\'', '"', '`':
			for i++; i < len(sql); i++ {
				if sql[i] == c {
					if i+1 < len(sql) && sql[i+1] == c {
						i++
						continue
					}
					break
				}
				if sql[i] == '\\' && c == '\'' {
					i++
				}
			}
		case '-':
			if i+1 < len(sql) && sql[i+1] == '-' {
				for i < len(sql) && sql[i] != '\n' {
					i++
				}
			}
		case '/':
			if i+1 < len(sql) && sql[i+1] == '*' {
				end := strings.Index(sql[i+2:], "*/")
				if end < 0 {
					i = len(sql)
				} else {
					i += end + 3
				}
			}
		case ';':
			emit(i)
			start = i + 1
		}
	}
	emit(len(sql))
	return out
}
