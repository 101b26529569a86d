package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// tableID names a demo table.
type tableID int

const (
	tEvents tableID = iota
	tOrders
	tLineitem
	tAccounts
)

// tableInfo is what the log writers need to know about a demo table: its
// names, columns (Iceberg field ids are positions + 1), which columns are
// required (Spark infers no IS NOT NULL for them) and rough sizes for
// plausible scan metrics.
type tableInfo struct {
	ns, name string
	cols     []string
	required map[string]bool
	rows     int64
	bytes    int64
	files    int64
	// timeCol is the column data files are partitioned on (pruning by a
	// range on it skips files); "" when a filter skips nothing.
	timeCol string
}

var tables = [...]tableInfo{
	tEvents: {
		ns: "web", name: "events",
		cols:     []string{"event_id", "ts", "tenant_id", "user_id", "event_type", "country", "device", "url", "latency_ms", "revenue"},
		required: map[string]bool{"event_id": true, "ts": true, "tenant_id": true},
		rows:     160000, bytes: 11 << 20, files: 336, timeCol: "ts",
	},
	tOrders: {
		ns: "sales", name: "orders",
		cols:     []string{"o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate", "o_orderpriority", "o_clerk", "o_shippriority", "o_comment"},
		required: map[string]bool{"o_orderkey": true, "o_custkey": true},
		rows:     25000, bytes: 1700 << 10, files: 4,
	},
	tLineitem: {
		ns: "sales", name: "lineitem",
		cols: []string{"l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_discount", "l_tax",
			"l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct", "l_shipmode", "l_comment"},
		required: map[string]bool{"l_orderkey": true},
		rows:     100000, bytes: 7 << 20, files: 4,
	},
	tAccounts: {
		ns: "crm", name: "accounts",
		cols:     []string{"account_id", "name", "country", "plan", "signup_date", "mrr"},
		required: map[string]bool{"account_id": true},
		rows:     12000, bytes: 360 << 10, files: 8,
	},
}

func (t tableID) info() *tableInfo { return &tables[t] }

// fieldID is the Iceberg field id of a column (ids follow schema order).
func (t tableID) fieldID(col string) int {
	for i, c := range t.info().cols {
		if c == col {
			return i + 1
		}
	}
	return 0
}

// litKind is the type of a literal in a predicate.
type litKind int

const (
	litInt litKind = iota
	litStr
	litTS   // timestamptz, rendered as a literal
	litDate // date
	// litRelTS is a timestamp written relative to the query's start
	// (current_timestamp - INTERVAL …); engines fold it to a literal before
	// pushing it down.
	litRelTS
)

// lit is one literal value.
type lit struct {
	kind litKind
	n    int64
	s    string
	t    time.Time     // litTS, litDate, litRelTS (the folded value)
	rel  time.Duration // litRelTS: how far before the query start
	// param renders the literal as a ? placeholder (Athena
	// ExecutionParameters).
	param bool
}

func intLit(n int64) lit                       { return lit{kind: litInt, n: n} }
func strLit(s string) lit                      { return lit{kind: litStr, s: s} }
func tsLit(t time.Time) lit                    { return lit{kind: litTS, t: t} }
func dateLit(t time.Time) lit                  { return lit{kind: litDate, t: t} }
func relLit(at time.Time, d time.Duration) lit { return lit{kind: litRelTS, t: at.Add(-d), rel: d} }

// pred is one conjunct of a scan's WHERE clause.
type pred struct {
	col  string
	op   string // =, <, <=, >, >=, between, in, like
	vals []lit
}

// scan is one table a query reads, with its pushable filter (the AND of
// preds) and the columns it reads.
type scan struct {
	t     tableID
	alias string
	preds []pred
	// out are the columns the query returns or groups by (Snowflake's
	// direct objects); read are all columns the scan reads.
	out, read []string
}

// failKind says how a query fails.
type failKind int

