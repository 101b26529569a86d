package layout

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// A Workload is a family of query templates with randomized parameters.
type Workload struct {
	// Name is how Config.Workload and FLOE_BENCH_WORKLOAD name it.
	Name string
	// Templates names the template of each statement of one round, in order: statement i
	// (0-based) of SQL's output is an instance of Templates[i%len(Templates)].
	Templates []string
	// Candidates are the layouts evaluated by default on this workload: current, binpack, a
	// sort on the top column and on the top two, and z-order and Hilbert on the top two
	// (top by how many templates filter on the column); on the lineitem, skewed and fleet
	// shapes also a tree over the columns the workload filters on.
	Candidates []string
	// SQL draws perTemplate rounds of the templates with parameters seeded by seed, as
	// ';'-separated Trino SQL against bench.<tableName> of a table of rows rows.
	SQL func(tableName string, rows int, seed uint64, perTemplate int) string

	// schema and generate make the shape's table; partition is its partition field
	// when Config.Partitioned.
	schema    func() *iceberg.Schema
	generate  func(schema *arrow.Schema, rows, files int, seed uint64) ([]arrow.RecordBatch, error)
	partition iceberg.PartitionField
}

// lineitemPartition partitions the lineitem shape by month of ship date.
var lineitemPartition = iceberg.PartitionField{SourceIDs: []int{7}, FieldID: 1000, Name: "l_shipmonth", Transform: iceberg.MonthTransform{}}

func joinStatements(stmts []string) string {
	return strings.Join(stmts, ";\n") + ";\n"
}

// TPCH is the workload the research targets are defined on (layout-research §7): the ten
// TPC-H queries with a literal predicate on lineitem, reduced to their lineitem
// predicates, with qgen's parameter ranges. Column-to-column predicates (Q12's
// l_commitdate < l_receiptdate, Q21) and predicates on other tables are left out: no
// file statistic can prune on them.
//
//	Q1   l_shipdate <= 1998-12-01 − [60,120] days (reads nearly everything)
//	Q3   l_shipdate > a day of March 1995
//	Q6   one year of l_shipdate (1993–1997), l_discount ± 0.01 around [0.02,0.09], l_quantity < 24|25
//	Q7   l_shipdate between 1995-01-01 and 1996-12-31
//	Q10  l_returnflag = 'R' (correlated with the date: only rows received by 1995-06-17)
//	Q12  l_shipmode IN (two modes), one year of l_receiptdate
//	Q14  one month of l_shipdate
//	Q15  three months of l_shipdate
//	Q19  three OR branches of a l_quantity band, l_shipmode IN ('AIR', 'AIR REG'),
//	     l_shipinstruct = 'DELIVER IN PERSON' (no date: no layout on dates helps it)
//	Q20  one year of l_shipdate (its lineitem subquery)
var TPCH = Workload{
	Name:      "tpch",
	Templates: []string{"q1", "q3", "q6", "q7", "q10", "q12", "q14", "q15", "q19", "q20"},
	Candidates: []string{
		"current",
		"binpack",
		"sort(l_shipdate)",
		"sort(l_shipdate, l_quantity)",
		"zorder(l_shipdate, l_quantity)",
		"hilbert(l_shipdate, l_quantity)",
		"tree(l_shipdate, l_quantity, l_discount, l_receiptdate, l_shipmode, l_returnflag, l_shipinstruct)",
	},
	SQL:       tpchSQL,
	schema:    Schema,
	generate:  Generate,
	partition: lineitemPartition,
}

// Mixed adds point and range lookups on keys that a ship-date order cannot serve to
// TPC-H-like date templates: ship-date ranges of one week to three months (twice as
// frequent as the others), Q6-like date + discount + quantity, Q12-like shipmode IN +
// receipt-date range, part key point lookups, order key ranges and Q19-like part key
// IN + quantity range. Three of its seven draws cannot use a ship-date order, so
// sort(l_shipdate) tops out near 4/7 of files skipped on it.
var Mixed = Workload{
	Name: "mixed",
	Templates: []string{"shipdate-range", "shipdate-range", "q6-shipdate-discount-qty", "q12-shipmode-receiptdate",
		"partkey-point", "orderkey-range", "q19-partkey-in-qty-shipmode"},
	Candidates: []string{
		"current",
		"binpack",
		"sort(l_shipdate)",
		"sort(l_shipdate, l_partkey)",
		"zorder(l_shipdate, l_partkey)",
		"hilbert(l_shipdate, l_partkey)",
		"tree(l_shipdate, l_partkey, l_orderkey, l_quantity, l_discount, l_receiptdate, l_shipmode)",
	},
	SQL:       mixedSQL,
	schema:    Schema,
	generate:  Generate,
	partition: lineitemPartition,
}

