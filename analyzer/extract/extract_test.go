package extract_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/floe-project/floe/expr"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
)

func TestParseDialect(t *testing.T) {
	cases := []struct {
		in   string
		want extract.Dialect
	}{
		{"trino", extract.Trino},
		{"Presto", extract.Trino},
		{"athena", extract.Athena},
		{"spark-sql", extract.Spark},
		{"SNOWFLAKE", extract.Snowflake},
		{" duckdb ", extract.DuckDB},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			d, err := extract.ParseDialect(c.in)
			require.NoError(t, err)
			require.Equal(t, c.want, d)
		})
	}
	_, err := extract.ParseDialect("oracle")
	require.Error(t, err)
	require.True(t, errors.Is(err, extract.ErrUnknownDialect))
	require.Contains(t, err.Error(), "oracle")
}

// leaf is a compact rendering of a predicate for table-driven tests.
func leaf(p expr.Pred) string {
	var b strings.Builder
	b.WriteString(p.Table + " ")
	if p.Transform != "" {
		b.WriteString(p.Transform + "(" + p.Column + ")")
	} else {
		b.WriteString(p.Column)
	}
	b.WriteString(" " + string(p.Op))
	for _, v := range p.Values {
		b.WriteString(" " + string(v.Kind) + ":" + v.Text)
	}
	return b.String()
}

func leaves(r extract.Result) []string {
	out := make([]string, 0, len(r.Predicates))
	for _, p := range r.Predicates {
		out = append(out, leaf(p))
	}
	return out
}

