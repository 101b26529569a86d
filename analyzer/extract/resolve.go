package extract

import (
	"sort"
	"strconv"
	"strings"

	pexpr "github.com/floe-project/floe/expr"
)

// colTarget is a base-table column a column reference resolves to.
type colTarget struct {
	// scan is -1 when the column's table is not known (an unqualified
	// column of a CTE's FROM list of several tables): the column is then
	// reported under table "*" with its base name.
	scan   int
	column string
	// transform is the function a CTE or derived table applied to the
	// base column (SELECT date_trunc('day', ts) AS d …), "" when bare.
	transform string
	// fields are the struct fields below the top-level column that column
	// ends with (httprequest.clientip: column httprequest.clientip,
	// fields [clientip]).
	fields []string
	// push is false when a filter on the reference may not be evaluated
	// by the scan: correlated outer references, CTEs read more than once,
	// derived tables with LIMIT.
	push bool
}

// status of a column lookup.
type status uint8

const (
	stCols    status = iota // resolved to base columns (targets)
	stUnknown               // table not known: pexpr.Pred.Table is "*"
	stExpr                  // an expression of a derived table or a function output: opaque
)

// found is a three-valued answer to "does this relation have column c".
type found uint8

const (
	fNo found = iota
	fMaybe
	fYes
)

// relInfo describes the output columns of a resolved query (CTE or derived table).
type relInfo struct {
	branches []*blockOut
	push     bool
}

// blockOut describes the output columns of one query block.
type blockOut struct {
	cols  []outCol
	stars []starSrc
	sc    *scope
	// values is true for a VALUES list: its columns are literals.
	values bool
}

type outCol struct {
	name    string
	targets []colTarget
	st      status
}

// starSrc is a * (all items) or t.* (one item) in a SELECT list.
type starSrc struct {
	item int // -1: all items
	pos  int // position among the select items
}

// scope is the name scope of one query block.
type scope struct {
	parent *scope
	items  []*itemInfo
	// aliases are the block's SELECT items when the dialect lets WHERE and
	// QUALIFY refer to them (Snowflake, DuckDB).
	aliases []selItem
}

type itemInfo struct {
	fi       *fromItem
	scan     int
	rel      *relInfo
	push     bool
	nullable bool
}

// scanState accumulates the pushable conjuncts of one scan.
type scanState struct {
	table int
	conj  []*pexpr.Node
}

type posPred struct {
	pos int32
	seq int
	p   pexpr.Pred
}

type posJoin struct {
	pos int32
	j   Join
}

// resolver turns parsed statements into a Result.
type resolver struct {
	d   Dialect
	src string
	// base is added to source offsets of statements parsed from a string
	// literal (EXECUTE IMMEDIATE) so predicates stay in source order.
	base   int32
	tables []TableRef
	scans  []scanState
	preds  []posPred
	joins  []posJoin
	warns  *warnList
	// schemas knows the columns of base tables (nil: none); cols caches
	// its answers by table index, nil for a table it does not know.
	schemas Schemas
	cols    map[int]map[string]Column
	// neg is true while the leaves under an odd number of NOTs are
	// converted: the flat predicate list shows them negated.
	neg bool
}

// tableHas answers whether the base table of scan has column name: fMaybe
// when its schema is not known.
func (r *resolver) tableHas(scan int, name string) found {
	if r.schemas == nil || scan < 0 {
		return fMaybe
	}
	cols := r.tableCols(r.scans[scan].table)
	if cols == nil {
		return fMaybe
	}
	if _, ok := cols[strings.ToLower(name)]; ok {
		return fYes
	}
	return fNo
}

// tableCols returns the columns of table ti by lower-cased name, nil when
// its schema is not known.
func (r *resolver) tableCols(ti int) map[string]Column {
	if r.schemas == nil {
		return nil
	}
	if c, ok := r.cols[ti]; ok {
		return c
	}
	if r.cols == nil {
		r.cols = map[int]map[string]Column{}
	}
	ref := r.tables[ti]
	ref.Alias, ref.AsOf, ref.Write = "", "", false
	var m map[string]Column
	if ref.Metadata == "" {
		if list, ok := r.schemas.Columns(ref); ok {
			m = make(map[string]Column, len(list))
			for _, c := range list {
				m[strings.ToLower(c.Name)] = c
			}
		}
	}
	r.cols[ti] = m
	return m
}

func (r *resolver) addTable(ref TableRef) int {
	for i, t := range r.tables {
		if t.Catalog == ref.Catalog && t.Namespace == ref.Namespace && t.Name == ref.Name &&
			t.Alias == ref.Alias && t.Metadata == ref.Metadata && t.AsOf == ref.AsOf {
			if ref.Write {
				r.tables[i].Write = true
			}
			return i
		}
	}
	r.tables = append(r.tables, ref)
	return len(r.tables) - 1
}

func (r *resolver) statement(st *stmt) {
	for _, n := range st.nested {
		src, base := r.src, r.base
		r.src, r.base = n.src, n.base
		r.statement(n)
		r.src, r.base = src, base
	}
	for _, t := range st.targets {
		r.addTable(t)
	}
	for _, c := range st.ctes {
		r.cte(c)
	}
	if st.q != nil {
		r.query(st.q, nil)
	}
}

func (r *resolver) cte(c *cte) {
	if c.rel != nil || c.q == nil {
		return
	}
	c.resolving = true
	c.rel = r.query(c.q, nil)
	c.resolving = false
	if c.refs > 1 || c.recursive {
		// A filter on a CTE read twice may not restrict its one scan, and
		// one on a recursive CTE may not restrict its anchor.
		c.rel.push = false
	}
}

func (r *resolver) query(q *query, parent *scope) *relInfo {
	neg := r.neg
	r.neg = false // NOT EXISTS (… WHERE a = 1) does not negate a = 1
	defer func() { r.neg = neg }()
	for _, c := range q.ctes {
		r.cte(c)
	}
	rel := &relInfo{push: !q.limit}
	for _, b := range q.branches {
		rel.branches = append(rel.branches, r.block(b, parent))
	}
	return rel
}

