package extract

import (
	"math/big"
	"strings"

	pexpr "github.com/floe-project/floe/expr"
)

// exprStop are keywords that can never begin an expression operand.
var exprStop = map[string]bool{
	"select": true, "from": true, "where": true, "group": true, "having": true, "order": true, "limit": true,
	"union": true, "intersect": true, "except": true, "minus": true, "join": true, "on": true, "using": true,
	"when": true, "then": true, "else": true, "end": true, "and": true, "or": true, "qualify": true,
	"window": true, "offset": true, "fetch": true, "into": true, "inner": true, "cross": true, "full": true,
	"natural": true, "as": true, "by": true, "asc": true, "desc": true, "between": true, "like": true,
	"ilike": true, "rlike": true, "in": true, "is": true, "over": true, "with": true, "lateral": true,
	"set": true, "returning": true,
}

func (p *parser) mk(k exprKind, start token) *expr {
	return p.ne(expr{kind: k, pos: start.pos, end: p.at(-1).end})
}

// expr parses a full expression (OR level).
func (p *parser) expr() *expr {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.warns.add("nesting too deep; rest of statement skipped")
		p.i = len(p.toks)
		return nil
	}
	return p.orExpr()
}

func (p *parser) orExpr() *expr {
	l := p.andExpr()
	if l == nil || !p.kw("or") {
		return l
	}
	e := p.ne(expr{kind: eOr, args: []*expr{l}, pos: l.pos})
	for p.accept("or") {
		if r := p.andExpr(); r != nil {
			e.args = append(e.args, r)
		}
	}
	e.end = p.at(-1).end
	return e
}

func (p *parser) andExpr() *expr {
	l := p.notExpr()
	if l == nil || !p.kw("and") {
		return l
	}
	e := p.ne(expr{kind: eAnd, args: []*expr{l}, pos: l.pos})
	for p.accept("and") {
		if r := p.notExpr(); r != nil {
			e.args = append(e.args, r)
		}
	}
	e.end = p.at(-1).end
	return e
}

func (p *parser) notExpr() *expr {
	if p.kw("not") {
		start := p.cur()
		p.i++
		x := p.notExpr()
		if x == nil {
			return nil
		}
		e := p.mk(eNot, start)
		e.args = []*expr{x}
		return e
	}
	return p.predicate()
}

