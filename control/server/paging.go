package server

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
)

// Paging of the API's lists.
const (
	// DefaultPageLimit is how many items a list answers without limit.
	DefaultPageLimit = 100
	// MaxPageLimit is the most items one page of a list holds.
	MaxPageLimit = 1000
	// DashboardPageRows is how many tables a page of the overview shows.
	DashboardPageRows = 50
)

// NextPageHeader carries the token of a list's next page when its body is
// a JSON array (plans, runs, holds, leases), which has no room for one;
// absent on the last page. GET /api/v1/tables answers it in its body's
// next_page_token too.
const NextPageHeader = "X-Next-Page-Token"

// pageToken is where a page resumes: the sort key of the last item of the
// page before. It is sent as unpadded base64url JSON, opaque to clients.
type pageToken struct {
	// Kind is the list it belongs to: tables, plans, runs, holds, leases.
	Kind string `json:"k"`
	// Query is the list's query (sort and filters) it continues.
	Query string `json:"q,omitempty"`
	// Missing says the last item had no value to sort by (they sort
	// last).
	Missing bool    `json:"m,omitempty"`
	Num     float64 `json:"n,omitempty"`
	// Str is the last item's name or id, the key's tie-break.
	Str string `json:"s,omitempty"`
	// Nanos is the last item's time, for lists in time order.
	Nanos int64 `json:"t,omitempty"`
}

