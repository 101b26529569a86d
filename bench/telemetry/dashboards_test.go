package telemetry_test

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A panel of a dashboard over the demo tables, as DuckDB (which knows the
// demo lakehouse as the catalog "lake") logs its SQL. sql takes the
// panel's tenant and, for a panel whose window moves with the day, that
// day's start of the window, which the dashboard tool writes as a literal.
type panel struct {
	sql string
	// window is how far back a moving panel looks; 0 for a panel whose
	// filter never changes.
	window int
}

var panels = []panel{
	{`SELECT country, count(*) FROM lake.web.events WHERE tenant_id = %[1]d AND ts >= TIMESTAMP '%[2]s 00:00:00' GROUP BY country`, 1},
	{`SELECT event_type, count(*) FROM lake.web.events WHERE tenant_id = %[1]d AND event_type IN ('click', 'view', 'purchase') GROUP BY event_type`, 0},
	{`SELECT avg(latency_ms) FROM lake.web.events WHERE tenant_id = %[1]d AND device = 'mobile' AND ts >= TIMESTAMP '%[2]s 00:00:00'`, 7},
	{`SELECT sum(revenue) FROM lake.web.events WHERE tenant_id = %[1]d AND country = 'DE' AND revenue > 0`, 0},
	{`SELECT url, count(*) FROM lake.web.events WHERE tenant_id = %[1]d AND latency_ms BETWEEN 500 AND 5000 GROUP BY url ORDER BY 2 DESC LIMIT 10`, 0},
	{`SELECT count(DISTINCT user_id) FROM lake.web.events WHERE tenant_id = %[1]d AND ts >= TIMESTAMP '%[2]s 00:00:00'`, 30},
	{`SELECT o_orderstatus, sum(o_totalprice) FROM lake.sales.orders WHERE o_custkey = %[1]d AND o_orderdate >= DATE '%[2]s' GROUP BY o_orderstatus`, 90},
	{`SELECT count(*) FROM lake.sales.orders WHERE o_custkey = %[1]d AND o_orderpriority = '1-URGENT' AND o_orderstatus = 'O'`, 0},
	{`SELECT l_shipmode, sum(l_extendedprice) FROM lake.sales.lineitem WHERE l_suppkey = %[1]d AND l_shipdate >= DATE '%[2]s' GROUP BY l_shipmode`, 30},
	{`SELECT o.o_orderpriority, sum(l.l_extendedprice) FROM lake.sales.orders o JOIN lake.sales.lineitem l ON l.l_orderkey = o.o_orderkey WHERE o.o_custkey = %[1]d AND l.l_returnflag = 'R' GROUP BY 1`, 0},
	{`SELECT plan, count(*), sum(mrr) FROM lake.crm.accounts WHERE account_id < %[1]d * 1000 AND country IN ('DE', 'FR', 'NL') GROUP BY plan`, 0},
	{`SELECT count(*) FROM lake.crm.accounts WHERE account_id < %[1]d * 1000 AND signup_date >= DATE '%[2]s'`, 365},
}

// dashboardTenants are the tenants each panel is shown for: a dashboard
// per tenant.
var dashboardTenants = []int{7, 42}

// refreshes are the hours of the day the dashboards refresh at.
const firstRefresh, refreshes = 8, 14

// dashboardEventsPerDay is how many queries a day of dashboards logs.
var dashboardEventsPerDay = len(panels) * len(dashboardTenants) * refreshes

// writeDashboardDay writes the DuckDB query log (the denormalized CSV of
// file log storage) of one day of dashboards to dir: every panel for every
// tenant at every refresh, a few seconds apart. Moving panels filter from
// the start of their window, a literal date that changes once a day; the
// others filter the same literals every run.
func writeDashboardDay(dir string, day time.Time) (string, error) {
	path := filepath.Join(dir, "dashboards-"+day.Format("20060102")+".csv")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := csv.NewWriter(f)
	err = w.Write([]string{"context_id", "scope", "connection_id", "transaction_id", "query_id", "thread_id", "timestamp", "type", "log_level", "message"})
	seq := day.YearDay() * 100000
	for r := 0; r < refreshes && err == nil; r++ {
		at := day.Add(time.Duration(firstRefresh+r) * time.Hour)
		for ti, tenant := range dashboardTenants {
			for pi, p := range panels {
				seq++
				from := day.AddDate(0, 0, -p.window).Format(time.DateOnly)
				ts := at.Add(time.Duration(ti*len(panels)+pi) * 1500 * time.Millisecond)
				err = errors.Join(err, w.Write([]string{fmt.Sprint(seq), "CONNECTION", fmt.Sprint(2 + ti), fmt.Sprint(seq), fmt.Sprint(seq), "",
					ts.UTC().Format("2006-01-02 15:04:05.999999-07"), "QueryLog", "INFO", fmt.Sprintf(p.sql, tenant, from)}))
			}
		}
	}
	w.Flush()
	return path, errors.Join(err, w.Error(), f.Close())
}

// writeDashboardDays writes days days of dashboards ending the day before
// end, one file a day, and returns their paths.
func writeDashboardDays(dir string, end time.Time, days int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for d := days; d > 0; d-- {
		p, err := writeDashboardDay(dir, end.AddDate(0, 0, -d))
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