var cmpOps = map[string]string{"=": "=", "==": "=", "<=>": "=", "<>": "!=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

// predicate parses comparisons, IN, BETWEEN, LIKE and IS [NOT] NULL.
func (p *parser) predicate() *expr {
	startTok := p.cur()
	l := p.additive()
	if l == nil {
		return nil
	}
	for {
		t := p.cur()
		if t.kind == tOp {
			op := p.text(t)
			if c, ok := cmpOps[op]; ok {
				p.i++
				if p.kw("any") || p.kw("all") || p.kw("some") {
					p.i++
					r := p.additive()
					e := p.mk(eOther, startTok)
					e.args = []*expr{l, r}
					l = e
					continue
				}
				r := p.additive()
				if r == nil {
					e := p.mk(eOther, startTok)
					e.args = []*expr{l}
					return e
				}
				if op == "<=>" && r.kind == eLit && r.val.Kind == pexpr.KindNull {
					e := p.mk(eIsNull, startTok)
					e.args = []*expr{l}
					l = e
					continue
				}
				e := p.mk(eCmp, startTok)
				e.op = c
				e.args = []*expr{l, r}
				l = e
				continue
			}
			switch op {
			case "~", "!~", "~*", "!~*", "~~", "!~~":
				p.i++
				r := p.additive()
				e := p.mk(eLike, startTok)
				e.op = "rlike"
				if op == "~~" || op == "!~~" {
					e.op = "like"
				}
				e.not = op[0] == '!'
				e.args = []*expr{l, r}
				l = e
				continue
			}
			return l
		}
		if t.kind != tIdent {
			return l
		}
		not := false
		k := 0
		if p.kw("not") {
			if !(p.kwAt(1, "in") || p.kwAt(1, "between") || p.kwAt(1, "like") || p.kwAt(1, "ilike") || p.kwAt(1, "rlike") || p.kwAt(1, "regexp") || p.kwAt(1, "similar")) {
				return l
			}
			not = true
			k = 1
		}
		switch {
		case p.kwAt(k, "is"):
			p.i++
			n := p.accept("not")
			switch {
			case p.accept("null"):
				e := p.mk(eIsNull, startTok)
				e.not = n
				e.args = []*expr{l}
				l = e
			case p.kw("distinct") && p.kwAt(1, "from"):
				p.i += 2
				r := p.additive()
				if n && r != nil {
					e := p.mk(eCmp, startTok)
					e.op = "="
					e.args = []*expr{l, r}
					l = e
				} else {
					e := p.mk(eOther, startTok)
					e.args = []*expr{l, r}
					l = e
				}
			case p.kw("true") || p.kw("false"):
				v := p.kw("true")
				p.i++
				e := p.mk(eCmp, startTok)
				e.op = "="
				if n {
					e.op = "!="
				}
				lit := p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindBool, Text: boolText(v)}, pos: p.at(-1).pos, end: p.at(-1).end})
				e.args = []*expr{l, lit}
				if n {
					e = p.ne(expr{kind: eOther, args: []*expr{l}, pos: e.pos, end: e.end})
				}
				l = e
			default:
				p.i++ // UNKNOWN, NAN, JSON…
				e := p.mk(eOther, startTok)
				e.args = []*expr{l}
				l = e
			}
		case p.kwAt(k, "isnull") || p.kwAt(k, "notnull"):
			e := p.ne(expr{kind: eIsNull, not: p.kw("notnull"), args: []*expr{l}, pos: l.pos})
			p.i++
			e.end = p.at(-1).end
			l = e
		case p.kwAt(k, "in"):
			p.i += k + 1
			l = p.inList(l, not, startTok)
		case p.kwAt(k, "between"):
			p.i += k + 1
			p.accept("symmetric")
			p.accept("asymmetric")
			lo := p.additive()
			if !p.accept("and") {
				e := p.mk(eOther, startTok)
				e.args = []*expr{l, lo}
				return e
			}
			hi := p.additive()
			e := p.mk(eBetween, startTok)
			e.not = not
			e.args = []*expr{l, lo, hi}
			if lo == nil || hi == nil {
				e.kind = eOther
			}
			l = e
		case p.kwAt(k, "like") || p.kwAt(k, "ilike") || p.kwAt(k, "rlike") || p.kwAt(k, "regexp") || p.kwAt(k, "similar"):
			op := p.lower(p.at(k))
			p.i += k + 1
			if op == "similar" {
				p.accept("to")
				op = "rlike"
			}
			if op == "regexp" {
				op = "rlike"
			}
			if p.kw("any") || p.kw("all") || p.kw("some") {
				all := p.kw("all")
				p.i++
				r := p.additive()
				if e := p.likeEach(startTok, l, r, op, not, all); e != nil {
					l = e
					continue
				}
				e := p.mk(eOther, startTok)
				e.args = []*expr{l, r}
				l = e
				continue
			}
			r := p.additive()
			if p.accept("escape") {
				p.additive()
			}
			e := p.mk(eLike, startTok)
			e.op = op
			e.not = not
			e.args = []*expr{l, r}
			if r == nil {
				e.kind = eOther
			}
			l = e
		default:
			return l
		}
	}
}

// fieldName is the text of a string literal naming a struct field.
func fieldName(e *expr) (string, bool) {
	if e == nil || e.kind != eLit || e.val.Kind != pexpr.KindString || e.val.Text == "" {
		return "", false
	}
	return e.val.Text, true
}