// Workloads are the workloads the harness knows, by name.
var Workloads = map[string]Workload{TPCH.Name: TPCH, Mixed.Name: Mixed, Stream.Name: Stream, Skewed.Name: Skewed, Fleet.Name: Fleet}

// PartitionTransform names the transform Config.Partitioned partitions the shape's
// table by: "month" (of l_shipdate) for the lineitem shape, "day" (of event_ts) for
// [Stream].
func (w Workload) PartitionTransform() string { return w.partition.Transform.String() }

// Queries parses w's SQL for seed through the Trino extractor for table id.
func (w Workload) Queries(id lake.Ident, rows int, seed uint64, perTemplate int) ([]simulator.Query, error) {
	qs, warns, err := simulator.WorkloadFromSQL(strings.NewReader(w.SQL(id.Name, rows, seed, perTemplate)), extract.Trino, simulator.MatchIdent(id))
	if err != nil {
		return nil, fmt.Errorf("build %s workload seed %d: %w", w.Name, seed, err)
	}
	if len(warns) > 0 {
		return nil, fmt.Errorf("build %s workload seed %d: extractor warnings: %s", w.Name, seed, strings.Join(warns, "; "))
	}
	if want := perTemplate * len(w.Templates); len(qs) != want {
		return nil, fmt.Errorf("build %s workload seed %d: %d queries on %s, want %d", w.Name, seed, len(qs), id, want)
	}
	return qs, nil
}

func firstOfYear(y int) int32 { return day(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)) }

func tpchSQL(tableName string, _ int, seed uint64, perTemplate int) string {
	rng := rand.New(rand.NewPCG(seed, 0x7c9))
	from := fmt.Sprintf("FROM %s.%s", Namespace, tableName)
	year := func() int { return 1993 + rng.IntN(5) }
	months := func(y, m, n int) (string, string) {
		lo := time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		return lo.Format("2006-01-02"), lo.AddDate(0, n, 0).Format("2006-01-02")
	}
	var stmts []string
	for range perTemplate {
		// Q1
		stmts = append(stmts, fmt.Sprintf("SELECT l_returnflag, sum(l_quantity) %s WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '%d' DAY GROUP BY l_returnflag",
			from, 60+rng.IntN(61)))
		// Q3
		stmts = append(stmts, fmt.Sprintf("SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) %s WHERE l_shipdate > DATE '%s' GROUP BY l_orderkey",
			from, dateText(day(time.Date(1995, 3, 1+rng.IntN(31), 0, 0, 0, 0, time.UTC)))))
		// Q6
		y := year()
		d := 2 + rng.IntN(8)
		stmts = append(stmts, fmt.Sprintf("SELECT sum(l_extendedprice * l_discount) %s WHERE l_shipdate >= DATE '%s' AND l_shipdate < DATE '%s' + INTERVAL '1' YEAR AND l_discount BETWEEN %.2f - 0.01 AND %.2f + 0.01 AND l_quantity < %d",
			from, dateText(firstOfYear(y)), dateText(firstOfYear(y)), float64(d)/100, float64(d)/100, 24+rng.IntN(2)))
		// Q7
		stmts = append(stmts, fmt.Sprintf("SELECT year(l_shipdate), sum(l_extendedprice) %s WHERE l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31' GROUP BY year(l_shipdate)", from))
		// Q10
		stmts = append(stmts, fmt.Sprintf("SELECT l_orderkey, sum(l_extendedprice) %s WHERE l_returnflag = 'R' GROUP BY l_orderkey", from))
		// Q12
		m := rng.Perm(len(shipModes))
		y = year()
		stmts = append(stmts, fmt.Sprintf("SELECT l_shipmode, count(*) %s WHERE l_shipmode IN ('%s', '%s') AND l_receiptdate >= DATE '%s' AND l_receiptdate < DATE '%s' + INTERVAL '1' YEAR GROUP BY l_shipmode",
			from, shipModes[m[0]], shipModes[m[1]], dateText(firstOfYear(y)), dateText(firstOfYear(y))))
		// Q14
		lo, hi := months(year(), 1+rng.IntN(12), 1)
		stmts = append(stmts, fmt.Sprintf("SELECT sum(l_extendedprice * (1 - l_discount)) %s WHERE l_shipdate >= DATE '%s' AND l_shipdate < DATE '%s'", from, lo, hi))
		// Q15: a start month from 1993-01 to 1997-10.
		mo := rng.IntN(58)
		lo, hi = months(1993+mo/12, 1+mo%12, 3)
		stmts = append(stmts, fmt.Sprintf("SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount)) %s WHERE l_shipdate >= DATE '%s' AND l_shipdate < DATE '%s' GROUP BY l_suppkey", from, lo, hi))
		// Q19
		q1, q2, q3 := 1+rng.IntN(10), 10+rng.IntN(11), 20+rng.IntN(11)
		branch := func(q int) string {
			return fmt.Sprintf("(l_quantity >= %d AND l_quantity <= %d + 10 AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')", q, q)
		}
		stmts = append(stmts, fmt.Sprintf("SELECT sum(l_extendedprice * (1 - l_discount)) %s WHERE %s OR %s OR %s", from, branch(q1), branch(q2), branch(q3)))
		// Q20
		y = year()
		stmts = append(stmts, fmt.Sprintf("SELECT l_partkey, l_suppkey, 0.5 * sum(l_quantity) %s WHERE l_shipdate >= DATE '%s' AND l_shipdate < DATE '%s' + INTERVAL '1' YEAR GROUP BY l_partkey, l_suppkey",
			from, dateText(firstOfYear(y)), dateText(firstOfYear(y))))
	}
	return joinStatements(stmts)
}