const (
	failNone failKind = iota
	failColumn
	failTable
	failCancel
	failRuntime
)

// query is one workload query, engine-neutral until rendered.
type query struct {
	seq  int
	eng  engine
	at   time.Time
	kind string // the template, for diagnostics
	// scans are the data-table scans; empty for SHOW/DESCRIBE and queries
	// that fail analysis.
	scans []scan
	// meta is the metadata table a query reads ("snapshots"); it has no
	// data scans.
	meta string
	// utility marks SHOW / DESCRIBE statements; about is the table one
	// describes.
	utility bool
	about   tableID
	fail    failKind
	render  func(w *sqlWriter) string
	elapsed time.Duration
	bytes   int64
	rows    int64
	user    int // index into the engine's user list
	// style is how table names are written (0 fully qualified, 1
	// namespace.table, 2 bare with the session default namespace);
	// idCase how identifiers are spelled (0 lower, 1 upper, 2 mixed).
	style, idCase int
}

// ns is the session default namespace a query runs with.
func (q *query) ns() string {
	switch {
	case len(q.scans) > 0:
		return q.scans[0].t.info().ns
	case q.utility:
		return q.about.info().ns
	}
	return "web"
}

// sql renders the query in engine e's dialect.
func (q *query) sql(e engine) string {
	return q.render(&sqlWriter{eng: e, style: q.style, idCase: q.idCase})
}

// params are the values of the ? placeholders of the rendered query.
func (q *query) params() []string {
	var out []string
	for _, s := range q.scans {
		for _, p := range s.preds {
			for _, v := range p.vals {
				if v.param {
					out = append(out, fmt.Sprint(v.n))
				}
			}
		}
	}
	return out
}

// workload draws queries.
type workload struct {
	opts    LogOptions
	r       *rand.Rand
	tenants zipf
	seq     int
}

func newWorkload(opts LogOptions) *workload {
	r := rand.New(rand.NewPCG(opts.Seed, 71))
	return &workload{opts: opts, r: r, tenants: newZipf(r, 500)}
}

// queries draws opts.Queries queries, split among the engines by shares,
// each engine's sorted by start time.
func (w *workload) queries() []*query {
	var out []*query
	left := w.opts.Queries
	for e := range numEngines {
		n := int(math.Round(shares[e] * float64(w.opts.Queries)))
		if e == numEngines-1 || n > left {
			n = left
		}
		left -= n
		qs := make([]*query, 0, n)
		for range n {
			qs = append(qs, w.next(e))
		}
		sortByTime(qs)
		out = append(out, qs...)
	}
	return out
}

// startTime draws a start time in the window with a working-hours bias.
func (w *workload) startTime() time.Time {
	for {
		back := time.Duration(w.r.Int64N(int64(w.opts.Window)))
		t := w.opts.Now.Add(-back)
		h := t.Hour()
		// Accept night hours less often: dashboards refresh around the
		// clock, analysts work days (UTC here).
		if h >= 7 && h < 19 || w.r.IntN(3) == 0 {
			return t.Truncate(time.Millisecond)
		}
	}
}

// template weights, in per mille.
var templates = []struct {
	name   string
	weight int
}{
	{"events-dashboard", 300},
	{"events-types", 90},
	{"events-top-pages", 60},
	{"events-country", 60},
	{"events-user", 40},
	{"events-product-urls", 40},
	{"events-global", 30},
	{"events-cte", 25},
	{"lineitem-pricing", 50},
	{"lineitem-shipdate", 45},
	{"lineitem-order", 45},
	{"lineitem-shipmode", 25},
	{"orders-join-lineitem", 45},
	{"orders-priority", 25},
	{"orders-customer", 30},
	{"accounts-lookup", 40},
	{"accounts-country", 15},
	{"metadata", 15},
	{"describe", 10},
	{"fail-column", 10},
	{"fail-table", 5},
}