func firstOf(es []*expr) *expr {
	if len(es) == 0 {
		return nil
	}
	return es[0]
}

// likeEach expands Snowflake's x [NOT] LIKE ANY|ALL (p1, p2, …) into the
// OR (ANY, SOME) or AND (ALL) of x LIKE p1, x LIKE p2, …, negated for NOT.
// It returns nil when the list is not a list of values (a subquery).
func (p *parser) likeEach(startTok token, l, list *expr, op string, not, all bool) *expr {
	if l == nil || list == nil {
		return nil
	}
	items := []*expr{list}
	if list.kind == eTuple {
		items = list.args
	}
	var likes []*expr
	for _, it := range items {
		if it == nil || (it.kind != eLit && it.kind != eParam && it.kind != eCast && it.kind != eFunc) {
			return nil
		}
		e := p.mk(eLike, startTok)
		e.op = op
		e.args = []*expr{l, it}
		likes = append(likes, e)
	}
	if len(likes) == 0 {
		return nil
	}
	out := likes[0]
	if len(likes) > 1 {
		out = p.mk(eOr, startTok)
		if all {
			out.kind = eAnd
		}
		out.args = likes
	}
	if not {
		n := p.mk(eNot, startTok)
		n.args = []*expr{out}
		out = n
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// inList parses the operand of IN after the keyword.
func (p *parser) inList(l *expr, not bool, startTok token) *expr {
	e := p.ne(expr{kind: eIn, not: not, pos: startTok.pos})
	if !p.isOp("(") {
		// IN UNNEST(x), DuckDB IN list_column …
		r := p.additive()
		e.kind = eOther
		e.args = []*expr{l, r}
		e.end = p.at(-1).end
		return e
	}
	if p.queryStart(1) {
		p.i++
		e.sub = p.query()
		p.expectClose()
		e.args = []*expr{l}
		e.end = p.at(-1).end
		return e
	}
	p.i++
	args := make([]*expr, 1, 8)
	args[0] = l
	for !p.eof() && !p.isOp(")") {
		start := p.i
		if v := p.expr(); v != nil {
			args = append(args, v)
		}
		if !p.acceptOp(",") {
			if p.i == start {
				break
			}
			if !p.isOp(")") {
				break
			}
		}
	}
	p.expectClose()
	e.args = args
	e.end = p.at(-1).end
	return e
}

var addOps = map[string]bool{"+": true, "-": true, "||": true, "&": true, "|": true, "^": true, "<<": true, ">>": true, "->": true, "->>": true, "@>": true, "<@": true, "&&": true, "#>": true}
var mulOps = map[string]bool{"*": true, "/": true, "%": true, "//": true, "**": true}

func (p *parser) additive() *expr {
	l := p.multiplicative()
	for l != nil {
		t := p.cur()
		if t.kind != tOp || !addOps[p.text(t)] {
			return l
		}
		p.i++
		r := p.multiplicative()
		e := p.ne(expr{kind: eBinary, op: p.text(t), args: []*expr{l, r}, pos: l.pos, end: p.at(-1).end})
		if r == nil {
			e.args = e.args[:1]
		}
		l = e
	}
	return l
}

func (p *parser) multiplicative() *expr {
	l := p.unary()
	for l != nil {
		t := p.cur()
		isOp := t.kind == tOp && mulOps[p.text(t)]
		if !isOp && !(p.kw("div") || p.kw("mod")) {
			return l
		}
		p.i++
		r := p.unary()
		e := p.ne(expr{kind: eBinary, op: p.text(t), args: []*expr{l, r}, pos: l.pos, end: p.at(-1).end})
		if r == nil {
			e.args = e.args[:1]
		}
		l = e
	}
	return l
}

func (p *parser) unary() *expr {
	t := p.cur()
	if t.kind == tOp && (p.text(t) == "-" || p.text(t) == "+" || p.text(t) == "~" || p.text(t) == "!") {
		p.i++
		x := p.unary()
		if x == nil {
			return nil
		}
		if x.kind == eLit && x.val.Kind == pexpr.KindNumber && p.text(t) != "~" && p.text(t) != "!" {
			if p.text(t) == "-" {
				if strings.HasPrefix(x.val.Text, "-") {
					x.val.Text = x.val.Text[1:]
				} else {
					x.val.Text = "-" + x.val.Text
				}
			}
			x.pos = t.pos
			return x
		}
		e := p.mk(eUnary, t)
		e.op = p.text(t)
		e.args = []*expr{x}
		return e
	}
	return p.postfix()
}

// postfix parses a primary followed by ::type, [index], .field, :path,
// AT TIME ZONE and COLLATE.
func (p *parser) postfix() *expr {
	start := p.cur()
	e := p.primary()
	for e != nil {
		switch {
		case p.isOp("::"):
			p.i++
			typ := p.typeName()
			c := p.mk(eCast, start)
			c.name = typ
			c.args = []*expr{e}
			e = c
		case p.isOp("["):
			p.i++
			var idx []*expr
			p.exprList(&idx)
			for p.acceptOp(":") {
				p.exprList(&idx)
			}
			p.expectCloseBracket()
			if f, ok := fieldName(firstOf(idx)); ok && len(idx) == 1 && e.kind == eCol && p.d == DuckDB {
				// DuckDB s['f'] on a struct is the path s.f (on a MAP it
				// names a key, which has no statistics either way).
				e.parts = append(e.parts, f)
				e.end = p.at(-1).end
				continue
			}
			c := p.mk(eFunc, start)
			c.name = "subscript"
			c.args = append([]*expr{e}, idx...)
			e = c
		case p.isOp(".") && (p.at(1).kind == tIdent || p.at(1).kind == tQuoted):
			p.i++
			f := p.name(p.cur())
			p.i++
			if e.kind == eCol {
				e.parts = append(e.parts, f)
				e.end = p.at(-1).end
			} else {
				c := p.mk(eFunc, start)
				c.name = "subscript"
				c.args = []*expr{e}
				e = c
			}
		case p.isOp(".") && p.opAt(1, "*") && e.kind == eCol:
			p.i += 2
			e.kind = eStar
			e.end = p.at(-1).end
			return e
		case p.isOp(":") && p.d == Snowflake && (p.at(1).kind == tIdent || p.at(1).kind == tQuoted || p.at(1).kind == tString):
			p.i += 2
			for p.isOp(".") && (p.at(1).kind == tIdent || p.at(1).kind == tQuoted) || p.isOp("[") {
				if p.isOp("[") {
					p.skipBalanced()
				} else {
					p.i += 2
				}
			}
			c := p.mk(eFunc, start)
			c.name = "subscript"
			c.args = []*expr{e}
			e = c
		case p.kw("at") && p.kwAt(1, "time") && p.kwAt(2, "zone"):
			p.i += 3
			tz := p.primary()
			c := p.mk(eFunc, start)
			c.name = "at_time_zone"
			c.args = []*expr{e}
			if tz != nil {
				c.args = append(c.args, tz)
			}
			e = c
		case p.kw("collate"):
			p.i++
			p.i++
		default:
			return e
		}
	}
	return e
}

func (p *parser) expectCloseBracket() {
	if !p.acceptOp("]") {
		p.warnAt("expected ']'", p.cur())
	}
}

// typeName parses a type after CAST … AS or :: and returns its base name in
// lower case (timestamp(3) with time zone → "timestamp with time zone").
func (p *parser) typeName() string {
	t := p.cur()
	if t.kind != tIdent && t.kind != tQuoted {
		return ""
	}
	name := p.lower(t)
	p.i++
	for p.kw("precision") || p.kw("varying") || p.kw("unsigned") {
		p.i++
	}
	if p.isOp("(") {
		p.skipBalanced()
	}
	if p.isOp("<") {
		depth := 0
		for !p.eof() {
			if p.isOp("<") {
				depth++
			} else if p.isOp(">") {
				depth--
			} else if p.isOp(">>") {
				depth -= 2
			}
			p.i++
			if depth <= 0 {
				break
			}
		}
	}
	if (p.kw("with") || p.kw("without")) && p.kwAt(1, "time") && p.kwAt(2, "zone") {
		if p.kw("with") {
			name += " with time zone"
		}
		p.i += 3
	}
	for p.isOp("[") && p.opAt(1, "]") {
		p.i += 2
		name += "[]"
	}
	return name
}

// niladic are keywords that are values without parentheses.
var niladic = map[string]bool{
	"current_date": true, "current_timestamp": true, "current_time": true, "localtime": true,
	"localtimestamp": true, "current_user": true, "current_schema": true, "current_catalog": true,
	"session_user": true, "current_role": true, "sysdate": true, "systimestamp": true, "now": true,
}

// primary parses an operand. It returns nil without consuming anything when
// the current token cannot start an expression.
func (p *parser) primary() *expr {
	t := p.cur()
	switch t.kind {
	case tEOF:
		return nil
	case tNumber:
		p.i++
		return p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindNumber, Text: p.text(t)}, pos: t.pos, end: t.end})
	case tString:
		p.i++
		e := p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindString, Text: unescape(p.src, t)}, pos: t.pos, end: t.end})
		// Adjacent string literals concatenate ('a' 'b').
		for p.cur().kind == tString && p.d != Spark {
			e.val.Text += unescape(p.src, p.cur())
			p.i++
			e.end = p.at(-1).end
		}
		if strings.Contains(e.val.Text, "{{") {
			e.kind = eParam
			e.val.Kind = pexpr.KindParam
		}
		return e
	case tParam, tJinja:
		p.i++
		return p.ne(expr{kind: eParam, val: pexpr.Value{Kind: pexpr.KindParam, Text: p.text(t)}, pos: t.pos, end: t.end})
	case tStage:
		p.i++
		return p.ne(expr{kind: eOther, pos: t.pos, end: t.end})
	case tQuoted:
		return p.columnOrCall()
	case tOp:
		switch p.text(t) {
		case "(":
			return p.paren()
		case "*":
			p.i++
			return p.ne(expr{kind: eStar, pos: t.pos, end: t.end})
		case "[":
			p.i++
			e := p.mk(eFunc, t)
			e.name = "array"
			p.exprList(&e.args)
			p.expectCloseBracket()
			e.end = p.at(-1).end
			return e
		case "{":
			p.skipBalanced()
			return p.mk(eOther, t)
		}
		return nil
	}
	// tIdent
	l := p.lower(t)
	switch l {
	case "null":
		p.i++
		return p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindNull, Text: "null"}, pos: t.pos, end: t.end})
	case "true", "false":
		if !p.opAt(1, ".") {
			p.i++
			return p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindBool, Text: l}, pos: t.pos, end: t.end})
		}
	case "date", "timestamp", "timestamptz", "timestamp_ntz", "timestamp_ltz", "timestamp_tz", "datetime", "time", "timestamp_ns", "timestamp_ms", "timestamp_s":
		k := 1
		if l == "timestamp" && p.kwAt(1, "with") && p.kwAt(2, "time") && p.kwAt(3, "zone") {
			k = 4
		}
		if l == "timestamp" && p.kwAt(1, "without") && p.kwAt(2, "time") && p.kwAt(3, "zone") {
			k = 4
		}
		if p.at(k).kind == tString {
			p.i += k + 1
			v := pexpr.Value{Kind: pexpr.KindTimestamp, Text: unescape(p.src, p.at(-1))}
			switch l {
			case "date":
				v.Kind = pexpr.KindDate
			case "time":
				v.Kind = pexpr.KindString
			}
			return p.ne(expr{kind: eLit, val: v, pos: t.pos, end: p.at(-1).end})
		}
	case "decimal", "numeric", "double", "real", "bigint", "integer", "int", "smallint", "tinyint", "float":
		// Trino's typed literals: DECIMAL '100.00', BIGINT '5'.
		if v := p.at(1); v.kind == tString {
			if text := strings.TrimSpace(unescape(p.src, v)); isNumber(text) {
				p.i += 2
				return p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindNumber, Text: text}, pos: t.pos, end: v.end})
			}
		}
	case "varchar", "char":
		if v := p.at(1); v.kind == tString {
			p.i += 2
			return p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindString, Text: unescape(p.src, v)}, pos: t.pos, end: v.end})
		}
	case "interval":
		if e := p.interval(); e != nil {
			return e
		}
	case "case":
		return p.caseExpr()
	case "cast", "try_cast", "safe_cast":
		if p.opAt(1, "(") {
			return p.castExpr()
		}
	case "extract", "date_part", "datepart":
		if p.opAt(1, "(") && l == "extract" {
			return p.extract()
		}
	case "exists":
		if p.opAt(1, "(") && p.queryStart(2) {
			p.i += 2
			e := p.ne(expr{kind: eExists, pos: t.pos})
			e.sub = p.query()
			p.expectClose()
			e.end = p.at(-1).end
			return e
		}
	case "array":
		if p.opAt(1, "[") {
			p.i++
			return p.postfixArray(t)
		}
		if p.opAt(1, "(") && p.queryStart(2) {
			p.i += 2
			e := p.ne(expr{kind: eSubquery, pos: t.pos})
			e.sub = p.query()
			p.expectClose()
			e.end = p.at(-1).end
			return e
		}
	case "not":
		return nil
	}
	if niladic[l] && !p.opAt(1, "(") && !p.opAt(1, ".") {
		p.i++
		return p.ne(expr{kind: eFunc, name: l, pos: t.pos, end: t.end})
	}
	if exprStop[l] && !p.opAt(1, "(") {
		return nil
	}
	return p.columnOrCall()
}

