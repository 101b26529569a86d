package extract

import pexpr "github.com/floe-project/floe/expr"

// Dialect names the SQL dialect a statement is written in. Identifier
// quoting, case folding, literal syntax and some operators differ by dialect.
type Dialect string

// The dialects the extractor understands.
const (
	Trino     Dialect = "trino"
	Athena    Dialect = "athena"
	Spark     Dialect = "spark"
	Snowflake Dialect = "snowflake"
	DuckDB    Dialect = "duckdb"
)

// TableRef is a base table a statement reads or writes. Catalog and
// Namespace are empty when the statement leaves them implicit; the caller
// resolves them with the session defaults. Names are as written, quotes
// removed, case preserved.
type TableRef struct {
	Catalog   string `json:"catalog"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Alias     string `json:"alias,omitempty"`
	// Metadata is the Iceberg metadata table read instead of the data
	// ("snapshots" for Spark db.t.snapshots or Trino "t$snapshots"); Name
	// is then the base table's name.
	Metadata string `json:"metadata,omitempty"`
	// AsOf is the time-travel clause as written (FOR VERSION AS OF 42,
	// FOR TIMESTAMP AS OF …, Snowflake AT(…)), empty for the current state.
	AsOf string `json:"as_of,omitempty"`
	// Write is true when the statement writes the table (INSERT, MERGE,
	// UPDATE, DELETE, CTAS target, DDL).
	Write bool `json:"write,omitempty"`
}

// QualifiedName is catalog.namespace.name with empty parts left out, and
// "$metadata" appended for a metadata table (db.orders$snapshots).
func (t TableRef) QualifiedName() string {
	s := t.Name
	if t.Namespace != "" {
		s = t.Namespace + "." + s
	}
	if t.Catalog != "" {
		s = t.Catalog + "." + s
	}
	if t.Metadata != "" {
		s += "$" + t.Metadata
	}
	return s
}

// Scan is one reference to a base table in a statement, with the filter a
// scan of that table alone could evaluate: the conjuncts of its query block's
// WHERE / JOIN … ON / HAVING whose leaves all belong to this table. Files of the
// table that satisfy no scan's filter need not be read.
type Scan struct {
	// Table indexes [Result.Tables].
	Table int `json:"table"`
	// Filter is nil when the scan reads the whole table.
	Filter *pexpr.Node `json:"filter,omitempty"`
}

// Result is what the extractor found in one statement.
type Result struct {
	// Statement is the kind of the (first) statement: select, insert,
	// merge, update, delete, ctas, ddl or other.
	Statement string `json:"statement,omitempty"`
	// Tables are the base tables referenced, each once per alias; CTE
	// names and derived tables are followed to the tables they read.
	Tables []TableRef `json:"tables"`
	// Scans are the table scans with their pushable filters, one per
	// table reference in a query block (a table read twice has two scans;
	// a CTE is resolved once however often it is referenced). Tables that
	// are only written (INSERT, CTAS and DDL targets) have no scan.
	Scans []Scan `json:"scans"`
	// Predicates are all predicate leaves of the statement, in source
	// order: WHERE, JOIN … ON, HAVING, subqueries and every UNION branch.
	Predicates []pexpr.Pred `json:"predicates"`
	// Joins are the equalities between columns of two table references
	// (JOIN … ON a.k = b.k, WHERE a.k = b.k, USING (k)), once each, in
	// source order: join keys are layout candidates too.
	Joins []Join `json:"joins"`
	// Warnings name what the extractor skipped; a non-empty list does not
	// mean nothing was extracted.
	Warnings []string `json:"warnings"`
}

// ColumnRef names a column of a base table; Table is a
// [TableRef.QualifiedName] or "*" when the table cannot be resolved.
type ColumnRef struct {
	Table     string `json:"table"`
	Column    string `json:"column"`
	Transform string `json:"transform,omitempty"`
	// Alias is the table reference's alias when both sides of a join are
	// the same table (a self-join: cs1.cs_order_number = cs2.cs_order_number).
	Alias string `json:"alias,omitempty"`
}

// Join is an equality between columns of two table references; the side
// whose table (then column) sorts first is Left.
type Join struct {
	Left  ColumnRef `json:"left"`
	Right ColumnRef `json:"right"`
}