// next draws one query for engine e.
func (w *workload) next(e engine) *query {
	w.seq++
	q := &query{seq: w.seq, eng: e, at: w.startTime(), user: w.r.IntN(8)}
	switch e {
	case engTrino, engAthena:
		q.style = w.pick(50, 25, 25)
	case engSpark:
		q.style = w.pick(40, 60, 0)
	case engSnowflake:
		q.style = w.pick(40, 30, 30)
		q.idCase = w.pick(50, 50, 0)
	}
	if e != engSnowflake && w.r.IntN(100) < 5 {
		q.idCase = 2
	}
	total := 0
	for _, t := range templates {
		total += t.weight
	}
	k := w.r.IntN(total)
	name := templates[len(templates)-1].name
	for _, t := range templates {
		if k < t.weight {
			name = t.name
			break
		}
		k -= t.weight
	}
	if e == engScan {
		// Scan reports come from planning data scans only.
		for name == "describe" || name == "metadata" || strings.HasPrefix(name, "fail-") {
			name = templates[w.r.IntN(8)].name
		}
	}
	q.kind = name
	w.build(q, name)
	if q.fail == failNone && len(q.scans) > 0 && w.r.IntN(100) < 2 && e != engScan {
		q.fail = failCancel
		if e == engSpark {
			q.fail = failRuntime
		}
	}
	if e == engSpark && (q.fail == failColumn || q.fail == failTable) {
		// Spark fails these in analysis, before any SQL execution is
		// logged; its failures are runtime ones.
		w.build(q, "events-dashboard")
		q.fail = failRuntime
	}
	if e == engAthena && w.r.IntN(100) < 15 {
		w.parameterize(q)
	}
	w.metrics(q)
	return q
}

// pick returns an index drawn with the given weights.
func (w *workload) pick(weights ...int) int {
	total := 0
	for _, x := range weights {
		total += x
	}
	k := w.r.IntN(total)
	for i, x := range weights {
		if k < x {
			return i
		}
		k -= x
	}
	return len(weights) - 1
}

// timeRange draws a dashboard's recent window on ts: the last hour, day or
// week, open-ended or up to the minute of the query.
func (w *workload) timeRange(q *query) []pred {
	d := []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}[w.pick(30, 45, 25)]
	if w.r.IntN(100) < 20 {
		return []pred{{col: "ts", op: ">=", vals: []lit{relLit(q.at, d)}}}
	}
	lo := q.at.Add(-d).Truncate(time.Minute)
	ps := []pred{{col: "ts", op: ">=", vals: []lit{tsLit(lo)}}}
	if w.r.IntN(100) < 40 {
		ps = append(ps, pred{col: "ts", op: "<", vals: []lit{tsLit(q.at.Truncate(time.Minute))}})
	}
	return ps
}

func (w *workload) tenant() lit { return intLit(int64(w.tenants.next())) }

func (w *workload) pickStrings(from []string, n int) []lit {
	var out []lit
	seen := map[string]bool{}
	for len(out) < n {
		s := from[w.r.IntN(len(from))]
		if !seen[s] {
			seen[s] = true
			out = append(out, strLit(s))
		}
	}
	return out
}

var (
	distinctEventTypes = []string{"page_view", "click", "search", "add_to_cart", "purchase", "login", "error"}
	distinctCountries  = []string{"US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "SE"}
	shipModes          = []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}
	tpchStart          = time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
)

// orderKey is the key of the n-th TPC-H order (1-based): dbgen keeps 8
// keys of every 32.
func orderKey(n int64) int64 { return (n>>3)<<5 | n&7 }

// tpchMonth draws the first day of a month in TPC-H's order date range.
func (w *workload) tpchMonth() time.Time {
	return tpchStart.AddDate(0, w.r.IntN(78), 0)
}

