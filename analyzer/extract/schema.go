package extract

import (
	"strings"
)

// Schemas tells the extractor which columns base tables have, so that an
// unqualified column of a FROM list with several tables is attributed to
// the one table that has it, and an outer column inside a correlated
// subquery to the outer table.
type Schemas interface {
	// Columns returns the top-level columns of the table ref names (as
	// written, catalog and namespace possibly empty); ok is false when the
	// table is not known, and the extractor then assumes it may have any
	// column.
	Columns(ref TableRef) (cols []Column, ok bool)
}

// Column is a top-level column of a table: its name and its SQL type as
// the schema spells it ("" when not known). The extractor types string
// literals compared with date and timestamp columns by it.
type Column struct {
	Name string
	Type string
}

// Options are the per-call inputs of [ParseWith]; the zero value is
// [Parse]'s behaviour.
type Options struct {
	// Schemas resolves unqualified columns; nil knows no table.
	Schemas Schemas
	// Locate maps a path an engine reads directly (DuckDB
	// read_parquet('s3://…/t/data/**') and iceberg_scan('…'), Spark
	// delta.`s3://…`, a file named in FROM) to the table whose location
	// holds it; ok false leaves the path unresolved, with a warning. nil
	// resolves none.
	Locate func(path string) (ref TableRef, ok bool)
}

// SchemaMap is a [Schemas] over tables named in SQL DDL or added by hand.
// Names match case-insensitively, and a reference written with fewer parts
// than the table's name (store_sales for tpcds.store_sales) matches when
// only one table fits.
type SchemaMap struct {
	// tables are keyed by the lower-cased qualified name.
	tables map[string]schemaEntry
	// byName lists the qualified keys of each lower-cased table name.
	byName map[string][]string
}

type schemaEntry struct {
	parts []string
	cols  []Column
}

// NewSchemaMap returns an empty map.
func NewSchemaMap() *SchemaMap {
	return &SchemaMap{tables: map[string]schemaEntry{}, byName: map[string][]string{}}
}

// Add records the columns of the table named by parts (name, namespace
// and name, or catalog, namespace and name); a later Add of the same name
// replaces the columns.
func (m *SchemaMap) Add(parts []string, cols []Column) {
	if len(parts) == 0 {
		return
	}
	lower := make([]string, len(parts))
	for i, p := range parts {
		lower[i] = strings.ToLower(p)
	}
	key := strings.Join(lower, ".")
	if _, ok := m.tables[key]; !ok {
		name := lower[len(lower)-1]
		m.byName[name] = append(m.byName[name], key)
	}
	m.tables[key] = schemaEntry{parts: lower, cols: cols}
}

// Len is the number of tables.
func (m *SchemaMap) Len() int { return len(m.tables) }

// Columns implements [Schemas].
func (m *SchemaMap) Columns(ref TableRef) ([]Column, bool) {
	if m == nil || ref.Name == "" {
		return nil, false
	}
	want := refParts(TableRef{Catalog: ref.Catalog, Namespace: ref.Namespace, Name: ref.Name})
	for i, p := range want {
		want[i] = strings.ToLower(p)
	}
	if e, ok := m.tables[strings.Join(want, ".")]; ok {
		return e.cols, true
	}
	var found *schemaEntry
	for _, key := range m.byName[want[len(want)-1]] {
		e := m.tables[key]
		if !suffixOf(want, e.parts) && !suffixOf(e.parts, want) {
			continue
		}
		if found != nil {
			return nil, false // two tables fit: not known which
		}
		found = &e
	}
	if found == nil {
		return nil, false
	}
	return found.cols, true
}

// suffixOf reports whether a is a suffix of b.
func suffixOf(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	off := len(b) - len(a)
	for i := range a {
		if a[i] != b[off+i] {
			return false
		}
	}
	return true
}

// ReadDDL reads the CREATE TABLE statements of text, written in dialect d,
// into a SchemaMap: `CREATE TABLE name (col type [constraints], …,
// [PRIMARY KEY (…)])`, as benchmark kits ship their schemas. The warnings
// name what was skipped: statements that are not CREATE TABLE, and tables
// created without a column list (CTAS).
func ReadDDL(d Dialect, text string) (*SchemaMap, []string) {
	warns := &warnList{}
	p := &parser{d: d, src: text, warns: warns}
	p.toks = tokenize(d, text, warns)
	m := NewSchemaMap()
	for _, st := range p.parseStatements() {
		if len(st.targets) == 0 || st.kind != "ddl" && st.kind != "ctas" {
			if st.kind != "other" || len(st.targets) > 0 {
				warns.add("statement " + st.kind + " is no CREATE TABLE: skipped")
			}
			continue
		}
		if st.cols == nil {
			warns.add("table " + st.targets[0].QualifiedName() + " has no column list: skipped")
			continue
		}
		m.Add(refParts(st.targets[0]), st.cols)
	}
	return m, warns.list
}

// columnDefs parses the column list of CREATE TABLE name (…), the current
// token being its '('. Table constraints (PRIMARY KEY (…), CONSTRAINT …,
// FOREIGN KEY …) are skipped.
func (p *parser) columnDefs() []Column {
	p.i++
	cols := []Column{}
	for !p.eof() && !p.isOp(")") && !p.isOp(";") {
		t := p.cur()
		name := ""
		if t.kind == tQuoted || t.kind == tIdent && !tableConstraint[p.lower(t)] {
			name = p.name(t)
			p.i++
		}
		start := p.cur().pos
		end := start
		for !p.eof() && !p.isOp(",") && !p.isOp(")") && !p.isOp(";") {
			p.skipBalanced()
			end = p.at(-1).end
		}
		if name != "" {
			typ := ""
			if end > start {
				typ = strings.ToLower(strings.Join(strings.Fields(p.src[start:end]), " "))
				if k := strings.IndexAny(typ, " ("); k > 0 {
					typ = typ[:k]
				}
			}
			cols = append(cols, Column{Name: name, Type: typ})
		}
		p.acceptOp(",")
	}
	p.expectClose()
	return cols
}

// tableConstraint are the words that start a table constraint in a column
// list rather than a column.
var tableConstraint = map[string]bool{
	"primary": true, "foreign": true, "unique": true, "constraint": true, "check": true, "key": true,
	"index": true, "period": true, "like": true,
}