func mixedSQL(tableName string, rows int, seed uint64, perTemplate int) string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	orders, parts, _ := keyRanges(rows)
	from := fmt.Sprintf("FROM %s.%s", Namespace, tableName)
	randDate := func(spanDays int) (string, string) {
		lo := startDate + int32(rng.IntN(int(endDate-startDate)-spanDays))
		return dateText(lo), dateText(lo + int32(spanDays))
	}
	var stmts []string
	for range perTemplate {
		// Ship date range, 7..92 days, twice as frequent as the others.
		for range 2 {
			lo, hi := randDate(7 + rng.IntN(86))
			stmts = append(stmts, fmt.Sprintf("SELECT sum(l_extendedprice) %s WHERE l_shipdate >= DATE '%s' AND l_shipdate < DATE '%s'", from, lo, hi))
		}
		// Q6-like: a quarter of ship dates, discount band, quantity cap.
		lo, hi := randDate(30 + rng.IntN(62))
		d := 2 + rng.IntN(8)
		stmts = append(stmts, fmt.Sprintf("SELECT sum(l_extendedprice * l_discount) %s WHERE l_shipdate >= DATE '%s' AND l_shipdate < DATE '%s' AND l_discount BETWEEN %.2f AND %.2f AND l_quantity < %d",
			from, lo, hi, float64(d-1)/100, float64(d+1)/100, 24+rng.IntN(2)))
		// Q12-like: two ship modes, a receipt-date range.
		m := rng.Perm(len(shipModes))
		lo, hi = randDate(30 + rng.IntN(62))
		stmts = append(stmts, fmt.Sprintf("SELECT l_shipmode, count(*) %s WHERE l_shipmode IN ('%s', '%s') AND l_receiptdate >= DATE '%s' AND l_receiptdate < DATE '%s' GROUP BY l_shipmode",
			from, shipModes[m[0]], shipModes[m[1]], lo, hi))
		// Part key point lookup.
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE l_partkey = %d", from, 1+rng.Int64N(parts)))
		// Order key range of 0.25% to 2.5% of the key domain.
		w := max(orders/400, 1) + rng.Int64N(max(orders/40, 1))
		ok := 1 + rng.Int64N(max(orders-w, 1))
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE l_orderkey BETWEEN %d AND %d", from, ok, ok+w))
		// Q19-like: a few part keys with a quantity band and a ship mode pair.
		ps := make([]string, 3)
		for i := range ps {
			ps[i] = fmt.Sprint(1 + rng.Int64N(parts))
		}
		q := 1 + rng.IntN(20)
		stmts = append(stmts, fmt.Sprintf("SELECT sum(l_extendedprice) %s WHERE l_partkey IN (%s) AND l_quantity BETWEEN %d AND %d AND l_shipmode IN ('AIR', 'REG AIR')",
			from, strings.Join(ps, ", "), q, q+10))
	}
	return joinStatements(stmts)
}