// build fills q's scans and renderer from template name.
func (w *workload) build(q *query, name string) {
	q.meta, q.utility, q.fail = "", false, failNone
	ev := func(preds []pred, out []string, extra ...string) scan {
		return scan{t: tEvents, preds: preds, out: out, read: readCols(out, preds, extra)}
	}
	switch name {
	case "events-dashboard":
		ps := append([]pred{{col: "tenant_id", op: "=", vals: []lit{w.tenant()}}}, w.timeRange(q)...)
		s := ev(ps, []string{"ts", "event_type"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT date_trunc('hour', %s) AS hour, %s, count(*) AS events FROM %s WHERE %s GROUP BY 1, 2 ORDER BY 1",
				x.col("ts"), x.col("event_type"), x.table(tEvents), x.where(s))
		}
	case "events-types":
		ps := append([]pred{{col: "tenant_id", op: "=", vals: []lit{w.tenant()}}}, w.timeRange(q)...)
		ps = append(ps, pred{col: "event_type", op: "in", vals: w.pickStrings(distinctEventTypes, 2+w.r.IntN(2))})
		s := ev(ps, []string{"event_type", "user_id", "revenue"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(*) AS events, count(DISTINCT %s) AS users, sum(%s) AS revenue\nFROM %s\nWHERE %s\nGROUP BY %s",
				x.col("event_type"), x.col("user_id"), x.col("revenue"), x.table(tEvents), x.where(s), x.col("event_type"))
		}
	case "events-top-pages":
		ps := append([]pred{{col: "tenant_id", op: "=", vals: []lit{w.tenant()}}}, w.timeRange(q)...)
		ps = append(ps, pred{col: "event_type", op: "=", vals: []lit{strLit("page_view")}})
		s := ev(ps, []string{"url"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(*) AS views FROM %s WHERE %s GROUP BY %s ORDER BY views DESC LIMIT 20",
				x.col("url"), x.table(tEvents), x.where(s), x.col("url"))
		}
	case "events-country":
		ps := append([]pred{{col: "country", op: "=", vals: []lit{strLit(distinctCountries[w.r.IntN(len(distinctCountries))])}}}, w.timeRange(q)...)
		s := ev(ps, []string{"device", "user_id", "revenue"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(DISTINCT %s) AS users, sum(%s) AS revenue FROM %s WHERE %s GROUP BY %s",
				x.col("device"), x.col("user_id"), x.col("revenue"), x.table(tEvents), x.where(s), x.col("device"))
		}
	case "events-user":
		t := w.tenants.next()
		user := int64(t)*100000 + w.r.Int64N(5000)
		ps := []pred{{col: "user_id", op: "=", vals: []lit{intLit(user)}}}
		if w.r.IntN(2) == 0 {
			ps = append([]pred{{col: "tenant_id", op: "=", vals: []lit{intLit(int64(t))}}}, ps...)
		}
		s := ev(ps, []string{"ts", "event_type", "url", "device"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, %s, %s, %s FROM %s WHERE %s ORDER BY %s DESC LIMIT 100",
				x.col("ts"), x.col("event_type"), x.col("url"), x.col("device"), x.table(tEvents), x.where(s), x.col("ts"))
		}
	case "events-product-urls":
		ps := append([]pred{{col: "url", op: "like", vals: []lit{strLit("https://shop.example.com/product/%")}}}, w.timeRange(q)...)
		if w.r.IntN(2) == 0 {
			ps = append([]pred{{col: "tenant_id", op: "=", vals: []lit{w.tenant()}}}, ps...)
		}
		s := ev(ps, []string{"url", "event_type"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, %s AS purchases, count(*) AS events\nFROM %s\nWHERE %s\nGROUP BY %s\nORDER BY purchases DESC\nLIMIT 50",
				x.col("url"), x.countIf(x.col("event_type")+" = 'purchase'"), x.table(tEvents), x.where(s), x.col("url"))
		}
	case "events-global":
		s := ev(w.timeRange(q), []string{"ts", "device", "latency_ms"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT date_trunc('hour', %s) AS hour, %s, avg(%s) AS avg_latency_ms FROM %s WHERE %s GROUP BY 1, 2",
				x.col("ts"), x.col("device"), x.col("latency_ms"), x.table(tEvents), x.where(s))
		}
	case "events-cte":
		ps := append(w.timeRange(q), pred{col: "tenant_id", op: "=", vals: []lit{w.tenant()}})
		s := ev(ps, []string{"user_id", "event_type"})
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("WITH recent AS (\n  SELECT %s, %s\n  FROM %s\n  WHERE %s\n)\nSELECT %s, count(DISTINCT %s) AS users\nFROM recent\nGROUP BY %s",
				x.col("user_id"), x.col("event_type"), x.table(tEvents), x.where(s), x.col("event_type"), x.col("user_id"), x.col("event_type"))
		}
	case "lineitem-pricing": // TPC-H Q1
		cut := time.Date(1998, 12, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -(60 + w.r.IntN(61)))
		s := scan{t: tLineitem, preds: []pred{{col: "l_shipdate", op: "<=", vals: []lit{dateLit(cut)}}},
			out: []string{"l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount"}}
		s.read = readCols(s.out, s.preds, nil)
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, %s, sum(%s) AS sum_qty, sum(%s) AS sum_base_price, avg(%s) AS avg_disc, count(*) AS count_order\nFROM %s\nWHERE %s\nGROUP BY %s, %s\nORDER BY %s, %s",
				x.col("l_returnflag"), x.col("l_linestatus"), x.col("l_quantity"), x.col("l_extendedprice"), x.col("l_discount"),
				x.table(tLineitem), x.where(s), x.col("l_returnflag"), x.col("l_linestatus"), x.col("l_returnflag"), x.col("l_linestatus"))
		}
	case "lineitem-shipdate": // TPC-H Q6
		from := w.tpchMonth()
		to := from.AddDate(0, 1+w.r.IntN(12), 0)
		ps := []pred{{col: "l_shipdate", op: ">=", vals: []lit{dateLit(from)}}, {col: "l_shipdate", op: "<", vals: []lit{dateLit(to)}}}
		if w.r.IntN(2) == 0 {
			ps = []pred{{col: "l_shipdate", op: "between", vals: []lit{dateLit(from), dateLit(to.AddDate(0, 0, -1))}}}
		}
		ps = append(ps, pred{col: "l_quantity", op: "<", vals: []lit{intLit(24 + int64(w.r.IntN(2)))}})
		s := scan{t: tLineitem, preds: ps, out: []string{"l_extendedprice", "l_discount"}}
		s.read = readCols(s.out, s.preds, nil)
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT sum(%s * %s) AS revenue FROM %s WHERE %s",
				x.col("l_extendedprice"), x.col("l_discount"), x.table(tLineitem), x.where(s))
		}
	case "lineitem-order":
		key := orderKey(1 + w.r.Int64N(int64(w.opts.Orders)))
		s := scan{t: tLineitem, preds: []pred{{col: "l_orderkey", op: "=", vals: []lit{intLit(key)}}}, out: tables[tLineitem].cols}
		s.read = s.out
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT * FROM %s WHERE %s ORDER BY %s", x.table(tLineitem), x.where(s), x.col("l_linenumber"))
		}
	case "lineitem-shipmode":
		from := w.tpchMonth()
		ps := []pred{{col: "l_shipmode", op: "in", vals: w.pickStrings(shipModes, 2)},
			{col: "l_receiptdate", op: ">=", vals: []lit{dateLit(from)}}, {col: "l_receiptdate", op: "<", vals: []lit{dateLit(from.AddDate(1, 0, 0))}}}
		s := scan{t: tLineitem, preds: ps, out: []string{"l_shipmode"}}
		s.read = readCols(s.out, s.preds, nil)
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(*) AS line_count FROM %s WHERE %s GROUP BY %s ORDER BY %s",
				x.col("l_shipmode"), x.table(tLineitem), x.where(s), x.col("l_shipmode"), x.col("l_shipmode"))
		}
	case "orders-join-lineitem": // TPC-H Q3
		day := w.tpchMonth().AddDate(0, 0, w.r.IntN(28))
		o := scan{t: tOrders, alias: "o", preds: []pred{{col: "o_orderdate", op: "<", vals: []lit{dateLit(day)}}},
			out: []string{"o_orderdate", "o_shippriority"}}
		o.read = readCols(o.out, o.preds, []string{"o_orderkey"})
		l := scan{t: tLineitem, alias: "l", preds: []pred{{col: "l_shipdate", op: ">", vals: []lit{dateLit(day)}}},
			out: []string{"l_orderkey", "l_extendedprice", "l_discount"}}
		l.read = readCols(l.out, l.preds, nil)
		q.scans = []scan{o, l}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT l.%s, sum(l.%s * (1 - l.%s)) AS revenue, o.%s, o.%s\nFROM %s o\nJOIN %s l ON l.%s = o.%s\nWHERE %s\n  AND %s\nGROUP BY l.%s, o.%s, o.%s\nORDER BY revenue DESC, o.%s\nLIMIT 10",
				x.col("l_orderkey"), x.col("l_extendedprice"), x.col("l_discount"), x.col("o_orderdate"), x.col("o_shippriority"),
				x.table(tOrders), x.table(tLineitem), x.col("l_orderkey"), x.col("o_orderkey"),
				x.where(o), x.where(l), x.col("l_orderkey"), x.col("o_orderdate"), x.col("o_shippriority"), x.col("o_orderdate"))
		}
	case "orders-priority": // TPC-H Q4 without the subquery
		from := w.tpchMonth()
		s := scan{t: tOrders, preds: []pred{{col: "o_orderdate", op: ">=", vals: []lit{dateLit(from)}}, {col: "o_orderdate", op: "<", vals: []lit{dateLit(from.AddDate(0, 3, 0))}}},
			out: []string{"o_orderpriority"}}
		s.read = readCols(s.out, s.preds, nil)
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(*) AS order_count FROM %s WHERE %s GROUP BY %s ORDER BY %s",
				x.col("o_orderpriority"), x.table(tOrders), x.where(s), x.col("o_orderpriority"), x.col("o_orderpriority"))
		}
	case "orders-customer":
		cust := 1 + w.r.Int64N(150000)
		if cust%3 == 0 {
			cust++
		}
		s := scan{t: tOrders, preds: []pred{{col: "o_custkey", op: "=", vals: []lit{intLit(cust)}}}, out: []string{"o_orderkey", "o_orderdate", "o_totalprice", "o_orderstatus"}}
		s.read = readCols(s.out, s.preds, nil)
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, %s, %s, %s FROM %s WHERE %s ORDER BY %s DESC",
				x.col("o_orderkey"), x.col("o_orderdate"), x.col("o_totalprice"), x.col("o_orderstatus"), x.table(tOrders), x.where(s), x.col("o_orderdate"))
		}
	case "accounts-lookup":
		s := scan{t: tAccounts, preds: []pred{{col: "account_id", op: "=", vals: []lit{intLit(1 + w.r.Int64N(12000))}}}, out: tables[tAccounts].cols}
		s.read = s.out
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT * FROM %s WHERE %s", x.table(tAccounts), x.where(s))
		}
	case "accounts-country":
		s := scan{t: tAccounts, preds: []pred{{col: "country", op: "=", vals: []lit{strLit(distinctCountries[w.r.IntN(len(distinctCountries))])}}},
			out: []string{"plan", "mrr"}}
		s.read = readCols(s.out, s.preds, nil)
		q.scans = []scan{s}
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(*) AS accounts, sum(%s) AS mrr FROM %s WHERE %s GROUP BY %s",
				x.col("plan"), x.col("mrr"), x.table(tAccounts), x.where(s), x.col("plan"))
		}
	case "metadata":
		q.scans = nil
		q.meta = "snapshots"
		q.render = func(x *sqlWriter) string { return x.metadataQuery(tEvents, "snapshots") }
	case "describe":
		q.scans = nil
		q.utility = true
		t := tableID(w.r.IntN(4))
		q.about = t
		q.render = func(x *sqlWriter) string { return x.describe(t) }
	case "fail-column":
		// A dashboard with a misspelled column: fails analysis.
		q.scans = nil
		q.fail = failColumn
		lo := tsLit(q.at.Add(-24 * time.Hour).Truncate(time.Minute))
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT %s, count(*) AS events FROM %s WHERE %s >= %s GROUP BY %s",
				x.col("tenant"), x.table(tEvents), x.col("ts"), x.lit(lo), x.col("tenant"))
		}
	case "fail-table":
		q.scans = nil
		q.fail = failTable
		t := w.tenant()
		q.render = func(x *sqlWriter) string {
			return fmt.Sprintf("SELECT * FROM %s WHERE %s = %s LIMIT 100", x.badTable(), x.col("tenant_id"), x.lit(t))
		}
	default:
		panic("demo: unknown query template " + name) // programmer error: templates are fixed
	}
}