// block resolves one query block: its FROM items, then its conditions.
func (r *resolver) block(b *block, parent *scope) *blockOut {
	sc := &scope{parent: parent}
	for _, fi := range b.from {
		it := &itemInfo{fi: fi, scan: -1, push: true}
		switch fi.kind {
		case fTable:
			ref := fi.ref
			ref.Alias = fi.alias
			ti := r.addTable(ref)
			r.scans = append(r.scans, scanState{table: ti})
			it.scan = len(r.scans) - 1
		case fCTE:
			r.cte(fi.cte)
			it.rel = fi.cte.rel
		case fDerived:
			ps := parent
			if fi.lateral {
				ps = sc
			}
			it.rel = r.query(fi.sub, ps)
		case fFunc:
			for _, a := range fi.args {
				r.walk(a, sc)
			}
		}
		sc.items = append(sc.items, it)
	}
	// Outer joins: which items may be null-extended.
	for i, fi := range b.from {
		switch fi.join {
		case jLeft:
			sc.items[i].nullable = true
		case jRight:
			for k := 0; k < i; k++ {
				sc.items[k].nullable = true
			}
		case jFull:
			for k := 0; k <= i; k++ {
				sc.items[k].nullable = true
			}
		}
	}
	if r.d == Snowflake || r.d == DuckDB {
		sc.aliases = b.items
	}
	// JOIN … ON conditions, pushable to the items the join type allows.
	for i, fi := range b.from {
		for _, c := range fi.using {
			_, _, lt, _ := r.pick(sc.items[:i], c, nil)
			_, rt, _ := r.lookupItem(sc.items[i], c, nil)
			r.addJoin(0, colTermResult{}, lt, c, colTermResult{}, rt, c)
		}
		if fi.on == nil {
			continue
		}
		allowed := make([]bool, len(sc.items))
		switch fi.join {
		case jInner:
			for k := 0; k <= i; k++ {
				allowed[k] = true
			}
		case jLeft:
			allowed[i] = true
		case jRight:
			for k := 0; k < i; k++ {
				allowed[k] = true
			}
		}
		r.cond(fi.on, sc, allowed, false)
	}
	all := make([]bool, len(sc.items))
	for i := range all {
		all[i] = true
	}
	if b.where != nil {
		r.cond(b.where, sc, all, true)
	}
	if b.having != nil {
		r.cond(b.having, sc, all, true)
	}
	if b.qualify != nil {
		r.cond(b.qualify, sc, nil, false)
	}
	for _, c := range b.conds {
		r.cond(c, sc, nil, false)
	}
	for _, e := range b.others {
		r.walk(e, sc)
	}
	// Output columns for derived tables and CTEs.
	out := &blockOut{sc: sc, values: b.values}
	for i, it := range b.items {
		if it.star {
			src := starSrc{item: -1, pos: i}
			if len(it.qual) > 0 {
				src.item = r.findItem(sc, it.qual)
			}
			out.stars = append(out.stars, src)
			out.cols = append(out.cols, outCol{})
			continue
		}
		oc := outCol{name: it.alias, st: stExpr}
		if it.e != nil && it.e.kind == eCol && oc.name == "" {
			oc.name = it.e.parts[len(it.e.parts)-1]
		}
		if ct, ok := colTerm(it.e); ok {
			oc.targets, oc.st = r.outTargets(sc, ct)
		}
		out.cols = append(out.cols, oc)
	}
	return out
}

// outTargets resolves the column term of a SELECT item to the base
// columns it reads, with the term's transform; a column whose table is
// not known keeps its base name under table "*".
func (r *resolver) outTargets(sc *scope, ct colTermResult) ([]colTarget, status) {
	_, targets, st, name := r.resolveCol(sc, ct.col.parts)
	switch {
	case st == stExpr:
		return nil, stExpr
	case len(targets) == 0:
		return []colTarget{{scan: -1, column: name, transform: ct.transform}}, stCols
	}
	out := make([]colTarget, len(targets))
	for k, t := range targets {
		t.transform = composeName(t.transform, ct.transform)
		out[k] = t
	}
	return out, st
}

// composeName is the transform of outer applied to a column that already
// has transform inner: a cast keeps the inner transform.
func composeName(inner, outer string) string {
	if outer == "" || outer == "cast" && inner != "" {
		return inner
	}
	return outer
}

// findItem returns the index of the item a qualifier names, or -1.
func (r *resolver) findItem(sc *scope, qual []string) int {
	for i, it := range sc.items {
		if matchQualifier(it, qual) {
			return i
		}
	}
	return -1
}

// matchQualifier reports whether qual (1–3 parts) names the item.
func matchQualifier(it *itemInfo, qual []string) bool {
	fi := it.fi
	if fi.alias != "" {
		return len(qual) == 1 && strings.EqualFold(fi.alias, qual[0])
	}
	switch fi.kind {
	case fTable:
		if len(qual) > len(fi.parts) {
			return false
		}
		off := len(fi.parts) - len(qual)
		for k, q := range qual {
			if !strings.EqualFold(fi.parts[off+k], q) {
				return false
			}
		}
		return true
	case fCTE, fSelf:
		return len(qual) == 1 && strings.EqualFold(fi.cte.name, qual[0])
	}
	return false
}

// lookupItem answers whether item it has column name and what it maps to.
func (r *resolver) lookupItem(it *itemInfo, name string, rest []string) (found, []colTarget, status) {
	fi := it.fi
	switch fi.kind {
	case fTable:
		col := name
		if len(rest) > 0 {
			col = name + "." + strings.Join(rest, ".")
		}
		// Qualified references keep the target even when the schema lacks
		// the column: the caller drops or keeps it by its own schema.
		return r.tableHas(it.scan, name), []colTarget{{scan: it.scan, column: col, push: true, fields: rest}}, stCols
	case fCTE, fDerived:
		if it.rel == nil {
			return fMaybe, nil, stUnknown
		}
		cols := fi.cols
		if fi.kind == fCTE && len(cols) == 0 {
			cols = fi.cte.cols
		}
		return r.lookupRel(it.rel, cols, name, rest, 0)
	default:
		cols := fi.cols
		if fi.kind == fSelf && len(cols) == 0 {
			cols = fi.cte.cols
		}
		if len(cols) == 0 {
			return fMaybe, nil, stExpr
		}
		for _, c := range cols {
			if strings.EqualFold(c, name) {
				return fYes, nil, stExpr
			}
		}
		return fNo, nil, stExpr
	}
}