func TestPredicates(t *testing.T) {
	cases := []struct {
		name string
		d    extract.Dialect
		sql  string
		want []string
	}{
		{"date literal", extract.Trino, "select * from t where d = DATE '2024-01-01'", []string{"t d = date:2024-01-01"}},
		{"timestamp literal", extract.Trino, "select * from t where ts >= TIMESTAMP '2024-01-01 10:00:00'", []string{"t ts >= timestamp:2024-01-01 10:00:00"}},
		{"interval quoted", extract.Trino, "select * from t where age < INTERVAL '7' DAY", []string{"t age < interval:7 day"}},
		{"interval number", extract.Spark, "select * from t where age < INTERVAL 7 DAYS", []string{"t age < interval:7 day"}},
		{"interval text", extract.DuckDB, "select * from t where age < INTERVAL '2 hours 30 minutes'", []string{"t age < interval:2 hour 30 minute"}},
		{"cast literal date", extract.Trino, "select * from t where d > cast('2024-01-01' as date)", []string{"t d > date:2024-01-01"}},
		{"double colon literal", extract.DuckDB, "select * from t where d > '2024-01-01 10:00:00'::date", []string{"t d > date:2024-01-01"}},
		{"to_date literal", extract.Snowflake, "select * from t where d > to_date('2024-01-01')", []string{"t d > date:2024-01-01"}},
		{"relative date kept as text", extract.Trino, "select * from t where d > current_date - interval '7' day", []string{"t d > unknown:current_date - interval '7' day"}},
		{"folded date", extract.Trino, "select * from t where d > date '2024-03-31' - interval '1' month", []string{"t d > date:2024-02-29"}},
		{"negative number", extract.Trino, "select * from t where x > -5.5", []string{"t x > number:-5.5"}},
		{"exponent and leading dot", extract.Trino, "select * from t where x in (1e5, .5)", []string{"t x in number:1e5 number:.5"}},
		{"bool and null", extract.Trino, "select * from t where b = true and c = null", []string{"t b = bool:true", "t c = null:null"}},
		{"escaped quote", extract.Trino, "select * from t where s = 'it''s'", []string{"t s = string:it's"}},
		{"spark backslash", extract.Spark, `select * from t where s = 'it\'s'`, []string{"t s = string:it's"}},
		{"spark raw string", extract.Spark, `select * from t where s = r'a\d'`, []string{`t s = string:a\d`}},
		{"duckdb E string", extract.DuckDB, `select * from t where s = E'a\tb'`, []string{"t s = string:a\tb"}},
		{"snowflake dollar string", extract.Snowflake, "select * from t where s = $$a'b$$", []string{"t s = string:a'b"}},
		{"reversed comparison", extract.Trino, "select * from t where 5 < x and 6 >= y", []string{"t x > number:5", "t y <= number:6"}},
		{"between", extract.Trino, "select * from t where x between 1 and 2", []string{"t x between number:1 number:2"}},
		{"not between", extract.Trino, "select * from t where x not between 1 and 2", []string{"t x not between number:1 number:2"}},
		{"in and not in", extract.Trino, "select * from t where x in ('a', 'b') and y not in (1)", []string{"t x in string:a string:b", "t y not in number:1"}},
		{"like ops", extract.Snowflake, "select * from t where a like 'x%' and b not like 'y%' and c ilike 'z' and d rlike 'r'", []string{"t a like string:x%", "t b not like string:y%", "t c ilike string:z", "t d rlike string:r"}},
		{"is null", extract.Trino, "select * from t where a is null and b is not null", []string{"t a is null", "t b is not null"}},
		{"ne spellings", extract.Spark, "select * from t where a <> 1 and b != 2 and c == 3", []string{"t a != number:1", "t b != number:2", "t c = number:3"}},
		{"date_trunc", extract.Trino, "select * from t where date_trunc('day', ts) = date '2024-01-01'", []string{"t day(ts) = date:2024-01-01"}},
		{"date_trunc keyword unit", extract.Snowflake, "select * from t where date_trunc(week, ts) = '2024-01-01'", []string{"t week(ts) = string:2024-01-01"}},
		{"date and cast as date", extract.Trino, "select * from t where date(ts) = date '2024-01-01' and cast(ts as date) = date '2024-01-02'", []string{"t day(ts) = date:2024-01-01", "t day(ts) = date:2024-01-02"}},
		{"to_date column", extract.Snowflake, "select * from t where to_date(ts) = '2024-01-01'", []string{"t day(ts) = string:2024-01-01"}},
		{"year and extract", extract.Trino, "select * from t where year(ts) = 2024 and extract(month from ts) = 3", []string{"t year(ts) = number:2024", "t month(ts) = number:3"}},
		{"hour", extract.Spark, "select * from t where hour(ts) > 8", []string{"t hour(ts) > number:8"}},
		{"lower upper substr", extract.Trino, "select * from t where lower(a) = 'x' and upper(b) = 'Y' and substr(c, 1, 2) = 'ab' and substring(d from 1 for 2) = 'cd'", []string{"t lower(a) = string:x", "t upper(b) = string:Y", "t substr(c) = string:ab", "t substr(d) = string:cd"}},
		{"cast varchar", extract.Trino, "select * from t where cast(n as varchar) = '1'", []string{"t cast(n) = string:1"}},
		{"coalesce", extract.Trino, "select * from t where coalesce(a, 0) > 1", []string{"t coalesce(a) > number:1"}},
		{"params", extract.Snowflake, "select * from t where a = ? and b = :name and c = :1", []string{"t a = param:?", "t b = param::name", "t c = param::1"}},
		{"dollar param", extract.DuckDB, "select * from t where a = $1", []string{"t a = param:$1"}},
		{"jinja param", extract.Snowflake, "select * from t where a = {{ var('x') }}", []string{"t a = param:{{ var('x') }}"}},
		{"bare boolean column", extract.Trino, "select * from t where active", []string{"t active = bool:true"}},
		{"nested field", extract.Spark, "select * from t where t.a.b = 1", []string{"t a.b = number:1"}},
		{"column vs column is not a predicate", extract.Trino, "select * from t where a = b", []string{}},
		{"aggregate is not a column", extract.Trino, "select a from t group by a having count(*) > 1", []string{}},
		{"comments do not nest in trino", extract.Trino, "select * from t /* a /* b */ where z = 3", []string{"t z = number:3"}},
		{"comments nest in spark", extract.Spark, "select * from t /* a /* b */ where y = 2 */ where z = 3", []string{"t z = number:3"}},
		{"snowflake slash comment", extract.Snowflake, "select * from t // where y = 2\nwhere z = 3", []string{"t z = number:3"}},
		{"sql comments", extract.Trino, "select * /* x = 1 */ from t -- where y = 2\nwhere z = 3", []string{"t z = number:3"}},
		{"quoted identifiers", extract.Trino, `select * from "s"."T" where "My Col" = 1`, []string{"s.T My Col = number:1"}},
		{"backtick identifiers", extract.Spark, "select * from `s`.`t` where `c` = 1", []string{"s.t c = number:1"}},
		{"spark double quotes are strings", extract.Spark, `select * from t where c = "x"`, []string{"t c = string:x"}},
		{"regexp_like function", extract.Athena, "select * from t where regexp_like(c, '^a')", []string{"t c rlike string:^a"}},
		{"starts_with function", extract.Trino, "select * from t where starts_with(c, 'ab_')", []string{`t c like string:ab\_%`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := extract.Parse(c.d, c.sql)
			require.Equal(t, c.want, leaves(r))
			checkInvariants(t, c.sql, r)
		})
	}
}