func (p *parser) postfixArray(start token) *expr {
	p.i++ // [
	e := p.ne(expr{kind: eFunc, name: "array", pos: start.pos})
	p.exprList(&e.args)
	p.expectCloseBracket()
	e.end = p.at(-1).end
	return e
}

// columnOrCall parses a dotted name and, when '(' follows, a function call.
func (p *parser) columnOrCall() *expr {
	start := p.cur()
	var parts []string
	for {
		t := p.cur()
		if t.kind != tIdent && t.kind != tQuoted {
			break
		}
		parts = append(parts, p.name(t))
		p.i++
		if !p.isOp(".") || !(p.at(1).kind == tIdent || p.at(1).kind == tQuoted) {
			break
		}
		p.i++
	}
	if p.isOp("(") {
		e := p.ne(expr{kind: eFunc, name: strings.ToLower(strings.Join(parts, ".")), pos: start.pos})
		e.args = p.callArgs()
		p.callTail(e)
		e.end = p.at(-1).end
		if e.name == "exists" && len(e.args) == 0 {
			e.kind = eOther
		}
		if e.name == "struct_extract" && len(e.args) == 2 {
			if f, ok := fieldName(e.args[1]); ok && e.args[0] != nil && e.args[0].kind == eCol {
				// DuckDB struct_extract(s, 'f') is the path s.f.
				c := e.args[0]
				c.parts = append(c.parts, f)
				c.pos, c.end = e.pos, e.end
				return c
			}
		}
		return e
	}
	if p.isOp("->") && len(parts) == 1 {
		// lambda x -> body
		p.i++
		body := p.expr()
		e := p.mk(eOther, start)
		if body != nil {
			e.args = []*expr{body}
		}
		return e
	}
	return p.ne(expr{kind: eCol, parts: parts, pos: start.pos, end: p.at(-1).end})
}

