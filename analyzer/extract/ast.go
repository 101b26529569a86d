package extract

import (
	pexpr "github.com/floe-project/floe/expr"
	"strings"
)

// exprKind classifies an expression node of the internal syntax tree.
type exprKind uint8

const (
	eOther    exprKind = iota // anything the extractor keeps only as text
	eCol                      // identifier chain: [qualifier…] column [.field…]
	eLit                      // typed literal
	eParam                    // placeholder
	eFunc                     // function call (name lower case), also niladic current_date
	eCast                     // cast(x as t), x::t; name is the target type
	eBinary                   // arithmetic or other non-boolean binary operator
	eUnary                    // prefix operator
	eNot                      // NOT x
	eAnd                      // AND of args
	eOr                       // OR of args
	eCmp                      // comparison: op is =, !=, <, <=, >, >=
	eIn                       // args[0] [NOT] IN (args[1:]) or IN (sub)
	eBetween                  // args[0] [NOT] BETWEEN args[1] AND args[2]
	eIsNull                   // args[0] IS [NOT] NULL
	eLike                     // args[0] [NOT] LIKE/ILIKE/RLIKE args[1]
	eExists                   // EXISTS (sub)
	eSubquery                 // (sub) used as a value
	eTuple                    // (a, b, …)
	eStar                     // * or t.*
)

// expr is a node of the internal expression tree. Only what the extractor
// needs is kept; everything else becomes eOther with its source span.
type expr struct {
	kind     exprKind
	not      bool
	op       string
	name     string
	unit     string
	parts    []string
	args     []*expr
	sub      *query
	val      pexpr.Value
	pos, end int32
}

// fromKind classifies a FROM item.
type fromKind uint8

const (
	fTable   fromKind = iota // base table
	fCTE                     // reference to a WITH query
	fDerived                 // (subquery) alias
	fFunc                    // table function, UNNEST, VALUES, file, stage: not a table
	fSelf                    // recursive reference of a CTE to itself
)

// joinKind is how a FROM item joins the items before it.
type joinKind uint8

const (
	jInner joinKind = iota // also comma and CROSS
	jLeft
	jRight
	jFull
)

// fromItem is one relation in a FROM clause (or a DML target).
type fromItem struct {
	kind    fromKind
	parts   []string
	ref     TableRef
	alias   string
	cols    []string
	sub     *query
	cte     *cte
	args    []*expr
	join    joinKind
	on      *expr
	using   []string
	lateral bool
	scanned bool
}

// selItem is one item of a SELECT list.
type selItem struct {
	e     *expr
	alias string
	star  bool
	qual  []string
}

// block is one query block: SELECT … FROM … WHERE … GROUP BY … HAVING.
// DML statements are represented as a block too (UPDATE/DELETE/MERGE).
type block struct {
	items   []selItem
	from    []*fromItem
	where   *expr
	having  *expr
	qualify *expr
	// conds are boolean expressions whose leaves are reported but never
	// pushed to a scan (MERGE WHEN … AND cond).
	conds []*expr
	// others are expressions scanned only for subqueries (SELECT list,
	// GROUP BY, ORDER BY, SET assignments, …).
	others []*expr
	// values marks a VALUES list.
	values bool
}

// query is a query expression: UNION/INTERSECT/EXCEPT branches with the
// WITH list that scopes over them.
type query struct {
	ctes     []*cte
	branches []*block
	limit    bool
}

// cte is one WITH query.
type cte struct {
	name      string
	cols      []string
	q         *query
	refs      int
	parsing   bool
	recursive bool
	rel       *relInfo
	resolving bool
}

// stmt is one parsed statement.
type stmt struct {
	kind    string
	ctes    []*cte
	targets []TableRef // written, not read (INSERT, CTAS, CREATE, DDL)
	// cols are the columns of CREATE TABLE name (col type, …), nil
	// without a column list.
	cols []Column
	q    *query
	// nested are the statements of EXECUTE IMMEDIATE '…', parsed from src
	// (the unescaped string) found at offset base of the outer text.
	nested []*stmt
	src    string
	base   int32
}

// tableRefFromParts builds a TableRef from a dotted name as written.
func tableRefFromParts(d Dialect, parts []string) TableRef {
	var r TableRef
	if len(parts) == 0 {
		return r
	}
	if d == Spark && len(parts) >= 3 && pexpr.IsMetadataTable(parts[len(parts)-1]) {
		r.Metadata = strings.ToLower(parts[len(parts)-1])
		parts = parts[:len(parts)-1]
	}
	r.Name = parts[len(parts)-1]
	switch len(parts) {
	case 1:
	case 2:
		r.Namespace = parts[0]
	default:
		r.Catalog = parts[0]
		r.Namespace = strings.Join(parts[1:len(parts)-1], ".")
	}
	if r.Metadata == "" {
		if k := strings.LastIndexByte(r.Name, '$'); k > 0 && pexpr.IsMetadataTable(r.Name[k+1:]) {
			r.Metadata = strings.ToLower(r.Name[k+1:])
			r.Name = r.Name[:k]
		}
	}
	return r
}