func TestTablesAndScopes(t *testing.T) {
	cases := []struct {
		name   string
		d      extract.Dialect
		sql    string
		tables []string
		preds  []string
	}{
		{"alias with AS", extract.Trino, "select * from db.t as e where e.x = 1", []string{"db.t e"}, []string{"db.t x = number:1"}},
		{"alias without AS", extract.Trino, "select * from c.db.t e where e.x = 1", []string{"c.db.t e"}, []string{"c.db.t x = number:1"}},
		{"table name qualifier", extract.Trino, "select * from db.t where t.x = 1 and db.t.y = 2", []string{"db.t"}, []string{"db.t x = number:1", "db.t y = number:2"}},
		{"two tables unqualified is unresolved", extract.Trino, "select * from a, b where x = 1", []string{"a", "b"}, []string{"* x = number:1"}},
		{"derived table maps to base column", extract.Trino, "select * from (select id, region as r from s.t) d where d.r = 'EU'", []string{"s.t"}, []string{"s.t region = string:EU"}},
		{"derived expression column is opaque", extract.Trino, "select * from (select id, sum(v) as total from s.t group by id) d where d.total > 1", []string{"s.t"}, []string{}},
		{"cte followed to base table", extract.Trino, "with c as (select * from s.t) select * from c where x = 1", []string{"s.t"}, []string{"s.t x = number:1"}},
		{"cte name is not a table", extract.Trino, "with c as (select a from s.t) select * from c x join s.u y on x.a = y.a where y.b = 2", []string{"s.t", "s.u y"}, []string{"s.u b = number:2"}},
		{"union branches", extract.Trino, "select a from s.t where a = 1 union select a from s.u where a = 2", []string{"s.t", "s.u"}, []string{"s.t a = number:1", "s.u a = number:2"}},
		{"correlated outer reference", extract.Trino, "select * from s.o o where exists (select 1 from s.i i where i.k = o.k and o.z = 3)", []string{"s.o o", "s.i i"}, []string{"s.o z = number:3"}},
		{"unnest is not a table", extract.Trino, "select * from s.t cross join unnest(arr) as u(v) where v = 1 and w = 2", []string{"s.t"}, []string{"s.t w = number:2"}},
		{"lateral view is not a table", extract.Spark, "select * from s.t lateral view explode(arr) x as v where v = 1 and w = 2", []string{"s.t"}, []string{"s.t w = number:2"}},
		{"spark metadata table", extract.Spark, "select * from db.t.snapshots where operation = 'append'", []string{"db.t$snapshots"}, []string{"db.t$snapshots operation = string:append"}},
		{"trino metadata table", extract.Trino, `select * from db."t$files" where record_count > 1`, []string{"db.t$files"}, []string{"db.t$files record_count > number:1"}},
		{"insert select", extract.Trino, "insert into s.dst select * from s.src where a = 1", []string{"s.dst W", "s.src"}, []string{"s.src a = number:1"}},
		{"merge target and source", extract.Spark, "merge into s.t t using s.u u on t.id = u.id and t.d = '2024' when matched then delete", []string{"s.t t W", "s.u u"}, []string{"s.t d = string:2024"}},
		{"update", extract.Trino, "update s.t set a = 1 where b = 2", []string{"s.t W"}, []string{"s.t b = number:2"}},
		{"delete", extract.Trino, "delete from s.t where b = 2", []string{"s.t W"}, []string{"s.t b = number:2"}},
		{"ddl target only", extract.Trino, "alter table s.t add column c int", []string{"s.t W"}, []string{}},
		{"use has no tables", extract.Trino, "use s", []string{}, []string{}},
		{"dbt ref", extract.Snowflake, "select * from {{ ref('orders') }} where a = 1", []string{"orders"}, []string{"orders a = number:1"}},
		{"dbt source", extract.Snowflake, "select * from {{ source('raw', 'events') }} e where e.a = 1", []string{"raw.events e"}, []string{"raw.events a = number:1"}},
		{"spark path query is not a table", extract.Spark, "select * from parquet.`s3://b/p/` where a = 1", []string{}, []string{}},
		{"read_parquet is not a table", extract.DuckDB, "select * from read_parquet('x.parquet') where a = 1", []string{}, []string{}},
		{"time travel", extract.Trino, "select * from s.t for version as of 5 where a = 1", []string{"s.t @5"}, []string{"s.t a = number:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := extract.Parse(c.d, c.sql)
			tables := make([]string, 0, len(r.Tables))
			for _, tr := range r.Tables {
				s := tr.QualifiedName()
				if tr.Alias != "" {
					s += " " + tr.Alias
				}
				if tr.Write {
					s += " W"
				}
				if tr.AsOf != "" {
					s += " @" + tr.AsOf
				}
				tables = append(tables, s)
			}
			require.Equal(t, c.tables, tables)
			require.Equal(t, c.preds, leaves(r))
			checkInvariants(t, c.sql, r)
		})
	}
}

