package extract

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

// Op is a comparison operator of a predicate leaf, spelled as in SQL
// (lower case, single spaces).
type Op string

// The operators a predicate leaf can carry.
const (
	OpEq         Op = "="
	OpNotEq      Op = "!="
	OpLt         Op = "<"
	OpLtEq       Op = "<="
	OpGt         Op = ">"
	OpGtEq       Op = ">="
	OpBetween    Op = "between"
	OpNotBetween Op = "not between"
	OpIn         Op = "in"
	OpNotIn      Op = "not in"
	OpLike       Op = "like"
	OpNotLike    Op = "not like"
	OpILike      Op = "ilike"
	OpRLike      Op = "rlike"
	OpNotILike   Op = "not ilike"
	OpNotRLike   Op = "not rlike"
	OpIsNull     Op = "is null"
	OpIsNotNull  Op = "is not null"
)

// Kind is the type of a literal value.
type Kind string

// Literal kinds. KindParam is a placeholder (?, $1, :name, {{ jinja }}) whose
// value is not known; KindUnknown is an expression the extractor could not type
// (a subquery, a column of another table, a function of no column).
const (
	KindNull      Kind = "null"
	KindBool      Kind = "bool"
	KindNumber    Kind = "number"
	KindString    Kind = "string"
	KindDate      Kind = "date"
	KindTimestamp Kind = "timestamp"
	KindInterval  Kind = "interval"
	KindParam     Kind = "param"
	KindUnknown   Kind = "unknown"
)

// Value is a typed literal. Text is the literal's canonical text: strings
// unquoted and unescaped, numbers as written, dates as YYYY-MM-DD, timestamps
// as written inside the quotes, intervals as "N unit".
type Value struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
}

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

// Pred is one predicate leaf: a column of a base table compared with literals.
type Pred struct {
	// Table is the QualifiedName of the base table the column belongs to,
	// or "*" when it cannot be resolved (unqualified column, several tables).
	Table string `json:"table"`
	// Column is the column name as written, quotes removed. Nested fields
	// are dotted (a.b.c).
	Column string `json:"column"`
	Op     Op     `json:"op"`
	// Values are the operands after the column: one for comparisons and
	// like, two for between, n for in; none for is [not] null.
	Values []Value `json:"values"`
	// Transform is the function or cast around the column, normalized:
	// year, month, day, hour for date_trunc/date/trunc/extract...; "cast"
	// for a plain cast; lower/upper/substr...; "" when bare.
	Transform string `json:"transform,omitempty"`
}

// NodeKind says what a [Node] of a predicate tree is.
type NodeKind string

// Node kinds.
const (
	NodeAnd  NodeKind = "and"
	NodeOr   NodeKind = "or"
	NodeNot  NodeKind = "not"
	NodePred NodeKind = "pred"
	// NodeOpaque is a boolean term the extractor could not turn into a
	// predicate on a column (exists (…), a UDF call, col1 = col2). It is
	// neither true nor false for pruning: callers treat it as "may match".
	NodeOpaque NodeKind = "opaque"
)

// Node is a boolean expression tree over predicate leaves that keeps AND,
// OR and NOT. A nil *Node means "no filter".
type Node struct {
	Kind     NodeKind `json:"kind"`
	Children []*Node  `json:"children,omitempty"`
	Pred     *Pred    `json:"pred,omitempty"`
	// Text is the source text of an opaque term, for diagnostics.
	Text string `json:"text,omitempty"`
}

// Scan is one reference to a base table in a statement, with the filter a
// scan of that table alone could evaluate: the conjuncts of its query block's
// WHERE / JOIN … ON / HAVING whose leaves all belong to this table. Files of the
// table that satisfy no scan's filter need not be read.
type Scan struct {
	// Table indexes [Result.Tables].
	Table int `json:"table"`
	// Filter is nil when the scan reads the whole table.
	Filter *Node `json:"filter,omitempty"`
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
	Predicates []Pred `json:"predicates"`
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
}

// Join is an equality between columns of two table references; the side
// whose table (then column) sorts first is Left.
type Join struct {
	Left  ColumnRef `json:"left"`
	Right ColumnRef `json:"right"`
}