// readCols is out, then filter columns, then extra, each once.
func readCols(out []string, preds []pred, extra []string) []string {
	var cols []string
	add := func(c string) {
		for _, x := range cols {
			if x == c {
				return
			}
		}
		cols = append(cols, c)
	}
	for _, c := range out {
		add(c)
	}
	for _, p := range preds {
		add(p.col)
	}
	for _, c := range extra {
		add(c)
	}
	return cols
}

// parameterize turns the first integer equality of q into a ? placeholder.
func (w *workload) parameterize(q *query) {
	for i := range q.scans {
		for j := range q.scans[i].preds {
			p := &q.scans[i].preds[j]
			if p.op == "=" && p.vals[0].kind == litInt {
				p.vals[0].param = true
				return
			}
		}
	}
}

// metrics draws plausible elapsed time, bytes and rows scanned.
func (w *workload) metrics(q *query) {
	jitter := math.Exp(w.r.NormFloat64() * 0.5)
	for _, s := range q.scans {
		f := s.fraction(q.at)
		info := s.t.info()
		b := int64(float64(info.bytes) * f * float64(len(s.read)) / float64(len(info.cols)) * jitter)
		q.bytes += max(b, 4096)
		q.rows += int64(float64(info.rows) * f)
	}
	ms := 80 + float64(q.bytes)/(40<<20)*1000 + 60*float64(len(q.scans))
	if q.meta != "" || q.utility || q.fail == failColumn || q.fail == failTable {
		ms = 40 + 60*w.r.Float64()
	}
	q.elapsed = time.Duration(ms*jitter*float64(time.Millisecond)).Round(time.Millisecond) + time.Millisecond
	if q.fail == failCancel || q.fail == failRuntime {
		q.elapsed += time.Duration(5+w.r.IntN(120)) * time.Second
	}
}

// fraction is the share of s's table the scan reads after partition
// pruning: a ts range on web.events prunes by day; nothing else prunes.
func (s scan) fraction(at time.Time) float64 {
	info := s.t.info()
	if info.timeCol == "" {
		return 1
	}
	for _, p := range s.preds {
		if p.col == info.timeCol && (p.op == ">=" || p.op == ">") {
			days := math.Ceil(at.Sub(p.vals[0].t).Hours()/24) + 1
			return min(1, days/8)
		}
	}
	return 1
}

// dataFiles is how many data files a scan of s plans, and how many it
// skips.
func (s scan) dataFiles(at time.Time) (result, skipped int64) {
	total := s.t.info().files
	result = max(1, int64(math.Ceil(float64(total)*s.fraction(at))))
	return result, total - result
}