func TestScanFilters(t *testing.T) {
	cases := []struct {
		name  string
		d     extract.Dialect
		sql   string
		scans []string
	}{
		{"conjuncts split by table", extract.Trino,
			"select * from a x join b y on x.id = y.id and y.k = 1 where x.d > 5 and (x.e = 1 or y.f = 2)",
			[]string{"d > 5", "k = 1"}},
		{"or across tables weakens to true", extract.Trino,
			"select * from a x, b y where x.d = 1 or y.e = 2", []string{"", ""}},
		{"or within one table kept", extract.Trino,
			"select * from a x, b y where (x.d = 1 and y.e = 2) or x.d = 3", []string{"(d = 1 OR d = 3)", ""}},
		{"not kept only when exact", extract.Trino,
			"select * from a x, b y where not (x.d = 1 and y.e = 2) and not x.f = 3", []string{"NOT f = 3", ""}},
		{"left join on filters only the right side", extract.Trino,
			"select * from a x left join b y on x.id = y.id and x.d = 1 and y.e = 2", []string{"", "e = 2"}},
		{"is null on the null-extended side is not pushed", extract.Trino,
			"select * from a x left join b y on x.id = y.id where y.id is null and x.d = 1", []string{"d = 1", ""}},
		{"full join pushes nothing from on", extract.Trino,
			"select * from a x full join b y on x.id = y.id and x.d = 1", []string{"", ""}},
		{"filter through derived table", extract.Trino,
			"select * from (select id, d from a where e = 1) s where s.d = 2", []string{"(e = 1 AND d = 2)"}},
		{"no pushdown through limit", extract.Trino,
			"select * from (select id, d from a limit 10) s where s.d = 2", []string{""}},
		{"no pushdown into cte read twice", extract.Trino,
			"with c as (select * from a where e = 1) select * from c x join c y on x.id = y.id where x.d = 2", []string{"e = 1"}},
		{"having on grouping column", extract.Trino,
			"select g, count(*) from a group by g having g = 'x' and count(*) > 1", []string{"g = 'x'"}},
		{"correlated filter stays in its block", extract.Trino,
			"select * from a o where exists (select 1 from b i where i.k = o.k and o.z = 3 and i.w = 4)", []string{"", "w = 4"}},
		{"union cte filter pushed into each branch", extract.Trino,
			"with u as (select id, d from a union all select id, d from b) select * from u where d = 1", []string{"d = 1", "d = 1"}},
		{"union of stars in derived table", extract.Trino,
			"select * from (select * from a union all select * from b) u where u.k = 1", []string{"k = 1", "k = 1"}},
		{"values columns are not base columns", extract.Trino,
			"select * from (values (1, 'a')) as v(id, name) join t on t.id = v.id where v.name = 'a' and t.x = 2", []string{"x = 2"}},
		{"opaque conjunct ignored", extract.Trino,
			"select * from a where my_udf(x, y) and z = 1", []string{"z = 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := extract.Parse(c.d, c.sql)
			got := make([]string, 0, len(r.Scans))
			for _, s := range r.Scans {
				if s.Filter == nil {
					got = append(got, "")
				} else {
					got = append(got, s.Filter.String())
				}
			}
			require.Equal(t, c.scans, got)
			checkInvariants(t, c.sql, r)
		})
	}
}