// callArgs parses (args) of a function call, tolerating keyword separators
// (substring(x FROM 1 FOR 2), position(a IN b), trim(BOTH ' ' FROM x)),
// DISTINCT, ORDER BY inside aggregates and name => value arguments.
func (p *parser) callArgs() []*expr {
	if !p.acceptOp("(") {
		return nil
	}
	var args []*expr
	if p.queryStart(0) {
		e := p.ne(expr{kind: eSubquery, pos: p.cur().pos})
		e.sub = p.query()
		e.end = p.at(-1).end
		p.expectClose()
		return []*expr{e}
	}
	for !p.eof() && !p.isOp(")") {
		start := p.i
		if p.kw("distinct") || p.kw("all") || p.kw("both") || p.kw("leading") || p.kw("trailing") {
			p.i++
		}
		if (p.cur().kind == tIdent || p.cur().kind == tQuoted) && (p.opAt(1, "=>") || p.opAt(1, ":=")) {
			p.i += 2
		}
		if p.kw("order") && p.kwAt(1, "by") {
			p.i += 2
			p.exprList(nil)
			continue
		}
		if p.isOp("*") {
			p.i++
			args = append(args, p.ne(expr{kind: eStar, pos: p.at(-1).pos, end: p.at(-1).end}))
		} else if e := p.expr(); e != nil {
			args = append(args, e)
		}
		if p.acceptOp(",") || p.accept("from") || p.accept("for") || p.accept("in") || p.accept("as") || p.accept("separator") || p.accept("using") {
			continue
		}
		if p.kw("ignore") || p.kw("respect") {
			p.i += 2
			continue
		}
		if p.isOp(")") {
			break
		}
		if p.i == start {
			p.skipBalanced()
		}
	}
	p.expectClose()
	return args
}

