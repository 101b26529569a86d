package extract

import (
	"strconv"
	"strings"

	pexpr "github.com/floe-project/floe/expr"
)

// maxDepth bounds the nesting of queries and expressions; deeper input is
// abandoned with a warning instead of exhausting the stack.
const maxDepth = 200

// parser is a tolerant recursive-descent parser over the token slice.
type parser struct {
	d     Dialect
	src   string
	toks  []token
	i     int
	depth int
	warns *warnList
	ctes  []*cte // WITH names visible at the current point, innermost last
	// locate maps a path read directly to a table (Options.Locate).
	locate func(path string) (TableRef, bool)
	// slab hands out expression nodes in chunks to keep allocations few.
	slab  []expr
	slabN int
}

// ne returns a pointer to a copy of v allocated from the parser's slab.
func (p *parser) ne(v expr) *expr {
	if len(p.slab) == 0 {
		// Chunks grow from 8 to 256 nodes: small statements stay small,
		// large ones (20k-element IN lists) allocate rarely.
		p.slabN = min(max(p.slabN*2, 8), 256)
		p.slab = make([]expr, p.slabN)
	}
	e := &p.slab[0]
	p.slab = p.slab[1:]
	*e = v
	return e
}

func (p *parser) at(k int) token {
	if j := p.i + k; j < len(p.toks) {
		return p.toks[j]
	}
	return token{kind: tEOF, pos: int32(len(p.src)), end: int32(len(p.src))}
}

func (p *parser) cur() token { return p.at(0) }

func (p *parser) eof() bool { return p.i >= len(p.toks) }

func (p *parser) text(t token) string { return p.src[t.pos:t.end] }

// kwAt reports whether the token k ahead is the unquoted keyword kw
// (kw in lower case).
func (p *parser) kwAt(k int, kw string) bool {
	j := p.i + k
	if j < 0 || j >= len(p.toks) {
		return false
	}
	t := &p.toks[j]
	if t.kind != tIdent || int(t.end-t.pos) != len(kw) {
		return false
	}
	s := p.src[t.pos:t.end]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

func (p *parser) kw(kw string) bool { return p.kwAt(0, kw) }

func (p *parser) accept(kw string) bool {
	if p.kw(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) opAt(k int, op string) bool {
	j := p.i + k
	if j < 0 || j >= len(p.toks) {
		return false
	}
	t := &p.toks[j]
	return t.kind == tOp && int(t.end-t.pos) == len(op) && p.src[t.pos:t.end] == op
}

func (p *parser) isOp(op string) bool { return p.opAt(0, op) }

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.i++
		return true
	}
	return false
}