// lookupRel finds a column among a query's outputs, through every UNION
// branch: by position when the reference names a column of an alias list
// or of the first branch's explicit SELECT list, else by name in each
// branch (through its * items).
func (r *resolver) lookupRel(rel *relInfo, aliases []string, name string, rest []string, depth int) (found, []colTarget, status) {
	if len(rel.branches) == 0 || depth > 50 {
		return fMaybe, nil, stUnknown
	}
	pos := -1
	if len(aliases) > 0 {
		for k, a := range aliases {
			if strings.EqualFold(a, name) {
				pos = k
				break
			}
		}
		if pos < 0 {
			return fNo, nil, stUnknown
		}
	} else if b0 := rel.branches[0]; len(b0.stars) == 0 {
		pos = r.branchPos(b0, name)
		if pos < 0 && !b0.values {
			return fNo, nil, stUnknown
		}
	}
	var targets []colTarget
	res, st := fYes, stCols
	for _, bo := range rel.branches {
		if bo.values {
			return fYes, nil, stExpr
		}
		var oc *outCol
		switch {
		case pos >= 0 && len(bo.stars) == 0 && pos < len(bo.cols):
			oc = &bo.cols[pos]
		case len(aliases) == 0:
			if p := r.branchPos(bo, name); p >= 0 {
				oc = &bo.cols[p]
			}
		}
		if oc == nil {
			if len(aliases) > 0 || len(bo.stars) == 0 {
				// Renamed columns of a SELECT *, or a branch without the
				// name: the base column is not known.
				st = stUnknown
				continue
			}
			f, t, s := r.lookupStars(bo, name, rest, rel.push, depth)
			switch {
			case f == fNo:
				st = stUnknown
			case s == stExpr:
				return fYes, nil, stExpr
			default:
				if f == fMaybe {
					res = fMaybe
				}
				if s == stUnknown {
					st = stUnknown
				}
				targets = append(targets, t...)
			}
			continue
		}
		switch oc.st {
		case stExpr:
			return fYes, nil, stExpr
		case stUnknown:
			st = stUnknown
		}
		for _, t := range oc.targets {
			if len(rest) > 0 {
				t.column += "." + strings.Join(rest, ".")
				t.fields = append(append([]string(nil), t.fields...), rest...)
			}
			t.push = t.push && rel.push
			targets = append(targets, t)
		}
	}
	if len(targets) > 0 {
		// Report what is known; pushing stays per target.
		return res, targets, stCols
	}
	return res, nil, st
}

func (r *resolver) branchPos(bo *blockOut, name string) int {
	for k := len(bo.cols) - 1; k >= 0; k-- {
		if bo.cols[k].name != "" && strings.EqualFold(bo.cols[k].name, name) {
			return k
		}
	}
	return -1
}

// lookupStars resolves a name through the * items of a block.
func (r *resolver) lookupStars(bo *blockOut, name string, rest []string, push bool, depth int) (found, []colTarget, status) {
	var cands []*itemInfo
	for _, s := range bo.stars {
		if s.item >= 0 {
			cands = append(cands, bo.sc.items[s.item])
		} else {
			cands = append(cands, bo.sc.items...)
		}
	}
	if len(cands) == 0 {
		return fNo, nil, stUnknown
	}
	f, it, targets, st := r.pick(cands, name, rest)
	if it == nil {
		return f, nil, stUnknown
	}
	out := make([]colTarget, len(targets))
	for k, t := range targets {
		t.push = t.push && push
		out[k] = t
	}
	return f, out, st
}

// pick applies the unqualified-column rule to candidate items: the single
// item that certainly has the column, or, when none certainly has it, the
// single item that may.
func (r *resolver) pick(items []*itemInfo, name string, rest []string) (found, *itemInfo, []colTarget, status) {
	var yes, maybe *itemInfo
	nYes, nMaybe := 0, 0
	var yt, mt []colTarget
	var ys, ms status
	for _, it := range items {
		f, t, s := r.lookupItem(it, name, rest)
		switch f {
		case fYes:
			nYes++
			yes, yt, ys = it, t, s
		case fMaybe:
			nMaybe++
			maybe, mt, ms = it, t, s
		}
	}
	switch {
	case nYes == 1:
		// A name declared by exactly one item (column alias list, derived
		// output) is that item's: were a base table to have it too, the
		// engine would have rejected the query as ambiguous.
		return fYes, yes, yt, ys
	case nYes == 0 && nMaybe == 1:
		return fMaybe, maybe, mt, ms
	case nYes == 0 && nMaybe == 0:
		return fNo, nil, nil, stUnknown
	}
	if nYes > 1 {
		r.ambiguous(items, name)
	}
	return fMaybe, nil, nil, stUnknown
}

// resolveCol resolves a column reference in scope sc. It returns the index
// of the item in sc it belongs to (-1 for outer scopes or none), the base
// columns, the status, and the column name to report when unresolved.
func (r *resolver) resolveCol(sc *scope, parts []string) (int, []colTarget, status, string) {
	whole := strings.Join(parts, ".")
	outer := false
	for s := sc; s != nil; s = s.parent {
		for k := min(len(parts)-1, 3); k >= 1; k-- {
			for i, it := range s.items {
				if !matchQualifier(it, parts[:k]) {
					continue
				}
				_, t, st := r.lookupItem(it, parts[k], parts[k+1:])
				idx := i
				if outer {
					idx = -1
					t = noPush(t)
				}
				return idx, t, st, strings.Join(parts[k:], ".")
			}
		}
		outer = true
	}
	outer = false
	for s := sc; s != nil; s = s.parent {
		f, it, t, st := r.pick(s.items, parts[0], parts[1:])
		if f == fNo && it == nil {
			outer = true
			continue
		}
		if it == nil {
			return -1, nil, stUnknown, whole
		}
		idx := -1
		if !outer {
			for i, x := range s.items {
				if x == it {
					idx = i
				}
			}
		} else {
			t = noPush(t)
		}
		return idx, t, st, whole
	}
	return -1, nil, stUnknown, whole
}