func TestJoins(t *testing.T) {
	cases := []struct {
		name string
		d    extract.Dialect
		sql  string
		want []string
	}{
		{"on equality", extract.Trino, "select * from s.a x join s.b y on x.id = y.a_id", []string{"s.a.id = s.b.a_id"}},
		{"where equality and order", extract.Trino, "select * from s.b y, s.a x where y.a_id = x.id and x.k = 1", []string{"s.a.id = s.b.a_id"}},
		{"using", extract.Trino, "select * from s.a join s.b using (id)", []string{"s.a.id = s.b.id"}},
		{"through cte", extract.Trino, "with c as (select id as cid from s.a) select * from c join s.b on c.cid = b.id", []string{"s.a.id = s.b.id"}},
		{"same reference is a filter", extract.Trino, "select * from s.a where a.x = a.y", []string{}},
		{"self join", extract.Trino, "select * from s.a p join s.a c on c.parent = p.id", []string{"s.a.id = s.a.parent"}},
		{"transformed key", extract.Trino, "select * from s.a x join s.b y on date(x.ts) = y.d", []string{"s.a.day(ts) = s.b.d"}},
		{"non-equality is not a join", extract.Trino, "select * from s.a x join s.b y on x.ts < y.ts", []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := extract.Parse(c.d, c.sql)
			got := make([]string, 0, len(r.Joins))
			side := func(c extract.ColumnRef) string {
				if c.Transform != "" {
					return c.Table + "." + c.Transform + "(" + c.Column + ")"
				}
				return c.Table + "." + c.Column
			}
			for _, j := range r.Joins {
				got = append(got, side(j.Left)+" = "+side(j.Right))
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestHugeInList(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString("SELECT * FROM lake.events WHERE user_id IN (")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(") AND ds = '2024-01-01'")
	r := extract.Parse(extract.Trino, b.String())
	require.Empty(t, r.Warnings)
	require.Len(t, r.Predicates, 2)
	in := r.Predicates[0]
	require.Equal(t, expr.OpIn, in.Op)
	require.Len(t, in.Values, n)
	for i, v := range in.Values {
		require.Equal(t, expr.Value{Kind: expr.KindNumber, Text: strconv.Itoa(i)}, v)
	}
	checkInvariants(t, "in-list", r)
}

func TestWarnings(t *testing.T) {
	cases := []struct {
		name string
		d    extract.Dialect
		sql  string
		want string
	}{
		{"truncated string", extract.Trino, "select * from t where a = 'abc", "unterminated string literal"},
		{"truncated parens", extract.Trino, "select * from t where a in (1, 2", "missing ')'"},
		{"truncated comment", extract.Trino, "select * from t /* where", "unterminated block comment"},
		{"unknown statement", extract.Trino, "frobnicate the table", "unsupported statement"},
		{"jinja", extract.Snowflake, "select * from t {% if x %} where a = 1 {% endif %}", "jinja"},
		{"table function", extract.DuckDB, "select * from read_csv('a.csv')", "read_csv is not an Iceberg table"},
		{"deep nesting", extract.Trino, "select * from t where " + strings.Repeat("(", 5000) + "a = 1", "nesting too deep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := extract.Parse(c.d, c.sql)
			require.NotEmpty(t, r.Warnings)
			require.Contains(t, strings.Join(r.Warnings, "\n"), c.want)
			checkInvariants(t, c.sql, r)
		})
	}
	// Whatever precedes the damage is still extracted.
	r := extract.Parse(extract.Trino, "select * from s.t where a = 1 and b = 'trunc")
	require.Equal(t, []string{"s.t a = number:1", "s.t b = string:trunc"}, leaves(r))
}

func TestContractShape(t *testing.T) {
	r := extract.Parse(extract.Trino, "select * from c.s.t x where x.a in (1, 'b') and x.n is null")
	b, err := r.MarshalContract()
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"tables", "predicates", "warnings"} {
		require.Contains(t, m, k)
		require.NotNil(t, m[k], k)
	}
	require.Equal(t, []any{map[string]any{"catalog": "c", "namespace": "s", "name": "t", "alias": "x"}}, m["tables"])
	preds := m["predicates"].([]any)
	require.Equal(t, map[string]any{"table": "c.s.t", "column": "a", "op": "in", "values": []any{"1", "b"},
		"kinds": []any{"number", "string"}, "transform": ""}, preds[0])
	require.Equal(t, []any{}, preds[1].(map[string]any)["values"])
	require.Equal(t, []any{}, m["warnings"])

	empty, err := extract.Parse(extract.Trino, "").MarshalContract()
	require.NoError(t, err)
	require.JSONEq(t, `{"tables":[],"predicates":[],"scans":[],"joins":[],"warnings":[]}`, string(empty))

	// Operators read as written: >= and <, not \u003e= and \u003c.
	ops, err := extract.Parse(extract.Trino, "select * from t where a >= 1 and b < 2").MarshalContract()
	require.NoError(t, err)
	require.Contains(t, string(ops), `"op":">="`)
	require.Contains(t, string(ops), `"filter":"(a >= 1 AND b < 2)"`)
}

// TestPrefixesNeverFail parses every prefix of every corpus statement: the
// extractor must treat truncated SQL as data, not as a crash.
func TestPrefixesNeverFail(t *testing.T) {
	for _, s := range loadCorpus(t) {
		step := 1 + len(s.sql)/200
		for n := 0; n <= len(s.sql); n += step {
			r := extract.Parse(s.dialect, s.sql[:n])
			checkInvariants(t, s.sql[:n], r)
		}
	}
}

// checkInvariants asserts what every Result must satisfy: arrays non-nil,
// scans pointing at tables, predicate tables known, and every scan leaf
// present in Predicates.
func checkInvariants(t *testing.T, sql string, r extract.Result) {
	t.Helper()
	require.NotNil(t, r.Tables, sql)
	require.NotNil(t, r.Warnings, sql)
	names := map[string]bool{"*": true}
	for _, tr := range r.Tables {
		names[tr.QualifiedName()] = true
	}
	all := map[string]bool{}
	for _, p := range r.Predicates {
		require.True(t, names[p.Table], "predicate table %q not among tables in %q", p.Table, sql)
		require.NotNil(t, p.Values, sql)
		all[leaf(p)] = true
	}
	for _, s := range r.Scans {
		require.GreaterOrEqual(t, s.Table, 0, sql)
		require.Less(t, s.Table, len(r.Tables), sql)
		// The flat list shows a leaf under NOT negated; the scan keeps the NOT.
		var walk func(n *expr.Node, neg bool)
		walk = func(n *expr.Node, neg bool) {
			switch n.Kind {
			case expr.NodePred:
				require.NotNil(t, n.Pred, sql)
				require.Equal(t, r.Tables[s.Table].QualifiedName(), n.Pred.Table, sql)
				p := *n.Pred
				if neg {
					p.Op, _ = expr.Negate(p.Op)
				}
				require.True(t, all[leaf(p)], "scan leaf %s missing from predicates of %q", leaf(p), sql)
			case expr.NodeNot:
				require.Len(t, n.Children, 1, sql)
				neg = !neg
			case expr.NodeAnd, expr.NodeOr:
				require.GreaterOrEqual(t, len(n.Children), 2, sql)
			}
			for _, c := range n.Children {
				walk(c, neg)
			}
		}
		if s.Filter != nil {
			walk(s.Filter, false)
		}
	}
}

func ExampleParse() {
	r := extract.Parse(extract.Trino, `
		SELECT o.id FROM iceberg.sales.orders o
		WHERE date_trunc('day', o.ts) >= DATE '2024-01-01' AND o.region IN ('EU', 'US')`)
	for _, p := range r.Predicates {
		fmt.Println(p.Table, p.Column, p.Transform, p.Op, p.Values)
	}
	fmt.Println(r.Scans[0].Filter)
	// Output:
	// iceberg.sales.orders ts day >= [date '2024-01-01']
	// iceberg.sales.orders region  in ['EU' 'US']
	// (day(ts) >= date '2024-01-01' AND region in ('EU', 'US'))
}

// TestIssue43Shapes covers predicates the extractor used to drop: DuckDB
// struct fields by subscript and struct_extract, Snowflake LIKE ANY/ALL,
// Snowflake session variables (kept as opaque parameters), Spark CACHE
// TABLE … AS SELECT, and predicates beside LATERAL VIEW / FLATTEN.
func TestIssue43Shapes(t *testing.T) {
	tests := []struct {
		name string
		d    extract.Dialect
		sql  string
		want []string
	}{
		{"duckdb struct subscript and struct_extract", extract.DuckDB,
			"SELECT * FROM events WHERE meta['os'] = 'ios' AND struct_extract(meta, 'version') = '17' AND meta.locale = 'fr'",
			[]string{"events meta.os = string:ios", "events meta.version = string:17", "events meta.locale = string:fr"}},
		{"duckdb subscript by number stays a transform", extract.DuckDB,
			"SELECT * FROM events WHERE tags[1] = 'a'",
			[]string{"events subscript(tags) = string:a"}},
		{"athena struct path", extract.Athena,
			"SELECT * FROM waf_logs w WHERE w.httprequest.clientip = '1.2.3.4' AND httprequest.country = 'FR'",
			[]string{"waf_logs httprequest.clientip = string:1.2.3.4", "waf_logs httprequest.country = string:FR"}},
		{"snowflake like any and all", extract.Snowflake,
			"SELECT * FROM logs WHERE url LIKE ANY ('%/a%', '%/b%') AND host ILIKE ALL ('%x%') AND p NOT LIKE ANY ('/z%')",
			[]string{"logs url like string:%/a%", "logs url like string:%/b%", "logs host ilike string:%x%", "logs p not like string:/z%"}},
		{"snowflake like any of a subquery is not a value list", extract.Snowflake,
			"SELECT * FROM logs WHERE url LIKE ANY (SELECT pattern FROM patterns) AND day = 1",
			[]string{"logs day = number:1"}},
		{"snowflake session variables", extract.Snowflake,
			"SELECT * FROM orders WHERE order_ts >= $start_ts AND region = $region",
			[]string{"orders order_ts >= param:$start_ts", "orders region = param:$region"}},
		{"spark cache table as select", extract.Spark,
			"CACHE LAZY TABLE hot OPTIONS ('storageLevel' 'DISK_ONLY') AS SELECT * FROM sales.orders WHERE region = 'EU'",
			[]string{"sales.orders region = string:EU"}},
		{"spark cache table without AS", extract.Spark,
			"CACHE TABLE hot SELECT * FROM sales.orders WHERE region = 'EU'",
			[]string{"sales.orders region = string:EU"}},
		{"spark lateral view keeps base predicates", extract.Spark,
			"SELECT id, item FROM orders LATERAL VIEW OUTER explode(items) t AS item WHERE region = 'EU' AND item = 'x'",
			[]string{"orders region = string:EU"}},
		{"snowflake flatten keeps base predicates", extract.Snowflake,
			"SELECT e.id FROM events e, LATERAL FLATTEN(input => e.tags, outer => TRUE) f WHERE e.tenant = 7 AND f.value = 'x'",
			[]string{"events tenant = number:7"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := extract.Parse(tc.d, tc.sql)
			require.Equal(t, tc.want, leaves(r), "warnings: %v", r.Warnings)
		})
	}
	r := extract.Parse(extract.Spark, "CACHE TABLE sales.orders")
	require.Equal(t, "other", r.Statement)
	require.Empty(t, r.Tables, "caching a table reads nothing the layout can serve")
}