// lower returns the lower-cased text of an identifier token.
func (p *parser) lower(t token) string {
	s := p.src[t.pos:t.end]
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// name returns the identifier text of an ident or quoted token.
func (p *parser) name(t token) string {
	if t.kind == tQuoted || t.kind == tString {
		return unescape(p.src, t)
	}
	return p.src[t.pos:t.end]
}

func (p *parser) warnAt(msg string, t token) {
	p.warns.add(msg + " at offset " + strconv.Itoa(int(t.pos)))
}

// skipBalanced skips one token, or a whole parenthesized/bracketed group.
func (p *parser) skipBalanced() {
	if p.eof() {
		return
	}
	open := p.text(p.cur())
	var closer string
	switch open {
	case "(":
		closer = ")"
	case "[":
		closer = "]"
	case "{":
		closer = "}"
	default:
		p.i++
		return
	}
	depth := 0
	for !p.eof() {
		t := p.text(p.cur())
		if p.cur().kind == tOp {
			switch t {
			case open:
				depth++
			case closer:
				depth--
			}
		}
		p.i++
		if depth == 0 {
			return
		}
	}
	p.warns.add("unbalanced parentheses (truncated statement?)")
}

// skipToClose skips to and consumes the ')' closing the current group.
func (p *parser) skipToClose() {
	for !p.eof() && !p.isOp(")") {
		if p.isOp(";") {
			return
		}
		p.skipBalanced()
	}
	p.expectClose()
}

func (p *parser) expectClose() {
	if !p.acceptOp(")") {
		if p.eof() {
			p.warns.add("unexpected end of statement: missing ')' (truncated statement?)")
		} else {
			p.warnAt("expected ')'", p.cur())
		}
	}
}

// skipStatement skips to the end of the current statement.
func (p *parser) skipStatement() {
	for !p.eof() && !p.isOp(";") {
		p.i++
	}
}

// parseStatements parses every ';'-separated statement of the input.
func (p *parser) parseStatements() []*stmt {
	var out []*stmt
	for !p.eof() {
		if p.acceptOp(";") {
			continue
		}
		if p.cur().kind == tJinja {
			p.i++ // {{ config(…) }} before a dbt model
			continue
		}
		start := p.i
		st := p.statement()
		if st != nil {
			out = append(out, st)
		}
		if !p.eof() && !p.isOp(";") {
			p.warnAt("unparsed text after statement", p.cur())
			p.skipStatement()
		}
		if p.i == start {
			p.i++
		}
	}
	return out
}

func (p *parser) statement() *stmt {
	for p.kw("explain") {
		p.i++
		for p.kw("analyze") || p.kw("verbose") || p.kw("extended") || p.kw("codegen") || p.kw("cost") || p.kw("formatted") || p.kw("using") {
			p.i++
			if p.kwAt(-1, "using") {
				p.i++ // EXPLAIN USING TEXT|JSON (Snowflake)
			}
		}
		if p.isOp("(") {
			p.skipBalanced()
		}
	}
	st := &stmt{}
	mark := len(p.ctes)
	defer func() { p.ctes = p.ctes[:mark] }()
	if p.kw("with") {
		st.ctes = p.withList()
	}
	t := p.cur()
	switch {
	case p.queryStart(0):
		st.kind = "select"
		st.q = p.query()
	case p.kw("insert"):
		st.kind = "insert"
		p.insert(st)
	case p.kw("merge"):
		st.kind = "merge"
		p.merge(st)
	case p.kw("update"):
		st.kind = "update"
		p.update(st)
	case p.kw("delete"):
		st.kind = "delete"
		p.deleteStmt(st)
	case p.kw("create") || p.kw("replace"):
		p.create(st)
	case (p.kw("unload") || p.kw("copy")) && p.opAt(1, "("):
		// Athena UNLOAD (query) TO 's3://…', DuckDB COPY (query) TO 'file'.
		st.kind = "select"
		p.i += 2
		st.q = p.query()
		p.expectClose()
		p.skipStatement()
	case p.kw("execute") && p.kwAt(1, "immediate") && p.at(2).kind == tString:
		// Trino clients send parameterized SQL as EXECUTE IMMEDIATE '…' USING …
		lit := p.at(2)
		p.i += 3
		p.skipStatement()
		if p.depth > 2 {
			p.warns.add("nested EXECUTE IMMEDIATE not analysed")
			return st
		}
		inner := unescape(p.src, lit)
		sub := &parser{d: p.d, src: inner, warns: p.warns, depth: p.depth + 1, locate: p.locate}
		sub.toks = tokenize(p.d, inner, p.warns)
		st.nested = sub.parseStatements()
		st.kind = "other"
		for _, n := range st.nested {
			n.src = inner
			n.base = lit.vpos
			if st.kind == "other" {
				st.kind = n.kind
			}
		}
		return st
	case p.kw("cache") && (p.kwAt(1, "table") || p.kwAt(1, "lazy") && p.kwAt(2, "table")):
		// Spark CACHE [LAZY] TABLE t [OPTIONS (…)] [[AS] query]: the query
		// reads its tables; t is a temporary view, not a table.
		st.kind = "other"
		p.i++
		p.accept("lazy")
		p.i++ // table
		for !p.eof() && (p.cur().kind == tIdent || p.cur().kind == tQuoted || p.isOp(".")) && !p.kw("as") && !p.kw("options") && !p.queryStart(0) {
			p.i++
		}
		if p.accept("options") {
			p.skipBalanced()
		}
		p.accept("as")
		if p.queryStart(0) {
			st.kind = "select"
			st.q = p.query()
		}
		p.skipStatement()
	case p.kw("prepare"):
		p.i++
		p.i++ // statement name
		p.accept("from")
		return p.statement()
	case p.kw("alter") || p.kw("drop") || p.kw("truncate") || p.kw("optimize") || p.kw("vacuum") ||
		p.kw("analyze") || p.kw("describe") || p.kw("desc") || p.kw("refresh") || p.kw("msck") || p.kw("comment"):
		st.kind = "ddl"
		p.ddl(st)
	case t.kind == tIdent:
		st.kind = "other"
		switch p.lower(t) {
		case "use", "set", "reset", "show", "call", "grant", "revoke", "commit", "begin", "start", "rollback",
			"copy", "put", "get", "list", "ls", "remove", "rm", "cache", "uncache", "load", "attach", "detach",
			"install", "pragma", "checkpoint", "execute", "deallocate", "unset", "add", "undrop", "export", "import", "summarize":
		default:
			p.warnAt("unsupported statement "+strconv.Quote(p.lower(t)), t)
		}
		p.skipStatement()
	case t.kind == tEOF:
		return nil
	default:
		st.kind = "other"
		p.warnAt("unsupported statement", t)
		p.skipStatement()
	}
	return st
}

// queryStart reports whether a query begins k tokens ahead.
func (p *parser) queryStart(k int) bool {
	switch {
	case p.kwAt(k, "select"), p.kwAt(k, "with"), p.kwAt(k, "values"):
		return true
	case p.kwAt(k, "from"):
		return p.d == DuckDB
	case p.kwAt(k, "table"):
		t := p.at(k + 1)
		return t.kind == tIdent || t.kind == tQuoted
	case p.opAt(k, "("):
		// ((SELECT …)) as a query: look through opening parens.
		j := k
		for p.opAt(j, "(") {
			j++
		}
		return p.kwAt(j, "select") || p.kwAt(j, "with") || p.kwAt(j, "values") || p.d == DuckDB && p.kwAt(j, "from")
	}
	return false
}

// groupEnd returns the offset of the token after the parenthesized group
// that opens k tokens ahead.
func (p *parser) groupEnd(k int) int {
	depth := 0
	for j := k; p.i+j < len(p.toks); j++ {
		switch {
		case p.opAt(j, "("):
			depth++
		case p.opAt(j, ")"):
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(p.toks) - p.i
}

// parenQuery reports whether the '(' at the current token opens a query:
// ((SELECT …)) and ((SELECT …) UNION …) do, ((SELECT …) > 5) does not.
func (p *parser) parenQuery() bool {
	if !p.queryStart(1) {
		return false
	}
	if !p.opAt(1, "(") {
		return true
	}
	j := p.groupEnd(1)
	return p.opAt(j, ")") || p.kwAt(j, "union") || p.kwAt(j, "intersect") || p.kwAt(j, "except") ||
		p.kwAt(j, "minus") || p.kwAt(j, "order") || p.kwAt(j, "limit")
}

// withList parses WITH [RECURSIVE] name [(cols)] AS [[NOT] MATERIALIZED] (query), …
// and leaves the names in scope (the caller restores p.ctes).
func (p *parser) withList() []*cte {
	p.i++ // WITH
	p.accept("recursive")
	var out []*cte
	for !p.eof() {
		t := p.cur()
		if t.kind != tIdent && t.kind != tQuoted {
			p.warnAt("expected a WITH query name", t)
			break
		}
		c := &cte{name: p.name(t)}
		p.i++
		if p.isOp("(") {
			c.cols = p.identList()
		}
		if !p.accept("as") {
			p.warnAt("expected AS in WITH query", p.cur())
		}
		p.accept("not")
		p.accept("materialized")
		c.parsing = true
		p.ctes = append(p.ctes, c)
		if p.acceptOp("(") {
			c.q = p.query()
			p.expectClose()
		} else if p.queryStart(0) {
			c.q = p.query()
		}
		c.parsing = false
		out = append(out, c)
		if !p.acceptOp(",") {
			break
		}
	}
	return out
}

// identList parses (a, b, c) and returns the names.
func (p *parser) identList() []string {
	p.i++ // (
	var out []string
	for !p.eof() && !p.isOp(")") {
		t := p.cur()
		if t.kind == tIdent || t.kind == tQuoted || t.kind == tString {
			out = append(out, p.name(t))
			p.i++
			// column definitions: skip a type and constraints up to ',' or ')'.
			for !p.eof() && !p.isOp(",") && !p.isOp(")") && !p.isOp(";") {
				p.skipBalanced()
			}
		} else {
			p.skipBalanced()
		}
		p.acceptOp(",")
	}
	p.expectClose()
	return out
}

func (p *parser) lookupCTE(name string) *cte {
	for k := len(p.ctes) - 1; k >= 0; k-- {
		if strings.EqualFold(p.ctes[k].name, name) {
			return p.ctes[k]
		}
	}
	return nil
}

// query parses [WITH …] branch {UNION|INTERSECT|EXCEPT|MINUS branch} [ORDER BY] [LIMIT].
func (p *parser) query() *query {
	q := &query{}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.warns.add("nesting too deep; rest of statement skipped")
		p.i = len(p.toks)
		return q
	}
	mark := len(p.ctes)
	defer func() { p.ctes = p.ctes[:mark] }()
	if p.kw("with") {
		q.ctes = p.withList()
	}
	for {
		p.branch(q)
		if p.kw("union") || p.kw("intersect") || p.kw("except") || p.kw("minus") {
			p.i++
			for p.kw("all") || p.kw("distinct") || p.kw("by") || p.kw("name") {
				p.i++
			}
			continue
		}
		break
	}
	p.queryTail(q)
	return q
}

// queryTail parses ORDER BY / LIMIT / OFFSET / FETCH after a query body.
func (p *parser) queryTail(q *query) {
	for {
		switch {
		case p.kw("order") && p.kwAt(1, "by"):
			p.i += 2
			p.exprList(nil)
		case p.kw("limit"):
			p.i++
			q.limit = true
			p.exprList(nil)
		case p.kw("offset"):
			p.i++
			p.expr()
			p.accept("rows")
			p.accept("row")
		case p.kw("fetch"):
			q.limit = true
			p.i++
			for !p.eof() && (p.kw("first") || p.kw("next") || p.kw("rows") || p.kw("row") || p.kw("only") || p.kw("with") || p.kw("ties") || p.cur().kind == tNumber || p.cur().kind == tParam) {
				p.i++
			}
		case p.kw("for") && (p.kwAt(1, "update") || p.kwAt(1, "share")):
			p.i += 2
		default:
			return
		}
	}
}

// branch parses one set-operation operand and appends its blocks to q.
func (p *parser) branch(q *query) {
	switch {
	case p.isOp("("):
		p.i++
		sub := p.query()
		p.expectClose()
		q.branches = append(q.branches, sub.branches...)
		q.ctes = append(q.ctes, sub.ctes...)
		if sub.limit {
			q.limit = true
		}
	case p.kw("select"):
		q.branches = append(q.branches, p.selectBlock())
	case p.kw("from"):
		q.branches = append(q.branches, p.fromFirst())
	case p.kw("values"):
		b := &block{values: true}
		p.i++
		p.exprList(&b.others)
		q.branches = append(q.branches, b)
	case p.kw("table"):
		p.i++
		b := &block{}
		if fi := p.tableFactor(); fi != nil {
			b.from = append(b.from, fi)
		}
		b.items = []selItem{{star: true}}
		q.branches = append(q.branches, b)
	default:
		if p.eof() {
			p.warns.add("unexpected end of statement: query expected (truncated statement?)")
		} else {
			p.warnAt("expected a query", p.cur())
		}
		q.branches = append(q.branches, &block{})
	}
}

// fromFirst parses DuckDB's FROM t [SELECT …] [WHERE …].
func (p *parser) fromFirst() *block {
	b := &block{}
	p.i++ // FROM
	b.from = p.fromList()
	if p.kw("select") {
		p.i++
		p.selectList(b)
	} else {
		b.items = []selItem{{star: true}}
	}
	p.blockClauses(b)
	return b
}

func (p *parser) selectBlock() *block {
	b := &block{}
	p.i++ // SELECT
	if p.kw("top") {
		p.i++
		p.skipBalanced()
		p.accept("percent")
	}
	if p.accept("distinct") {
		if p.kw("on") && p.opAt(1, "(") {
			p.i++
			p.skipBalanced()
		}
	} else {
		p.accept("all")
	}
	if p.kw("as") && (p.kwAt(1, "struct") || p.kwAt(1, "value")) {
		p.i += 2
	}
	p.selectList(b)
	if p.kw("into") && p.d == Snowflake {
		p.i++
		p.exprList(nil)
	}
	if p.accept("from") {
		b.from = p.fromList()
	}
	p.blockClauses(b)
	return b
}

func (p *parser) selectList(b *block) {
	for !p.eof() {
		if p.kw("from") || p.isOp(")") || p.isOp(";") {
			return
		}
		it := selItem{}
		if p.isOp("*") {
			p.i++
			it.star = true
		} else {
			start := p.i
			e := p.expr()
			if e == nil {
				if p.i == start {
					return
				}
			} else if e.kind == eStar {
				it.star = true
				it.qual = e.parts
			} else {
				it.e = e
				b.others = append(b.others, e)
			}
		}
		if it.star {
			// * EXCLUDE (…) / REPLACE (…) / EXCEPT (…) / RENAME (…)
			for p.kw("exclude") || p.kw("replace") || p.kw("except") || p.kw("rename") || p.kw("ilike") || p.kw("like") {
				p.i++
				if p.isOp("(") {
					p.skipBalanced()
				} else {
					p.i++
				}
			}
		}
		it.alias = p.alias(false)
		b.items = append(b.items, it)
		if !p.acceptOp(",") {
			return
		}
	}
}

// aliasStop are words that end an expression or table factor and so can
// never be an alias written without AS.
var aliasStop = map[string]bool{
	"from": true, "where": true, "group": true, "having": true, "order": true, "limit": true, "union": true,
	"intersect": true, "except": true, "minus": true, "join": true, "on": true, "using": true, "when": true,
	"then": true, "else": true, "end": true, "and": true, "or": true, "qualify": true, "window": true,
	"offset": true, "fetch": true, "into": true, "inner": true, "left": true, "right": true, "full": true,
	"cross": true, "natural": true, "lateral": true, "as": true, "asc": true, "desc": true, "nulls": true,
	"for": true, "tablesample": true, "sample": true, "at": true, "before": true, "changes": true,
	"pivot": true, "unpivot": true, "semi": true, "anti": true, "asof": true, "positional": true, "set": true,
	"values": true, "select": true, "with": true, "returning": true, "cluster": true, "distribute": true,
	"sort": true, "match_recognize": true, "over": true, "is": true, "in": true, "not": true, "between": true,
	"like": true, "ilike": true, "rlike": true, "regexp": true, "collate": true, "escape": true, "by": true,
	"partition": true, "outer": true, "straight_join": true, "connect": true, "start": true, "exclude": true,
	"replace": true, "rename": true, "lateral_view": true, "window_name": true, "similar": true, "global": true,
	"any": true, "partitioned": true, "tblproperties": true, "location": true, "comment": true, "stored": true,
	"row": true, "options": true, "clustered": true, "if": true,
}

// softAlias reports whether the non-reserved word l at the current token
// is an alias written without AS (Spark's q90 writes ") at,"): it is one
// unless what follows makes it the clause it can start — AT(…)/BEFORE(…)
// time travel, SEMI/ANTI/ASOF/POSITIONAL … JOIN, LOCATION '…'.
func (p *parser) softAlias(l string) bool {
	switch l {
	case "at", "before":
		return !p.opAt(1, "(")
	case "semi", "anti", "asof", "positional":
		return !p.kwAt(1, "join") && !p.kwAt(1, "left") && !p.kwAt(1, "inner") && !p.kwAt(1, "outer")
	case "location":
		return p.at(1).kind != tString
	}
	return false
}

// alias parses [AS] name. For table aliases also accepts (c1, c2) after it.
func (p *parser) alias(table bool) string {
	t := p.cur()
	if p.kw("as") {
		p.i++
		t = p.cur()
		if t.kind == tIdent || t.kind == tQuoted || t.kind == tString {
			p.i++
			return p.name(t)
		}
		return ""
	}
	switch t.kind {
	case tQuoted:
		p.i++
		return p.name(t)
	case tString:
		if p.d == Spark || p.d == Snowflake || p.d == DuckDB {
			if !table {
				p.i++
				return p.name(t)
			}
		}
	case tIdent:
		l := p.lower(t)
		if aliasStop[l] && !p.softAlias(l) {
			return ""
		}
		if table && (l == "version" || l == "timestamp" || l == "system_time" || l == "system_version") && p.kwAt(1, "as") && p.kwAt(2, "of") {
			return ""
		}
		p.i++
		return p.name(t)
	}
	return ""
}

// blockClauses parses WHERE, GROUP BY, HAVING, WINDOW, QUALIFY and Spark's
// CLUSTER/DISTRIBUTE/SORT BY after the FROM list.
func (p *parser) blockClauses(b *block) {
	for !p.eof() {
		switch {
		case p.kw("where"):
			p.i++
			b.where = p.andExpr2(b.where, p.expr())
		case p.kw("group") && p.kwAt(1, "by"):
			p.i += 2
			p.accept("all")
			p.exprList(&b.others)
		case p.kw("having"):
			p.i++
			b.having = p.andExpr2(b.having, p.expr())
		case p.kw("qualify"):
			p.i++
			b.qualify = p.andExpr2(b.qualify, p.expr())
		case p.kw("window"):
			p.i++
			for !p.eof() {
				p.i++ // name
				p.accept("as")
				if p.isOp("(") {
					p.skipBalanced()
				}
				if !p.acceptOp(",") {
					break
				}
			}
		case (p.kw("cluster") || p.kw("distribute") || p.kw("sort")) && p.kwAt(1, "by"):
			p.i += 2
			p.exprList(nil)
		case p.kw("lateral") && p.kwAt(1, "view"):
			p.lateralView(b)
		default:
			return
		}
	}
}

func (p *parser) andExpr2(a, b *expr) *expr {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return p.ne(expr{kind: eAnd, args: []*expr{a, b}, pos: a.pos, end: b.end})
}

// exprList parses comma-separated expressions, optionally keeping them.
func (p *parser) exprList(keep *[]*expr) {
	for !p.eof() {
		start := p.i
		e := p.expr()
		if e != nil && keep != nil {
			*keep = append(*keep, e)
		}
		for p.kw("asc") || p.kw("desc") || p.kw("nulls") || p.kw("first") || p.kw("last") {
			p.i++
		}
		if p.i == start {
			return
		}
		if !p.acceptOp(",") {
			return
		}
	}
}

// fromList parses a FROM clause: items separated by commas and joins.
func (p *parser) fromList() []*fromItem {
	var items []*fromItem
	first := true
	for !p.eof() {
		if !first && !p.acceptOp(",") {
			jk, ok := p.joinKeyword()
			if !ok {
				if p.kw("lateral") && p.kwAt(1, "view") {
					b := &block{}
					p.lateralView(b)
					items = append(items, b.from...)
					continue
				}
				break
			}
			sub := p.tableFactorList()
			if len(sub) > 0 {
				sub[0].join = jk
			}
			on, using := p.joinCondition()
			if len(sub) > 0 {
				sub[len(sub)-1].on = on
				sub[len(sub)-1].using = using
			}
			items = append(items, sub...)
			continue
		}
		first = false
		items = append(items, p.tableFactorList()...)
	}
	return items
}

// tableFactorList parses one table factor; a parenthesized join yields its items.
func (p *parser) tableFactorList() []*fromItem {
	if p.isOp("(") && !p.queryStart(0) {
		p.i++
		items := p.fromList()
		p.expectClose()
		if a := p.alias(true); a != "" && len(items) == 1 {
			items[0].alias = a
		}
		return items
	}
	if fi := p.tableFactor(); fi != nil {
		return []*fromItem{fi}
	}
	return nil
}

// joinKeyword consumes a join operator and returns its kind.
func (p *parser) joinKeyword() (joinKind, bool) {
	j := 0
	jk := jInner
	if p.kwAt(j, "natural") || p.kwAt(j, "global") {
		j++
	}
	switch {
	case p.kwAt(j, "left"):
		jk = jLeft
		j++
	case p.kwAt(j, "right"):
		jk = jRight
		j++
	case p.kwAt(j, "full"):
		jk = jFull
		j++
	case p.kwAt(j, "inner"), p.kwAt(j, "cross"), p.kwAt(j, "asof"), p.kwAt(j, "positional"), p.kwAt(j, "any"):
		j++
	}
	for p.kwAt(j, "outer") || p.kwAt(j, "semi") || p.kwAt(j, "anti") || p.kwAt(j, "asof") {
		switch {
		case p.kwAt(j, "semi"):
			jk = jInner // a semi join filters both sides
		case p.kwAt(j, "anti"):
			jk = jLeft // an anti join keeps the left rows that do not match
		}
		j++
	}
	if p.kwAt(j, "join") || p.kwAt(j, "straight_join") {
		p.i += j + 1
		return jk, true
	}
	if j > 0 && p.kwAt(j-1, "semi") && p.d == DuckDB {
		return jk, false
	}
	return jk, false
}

func (p *parser) joinCondition() (*expr, []string) {
	switch {
	case p.kw("on"):
		p.i++
		return p.expr(), nil
	case p.kw("using") && p.opAt(1, "("):
		p.i++
		return nil, p.identList()
	case p.kw("match_condition") && p.opAt(1, "("):
		p.i++
		p.skipBalanced()
		if p.accept("on") {
			return p.expr(), nil
		}
	}
	return nil, nil
}

// lateralView parses Spark's LATERAL VIEW [OUTER] f(args) alias [AS c1, c2].
func (p *parser) lateralView(b *block) {
	p.i += 2
	p.accept("outer")
	fi := &fromItem{kind: fFunc, lateral: true}
	e := p.expr()
	if e != nil {
		fi.args = []*expr{e}
	}
	if t := p.cur(); t.kind == tIdent && !p.kw("as") && !aliasStop[p.lower(t)] || t.kind == tQuoted {
		fi.alias = p.name(t)
		p.i++
	}
	if p.accept("as") {
		for !p.eof() {
			t := p.cur()
			if t.kind != tIdent && t.kind != tQuoted {
				break
			}
			fi.cols = append(fi.cols, p.name(t))
			p.i++
			if !p.acceptOp(",") {
				break
			}
		}
	}
	b.from = append(b.from, fi)
}

// tableFactor parses one relation with its modifiers and alias.
func (p *parser) tableFactor() *fromItem {
	fi := &fromItem{}
	if p.accept("lateral") {
		fi.lateral = true
	}
	t := p.cur()
	switch {
	case p.isOp("("):
		p.i++
		fi.kind = fDerived
		fi.sub = p.query()
		p.expectClose()
	case p.kw("unnest") || p.kw("explode") || p.kw("posexplode") || p.kw("flatten") || p.kw("inline"):
		fi.kind = fFunc
		p.i++
		fi.args = p.callArgs()
		if p.kw("with") && p.kwAt(1, "ordinality") {
			p.i += 2
		}
	case p.kw("table") && p.opAt(1, "("):
		p.i++
		fi.kind = fFunc
		p.warnAt("table function is not an Iceberg table", t)
		fi.args = p.callArgs()
	case p.kw("values"):
		p.i++
		fi.kind = fFunc
		var vals []*expr
		p.exprList(&vals)
		fi.args = vals
	case t.kind == tString:
		p.i++
		if ref, ok := p.locatePath(p.name(t)); ok {
			fi.kind, fi.ref, fi.parts = fTable, ref, refParts(ref)
			break
		}
		fi.kind = fFunc
		p.warnAt("file "+strconv.Quote(p.name(t))+" read directly is not an Iceberg table", t)
	case t.kind == tStage:
		p.i++
		fi.kind = fFunc
		p.warnAt("stage "+p.text(t)+" is not an Iceberg table", t)
		if p.isOp("(") {
			p.skipBalanced()
		}
	case t.kind == tJinja:
		p.i++
		if ref, ok := dbtRef(p.text(t)); ok {
			fi.kind = fTable
			fi.ref = ref
			fi.parts = refParts(ref)
		} else {
			fi.kind = fFunc
			p.warnAt("jinja expression used as a table", t)
		}
	case t.kind == tIdent || t.kind == tQuoted:
		if t.kind == tIdent && aliasStop[p.lower(t)] && !p.opAt(1, ".") {
			if p.eof() {
				p.warns.add("unexpected end of statement: table expected")
			} else {
				p.warnAt("expected a table", t)
			}
			return nil
		}
		parts := p.dottedName()
		if p.isOp("(") {
			fi.kind = fFunc
			name := strings.ToLower(strings.Join(parts, "."))
			fi.args = p.callArgs()
			if ref, ok := p.indirectTable(name, fi.args); ok {
				fi.kind, fi.ref, fi.parts, fi.args = fTable, ref, refParts(ref), nil
				break
			}
			if !isGenerator(name) {
				p.warnAt("table function "+name+" is not an Iceberg table", t)
			}
			break
		}
		if p.d == Spark && len(parts) == 2 && sparkFileFormats[strings.ToLower(parts[0])] && strings.ContainsAny(parts[1], "/:") {
			// parquet.`s3://bucket/path/` reads files, not a table — unless
			// the path is a table's location.
			if ref, ok := p.locatePath(parts[1]); ok {
				fi.kind, fi.ref, fi.parts = fTable, ref, refParts(ref)
				break
			}
			fi.kind = fFunc
			p.warnAt("file "+strconv.Quote(parts[1])+" read directly is not an Iceberg table", t)
			break
		}
		fi.parts = parts
		if len(parts) == 1 {
			if c := p.lookupCTE(parts[0]); c != nil {
				fi.cte = c
				if c.parsing {
					fi.kind = fSelf
					c.recursive = true
				} else {
					fi.kind = fCTE
					c.refs++
				}
				break
			}
		}
		fi.kind = fTable
		fi.ref = tableRefFromParts(p.d, parts)
	default:
		if p.eof() {
			p.warns.add("unexpected end of statement: table expected")
		} else {
			p.warnAt("expected a table", t)
		}
		return nil
	}
	p.tableModifiers(fi)
	return fi
}

// sparkFileFormats are the data sources Spark can query by path
// (format.`path`).
var sparkFileFormats = map[string]bool{
	"parquet": true, "orc": true, "json": true, "csv": true, "text": true, "avro": true,
	"delta": true, "binaryfile": true, "iceberg": true,
}

// pathReaders are the table functions that read files by path; the first
// argument is the path (or a list of paths).
var pathReaders = map[string]bool{
	"read_parquet": true, "parquet_scan": true, "iceberg_scan": true, "delta_scan": true, "read_csv": true,
	"read_csv_auto": true, "read_json": true, "read_json_auto": true, "read_ndjson": true, "iceberg_metadata": true,
}

// indirectTable resolves a table function that names a table: Snowflake's
// IDENTIFIER('db.schema.t'), and a path reader over a table's location.
func (p *parser) indirectTable(name string, args []*expr) (TableRef, bool) {
	if len(args) == 0 {
		return TableRef{}, false
	}
	a := args[0]
	if a.kind == eFunc && a.name == "array" && len(a.args) > 0 {
		a = a.args[0]
	}
	if a.kind != eLit || a.val.Kind != pexpr.KindString {
		return TableRef{}, false
	}
	switch {
	case name == "identifier" && len(args) == 1:
		parts := p.splitDotted(a.val.Text)
		if len(parts) == 0 {
			return TableRef{}, false
		}
		return tableRefFromParts(p.d, parts), true
	case pathReaders[name]:
		return p.locatePath(a.val.Text)
	}
	return TableRef{}, false
}

// locatePath asks Options.Locate for the table a path belongs to.
func (p *parser) locatePath(path string) (TableRef, bool) {
	if p.locate == nil || path == "" {
		return TableRef{}, false
	}
	return p.locate(path)
}

// splitDotted reads the dotted name inside IDENTIFIER('db.schema."My T"')
// with the dialect's identifier rules; nil when it is not one.
func (p *parser) splitDotted(s string) []string {
	sub := &parser{d: p.d, src: s, warns: &warnList{}}
	sub.toks = tokenize(p.d, s, sub.warns)
	parts := sub.dottedName()
	if !sub.eof() || len(sub.warns.list) > 0 {
		return nil
	}
	return parts
}

// isGenerator reports table functions that produce rows without reading
// data (no warning needed).
func isGenerator(name string) bool {
	switch name {
	case "range", "generate_series", "sequence", "unnest", "generator", "json_each", "json_tree":
		return true
	}
	return false
}

// dottedName parses ident(.ident)* and returns the parts, quotes removed.
func (p *parser) dottedName() []string {
	var parts []string
	for {
		t := p.cur()
		if t.kind != tIdent && t.kind != tQuoted {
			break
		}
		parts = append(parts, p.name(t))
		p.i++
		if !p.isOp(".") {
			break
		}
		p.i++
	}
	return parts
}

// tableModifiers parses time travel, sampling, PIVOT and the alias, in any order.
func (p *parser) tableModifiers(fi *fromItem) {
	for !p.eof() {
		switch {
		case p.kw("for") && (p.kwAt(1, "version") || p.kwAt(1, "timestamp") || p.kwAt(1, "system_time") || p.kwAt(1, "system_version")) && p.kwAt(2, "as") && p.kwAt(3, "of"):
			p.i += 4
			fi.ref.AsOf = p.spanText(p.expr())
		case (p.kw("version") || p.kw("timestamp")) && p.kwAt(1, "as") && p.kwAt(2, "of"):
			p.i += 3
			fi.ref.AsOf = p.spanText(p.expr())
		case (p.kw("at") || p.kw("before")) && p.opAt(1, "("):
			p.i++
			start := p.cur().pos
			p.skipBalanced()
			fi.ref.AsOf = p.src[start:p.at(-1).end]
		case p.kw("changes") && p.opAt(1, "("):
			p.i++
			p.skipBalanced()
		case p.kw("tablesample") || p.kw("sample") || p.kw("using") && p.kwAt(1, "sample"):
			if p.kw("using") {
				p.i++
			}
			p.i++
			for !p.eof() && !p.isOp("(") && p.cur().kind == tIdent && !aliasStop[p.lower(p.cur())] {
				p.i++ // BERNOULLI, SYSTEM, ROW, BLOCK, reservoir…
			}
			if p.isOp("(") {
				p.skipBalanced()
			} else if p.cur().kind == tNumber {
				p.i++
				p.acceptOp("%")
				p.accept("percent")
				p.accept("rows")
			}
			if p.kw("repeatable") || p.kw("seed") {
				p.i++
				p.skipBalanced()
			}
		case (p.kw("pivot") || p.kw("unpivot")) && (p.opAt(1, "(") || p.kwAt(1, "include") || p.kwAt(1, "exclude")):
			p.warnAt(strings.ToUpper(p.lower(p.cur()))+" not analysed", p.cur())
			p.i++
			for !p.eof() && !p.isOp("(") {
				p.i++
			}
			p.skipBalanced()
		case p.kw("with") && p.opAt(1, "(") && fi.kind == fTable:
			p.i++
			p.skipBalanced() // table hints / options
		default:
			if fi.alias == "" {
				if a := p.alias(true); a != "" {
					fi.alias = a
					if p.isOp("(") {
						fi.cols = p.identList()
					}
					continue
				}
			}
			return
		}
	}
}

// spanText returns the source text of an expression.
func (p *parser) spanText(e *expr) string {
	if e == nil {
		return ""
	}
	return strings.TrimSpace(p.src[e.pos:e.end])
}

// insert parses INSERT [OVERWRITE] [INTO] [TABLE] t [PARTITION (…)] [(cols)] query.
func (p *parser) insert(st *stmt) {
	p.i++
	if p.kw("all") || p.kw("first") {
		p.warnAt("multi-table INSERT not analysed", p.cur())
		p.skipStatement()
		return
	}
	for p.kw("overwrite") || p.kw("into") || p.kw("table") || p.kw("or") && (p.kwAt(1, "replace") || p.kwAt(1, "ignore")) {
		if p.kw("or") {
			p.i++
		}
		p.i++
	}
	t := p.cur()
	if t.kind == tJinja {
		p.i++
		if ref, ok := dbtRef(p.text(t)); ok {
			ref.Write = true
			st.targets = append(st.targets, ref)
		}
	} else {
		parts := p.dottedName()
		if len(parts) == 0 {
			p.warnAt("expected INSERT target table", t)
			p.skipStatement()
			return
		}
		ref := tableRefFromParts(p.d, parts)
		ref.Write = true
		st.targets = append(st.targets, ref)
	}
	if p.kw("as") || p.cur().kind == tIdent && !p.queryStart(0) && !p.kw("partition") && !p.kw("by") && !p.kw("default") && !p.kw("replace") {
		p.alias(true)
	}
	for {
		switch {
		case p.kw("partition") && p.opAt(1, "("):
			p.i++
			p.skipBalanced()
			continue
		case p.kw("by") && p.kwAt(1, "name"), p.kw("by") && p.kwAt(1, "position"):
			p.i += 2
			continue
		case p.kw("replace") && p.kwAt(1, "where"):
			p.i += 2
			p.expr()
			continue
		case p.isOp("(") && !p.queryStart(0):
			p.identList()
			continue
		}
		break
	}
	switch {
	case p.kw("default") && p.kwAt(1, "values"):
		p.i += 2
	case p.queryStart(0):
		st.q = p.query()
	default:
		if p.eof() {
			p.warns.add("unexpected end of statement: INSERT source expected (truncated statement?)")
		} else {
			p.warnAt("INSERT source not understood", p.cur())
		}
	}
	if p.kw("on") && p.kwAt(1, "conflict") {
		p.skipStatement()
	}
}

// dmlTarget parses the target table of UPDATE / DELETE / MERGE with its alias.
func (p *parser) dmlTarget() *fromItem {
	t := p.cur()
	var fi *fromItem
	if t.kind == tJinja {
		p.i++
		ref, ok := dbtRef(p.text(t))
		if !ok {
			return nil
		}
		fi = &fromItem{kind: fTable, ref: ref, parts: refParts(ref)}
	} else {
		parts := p.dottedName()
		if len(parts) == 0 {
			p.warnAt("expected target table", t)
			return nil
		}
		fi = &fromItem{kind: fTable, parts: parts, ref: tableRefFromParts(p.d, parts)}
	}
	fi.ref.Write = true
	fi.alias = p.alias(true)
	return fi
}

func (p *parser) merge(st *stmt) {
	p.i++
	p.accept("into")
	b := &block{}
	st.q = &query{branches: []*block{b}}
	target := p.dmlTarget()
	if target == nil {
		p.skipStatement()
		return
	}
	b.from = append(b.from, target)
	if !p.accept("using") {
		p.warnAt("expected USING in MERGE", p.cur())
		p.skipStatement()
		return
	}
	src := p.tableFactor()
	if src == nil {
		p.skipStatement()
		return
	}
	b.from = append(b.from, src)
	if p.accept("on") {
		// Rows of the target that match no source row are left alone, so the
		// ON condition restricts the target scan like an inner join.
		target.on = nil
		src.on = p.expr()
		src.join = jInner
	}
	for p.accept("when") {
		p.accept("not")
		p.accept("matched")
		if p.kw("by") {
			p.i += 2 // BY SOURCE / BY TARGET
		}
		if p.accept("and") {
			if c := p.expr(); c != nil {
				b.conds = append(b.conds, c)
			}
		}
		p.accept("then")
		for !p.eof() && !p.kw("when") && !p.isOp(";") {
			switch {
			case p.kw("where"):
				p.i++
				if c := p.expr(); c != nil {
					b.conds = append(b.conds, c)
				}
			case p.isOp("("):
				start := p.i
				p.i++
				var vals []*expr
				p.exprList(&vals)
				b.others = append(b.others, vals...)
				p.expectClose()
				if p.i == start {
					p.i++
				}
			case p.kw("set"):
				p.i++
				p.assignments(b)
			default:
				p.i++
			}
		}
	}
}

// assignments parses col = expr, … of UPDATE SET.
func (p *parser) assignments(b *block) {
	for !p.eof() {
		start := p.i
		if p.isOp("(") {
			p.skipBalanced()
		} else {
			p.dottedName()
		}
		if !p.acceptOp("=") {
			if p.i == start {
				return
			}
		}
		if e := p.expr(); e != nil {
			b.others = append(b.others, e)
		}
		if !p.acceptOp(",") {
			return
		}
	}
}

func (p *parser) update(st *stmt) {
	p.i++
	b := &block{}
	st.q = &query{branches: []*block{b}}
	target := p.dmlTarget()
	if target == nil {
		p.skipStatement()
		return
	}
	b.from = append(b.from, target)
	if p.accept("set") {
		p.assignments(b)
	}
	if p.accept("from") {
		b.from = append(b.from, p.fromList()...)
	}
	if p.accept("where") {
		b.where = p.expr()
	}
}

func (p *parser) deleteStmt(st *stmt) {
	p.i++
	p.accept("from")
	b := &block{}
	st.q = &query{branches: []*block{b}}
	target := p.dmlTarget()
	if target == nil {
		p.skipStatement()
		return
	}
	b.from = append(b.from, target)
	if p.accept("using") {
		b.from = append(b.from, p.fromList()...)
	}
	if p.accept("where") {
		b.where = p.expr()
	}
}

// create handles CREATE [OR REPLACE] … TABLE|VIEW name … [AS query]; other
// CREATE statements are DDL without tables.
func (p *parser) create(st *stmt) {
	p.i++
	st.kind = "ddl"
	var parts []string
	isTable := false
	for !p.eof() && !p.isOp(";") {
		if p.kw("table") || p.kw("view") {
			isTable = true
			p.i++
			if p.kw("if") {
				p.i++
				p.accept("not")
				p.accept("exists")
			}
			t := p.cur()
			if t.kind == tJinja {
				p.i++
				if ref, ok := dbtRef(p.text(t)); ok {
					parts = refParts(ref)
				}
			} else {
				parts = p.dottedName()
			}
			break
		}
		if p.kw("function") || p.kw("schema") || p.kw("database") || p.kw("macro") || p.kw("sequence") || p.kw("stage") || p.kw("index") || p.kw("role") || p.kw("user") || p.kw("secret") || p.kw("type") || p.kw("procedure") {
			p.skipStatement()
			return
		}
		p.i++
	}
	if !isTable {
		return
	}
	if len(parts) > 0 {
		ref := tableRefFromParts(p.d, parts)
		ref.Write = true
		st.targets = append(st.targets, ref)
		if p.isOp("(") && !p.queryStart(1) {
			st.cols = p.columnDefs()
		}
	}
	// Skip table properties up to AS query.
	for !p.eof() && !p.isOp(";") {
		if p.kw("with") && p.opAt(1, "(") {
			p.i++
			p.skipBalanced() // table properties
			continue
		}
		if p.kw("as") && p.queryStart(1) {
			p.i++
			st.kind = "ctas"
			st.q = p.query()
			return
		}
		if p.queryStart(0) && !p.isOp("(") {
			st.kind = "ctas"
			st.q = p.query()
			return
		}
		if p.kw("like") || p.kw("clone") {
			p.i++
			src := p.dottedName()
			if len(src) > 0 {
				st.q = &query{branches: []*block{{from: []*fromItem{{kind: fTable, parts: src, ref: tableRefFromParts(p.d, src)}}}}}
			}
			continue
		}
		p.skipBalanced()
	}
}

// ddl records the table of ALTER/DROP/TRUNCATE/… and skips the rest.
func (p *parser) ddl(st *stmt) {
	write := !(p.kw("describe") || p.kw("desc") || p.kw("analyze") || p.kw("msck"))
	direct := !(p.kw("alter") || p.kw("drop") || p.kw("comment"))
	p.i++
	if direct {
		// DESCRIBE [TABLE] [EXTENDED] t, TRUNCATE [TABLE] t, OPTIMIZE t, VACUUM t …
		for p.kw("table") || p.kw("repair") || p.kw("extended") || p.kw("formatted") || p.kw("history") || p.kw("detail") || p.kw("input") || p.kw("output") {
			p.i++
		}
		if t := p.cur(); t.kind == tQuoted || t.kind == tIdent && !aliasStop[p.lower(t)] {
			if parts := p.dottedName(); len(parts) > 0 {
				ref := tableRefFromParts(p.d, parts)
				ref.Write = write
				st.targets = append(st.targets, ref)
			}
		}
		p.skipStatement()
		return
	}
	for !p.eof() && !p.isOp(";") {
		if p.kw("table") || p.kw("view") {
			p.i++
			if p.kw("if") {
				p.i++
				p.accept("exists")
			}
			if parts := p.dottedName(); len(parts) > 0 {
				ref := tableRefFromParts(p.d, parts)
				ref.Write = write
				st.targets = append(st.targets, ref)
			}
			break
		}
		if p.kw("schema") || p.kw("database") || p.kw("function") || p.kw("session") || p.kw("stage") || p.kw("warehouse") {
			break
		}
		p.i++
	}
	p.skipStatement()
}

// dbtRef reads {{ ref('model') }}, {{ ref('pkg', 'model') }} and
// {{ source('src', 'table') }}.
func dbtRef(s string) (TableRef, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "{{"), "}}"))
	s = strings.TrimPrefix(strings.TrimSuffix(s, "-"), "-")
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return TableRef{}, false
	}
	fn := strings.TrimSpace(s[:open])
	var args []string
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		a = strings.TrimSpace(a)
		if len(a) >= 2 && (a[0] == '\'' || a[0] == '"') && a[len(a)-1] == a[0] {
			args = append(args, a[1:len(a)-1])
		} else if strings.Contains(a, "=") {
			continue // keyword argument such as v=2
		} else {
			return TableRef{}, false
		}
	}
	switch {
	case fn == "ref" && len(args) == 1:
		return TableRef{Name: args[0]}, true
	case fn == "ref" && len(args) == 2:
		return TableRef{Namespace: args[0], Name: args[1]}, true
	case fn == "source" && len(args) == 2:
		return TableRef{Namespace: args[0], Name: args[1]}, true
	}
	return TableRef{}, false
}

func refParts(r TableRef) []string {
	var parts []string
	if r.Catalog != "" {
		parts = append(parts, r.Catalog)
	}
	if r.Namespace != "" {
		parts = append(parts, r.Namespace)
	}
	return append(parts, r.Name)
}
