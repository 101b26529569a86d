package demo

import (
	"fmt"
	"strings"
	"time"
)

// engineCatalog is the catalog name each engine knows the demo lakehouse
// by; floe's default config maps each to the local catalog.
var engineCatalog = [numEngines]string{
	engTrino:     "iceberg",
	engSpark:     "spark_catalog",
	engAthena:    "awsdatacatalog",
	engSnowflake: "ANALYTICS",
	engDuckDB:    "lake",
	engScan:      "local",
}

// sqlWriter renders a query's parts in one engine's dialect.
type sqlWriter struct {
	eng    engine
	style  int // 0 catalog.ns.table, 1 ns.table, 2 table
	idCase int // 0 lower, 1 upper, 2 mixed
}

// ident spells an identifier in the query's case.
func (x *sqlWriter) ident(s string) string {
	switch x.idCase {
	case 1:
		return strings.ToUpper(s)
	case 2:
		b := []byte(s)
		up := true
		for i, c := range b {
			if up && c >= 'a' && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
			up = c == '_' || c == '.'
		}
		return string(b)
	}
	return s
}

func (x *sqlWriter) col(c string) string { return x.ident(c) }

// name writes catalog.ns.name in the query's style.
func (x *sqlWriter) name(ns, name string) string {
	switch x.eng {
	case engDuckDB:
		return x.ident("lake." + ns + "." + name)
	case engSpark:
		if x.style == 0 {
			return x.ident("spark_catalog." + ns + "." + name)
		}
		return x.ident(ns + "." + name)
	case engAthena:
		switch x.style {
		case 0:
			return `"` + ns + `"."` + name + `"`
		case 1:
			return x.ident(ns + "." + name)
		}
		return x.ident(name)
	case engSnowflake:
		switch x.style {
		case 0:
			return x.ident("analytics." + ns + "." + name)
		case 1:
			return x.ident(ns + "." + name)
		}
		return x.ident(name)
	}
	switch x.style {
	case 0:
		return x.ident(engineCatalog[x.eng] + "." + ns + "." + name)
	case 1:
		return x.ident(ns + "." + name)
	}
	return x.ident(name)
}

func (x *sqlWriter) table(t tableID) string {
	info := t.info()
	return x.name(info.ns, info.name)
}

// badTable names a table that does not exist (a typo of web.events).
func (x *sqlWriter) badTable() string { return x.name("web", "event") }

func (x *sqlWriter) where(s scan) string {
	parts := make([]string, len(s.preds))
	for i, p := range s.preds {
		parts[i] = x.pred(s.alias, p)
	}
	return strings.Join(parts, " AND ")
}

func (x *sqlWriter) pred(alias string, p pred) string {
	c := x.col(p.col)
	if alias != "" {
		c = alias + "." + c
	}
	switch p.op {
	case "in":
		vs := make([]string, len(p.vals))
		for i, v := range p.vals {
			vs[i] = x.lit(v)
		}
		return c + " IN (" + strings.Join(vs, ", ") + ")"
	case "like":
		return c + " LIKE " + x.lit(p.vals[0])
	case "between":
		return c + " BETWEEN " + x.lit(p.vals[0]) + " AND " + x.lit(p.vals[1])
	}
	return c + " " + p.op + " " + x.lit(p.vals[0])
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (x *sqlWriter) lit(v lit) string {
	switch v.kind {
	case litInt:
		if v.param {
			return "?"
		}
		return fmt.Sprint(v.n)
	case litStr:
		return quote(v.s)
	case litDate:
		return "DATE '" + v.t.Format(time.DateOnly) + "'"
	case litTS:
		ts := v.t.UTC().Format(time.DateTime)
		switch x.eng {
		case engTrino:
			return "TIMESTAMP '" + ts + " UTC'"
		case engSnowflake:
			return "'" + ts + " +0000'::TIMESTAMP_TZ"
		case engDuckDB:
			return "TIMESTAMPTZ '" + ts + "+00'"
		}
		return "TIMESTAMP '" + ts + "'"
	case litRelTS:
		n, unit := int(v.rel/time.Hour), "HOUR"
		if v.rel >= 48*time.Hour {
			n, unit = int(v.rel/(24*time.Hour)), "DAY"
		}
		switch x.eng {
		case engSpark:
			return fmt.Sprintf("current_timestamp() - INTERVAL %d %sS", n, unit)
		case engSnowflake:
			return fmt.Sprintf("DATEADD(%s, -%d, CURRENT_TIMESTAMP())", strings.ToLower(unit), n)
		case engDuckDB:
			return fmt.Sprintf("now() - INTERVAL %d %s", n, unit)
		}
		return fmt.Sprintf("current_timestamp - INTERVAL '%d' %s", n, unit)
	}
	return "NULL"
}

// countIf counts the rows where cond holds, as each dialect spells it.
func (x *sqlWriter) countIf(cond string) string {
	switch x.eng {
	case engSnowflake:
		return "COUNT_IF(" + cond + ")"
	case engSpark:
		return "count_if(" + cond + ")"
	}
	return "count(*) FILTER (WHERE " + cond + ")"
}

// metadataQuery reads an Iceberg metadata table where the engine has
// them, or asks for the table's Iceberg metadata the engine's way.
func (x *sqlWriter) metadataQuery(t tableID, meta string) string {
	info := t.info()
	switch x.eng {
	case engTrino:
		tbl := `"` + info.name + "$" + meta + `"`
		switch x.style {
		case 0:
			tbl = "iceberg." + info.ns + "." + tbl
		case 1:
			tbl = info.ns + "." + tbl
		}
		return "SELECT snapshot_id, committed_at, operation, summary FROM " + tbl + " ORDER BY committed_at DESC LIMIT 10"
	case engAthena:
		return `SELECT * FROM "` + info.ns + `"."` + info.name + "$" + meta + `" ORDER BY committed_at DESC LIMIT 10`
	case engSpark:
		return "SELECT snapshot_id, committed_at, operation FROM spark_catalog." + info.ns + "." + info.name + "." + meta + " ORDER BY committed_at DESC LIMIT 10"
	case engSnowflake:
		return "SELECT SYSTEM$GET_ICEBERG_TABLE_INFORMATION('ANALYTICS." + strings.ToUpper(info.ns+"."+info.name) + "')"
	}
	return "SHOW ALL TABLES"
}

// describe is a SHOW / DESCRIBE statement about t.
func (x *sqlWriter) describe(t tableID) string {
	switch x.eng {
	case engTrino:
		return "SHOW CREATE TABLE " + x.table(t)
	case engSpark:
		return "DESCRIBE TABLE EXTENDED " + x.table(t)
	case engAthena:
		return "DESCRIBE " + x.table(t)
	case engSnowflake:
		return "DESCRIBE TABLE " + x.table(t)
	}
	return "DESCRIBE " + x.table(t)
}
