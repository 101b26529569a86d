package duckdb

import (
	"fmt"
	"github.com/floe-project/floe/expr"
	"strings"
)

// ParseFilter parses one entry of a DuckDB profile's TABLE_SCAN Filters
// into a predicate tree over table. It reads both layouts:
// 1.x "order_date>='2024-02-01 00:00:00'::TIMESTAMP", "a>=1 AND a<=5",
// "optional: customer_id IN (1, 3)" and 2.x "(customer_id = 3)",
// "((d >= '…'::TIMESTAMP) AND (d <= '…'::TIMESTAMP))". The "optional:"
// marker (a filter DuckDB derived from the query that it may skip) is
// dropped; the predicate still holds for every row the query returns. A
// cast literal takes its type: ::DATE is Kind date, ::TIMESTAMP… Kind
// timestamp, numeric types Kind number.
func ParseFilter(table, text string) (*expr.Node, error) {
	p := &parser{table: table}
	if err := p.tokenize(text); err != nil {
		return nil, fmt.Errorf("parse filter %q: %w", text, err)
	}
	if len(p.toks) == 0 {
		return nil, nil
	}
	n, err := p.parseOr()
	if err != nil {
		return nil, fmt.Errorf("parse filter %q: %w", text, err)
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("parse filter %q: unexpected %q", text, p.toks[p.pos].text)
	}
	return n, nil
}

type tokKind int

const (
	tWord tokKind = iota
	tIdent
	tString
	tNumber
	tOp
	tLParen
	tRParen
	tComma
	tCast
)

type token struct {
	kind tokKind
	text string
}

type parser struct {
	table string
	toks  []token
	pos   int
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '#' || c >= 0x80
}

func (p *parser) tokenize(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			p.toks = append(p.toks, token{tLParen, "("})
			i++
		case c == ')':
			p.toks = append(p.toks, token{tRParen, ")"})
			i++
		case c == ',':
			p.toks = append(p.toks, token{tComma, ","})
			i++
		case c == ':' && i+1 < len(s) && s[i+1] == ':':
			p.toks = append(p.toks, token{tCast, "::"})
			i += 2
		case c == ':':
			i++ // the colon of "optional:"
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return fmt.Errorf("unterminated quote")
			}
			kind := tString
			if c == '"' {
				kind = tIdent
			}
			p.toks = append(p.toks, token{kind, b.String()})
			i = j
		case c == '<' || c == '>' || c == '=' || c == '!':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			if s[i:j] == "!" {
				return fmt.Errorf("unexpected '!'")
			}
			p.toks = append(p.toks, token{tOp, s[i:j]})
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			if j == i+1 && c == '-' {
				return fmt.Errorf("unexpected '-'")
			}
			p.toks = append(p.toks, token{tNumber, s[i:j]})
			i = j
		case wordByte(c):
			j := i
			for j < len(s) && wordByte(s[j]) {
				j++
			}
			p.toks = append(p.toks, token{tWord, s[i:j]})
			i = j
		default:
			return fmt.Errorf("unexpected %q", c)
		}
	}
	return nil
}

func (p *parser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *parser) keyword(kw string) bool {
	if t := p.peek(); t != nil && t.kind == tWord && strings.EqualFold(t.text, kw) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) parseOr() (*expr.Node, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = join(expr.NodeOr, left, right)
	}
	return left, nil
}

func (p *parser) parseAnd() (*expr.Node, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		left = join(expr.NodeAnd, left, right)
	}
	return left, nil
}

func join(kind expr.NodeKind, a, b *expr.Node) *expr.Node {
	var ch []*expr.Node
	for _, n := range []*expr.Node{a, b} {
		if n.Kind == kind {
			ch = append(ch, n.Children...)
		} else {
			ch = append(ch, n)
		}
	}
	return &expr.Node{Kind: kind, Children: ch}
}

