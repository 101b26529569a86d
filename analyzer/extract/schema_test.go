package extract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
)

const testDDL = `
CREATE TABLE store_sales (ss_sold_date_sk INTEGER, ss_item_sk INTEGER NOT NULL, ss_customer_sk INTEGER,
  ss_list_price DECIMAL(7,2), PRIMARY KEY (ss_item_sk));
CREATE TABLE tpcds.date_dim (d_date_sk INTEGER, d_date DATE, d_year INTEGER, d_moy INTEGER);
CREATE TABLE item (i_item_sk INTEGER, i_category CHAR(50), i_year INTEGER);
CREATE TABLE customer (c_customer_sk INTEGER, c_birth_year INTEGER, i_year INTEGER);
CREATE TABLE orders (o_orderkey BIGINT, o_orderstatus CHAR(1), o_orderdate DATE);
CREATE TABLE lineitem (l_orderkey BIGINT, l_commitdate DATE, l_receiptdate DATE);
CREATE TABLE events (ts BIGINT, httprequest STRUCT<clientip: STRING, uri: STRING>, created TIMESTAMP);
`

func testSchemas(t *testing.T) *extract.SchemaMap {
	t.Helper()
	m, warns := extract.ReadDDL(extract.Trino, testDDL)
	require.Empty(t, warns)
	require.Equal(t, 7, m.Len())
	return m
}

// flatLeaves renders predicates and join sides as "table column op" lines.
func flatLeaves(r extract.Result) []string {
	var out []string
	for _, p := range r.Predicates {
		col := p.Column
		if p.Transform != "" {
			col = p.Transform + "(" + col + ")"
		}
		vals := make([]string, len(p.Values))
		for i, v := range p.Values {
			vals[i] = v.String()
		}
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", p.Table, col, p.Op, strings.Join(vals, ","))))
	}
	for _, j := range r.Joins {
		side := func(c extract.ColumnRef) string {
			s := c.Table
			if c.Alias != "" {
				s += " " + c.Alias
			}
			return s + "." + c.Column
		}
		out = append(out, "join "+side(j.Left)+" = "+side(j.Right))
	}
	return out
}

func TestReadDDL(t *testing.T) {
	m := testSchemas(t)
	cols, ok := m.Columns(extract.TableRef{Name: "STORE_SALES"})
	require.True(t, ok)
	require.Equal(t, []extract.Column{{Name: "ss_sold_date_sk", Type: "integer"}, {Name: "ss_item_sk", Type: "integer"},
		{Name: "ss_customer_sk", Type: "integer"}, {Name: "ss_list_price", Type: "decimal"}}, cols)
	_, ok = m.Columns(extract.TableRef{Name: "date_dim"})
	require.True(t, ok, "an unqualified reference matches tpcds.date_dim")
	_, ok = m.Columns(extract.TableRef{Catalog: "hive", Namespace: "tpcds", Name: "date_dim"})
	require.True(t, ok, "a longer reference matches too")
	_, ok = m.Columns(extract.TableRef{Namespace: "other", Name: "date_dim"})
	require.False(t, ok)
	_, warns := extract.ReadDDL(extract.Spark, "CREATE TABLE t AS SELECT 1; SELECT 1; CREATE TABLE u (a INT)")
	require.Len(t, warns, 2)
}