// callTail parses FILTER (WHERE …), WITHIN GROUP (…), IGNORE NULLS, OVER (…).
func (p *parser) callTail(e *expr) {
	for {
		switch {
		case p.kw("filter") && p.opAt(1, "("):
			p.i += 2
			p.accept("where")
			if f := p.expr(); f != nil {
				e.args = append(e.args, f)
			}
			p.expectClose()
		case p.kw("within") && p.kwAt(1, "group"):
			p.i += 2
			p.skipBalanced()
		case (p.kw("ignore") || p.kw("respect")) && p.kwAt(1, "nulls"):
			p.i += 2
		case p.kw("over"):
			p.i++
			e.op = "over"
			if p.isOp("(") {
				p.skipBalanced()
			} else {
				p.i++
			}
		default:
			return
		}
	}
}

// paren parses (expr), (a, b) and (subquery).
func (p *parser) paren() *expr {
	start := p.cur()
	if p.parenQuery() {
		p.i++
		e := p.ne(expr{kind: eSubquery, pos: start.pos})
		e.sub = p.query()
		p.expectClose()
		e.end = p.at(-1).end
		return e
	}
	p.i++
	first := p.expr()
	if p.isOp(",") {
		e := p.ne(expr{kind: eTuple, pos: start.pos})
		if first != nil {
			e.args = append(e.args, first)
		}
		for p.acceptOp(",") {
			if x := p.expr(); x != nil {
				e.args = append(e.args, x)
			}
		}
		p.expectClose()
		e.end = p.at(-1).end
		return e
	}
	if first == nil {
		p.skipToClose()
		return p.mk(eOther, start)
	}
	if !p.acceptOp(")") {
		// Whatever the expression parser stopped at is lost: say so.
		if !p.eof() && !p.isOp(";") {
			p.warnAt("unparsed text in parentheses skipped", p.cur())
		}
		p.skipToClose()
	}
	return first
}

