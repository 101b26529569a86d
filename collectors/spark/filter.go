package spark

import (
	"fmt"
	"github.com/floe-project/floe/expr"
	"strings"
)

// ParseFilters parses the filter list Iceberg prints in a Spark scan
// description ("[filters=a IS NOT NULL, a >= 19814, groupedBy=]", the part
// after "filters=") into a predicate tree over table: the AND of the
// comma-separated filters. It returns nil for an empty list. Grammar
// (Spark3Util.describe): col IS [NOT] NULL, is_nan(col), not_nan(col),
// col <op> lit, col [NOT] LIKE 'p%', col [NOT] IN (lits), NOT (e),
// (a AND b), (a OR b), true, false; a column may be wrapped in a transform
// (day(ts), bucket[16](id)). DATE literals are day numbers and TIMESTAMP
// literals epoch microseconds; they stay Kind number here (see [Retype]).
func ParseFilters(table, text string) (*expr.Node, error) {
	items := splitTopLevel(text)
	var nodes []*expr.Node
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		p := &filterParser{table: table}
		if err := p.tokenize(it); err != nil {
			return nil, fmt.Errorf("parse filter %q: %w", it, err)
		}
		n, err := p.parseOr()
		if err != nil {
			return nil, fmt.Errorf("parse filter %q: %w", it, err)
		}
		if p.pos < len(p.toks) {
			return nil, fmt.Errorf("parse filter %q: unexpected %q", it, p.toks[p.pos].text)
		}
		if n != nil {
			nodes = append(nodes, n)
		}
	}
	switch len(nodes) {
	case 0:
		return nil, nil
	case 1:
		return nodes[0], nil
	}
	return &expr.Node{Kind: expr.NodeAnd, Children: nodes}, nil
}

// splitTopLevel splits on commas outside quotes, parentheses and brackets.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

type tokKind int

const (
	tWord tokKind = iota
	tString
	tNumber
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	text string // strings unquoted
}

type filterParser struct {
	table string
	toks  []token
	pos   int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '$' || c == '#' || c >= 0x80
}

func (p *filterParser) tokenize(s string) error {
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
		case c == '\'' || ((c == 'X' || c == 'x') && i+1 < len(s) && s[i+1] == '\''):
			bin := c != '\''
			if bin {
				i++
			}
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
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
				return fmt.Errorf("unterminated string")
			}
			kind := tString
			text := b.String()
			if bin {
				kind, text = tWord, "X'"+text+"'"
			}
			p.toks = append(p.toks, token{kind, text})
			i = j
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return fmt.Errorf("unterminated quoted name")
			}
			p.toks = append(p.toks, token{tWord, s[i+1 : i+1+j]})
			i += j + 2
		case c == '<' || c == '>' || c == '=' || c == '!':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			op := s[i:j]
			if op == "!" {
				return fmt.Errorf("unexpected '!'")
			}
			p.toks = append(p.toks, token{tOp, op})
			i = j
		case c == '-' || c == '+' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'E' || s[j] == 'e' || ((s[j] == '-' || s[j] == '+') && (s[j-1] == 'E' || s[j-1] == 'e'))) {
				j++
			}
			if j == i+1 && (c == '-' || c == '+') {
				return fmt.Errorf("unexpected %q", c)
			}
			p.toks = append(p.toks, token{tNumber, s[i:j]})
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '[' || s[j] == ']') {
				if s[j] == '[' {
					k := strings.IndexByte(s[j:], ']')
					if k < 0 {
						return fmt.Errorf("unterminated '['")
					}
					j += k + 1
					continue
				}
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

func (p *filterParser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *filterParser) keyword(kw string) bool {
	if t := p.peek(); t != nil && t.kind == tWord && strings.EqualFold(t.text, kw) {
		p.pos++
		return true
	}
	return false
}

func (p *filterParser) parseOr() (*expr.Node, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = combine(expr.NodeOr, left, right)
	}
	return left, nil
}

func (p *filterParser) parseAnd() (*expr.Node, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		left = combine(expr.NodeAnd, left, right)
	}
	return left, nil
}