// ambiguous warns that more than one of items has column name.
func (r *resolver) ambiguous(items []*itemInfo, name string) {
	var in []string
	for _, it := range items {
		if f, _, _ := r.lookupItem(it, name, nil); f != fYes {
			continue
		}
		switch {
		case it.fi.alias != "":
			in = append(in, it.fi.alias)
		case it.scan >= 0:
			in = append(in, r.tables[r.scans[it.scan].table].QualifiedName())
		case it.fi.cte != nil:
			in = append(in, it.fi.cte.name)
		}
	}
	r.warns.add("ambiguous column " + name + ": in " + strings.Join(in, " and "))
}

func noPush(t []colTarget) []colTarget {
	out := make([]colTarget, len(t))
	for k, x := range t {
		x.push = false
		out[k] = x
	}
	return out
}

// bnode is the internal boolean tree: leaves keep their resolution.
type bnode struct {
	kind    pexpr.NodeKind
	kids    []*bnode
	pred    pexpr.Pred
	targets []colTarget
	item    int
}

// cond converts a boolean expression, records its predicate leaves and
// pushes its restriction to every scan it may filter. allowed lists the
// items whose scans may receive it (nil: none); where marks WHERE/HAVING,
// where null-extended items must not receive null-accepting leaves.
func (r *resolver) cond(e *expr, sc *scope, allowed []bool, where bool) {
	n := r.toNode(e, sc)
	if n == nil || allowed == nil {
		return
	}
	var seen []int
	collectScans(n, &seen)
	for _, s := range seen {
		if node, ok := r.restrict(n, s, sc, allowed, where); ok && node != nil {
			r.scans[s].conj = append(r.scans[s].conj, node)
		}
	}
}

func collectScans(n *bnode, seen *[]int) {
	if n.kind == pexpr.NodePred {
		for _, t := range n.targets {
			if !t.push {
				continue
			}
			dup := false
			for _, s := range *seen {
				if s == t.scan {
					dup = true
				}
			}
			if !dup {
				*seen = append(*seen, t.scan)
			}
		}
		return
	}
	for _, k := range n.kids {
		collectScans(k, seen)
	}
}

// leafFor returns the pexpr.Node of leaf n restricted to scan s, or nil when the
// leaf says nothing about s.
func (r *resolver) leafFor(n *bnode, s int, sc *scope, allowed []bool, where bool) *pexpr.Node {
	if n.kind != pexpr.NodePred || n.item < 0 || n.item >= len(allowed) || !allowed[n.item] {
		return nil
	}
	if where && sc.items[n.item].nullable && (n.pred.Op == pexpr.OpIsNull || n.pred.Transform == "coalesce") {
		return nil
	}
	for _, t := range n.targets {
		if t.scan == s && t.push {
			p := r.targetPred(n.pred, t)
			return &pexpr.Node{Kind: pexpr.NodePred, Pred: &p}
		}
	}
	return nil
}

// restrict weakens n to what scan s alone can evaluate: leaves of other
// tables and opaque terms become TRUE (ok=false means TRUE). Under NOT only
// an exact subtree (all leaves on s) is kept.
func (r *resolver) restrict(n *bnode, s int, sc *scope, allowed []bool, where bool) (*pexpr.Node, bool) {
	switch n.kind {
	case pexpr.NodePred:
		if l := r.leafFor(n, s, sc, allowed, where); l != nil {
			return l, true
		}
		return nil, false
	case pexpr.NodeAnd:
		var kids []*pexpr.Node
		for _, k := range n.kids {
			if x, ok := r.restrict(k, s, sc, allowed, where); ok {
				kids = append(kids, x)
			}
		}
		switch len(kids) {
		case 0:
			return nil, false
		case 1:
			return kids[0], true
		}
		return &pexpr.Node{Kind: pexpr.NodeAnd, Children: kids}, true
	case pexpr.NodeOr:
		kids := make([]*pexpr.Node, 0, len(n.kids))
		for _, k := range n.kids {
			x, ok := r.restrict(k, s, sc, allowed, where)
			if !ok {
				return nil, false
			}
			kids = append(kids, x)
		}
		return &pexpr.Node{Kind: pexpr.NodeOr, Children: kids}, true
	case pexpr.NodeNot:
		if x, ok := r.exact(n.kids[0], s, sc, allowed, where); ok {
			return &pexpr.Node{Kind: pexpr.NodeNot, Children: []*pexpr.Node{x}}, true
		}
	}
	return nil, false
}

// exact converts n for scan s only when every leaf belongs to s.
func (r *resolver) exact(n *bnode, s int, sc *scope, allowed []bool, where bool) (*pexpr.Node, bool) {
	switch n.kind {
	case pexpr.NodePred:
		l := r.leafFor(n, s, sc, allowed, where)
		return l, l != nil
	case pexpr.NodeAnd, pexpr.NodeOr, pexpr.NodeNot:
		kids := make([]*pexpr.Node, 0, len(n.kids))
		for _, k := range n.kids {
			x, ok := r.exact(k, s, sc, allowed, where)
			if !ok {
				return nil, false
			}
			kids = append(kids, x)
		}
		return &pexpr.Node{Kind: n.kind, Children: kids}, true
	}
	return nil, false
}

// walk resolves the subqueries inside a non-boolean expression.
func (r *resolver) walk(e *expr, sc *scope) {
	if e == nil {
		return
	}
	if e.sub != nil {
		r.query(e.sub, sc)
	}
	for _, a := range e.args {
		r.walk(a, sc)
	}
}