func (p *parser) caseExpr() *expr {
	start := p.cur()
	p.i++
	e := p.ne(expr{kind: eOther, pos: start.pos})
	for !p.eof() && !p.kw("end") {
		if p.kw("when") || p.kw("then") || p.kw("else") {
			p.i++
			continue
		}
		before := p.i
		if x := p.expr(); x != nil {
			e.args = append(e.args, x)
		}
		if p.i == before {
			if p.isOp(")") || p.isOp(";") {
				break
			}
			p.skipBalanced()
		}
	}
	if !p.accept("end") {
		p.warns.add("CASE without END (truncated statement?)")
	}
	e.end = p.at(-1).end
	return e
}

func (p *parser) castExpr() *expr {
	start := p.cur()
	p.i += 2
	x := p.expr()
	e := p.ne(expr{kind: eCast, pos: start.pos})
	if p.accept("as") {
		e.name = p.typeName()
	}
	for !p.eof() && !p.isOp(")") && !p.isOp(";") {
		p.skipBalanced() // FORMAT '…'
	}
	p.expectClose()
	e.end = p.at(-1).end
	if x == nil {
		e.kind = eOther
		return e
	}
	e.args = []*expr{x}
	return e
}

func (p *parser) extract() *expr {
	start := p.cur()
	p.i += 2
	e := p.ne(expr{kind: eFunc, name: "extract", pos: start.pos})
	if t := p.cur(); t.kind == tIdent || t.kind == tString || t.kind == tQuoted {
		e.unit = strings.ToLower(p.name(t))
		p.i++
	}
	if p.accept("from") || p.acceptOp(",") {
		if x := p.expr(); x != nil {
			e.args = []*expr{x}
		}
	}
	for !p.eof() && !p.isOp(")") && !p.isOp(";") {
		p.skipBalanced()
	}
	p.expectClose()
	e.end = p.at(-1).end
	return e
}