func TestParseWithSchemas(t *testing.T) {
	schemas := testSchemas(t)
	for _, tc := range []struct {
		name, sql string
		d         extract.Dialect
		want      []string
		warn      string
	}{
		{name: "unqualified columns of a comma FROM list", d: extract.Trino,
			sql: `SELECT * FROM store_sales, date_dim, item WHERE ss_sold_date_sk = d_date_sk AND ss_item_sk = i_item_sk
			      AND d_year = 2000 AND i_category = 'Books'`,
			want: []string{"date_dim d_year = 2000", "item i_category = 'Books'",
				"join date_dim.d_date_sk = store_sales.ss_sold_date_sk", "join item.i_item_sk = store_sales.ss_item_sk"}},
		{name: "a column two tables have is ambiguous", d: extract.Trino,
			sql:  `SELECT * FROM item, customer WHERE i_year = 2000 AND c_birth_year > 1960`,
			want: []string{"* i_year = 2000", "customer c_birth_year > 1960"}, warn: "ambiguous column i_year: in item and customer"},
		{name: "correlated EXISTS binds the outer column by scope", d: extract.Trino,
			sql: `SELECT * FROM orders WHERE EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey
			      AND o_orderstatus = 'F' AND l_commitdate < l_receiptdate)`,
			want: []string{"orders o_orderstatus = 'F'", "join lineitem.l_orderkey = orders.o_orderkey"}},
		{name: "CTE renamed columns trace to the base column", d: extract.Spark,
			sql: `WITH y AS (SELECT d_year AS dyear, ss_customer_sk AS cust FROM store_sales, date_dim WHERE ss_sold_date_sk = d_date_sk)
			      SELECT * FROM y, customer WHERE y.dyear = 2001 AND cust = c_customer_sk`,
			want: []string{"date_dim d_year = 2001", "join date_dim.d_date_sk = store_sales.ss_sold_date_sk",
				"join customer.c_customer_sk = store_sales.ss_customer_sk"}},
		{name: "string compared with a date column is a date", d: extract.Spark,
			sql:  `SELECT * FROM date_dim WHERE d_date = '2000-2-1' AND d_year = '2000'`,
			want: []string{"date_dim d_date = date '2000-02-01'", "date_dim d_year = '2000'"}},
		{name: "struct field: top-level column found in the schema", d: extract.Athena,
			sql:  `SELECT * FROM events, orders WHERE httprequest.clientip LIKE '10.%' AND from_unixtime(ts / 1000) >= TIMESTAMP '2024-01-01 00:00:00'`,
			want: []string{"events httprequest.clientip like '10.%'", "events from_unixtime(ts) >= timestamp '2024-01-01 00:00:00'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := extract.ParseWith(tc.d, tc.sql, extract.Options{Schemas: schemas})
			require.Equal(t, tc.want, flatLeaves(r))
			if tc.warn != "" {
				require.Contains(t, r.Warnings, tc.warn)
			}
			checkInvariants(t, tc.sql, r)
		})
	}
	r := extract.ParseWith(extract.Athena, `SELECT * FROM events WHERE httprequest.clientip LIKE '10.%'`, extract.Options{Schemas: schemas})
	require.Equal(t, []string{"httprequest", "clientip"}, r.Predicates[0].Path)
}

