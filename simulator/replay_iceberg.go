package simulator

import (
	"github.com/apache/iceberg-go"
	pexpr "github.com/floe-project/floe/expr"
)

// ToIcebergExpr converts a predicate tree into an iceberg-go row filter over schema, for
// scan planning (tbl.Scan(table.WithRowFilter(expr))). It binds the tree exactly as
// replay does — columns case-insensitively, NOT pushed into the leaves, literals typed
// against the column, day/month/year/hour transforms turned into ranges of the column —
// and every term that cannot be expressed becomes "may match". ok is false when nothing
// of the filter could be expressed; expr is then iceberg.AlwaysTrue.
//
// Because NOTs are pushed down first, an unconvertible term never sits under a NOT, so
// replacing it by true keeps the filter conservative: no file that could hold a matching
// row is pruned.
func ToIcebergExpr(node *pexpr.Node, schema *iceberg.Schema) (iceberg.BooleanExpression, bool) {
	b := newBinding(schema)
	e := b.bind(node)
	if e.kind == exTrue {
		return iceberg.AlwaysTrue{}, false
	}
	return b.icebergExpr(e), true
}

func (b *binding) icebergExpr(e *expr) iceberg.BooleanExpression {
	switch e.kind {
	case exLeaf:
		return b.icebergLeaf(&e.leaf)
	case exAnd, exOr:
		kids := make([]iceberg.BooleanExpression, len(e.kids))
		for i, k := range e.kids {
			kids[i] = b.icebergExpr(k)
		}
		if len(kids) == 1 {
			return kids[0]
		}
		if e.kind == exAnd {
			return iceberg.NewAnd(kids[0], kids[1], kids[2:]...)
		}
		return iceberg.NewOr(kids[0], kids[1], kids[2:]...)
	}
	return iceberg.AlwaysTrue{}
}

var icebergOps = map[leafOp]iceberg.Operation{
	opLT: iceberg.OpLT, opLE: iceberg.OpLTEQ, opGT: iceberg.OpGT, opGE: iceberg.OpGTEQ,
	opEQ: iceberg.OpEQ, opNE: iceberg.OpNEQ, opStartsWith: iceberg.OpStartsWith,
	opNotStartsWith: iceberg.OpNotStartsWith,
}

func (b *binding) icebergLeaf(l *leaf) iceberg.BooleanExpression {
	ref := iceberg.Reference(b.cols[l.col].name)
	switch l.op {
	case opIsNull:
		return iceberg.IsNull(ref)
	case opNotNull:
		return iceberg.NotNull(ref)
	case opIn:
		return iceberg.SetPredicate(iceberg.OpIn, ref, l.lits)
	case opNotIn:
		return iceberg.SetPredicate(iceberg.OpNotIn, ref, l.lits)
	}
	return iceberg.LiteralPredicate(icebergOps[l.op], ref, l.lits[0])
}