func (p pageToken) encode() string {
	b, err := json.Marshal(p)
	if err != nil {
		// A struct of strings, numbers and bools always encodes.
		panic(fmt.Sprintf("encode page token: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// pageParams are a list request's limit and the token it continues from
// (nil: the first page).
type pageParams struct {
	Limit int
	After *pageToken
	// query is the list's query, which the next page's token carries.
	query string
}

// parsePage reads limit (1 to MaxPageLimit; def when absent) and
// page_token of the list kind whose query is query. Every problem is
// reported at once.
func parsePage(q url.Values, kind, query string, def int) (pageParams, []string) {
	var problems []string
	p := pageParams{Limit: def, query: query}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageLimit {
			problems = append(problems, fmt.Sprintf("limit %q: want a whole number from 1 to %d", v, MaxPageLimit))
		} else {
			p.Limit = n
		}
	}
	if v := q.Get("page_token"); v != "" {
		var t pageToken
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err == nil {
			err = json.Unmarshal(b, &t)
		}
		switch {
		case err != nil || t.Kind != kind:
			problems = append(problems, fmt.Sprintf("page_token %q: not a page token of %s; leave it out to start from the first page", v, kind))
		case t.Query != query:
			problems = append(problems, "page_token: it continues another query (sort or filters changed); leave it out to start from the first page")
		default:
			p.After = &t
		}
	}
	return p, problems
}

// pageSlice is the page p asks for of items, a whole list in the order
// key describes: the items after p's token (after says whether an item
// comes after a token), at most p.Limit of them, with the next page's
// token.
func pageSlice[T any](items []T, p pageParams, key func(T) pageToken, after func(T, pageToken) bool) pagedList {
	start := 0
	if p.After != nil {
		start = len(items)
		for i, it := range items {
			if after(it, *p.After) {
				start = i
				break
			}
		}
	}
	end := min(start+p.Limit, len(items))
	out := pagedList{items: items[start:end]}
	if end < len(items) {
		k := key(items[end-1])
		k.Query = p.query
		out.next = k.encode()
	}
	return out
}

// problemsError is a request's bad parameters, every one, as a 400.
func problemsError(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return badRequestError{errors.New(strings.Join(problems, "; "))}
}

// setNextPage sets the [NextPageHeader] and a Link rel="next" for a list
// answered as a JSON array.
func setNextPage(w http.ResponseWriter, r *http.Request, token string) {
	if token == "" {
		return
	}
	q := r.URL.Query()
	q.Set("page_token", token)
	w.Header().Set(NextPageHeader, token)
	w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, r.URL.Path, q.Encode()))
}

// Table sorts and states.
var (
	tableSorts  = []string{"name", "gain", "health", "backlog"}
	tableStates = []string{string(lake.Healthy), string(lake.Warning), string(lake.Critical), "error"}
)

// tableQuery is a request for a page of tables: search, filters, sort.
type tableQuery struct {
	// Q is a case-insensitive substring of the table's name.
	Q string
	// Catalog and Namespace keep the tables of one catalog or namespace
	// (case-insensitive; the namespace in floe's name syntax, a.b for a
	// nested one).
	Catalog, Namespace string
	// State keeps the tables of one health status, or (error) those that
	// could not be measured.
	State string
	// Sort is name, gain, health or backlog; Desc reverses it.
	Sort string
	Desc bool
	Page pageParams
}

// SortParam is the sort as its query parameter spells it.
func (tq tableQuery) SortParam() string {
	if tq.Desc {
		return "-" + tq.Sort
	}
	return tq.Sort
}

// fingerprint is the query a page token continues.
func (tq tableQuery) fingerprint() string {
	return url.Values{"q": {strings.ToLower(tq.Q)}, "catalog": {strings.ToLower(tq.Catalog)}, "namespace": {strings.ToLower(tq.Namespace)},
		"state": {tq.State}, "sort": {tq.SortParam()}}.Encode()
}

// parseTableQuery reads q, catalog, namespace, state, sort, limit and
// page_token; every bad one is named in one 400.
func parseTableQuery(q url.Values, defLimit int) (tableQuery, error) {
	tq := tableQuery{Q: strings.TrimSpace(q.Get("q")), Catalog: strings.TrimSpace(q.Get("catalog")),
		Namespace: strings.TrimSpace(q.Get("namespace")), State: strings.ToLower(strings.TrimSpace(q.Get("state"))), Sort: "name"}
	var problems []string
	if v := strings.TrimSpace(q.Get("sort")); v != "" {
		tq.Desc = strings.HasPrefix(v, "-")
		tq.Sort = strings.TrimPrefix(v, "-")
		if !slices.Contains(tableSorts, tq.Sort) {
			problems = append(problems, fmt.Sprintf("sort %q: want name, gain, health or backlog, with - before it for descending", v))
			tq.Sort, tq.Desc = "name", false
		}
	}
	if tq.State != "" && !slices.Contains(tableStates, tq.State) {
		problems = append(problems, fmt.Sprintf("state %q: want healthy, warning, critical or error", tq.State))
	}
	var more []string
	tq.Page, more = parsePage(q, "tables", tq.fingerprint(), defLimit)
	problems = append(problems, more...)
	return tq, problemsError(problems)
}

// tableRow is a table of a page, with its expected gain.
type tableRow struct {
	indexRow
	// Gain is the expected gain of the table's pending plan, in
	// percentage points of files skipped; nil when none is known.
	Gain *float64
}

// tablePage is one page of tables.
type tablePage struct {
	Rows []tableRow
	// Total is how many tables the query matches; Start the position of
	// the first row among them (0-based).
	Total, Start int
	// Next and Prev are the tokens of the pages after and before; Next is
	// "" on the last page, Prev on the first and the second (whose
	// previous page is the first, asked for without a token), HasPrev says
	// whether there is one.
	Next, Prev string
	HasPrev    bool
}

// healthRank orders health statuses from healthy to unmeasurable.
var healthRank = map[lake.Status]float64{lake.Healthy: 0, lake.Warning: 1, lake.Critical: 2}

// sortKey is a row's key under tq: rows without a value (Missing) sort
// last either way, names break ties, ascending.
func (tq tableQuery) sortKey(r tableRow) pageToken {
	k := pageToken{Kind: "tables", Query: tq.fingerprint(), Str: r.sum.Table}
	switch tq.Sort {
	case "gain":
		if r.Gain == nil {
			k.Missing = true
		} else {
			k.Num = *r.Gain
		}
	case "health":
		switch {
		case r.sum.Health != nil:
			k.Num = healthRank[r.sum.Health.Status]
		case r.sum.Error != "":
			k.Num = 3
		default:
			k.Missing = true
		}
	case "backlog":
		if r.sum.Health == nil {
			k.Missing = true
		} else {
			k.Num = float64(r.sum.Health.Metrics.BacklogAgeSec)
		}
	}
	return k
}

// compareKeys orders two keys of tq.
func (tq tableQuery) compareKeys(a, b pageToken) int {
	if a.Missing != b.Missing {
		if a.Missing {
			return 1
		}
		return -1
	}
	if tq.Sort != "name" && !a.Missing {
		if c := cmp.Compare(a.Num, b.Num); c != 0 {
			if tq.Desc {
				return -c
			}
			return c
		}
	}
	c := cmp.Or(cmp.Compare(strings.ToLower(a.Str), strings.ToLower(b.Str)), cmp.Compare(a.Str, b.Str))
	if tq.Sort == "name" && tq.Desc {
		return -c
	}
	return c
}

// matches says whether row r passes tq's search and filters.
func (tq tableQuery) matches(r tableRow) bool {
	if tq.Q != "" && !strings.Contains(strings.ToLower(r.sum.Table), strings.ToLower(tq.Q)) {
		return false
	}
	if tq.Catalog != "" && !strings.EqualFold(r.id.Catalog, tq.Catalog) {
		return false
	}
	if tq.Namespace != "" && !strings.EqualFold(lake.JoinParts(r.id.Namespace...), tq.Namespace) {
		return false
	}
	switch tq.State {
	case "":
		return true
	case "error":
		return r.sum.Health == nil && r.sum.Error != ""
	default:
		return r.sum.Health != nil && string(r.sum.Health.Status) == tq.State
	}
}

// pageTables filters, sorts and pages the index's rows by tq; gains are
// the tables' expected gains by lower-cased name.
func pageTables(v indexView, gains map[string]float64, tq tableQuery) tablePage {
	rows := make([]tableRow, 0, len(v.Rows))
	for _, r := range v.Rows {
		row := tableRow{indexRow: r}
		if g, ok := gains[strings.ToLower(r.sum.Table)]; ok {
			row.Gain = &g
		}
		if tq.matches(row) {
			rows = append(rows, row)
		}
	}
	keys := make([]pageToken, len(rows))
	for i, r := range rows {
		keys[i] = tq.sortKey(r)
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return tq.compareKeys(keys[a], keys[b]) })
	start := 0
	if after := tq.Page.After; after != nil {
		var found bool
		start, found = slices.BinarySearchFunc(idx, *after, func(i int, t pageToken) int { return tq.compareKeys(keys[i], t) })
		if found {
			// The cursor's row was the last of the page before.
			start++
		}
	}
	end := min(start+tq.Page.Limit, len(idx))
	p := tablePage{Total: len(idx), Start: start, Rows: make([]tableRow, 0, end-start)}
	for _, i := range idx[start:end] {
		p.Rows = append(p.Rows, rows[i])
	}
	if end < len(idx) && end > start {
		p.Next = keys[idx[end-1]].encode()
	}
	if start > 0 {
		p.HasPrev = true
		if prev := start - tq.Page.Limit; prev > 0 {
			p.Prev = keys[idx[prev-1]].encode()
		}
	}
	return p
}

// pendingPlans are the plans waiting or going (proposed, approved,
// running) by lower-cased table, newest first, and the expected gain of
// each table's newest one that projects it.
func pendingPlans(plans []control.Plan) (map[string][]control.Plan, map[string]float64) {
	pending, gains := map[string][]control.Plan{}, map[string]float64{}
	for _, p := range plans {
		if !isPending(p.State) {
			continue
		}
		k := strings.ToLower(p.Table)
		pending[k] = append(pending[k], p)
		if _, ok := gains[k]; !ok && p.Projection.CurrentSkippedPct != nil {
			gains[k] = p.Projection.SkippedPct - *p.Projection.CurrentSkippedPct
		}
	}
	return pending, gains
}