// toNode converts a boolean expression into a bnode tree, emitting its
// predicate leaves.
func (r *resolver) toNode(e *expr, sc *scope) *bnode {
	if e == nil {
		return nil
	}
	switch e.kind {
	case eAnd, eOr, eNot:
	default:
		// Leaf-level expressions: resolve their subqueries exactly once.
		r.walk(e, sc)
	}
	switch e.kind {
	case eAnd, eOr:
		k := pexpr.NodeAnd
		if e.kind == eOr {
			k = pexpr.NodeOr
		}
		n := &bnode{kind: k}
		for _, a := range e.args {
			c := r.toNode(a, sc)
			if c == nil {
				continue
			}
			if c.kind == k {
				n.kids = append(n.kids, c.kids...)
			} else {
				n.kids = append(n.kids, c)
			}
		}
		if len(n.kids) == 1 {
			return n.kids[0]
		}
		if len(n.kids) == 0 {
			return nil
		}
		return n
	case eNot:
		r.neg = !r.neg
		c := r.toNode(e.args[0], sc)
		r.neg = !r.neg
		if c == nil {
			return nil
		}
		return &bnode{kind: pexpr.NodeNot, kids: []*bnode{c}}
	case eCmp:
		l, rr := e.args[0], e.args[1]
		op := pexpr.Op(e.op)
		if op == pexpr.OpEq {
			r.joinLeaf(e, l, rr, sc)
		}
		if _, ok := colTerm(l); !ok {
			if _, ok2 := colTerm(rr); ok2 {
				l, rr = rr, l
				op = reverseOp(op)
			}
		}
		if n := r.leaf(e, l, op, []*expr{rr}, sc); n != nil {
			return n
		}
	case eIn:
		op := pexpr.OpIn
		if e.not {
			op = pexpr.OpNotIn
		}
		if e.sub != nil {
			if n := r.leafValues(e, e.args[0], op, []pexpr.Value{{Kind: pexpr.KindUnknown, Text: "(subquery)"}}, sc); n != nil {
				return n
			}
			break
		}
		if n := r.leaf(e, e.args[0], op, e.args[1:], sc); n != nil {
			return n
		}
	case eBetween:
		op := pexpr.OpBetween
		if e.not {
			op = pexpr.OpNotBetween
		}
		if n := r.leaf(e, e.args[0], op, e.args[1:], sc); n != nil {
			return n
		}
	case eIsNull:
		op := pexpr.OpIsNull
		if e.not {
			op = pexpr.OpIsNotNull
		}
		if n := r.leaf(e, e.args[0], op, nil, sc); n != nil {
			return n
		}
	case eLike:
		op := pexpr.Op(e.op)
		if e.not {
			switch op {
			case pexpr.OpLike:
				op = pexpr.OpNotLike
			case pexpr.OpILike:
				op = pexpr.OpNotILike
			default:
				op = pexpr.OpNotRLike
			}
		}
		if n := r.leaf(e, e.args[0], op, e.args[1:], sc); n != nil {
			return n
		}
	case eCol:
		if n := r.leafValues(e, e, pexpr.OpEq, []pexpr.Value{{Kind: pexpr.KindBool, Text: "true"}}, sc); n != nil {
			return n
		}
	case eFunc:
		switch e.name {
		case "regexp_like", "rlike", "regexp_matches", "regexp", "starts_with", "startswith", "like", "ilike", "contains":
			// contains() is array membership in Trino and Athena, a
			// substring test elsewhere.
			if len(e.args) == 2 && !(e.name == "contains" && (r.d == Trino || r.d == Athena)) {
				if v, ok := r.value(e.args[1]); ok {
					op := pexpr.OpRLike
					switch e.name {
					case "starts_with", "startswith":
						op = pexpr.OpLike
						if v.Kind == pexpr.KindString {
							v.Text = escapeLike(v.Text) + "%"
						}
					case "like":
						op = pexpr.OpLike
					case "ilike":
						op = pexpr.OpILike
					case "contains":
						op = pexpr.OpLike
						if v.Kind == pexpr.KindString {
							v.Text = "%" + escapeLike(v.Text) + "%"
						}
					}
					if n := r.leafValues(e, e.args[0], op, []pexpr.Value{v}, sc); n != nil {
						return n
					}
				}
			}
		}
	}
	return &bnode{kind: pexpr.NodeOpaque, item: -1}
}

func escapeLike(s string) string {
	if !strings.ContainsAny(s, "%_") {
		return s
	}
	return strings.NewReplacer("%", `\%`, "_", `\_`).Replace(s)
}

func reverseOp(op pexpr.Op) pexpr.Op {
	switch op {
	case pexpr.OpLt:
		return pexpr.OpGt
	case pexpr.OpLtEq:
		return pexpr.OpGtEq
	case pexpr.OpGt:
		return pexpr.OpLt
	case pexpr.OpGtEq:
		return pexpr.OpLtEq
	}
	return op
}