// combine joins two nodes, flattening nested nodes of the same kind. A nil
// side is "true": it vanishes from AND and makes OR true (nil).
func combine(kind expr.NodeKind, a, b *expr.Node) *expr.Node {
	if a == nil || b == nil {
		if kind == expr.NodeOr {
			return nil
		}
		if a == nil {
			return b
		}
		return a
	}
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

func (p *filterParser) parseUnary() (*expr.Node, error) {
	if p.keyword("NOT") {
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if n == nil {
			return &expr.Node{Kind: expr.NodeOpaque, Text: "false"}, nil
		}
		return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{n}}, nil
	}
	return p.parsePrimary()
}

func (p *filterParser) parsePrimary() (*expr.Node, error) {
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
		if t := p.peek(); t == nil || t.kind != tRParen {
			return nil, fmt.Errorf("missing ')'")
		}
		p.pos++
		return n, nil
	}
	if t.kind != tWord {
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	switch strings.ToLower(t.text) {
	case "true":
		p.pos++
		return nil, nil
	case "false":
		p.pos++
		return &expr.Node{Kind: expr.NodeOpaque, Text: "false"}, nil
	}
	col, transform, err := p.parseTerm()
	if err != nil {
		return nil, err
	}
	if transform == "is_nan" || transform == "not_nan" {
		return &expr.Node{Kind: expr.NodeOpaque, Text: transform + "(" + col + ")"}, nil
	}
	pred := &expr.Pred{Table: p.table, Column: col, Transform: transform}
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
		switch {
		case p.keyword("IN"):
			pred.Op = expr.OpNotIn
			if pred.Values, err = p.parseList(); err != nil {
				return nil, err
			}
		case p.keyword("LIKE"):
			pred.Op = expr.OpNotLike
			if pred.Values, err = p.parseValues(1); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("expected IN or LIKE after NOT")
		}
	case p.keyword("IN"):
		pred.Op = expr.OpIn
		if pred.Values, err = p.parseList(); err != nil {
			return nil, err
		}
	case p.keyword("LIKE"):
		pred.Op = expr.OpLike
		if pred.Values, err = p.parseValues(1); err != nil {
			return nil, err
		}
	default:
		t := p.peek()
		if t == nil || t.kind != tOp {
			return nil, fmt.Errorf("expected an operator after %s", col)
		}
		p.pos++
		switch t.text {
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
			return nil, fmt.Errorf("unknown operator %q", t.text)
		}
		if pred.Values, err = p.parseValues(1); err != nil {
			return nil, err
		}
	}
	return &expr.Node{Kind: expr.NodePred, Pred: pred}, nil
}

// parseTerm reads a column or transform(column).
func (p *filterParser) parseTerm() (col, transform string, err error) {
	t := p.peek()
	p.pos++
	if n := p.peek(); n != nil && n.kind == tLParen {
		p.pos++
		c := p.peek()
		if c == nil || c.kind != tWord {
			return "", "", fmt.Errorf("expected a column in %s(…)", t.text)
		}
		p.pos++
		if r := p.peek(); r == nil || r.kind != tRParen {
			return "", "", fmt.Errorf("missing ')' after %s(%s", t.text, c.text)
		}
		p.pos++
		return c.text, strings.ToLower(t.text), nil
	}
	return t.text, "", nil
}

func (p *filterParser) parseList() ([]expr.Value, error) {
	if t := p.peek(); t == nil || t.kind != tLParen {
		return nil, fmt.Errorf("expected '(' after IN")
	}
	p.pos++
	var vals []expr.Value
	for {
		v, err := p.parseValues(1)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v...)
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

func (p *filterParser) parseValues(n int) ([]expr.Value, error) {
	out := make([]expr.Value, 0, n)
	for range n {
		t := p.peek()
		if t == nil {
			return nil, fmt.Errorf("expected a literal")
		}
		p.pos++
		switch t.kind {
		case tString:
			out = append(out, expr.Value{Kind: expr.KindString, Text: t.text})
		case tNumber:
			out = append(out, expr.Value{Kind: expr.KindNumber, Text: t.text})
		case tWord:
			switch strings.ToLower(t.text) {
			case "null":
				out = append(out, expr.Value{Kind: expr.KindNull, Text: "null"})
			case "true", "false":
				out = append(out, expr.Value{Kind: expr.KindBool, Text: strings.ToLower(t.text)})
			default:
				out = append(out, expr.Value{Kind: expr.KindUnknown, Text: t.text})
			}
		default:
			return nil, fmt.Errorf("expected a literal, got %q", t.text)
		}
	}
	return out, nil
}
