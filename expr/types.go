package expr

import (
	"fmt"
	"strings"
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
	// Path is set for a nested field: the top-level column and the names
	// of the fields below it (Column is them joined by dots), as Iceberg's
	// nested field ids need them.
	Path []string `json:"path,omitempty"`
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

// String renders the tree in a SQL-like form for diagnostics and golden
// files: column op value, AND/OR in parentheses, transforms as
// transform(column).
func (n *Node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *Node) write(b *strings.Builder) {
	if n == nil {
		b.WriteString("true")
		return
	}
	switch n.Kind {
	case NodeAnd, NodeOr:
		sep := " AND "
		if n.Kind == NodeOr {
			sep = " OR "
		}
		b.WriteByte('(')
		for i, c := range n.Children {
			if i > 0 {
				b.WriteString(sep)
			}
			c.write(b)
		}
		b.WriteByte(')')
	case NodeNot:
		b.WriteString("NOT ")
		if len(n.Children) > 0 {
			n.Children[0].write(b)
		}
	case NodePred:
		if n.Pred != nil {
			b.WriteString(n.Pred.String())
		}
	default:
		b.WriteString("opaque(" + n.Text + ")")
	}
}

// String renders the predicate as transform(column) op values.
func (p Pred) String() string {
	var b strings.Builder
	col := p.Column
	if p.Transform != "" {
		col = p.Transform + "(" + col + ")"
	}
	b.WriteString(col)
	b.WriteByte(' ')
	b.WriteString(string(p.Op))
	switch p.Op {
	case OpIsNull, OpIsNotNull:
	case OpBetween, OpNotBetween:
		if len(p.Values) == 2 {
			b.WriteString(" " + p.Values[0].String() + " and " + p.Values[1].String())
		}
	case OpIn, OpNotIn:
		b.WriteString(" (")
		for i, v := range p.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			if i == 8 && len(p.Values) > 10 {
				fmt.Fprintf(&b, "… %d more", len(p.Values)-8)
				break
			}
			b.WriteString(v.String())
		}
		b.WriteByte(')')
	default:
		for _, v := range p.Values {
			b.WriteString(" " + v.String())
		}
	}
	return b.String()
}

// String renders a value as a SQL literal of its kind.
func (v Value) String() string {
	switch v.Kind {
	case KindString:
		return "'" + strings.ReplaceAll(v.Text, "'", "''") + "'"
	case KindDate:
		return "date '" + v.Text + "'"
	case KindTimestamp:
		return "timestamp '" + v.Text + "'"
	case KindInterval:
		return "interval '" + v.Text + "'"
	case KindUnknown:
		return "unknown(" + v.Text + ")"
	}
	return v.Text
}

// negations maps each operator to the operator of its negation:
// NOT (c op x) is c Negate(op) x.
var negations = map[Op]Op{
	OpEq: OpNotEq, OpNotEq: OpEq,
	OpLt: OpGtEq, OpGtEq: OpLt,
	OpLtEq: OpGt, OpGt: OpLtEq,
	OpBetween: OpNotBetween, OpNotBetween: OpBetween,
	OpIn: OpNotIn, OpNotIn: OpIn,
	OpLike: OpNotLike, OpNotLike: OpLike,
	OpILike: OpNotILike, OpNotILike: OpILike,
	OpRLike: OpNotRLike, OpNotRLike: OpRLike,
	OpIsNull: OpIsNotNull, OpIsNotNull: OpIsNull,
}

// Negate returns the operator of NOT (c op x), and false when op has no
// negation among the operators (it is returned as it is).
func Negate(op Op) (Op, bool) {
	n, ok := negations[op]
	if !ok {
		return op, false
	}
	return n, true
}