// interval parses INTERVAL '7' DAY, INTERVAL 7 DAY, INTERVAL '7 days',
// INTERVAL '1' DAY TO HOUR. It returns nil (consuming nothing) when
// "interval" is used as a name.
func (p *parser) interval() *expr {
	start := p.cur()
	k := 1
	neg := false
	if p.opAt(1, "-") || p.opAt(1, "+") {
		neg = p.opAt(1, "-")
		k = 2
	}
	v := p.at(k)
	if v.kind != tString && v.kind != tNumber {
		return nil
	}
	p.i += k + 1
	qty := p.text(v)
	if v.kind == tString {
		qty = strings.TrimSpace(unescape(p.src, v))
	}
	if neg {
		qty = "-" + qty
	}
	unit := ""
	if t := p.cur(); t.kind == tIdent && pexpr.IsUnit(p.lower(t)) {
		unit = pexpr.NormUnit(p.lower(t))
		p.i++
		if p.isOp("(") {
			p.skipBalanced()
		}
		if p.kw("to") && pexpr.IsUnit(p.lower(p.at(1))) {
			p.i += 2
		}
	}
	text := qty
	if unit != "" {
		text = qty + " " + unit
	} else {
		text = normIntervalText(qty)
	}
	return p.ne(expr{kind: eLit, val: pexpr.Value{Kind: pexpr.KindInterval, Text: text}, pos: start.pos, end: p.at(-1).end})
}

// isNumber reports whether s is a decimal number: digits with an optional
// sign, point and exponent.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	_, ok := new(big.Rat).SetString(s)
	return ok && strings.IndexFunc(s, func(r rune) bool { return r == '/' }) < 0
}

// normIntervalText normalizes '7 days' or '2 hours 30 minutes' to
// "7 day" / "2 hour 30 minute"; other text is kept as written.
func normIntervalText(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 || len(f)%2 != 0 {
		return s
	}
	for i := 1; i < len(f); i += 2 {
		if !pexpr.IsUnit(f[i]) {
			return s
		}
		f[i] = pexpr.NormUnit(f[i])
	}
	return strings.Join(f, " ")
}