// snippet is the source text of e for opaque nodes, shortened.
func (r *resolver) snippet(e *expr) string {
	if e.pos < 0 || int(e.end) > len(r.src) || e.pos > e.end {
		return ""
	}
	s := strings.Join(strings.Fields(r.src[e.pos:e.end]), " ")
	if len(s) > 120 {
		cut := 117
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// leaf builds a predicate leaf from a column operand and value operands.
// It returns nil when the operands are not column-vs-literals.
func (r *resolver) leaf(e, col *expr, op pexpr.Op, vals []*expr, sc *scope) *bnode {
	values := make([]pexpr.Value, 0, len(vals))
	for _, v := range vals {
		x, ok := r.value(v)
		if !ok {
			return nil
		}
		values = append(values, x)
	}
	return r.leafValues(e, col, op, values, sc)
}

func (r *resolver) leafValues(e, col *expr, op pexpr.Op, values []pexpr.Value, sc *scope) *bnode {
	ct, ok := colTerm(col)
	if !ok {
		return nil
	}
	if len(ct.col.parts) == 1 && sc.aliases != nil {
		var isExpr bool
		if ct, isExpr = aliasTerm(sc, ct); isExpr {
			return &bnode{kind: pexpr.NodeOpaque, item: -1}
		}
	}
	item, targets, st, name := r.resolveCol(sc, ct.col.parts)
	if st == stExpr {
		return &bnode{kind: pexpr.NodeOpaque, item: -1}
	}
	if values == nil {
		values = []pexpr.Value{}
	}
	n := &bnode{kind: pexpr.NodePred, item: item, targets: targets,
		pred: pexpr.Pred{Column: name, Op: op, Values: values, Transform: ct.transform}}
	flat := n.pred
	if r.neg {
		// The tree keeps the NOT; the flat list shows the leaf as it filters.
		flat.Op, _ = pexpr.Negate(flat.Op)
	}
	if len(targets) == 0 {
		p := flat
		p.Table = "*"
		r.preds = append(r.preds, posPred{pos: r.base + e.pos, seq: len(r.preds), p: p})
	}
	for _, t := range targets {
		r.preds = append(r.preds, posPred{pos: r.base + e.pos, seq: len(r.preds), p: r.targetPred(flat, t)})
	}
	return n
}

// targetPred is leaf p on base column t.
func (r *resolver) targetPred(p pexpr.Pred, t colTarget) pexpr.Pred {
	p.Table = "*"
	if t.scan >= 0 {
		p.Table = r.tables[r.scans[t.scan].table].QualifiedName()
	}
	p.Column = t.column
	p.Transform = composeName(t.transform, p.Transform)
	if t.scan >= 0 && p.Transform == "" && len(t.fields) == 0 {
		if c, ok := r.tableCols(r.scans[t.scan].table)[strings.ToLower(t.column)]; ok {
			p.Values = retype(c.Type, p.Values)
		}
	}
	if n := len(t.fields); n > 0 {
		nested := strings.Join(t.fields, ".")
		if top, ok := strings.CutSuffix(t.column, "."+nested); ok && top != "" {
			p.Path = append([]string{top}, t.fields...)
		}
	}
	return p
}

// aliasTerm replaces a reference to a select-list alias by the aliased
// column term (SELECT date_trunc('day', ts) AS d … WHERE d > … is day(ts)).
// isExpr is true when the alias names an expression that is not a column
// term (count(*) AS n): the comparison is then not a column predicate.
func aliasTerm(sc *scope, ct colTermResult) (colTermResult, bool) {
	name := ct.col.parts[0]
	for _, it := range sc.aliases {
		if it.e == nil || it.alias == "" || !strings.EqualFold(it.alias, name) {
			continue
		}
		at, ok := colTerm(it.e)
		if !ok {
			return ct, true
		}
		if at.col == ct.col {
			return ct, false
		}
		if ct.transform != "" {
			at = compose(at, ct.transform)
		}
		return at, false
	}
	return ct, false
}

// joinLeaf records l = r when both sides are column terms of different
// table references.
func (r *resolver) joinLeaf(e, l, rr *expr, sc *scope) {
	lc, ok1 := colTerm(l)
	rc, ok2 := colTerm(rr)
	if !ok1 || !ok2 {
		return
	}
	_, lt, lst, ln := r.resolveCol(sc, lc.col.parts)
	_, rt, rst, rn := r.resolveCol(sc, rc.col.parts)
	if lst == stExpr || rst == stExpr {
		return
	}
	r.addJoin(e.pos, lc, lt, ln, rc, rt, rn)
}

// maxJoinFanOut bounds the joins one equality through UNION ALL derived
// tables fans out to.
const maxJoinFanOut = 64

// addJoin records a join between every target of one side and every
// target of the other (a side read through a UNION ALL derived table has
// one per branch), or "*" for a side with none.
func (r *resolver) addJoin(pos int32, lc colTermResult, lt []colTarget, ln string, rc colTermResult, rt []colTarget, rn string) {
	if len(lt) == 0 {
		lt = []colTarget{{scan: -1, column: ln}}
	}
	if len(rt) == 0 {
		rt = []colTarget{{scan: -1, column: rn}}
	}
	n := 0
	for _, l := range lt {
		for _, rr := range rt {
			if n == maxJoinFanOut {
				r.warns.add("join fans out to more than " + strconv.Itoa(maxJoinFanOut) + " table pairs: the rest omitted")
				return
			}
			n++
			r.addJoinPair(pos, lc, l, rc, rr)
		}
	}
}

func (r *resolver) addJoinPair(pos int32, lc colTermResult, lt colTarget, rc colTermResult, rt colTarget) {
	if lt.scan >= 0 && lt.scan == rt.scan {
		return // a filter within one table reference, not a join
	}
	left := r.joinSide(lt, lc.transform)
	right := r.joinSide(rt, rc.transform)
	if lt.scan >= 0 && rt.scan >= 0 && left.Table == right.Table {
		// A self-join: the aliases tell cs1.cs_order_number from cs2's.
		left.Alias = r.tables[r.scans[lt.scan].table].Alias
		right.Alias = r.tables[r.scans[rt.scan].table].Alias
	}
	// Order the sides so that a = b and b = a are one join.
	if right.Table < left.Table || right.Table == left.Table && (right.Column < left.Column ||
		right.Column == left.Column && right.Alias < left.Alias) {
		left, right = right, left
	}
	j := Join{Left: left, Right: right}
	for _, x := range r.joins {
		if x.j == j {
			return
		}
	}
	r.joins = append(r.joins, posJoin{pos: r.base + pos, j: j})
}

func (r *resolver) joinSide(t colTarget, transform string) ColumnRef {
	c := ColumnRef{Table: "*", Column: t.column, Transform: composeName(t.transform, transform)}
	if t.scan >= 0 {
		c.Table = r.tables[r.scans[t.scan].table].QualifiedName()
	}
	return c
}

// colTermResult is a column with the transform applied to it.
type colTermResult struct {
	col       *expr
	transform string
}

// colTerm recognizes a column, possibly wrapped in casts and single-column
// functions, and returns the column and its normalized transform.
func colTerm(e *expr) (colTermResult, bool) {
	if e == nil {
		return colTermResult{}, false
	}
	switch e.kind {
	case eCol:
		return colTermResult{col: e}, true
	case eCast:
		in, ok := colTerm(e.args[0])
		if !ok {
			return in, false
		}
		return compose(in, castTransform(e.name)), true
	case eBinary:
		// A column in arithmetic with constants (ts / 1000, d + 1): a
		// transform of the column, as long as the other side has none.
		if len(e.args) != 2 || !arithOps[e.op] {
			return colTermResult{}, false
		}
		for k, a := range e.args {
			if in, ok := colTerm(a); ok && !hasColumn(e.args[1-k]) {
				return compose(in, "arith"), true
			}
		}
		return colTermResult{}, false
	case eFunc:
		if e.op == "over" || aggregates[e.name] {
			return colTermResult{}, false
		}
		colArg := -1
		for k, a := range e.args {
			if isUnitArg(e.name, a) {
				continue
			}
			if _, ok := colTerm(a); ok {
				if colArg >= 0 {
					return colTermResult{}, false
				}
				colArg = k
			} else if hasColumn(a) {
				return colTermResult{}, false
			}
		}
		if colArg < 0 {
			return colTermResult{}, false
		}
		in, _ := colTerm(e.args[colArg])
		t := funcTransform(e, colArg)
		if t == "" {
			return colTermResult{}, false
		}
		if t == "cast" && in.transform == "arith" {
			t = e.name // from_unixtime(ts / 1000): the function names the transform
		}
		return compose(in, t), true
	}
	return colTermResult{}, false
}

func compose(in colTermResult, outer string) colTermResult {
	if outer == "cast" && in.transform != "" {
		return in
	}
	in.transform = outer
	return in
}

// arithOps are the operators of arithmetic a column term may sit in.
var arithOps = map[string]bool{"+": true, "-": true, "*": true, "/": true}

// hasColumn reports whether e refers to any column.
func hasColumn(e *expr) bool {
	if e == nil {
		return false
	}
	if e.kind == eCol {
		return true
	}
	if e.kind == eSubquery || e.kind == eExists {
		return true
	}
	for _, a := range e.args {
		if e.kind == eFunc && isUnitArg(e.name, a) {
			continue
		}
		if hasColumn(a) {
			return true
		}
	}
	return false
}

// dateFuncs take a date-part keyword argument (DATEADD(day, 1, ts),
// DATE_TRUNC(MONTH, ts)) that parses like a column name.
var dateFuncs = map[string]bool{
	"date_trunc": true, "datetrunc": true, "date_part": true, "datepart": true, "dateadd": true,
	"datediff": true, "date_diff": true, "date_add": true, "date_sub": true, "timestampadd": true,
	"timestampdiff": true, "timestamp_trunc": true, "trunc": true, "time_slice": true, "last_day": true,
	"timediff": true, "timeadd": true, "timestamp_diff": true,
}

// isUnitArg reports whether a is the unit keyword of a date function.
func isUnitArg(fn string, a *expr) bool {
	return dateFuncs[fn] && a.kind == eCol && len(a.parts) == 1 && pexpr.IsUnit(strings.ToLower(a.parts[0]))
}

var aggregates = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "stddev": true, "stddev_pop": true,
	"stddev_samp": true, "variance": true, "var_pop": true, "var_samp": true, "approx_distinct": true,
	"approx_count_distinct": true, "approx_percentile": true, "array_agg": true, "listagg": true,
	"string_agg": true, "collect_list": true, "collect_set": true, "any_value": true, "arbitrary": true,
	"first": true, "last": true, "first_value": true, "last_value": true, "count_if": true, "countif": true,
	"bool_and": true, "bool_or": true, "every": true, "median": true, "percentile": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true, "row_number": true, "rank": true,
	"dense_rank": true, "lag": true, "lead": true, "ntile": true, "max_by": true, "min_by": true,
	"group_concat": true, "histogram": true, "map_agg": true, "corr": true, "covar_pop": true,
	"covar_samp": true, "hll_count": true, "approx_top_k": true, "kurtosis": true, "skewness": true,
	"grouping": true, "sum_if": true, "avg_if": true, "array_union_agg": true, "objectagg": true, "object_agg": true,
}

// castTransform maps a cast target type to a transform.
func castTransform(typ string) string {
	if typ == "date" {
		return "day"
	}
	return "cast"
}

// funcTransform returns the normalized transform of function e applied to
// its argument colArg, or "" when e is not a transform of a column.
func funcTransform(e *expr, colArg int) string {
	switch e.name {
	case "date_trunc", "datetrunc", "timestamp_trunc", "time_bucket", "date_bin":
		// unit first (Trino, Spark, DuckDB, Snowflake) or last (BigQuery style).
		for k, a := range e.args {
			if k == colArg {
				continue
			}
			if u := unitOf(a); u != "" {
				return u
			}
		}
		return "date_trunc"
	case "trunc", "truncate":
		if len(e.args) == 2 {
			if u := unitOf(e.args[1-colArg]); u != "" && pexpr.IsUnit(u) {
				return u
			}
			return "truncate"
		}
		return "day"
	case "extract", "date_part", "datepart":
		if e.unit != "" {
			return pexpr.NormUnit(e.unit)
		}
		for k, a := range e.args {
			if k != colArg {
				if u := unitOf(a); u != "" {
					return u
				}
			}
		}
		return "extract"
	case "date", "to_date", "try_to_date", "date_format_date":
		return "day"
	case "year", "years", "yearofweek":
		return "year"
	case "quarter":
		return "quarter"
	case "month", "months":
		return "month"
	case "week", "weekofyear", "week_of_year":
		return "week"
	case "day", "days", "dayofmonth", "day_of_month", "dayofyear", "day_of_year", "dayofweek", "day_of_week", "dow", "doy":
		return "day"
	case "hour", "hours":
		return "hour"
	case "minute":
		return "minute"
	case "second":
		return "second"
	case "lower", "lcase":
		return "lower"
	case "upper", "ucase":
		return "upper"
	case "substr", "substring", "left", "right", "prefix":
		return "substr"
	case "coalesce", "nvl", "ifnull", "zeroifnull", "nullif":
		if colArg == 0 {
			return "coalesce"
		}
		return ""
	case "cast", "try_cast", "to_timestamp", "to_timestamp_ntz", "to_timestamp_ltz", "to_timestamp_tz",
		"from_unixtime", "from_iso8601_timestamp", "from_iso8601_date", "at_time_zone", "timestamp",
		"to_varchar", "to_char", "string", "to_number", "to_decimal", "try_to_number":
		if e.name == "from_iso8601_date" {
			return "day"
		}
		return "cast"
	case "subscript", "element_at", "get", "get_path", "json_extract", "json_extract_scalar", "json_value",
		"get_json_object", "json_extract_string", "map_get", "struct_extract":
		if colArg == 0 {
			return "subscript"
		}
		return ""
	case "array", "if", "case", "concat", "greatest", "least", "struct", "row", "map", "named_struct":
		return ""
	}
	if isNiladicName(e.name) {
		return ""
	}
	return e.name
}

func isNiladicName(s string) bool { return niladic[s] }

// unitOf reads a date-part argument: 'day', DAY, "day".
func unitOf(a *expr) string {
	switch {
	case a.kind == eLit && a.val.Kind == pexpr.KindString:
		return pexpr.NormUnit(a.val.Text)
	case a.kind == eCol && len(a.parts) == 1:
		return pexpr.NormUnit(a.parts[0])
	}
	return ""
}

// value types a literal operand. ok is false when the operand refers to a
// column (a join or column-vs-column comparison).
func (r *resolver) value(e *expr) (pexpr.Value, bool) {
	if e == nil {
		return pexpr.Value{}, false
	}
	switch e.kind {
	case eLit, eParam:
		return canonDate(e.val), true
	case eCast:
		if hasColumn(e) {
			return pexpr.Value{}, false
		}
		in, ok := r.value(e.args[0])
		if !ok {
			return in, false
		}
		if in.Kind == pexpr.KindString || in.Kind == pexpr.KindNumber || in.Kind == pexpr.KindTimestamp || in.Kind == pexpr.KindDate {
			switch k := typeKind(e.name); k {
			case "":
				return pexpr.Value{Kind: pexpr.KindUnknown, Text: r.snippet(e)}, true
			default:
				in.Kind = k
				if k == pexpr.KindDate && len(in.Text) > 10 && in.Text[4] == '-' {
					in.Text = in.Text[:10]
				}
				in = canonDate(in)
			}
			return in, true
		}
		if in.Kind == pexpr.KindParam || in.Kind == pexpr.KindNull {
			return in, true
		}
		return pexpr.Value{Kind: pexpr.KindUnknown, Text: r.snippet(e)}, true
	case eFunc:
		if hasColumn(e) {
			return pexpr.Value{}, false
		}
		if len(e.args) >= 1 && e.args[0].kind == eLit && e.args[0].val.Kind == pexpr.KindString {
			switch e.name {
			case "to_date", "date", "try_to_date":
				if len(e.args) == 1 {
					return canonDate(pexpr.Value{Kind: pexpr.KindDate, Text: e.args[0].val.Text}), true
				}
			case "to_timestamp", "timestamp", "to_timestamp_ntz", "to_timestamp_ltz", "to_timestamp_tz", "from_iso8601_timestamp":
				if len(e.args) == 1 {
					return pexpr.Value{Kind: pexpr.KindTimestamp, Text: e.args[0].val.Text}, true
				}
			}
		}
		if v, ok := r.foldCall(e); ok {
			return v, true
		}
		return pexpr.Value{Kind: pexpr.KindUnknown, Text: r.snippet(e)}, true
	case eSubquery:
		return pexpr.Value{Kind: pexpr.KindUnknown, Text: "(subquery)"}, true
	case eCol, eExists, eStar:
		return pexpr.Value{}, false
	case eBinary:
		if len(e.args) == 2 {
			l, ok1 := r.value(e.args[0])
			rv, ok2 := r.value(e.args[1])
			if !ok1 || !ok2 {
				return pexpr.Value{}, false
			}
			if v, ok := fold(l, e.op, rv); ok {
				return v, true
			}
		}
	}
	if hasColumn(e) {
		return pexpr.Value{}, false
	}
	return pexpr.Value{Kind: pexpr.KindUnknown, Text: r.snippet(e)}, true
}

// canonDate writes a date value as YYYY-MM-DD (CAST('2002-2-01' AS DATE)
// is 2002-02-01); a text that is no date is kept as written.
func canonDate(v pexpr.Value) pexpr.Value {
	if v.Kind == pexpr.KindDate {
		if t, ok := pexpr.ParseDate(v.Text); ok {
			v.Text = t.Format(pexpr.DateLayout)
		}
	}
	return v
}

// typeKind maps a SQL type name to a literal kind ("" when not a literal type).
func typeKind(t string) pexpr.Kind {
	switch {
	case t == "date":
		return pexpr.KindDate
	case strings.HasPrefix(t, "timestamp") || t == "datetime":
		return pexpr.KindTimestamp
	case t == "varchar" || t == "string" || t == "char" || t == "text" || t == "character" || t == "nvarchar":
		return pexpr.KindString
	case t == "int" || t == "integer" || t == "bigint" || t == "smallint" || t == "tinyint" || t == "decimal" ||
		t == "numeric" || t == "double" || t == "float" || t == "real" || t == "number" || t == "int64" ||
		t == "hugeint" || t == "ubigint" || t == "long" || t == "short" || t == "byte" || t == "float64" || t == "float4" || t == "float8" || t == "int4" || t == "int8":
		return pexpr.KindNumber
	case t == "boolean" || t == "bool":
		return pexpr.KindBool
	case t == "interval":
		return pexpr.KindInterval
	}
	return ""
}

// finish sorts predicates into source order and builds the scans.
func (r *resolver) finish(res *Result) {
	sort.SliceStable(r.preds, func(i, j int) bool { return r.preds[i].pos < r.preds[j].pos })
	res.Tables = r.tables
	res.Predicates = make([]pexpr.Pred, len(r.preds))
	for i, p := range r.preds {
		res.Predicates[i] = p.p
	}
	sort.SliceStable(r.joins, func(i, j int) bool { return r.joins[i].pos < r.joins[j].pos })
	res.Joins = make([]Join, len(r.joins))
	for i, j := range r.joins {
		res.Joins[i] = j.j
	}
	res.Scans = make([]Scan, len(r.scans))
	for i, s := range r.scans {
		res.Scans[i] = Scan{Table: s.table, Filter: andNodes(s.conj)}
	}
}

func andNodes(ns []*pexpr.Node) *pexpr.Node {
	switch len(ns) {
	case 0:
		return nil
	case 1:
		return ns[0]
	}
	out := &pexpr.Node{Kind: pexpr.NodeAnd}
	for _, n := range ns {
		if n.Kind == pexpr.NodeAnd {
			out.Children = append(out.Children, n.Children...)
		} else {
			out.Children = append(out.Children, n)
		}
	}
	return out
}