func TestParseShapes(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
		d         extract.Dialect
		want      []string
	}{
		{name: "union all derived table fans joins out to every branch", d: extract.Spark,
			sql: `SELECT * FROM (SELECT ss_item_sk AS k FROM store_sales UNION ALL SELECT ws_item_sk FROM web_sales) u
			      JOIN item i ON u.k = i.i_item_sk`,
			want: []string{"join item.i_item_sk = store_sales.ss_item_sk", "join item.i_item_sk = web_sales.ws_item_sk"}},
		{name: "CTE rename without a schema keeps the base column name", d: extract.Trino,
			sql:  `WITH y AS (SELECT d_year AS dyear FROM date_dim, store_sales) SELECT * FROM y WHERE y.dyear = 2001`,
			want: []string{"* d_year = 2001"}},
		{name: "CTE transform column", d: extract.Trino,
			sql:  `WITH d AS (SELECT date_trunc('day', ts) AS day FROM web.events) SELECT * FROM d WHERE day = DATE '2024-01-01'`,
			want: []string{"web.events day(ts) = date '2024-01-01'"}},
		{name: "DECIMAL literal", d: extract.Trino,
			sql:  `SELECT * FROM t WHERE price BETWEEN DECIMAL '20.00' AND DECIMAL '50.00' AND qty > BIGINT '5'`,
			want: []string{"t price between 20.00,50.00", "t qty > 5"}},
		{name: "non-reserved word as implicit alias", d: extract.Spark,
			sql:  `SELECT * FROM (SELECT count(*) c FROM a WHERE x = 1) at, (SELECT count(*) d FROM b WHERE y = 2) pt`,
			want: []string{"a x = 1", "b y = 2"}},
		{name: "semi, anti, location, positional as aliases", d: extract.DuckDB,
			sql:  `SELECT * FROM a semi, b anti, c location, d positional WHERE semi.x = 1 AND anti.y = 2 AND location.z = 3 AND positional.w = 4`,
			want: []string{"a x = 1", "b y = 2", "c z = 3", "d w = 4"}},
		{name: "semi join still a join", d: extract.DuckDB,
			sql:  `SELECT * FROM a SEMI JOIN b ON a.k = b.k WHERE a.x = 1`,
			want: []string{"a x = 1", "join a.k = b.k"}},
		{name: "parenthesized scalar subquery comparison", d: extract.Trino,
			sql:  `SELECT * FROM t WHERE ((SELECT count(*) FROM r WHERE r.amt > 100) > 10) AND t.a = 1`,
			want: []string{"r amt > 100", "t a = 1"}},
		{name: "IDENTIFIER names a table", d: extract.Snowflake,
			sql:  `SELECT * FROM IDENTIFIER('db.sales.orders') WHERE region = 'EU'`,
			want: []string{"db.sales.orders region = 'EU'"}},
		{name: "non-padded date cast", d: extract.Spark,
			sql:  `SELECT * FROM t WHERE d >= CAST('2002-2-01' AS DATE) AND e = date '2002-3-4'`,
			want: []string{"t d >= date '2002-02-01'", "t e = date '2002-03-04'"}},
		{name: "constant date functions fold", d: extract.Spark,
			sql: `SELECT * FROM t WHERE a < date_add('2000-01-31', 30) AND b > date_sub(cast('2000-03-01' as date), 1)
			      AND c = add_months('2000-01-31', 1)`,
			want: []string{"t a < date '2000-03-01'", "t b > date '2000-02-29'", "t c = date '2000-02-29'"}},
		{name: "Trino date_add folds", d: extract.Trino,
			sql:  `SELECT * FROM t WHERE a < date_add('day', 60, DATE '2000-02-01') AND b < date_add('month', 1, DATE '2000-01-31')`,
			want: []string{"t a < date '2000-04-01'", "t b < date '2000-02-29'"}},
		{name: "Snowflake DATEADD folds", d: extract.Snowflake,
			sql:  `SELECT * FROM t WHERE a >= DATEADD(day, -30, '2020-03-01'::date) AND b >= dateadd('week', 1, '2020-03-01')`,
			want: []string{"t a >= date '2020-01-31'", "t b >= date '2020-03-08'"}},
		{name: "DuckDB date_add with an interval folds", d: extract.DuckDB,
			sql:  `SELECT * FROM t WHERE a < date_add(DATE '2000-02-01', INTERVAL 60 DAY)`,
			want: []string{"t a < date '2000-04-01'"}},
		{name: "NOT shows negated in the flat list", d: extract.Trino,
			sql:  `SELECT * FROM t WHERE NOT (a = 1) AND NOT (b LIKE 'x%' OR c IN (1, 2)) AND NOT EXISTS (SELECT 1 FROM u WHERE u.k = 5)`,
			want: []string{"t a != 1", "t b not like 'x%'", "t c not in 1,2", "u k = 5"}},
		{name: "self-join sides keep their aliases", d: extract.Trino,
			sql:  `SELECT * FROM catalog_sales cs1, catalog_sales cs2 WHERE cs1.cs_order_number = cs2.cs_order_number`,
			want: []string{"join catalog_sales cs1.cs_order_number = catalog_sales cs2.cs_order_number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := extract.Parse(tc.d, tc.sql)
			require.Equal(t, tc.want, flatLeaves(r), "warnings: %v", r.Warnings)
			checkInvariants(t, tc.sql, r)
		})
	}
}

func TestLocate(t *testing.T) {
	locate := func(path string) (extract.TableRef, bool) {
		if strings.HasPrefix(path, "s3://lake/web/events/") || path == "s3://lake/web/events" {
			return extract.TableRef{Catalog: "prod", Namespace: "web", Name: "events"}, true
		}
		return extract.TableRef{}, false
	}
	opts := extract.Options{Locate: locate}
	for _, tc := range []struct {
		d   extract.Dialect
		sql string
	}{
		{extract.DuckDB, `SELECT * FROM read_parquet('s3://lake/web/events/data/**/*.parquet') WHERE region = 'EU'`},
		{extract.DuckDB, `SELECT * FROM iceberg_scan('s3://lake/web/events') e WHERE e.region = 'EU'`},
		{extract.DuckDB, `SELECT * FROM 's3://lake/web/events/data/a.parquet' WHERE region = 'EU'`},
		{extract.Spark, "SELECT * FROM delta.`s3://lake/web/events/` WHERE region = 'EU'"},
	} {
		r := extract.ParseWith(tc.d, tc.sql, opts)
		require.Equal(t, []string{"prod.web.events region = 'EU'"}, flatLeaves(r), tc.sql)
		require.Empty(t, r.Warnings, tc.sql)
	}
	r := extract.ParseWith(extract.DuckDB, `SELECT * FROM read_parquet('s3://other/x.parquet') WHERE a = 1`, opts)
	require.Empty(t, r.Tables)
	require.NotEmpty(t, r.Warnings)
}