func (p *parser) parseUnary() (*expr.Node, error) {
	p.keyword("optional")
	if p.keyword("NOT") {
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{n}}, nil
	}
	t := p.peek()
	if t == nil {
		return nil, fmt.Errorf("unexpected end")
	}
	if t.kind == tLParen {
		p.pos++
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if r := p.peek(); r == nil || r.kind != tRParen {
			return nil, fmt.Errorf("missing ')'")
		}
		p.pos++
		return n, nil
	}
	if t.kind != tWord && t.kind != tIdent {
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	p.pos++
	pred := &expr.Pred{Table: p.table, Column: t.text}
	var err error
	switch {
	case p.keyword("IS"):
		not := p.keyword("NOT")
		if !p.keyword("NULL") {
			return nil, fmt.Errorf("expected NULL after IS")
		}
		pred.Op = expr.OpIsNull
		if not {
			pred.Op = expr.OpIsNotNull
		}
	case p.keyword("NOT"):
		if !p.keyword("IN") {
			return nil, fmt.Errorf("expected IN after NOT")
		}
		pred.Op = expr.OpNotIn
		pred.Values, err = p.parseList()
	case p.keyword("IN"):
		pred.Op = expr.OpIn
		pred.Values, err = p.parseList()
	default:
		op := p.peek()
		if op == nil || op.kind != tOp {
			return nil, fmt.Errorf("expected an operator after %s", t.text)
		}
		p.pos++
		switch op.text {
		case "=", "==":
			pred.Op = expr.OpEq
		case "!=", "<>":
			pred.Op = expr.OpNotEq
		case "<":
			pred.Op = expr.OpLt
		case "<=":
			pred.Op = expr.OpLtEq
		case ">":
			pred.Op = expr.OpGt
		case ">=":
			pred.Op = expr.OpGtEq
		default:
			return nil, fmt.Errorf("unknown operator %q", op.text)
		}
		var v expr.Value
		v, err = p.parseValue()
		pred.Values = []expr.Value{v}
	}
	if err != nil {
		return nil, err
	}
	return &expr.Node{Kind: expr.NodePred, Pred: pred}, nil
}

func (p *parser) parseList() ([]expr.Value, error) {
	if t := p.peek(); t == nil || t.kind != tLParen {
		return nil, fmt.Errorf("expected '(' after IN")
	}
	p.pos++
	var vals []expr.Value
	for {
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		t := p.peek()
		if t == nil {
			return nil, fmt.Errorf("unterminated IN list")
		}
		p.pos++
		if t.kind == tRParen {
			return vals, nil
		}
		if t.kind != tComma {
			return nil, fmt.Errorf("unexpected %q in IN list", t.text)
		}
	}
}

// parseValue reads a literal and an optional ::TYPE cast.
func (p *parser) parseValue() (expr.Value, error) {
	t := p.peek()
	if t == nil {
		return expr.Value{}, fmt.Errorf("expected a literal")
	}
	p.pos++
	var v expr.Value
	switch t.kind {
	case tString:
		v = expr.Value{Kind: expr.KindString, Text: t.text}
	case tNumber:
		v = expr.Value{Kind: expr.KindNumber, Text: t.text}
	case tWord:
		switch strings.ToLower(t.text) {
		case "null":
			v = expr.Value{Kind: expr.KindNull, Text: "null"}
		case "true", "false":
			v = expr.Value{Kind: expr.KindBool, Text: strings.ToLower(t.text)}
		default:
			v = expr.Value{Kind: expr.KindUnknown, Text: t.text}
		}
	default:
		return expr.Value{}, fmt.Errorf("expected a literal, got %q", t.text)
	}
	if c := p.peek(); c != nil && c.kind == tCast {
		p.pos++
		var typ []string
		for {
			w := p.peek()
			if w == nil || w.kind != tWord || (len(typ) > 0 && isKeyword(w.text)) {
				break
			}
			typ = append(typ, strings.ToUpper(w.text))
			p.pos++
		}
		if len(typ) == 0 {
			return expr.Value{}, fmt.Errorf("expected a type after ::")
		}
		if l := p.peek(); l != nil && l.kind == tLParen { // DECIMAL(18,3)
			for p.pos < len(p.toks) && p.toks[p.pos].kind != tRParen {
				p.pos++
			}
			if p.pos == len(p.toks) {
				return expr.Value{}, fmt.Errorf("unterminated type parameters")
			}
			p.pos++
		}
		v = castValue(v, strings.Join(typ, " "))
	}
	return v, nil
}

func isKeyword(w string) bool {
	switch strings.ToUpper(w) {
	case "AND", "OR", "NOT", "IS", "IN":
		return true
	}
	return false
}

func castValue(v expr.Value, typ string) expr.Value {
	if v.Kind == expr.KindNull {
		return v
	}
	switch {
	case typ == "DATE":
		v.Kind = expr.KindDate
	case strings.HasPrefix(typ, "TIMESTAMP"):
		v.Kind = expr.KindTimestamp
	case typ == "VARCHAR" || typ == "TEXT" || typ == "STRING":
		v.Kind = expr.KindString
	case strings.HasPrefix(typ, "INTERVAL"):
		v.Kind = expr.KindInterval
	case strings.Contains(typ, "INT") || strings.HasPrefix(typ, "DECIMAL") || typ == "DOUBLE" || typ == "FLOAT" || typ == "REAL" || typ == "NUMERIC":
		v.Kind = expr.KindNumber
	case typ == "BOOLEAN":
		v.Kind = expr.KindBool
	}
	return v
}
