package filtertext

import (
	"fmt"
	"strings"

	"github.com/floe-project/floe/expr"
)

// Dialect is what one engine's filter text does differently. The zero
// value reads one filter expression with "-quoted identifiers, no casts and
// no functions around columns.
type Dialect struct {
	// Quotes are the bytes that quote an identifier ('"' for DuckDB, '`'
	// for Spark); a doubled quote inside stands for itself. Default: '"'.
	Quotes string
	// List makes the text a comma-separated list of filters that all hold
	// (Spark's "filters=a, b"); empty items are skipped.
	List bool
	// Markers are words that, followed by ':', prefix a filter and are
	// dropped (DuckDB's "optional:", a filter it derived from the query
	// and may skip; the predicate still holds for every returned row).
	Markers []string
	// Cast, when set, reads "literal::TYPE" (TYPE may have several words,
	// such as TIMESTAMP WITH TIME ZONE, and parameters, DECIMAL(18,2)) and
	// returns the literal typed as TYPE names it. When nil, "::" is an
	// error.
	Cast func(v expr.Value, typ string) expr.Value
	// Transforms reads a column wrapped in a function, f(col) or
	// f[n](col), as the column with Transform f (lower case).
	Transforms bool
	// NullTests are functions of one column that test it for null
	// (Catalyst's isnull, isnotnull), by lower-case name.
	NullTests map[string]expr.Op
	// Opaque are functions of one column kept as opaque terms, since no
	// predicate op says what they test (Iceberg's is_nan, not_nan).
	Opaque map[string]bool
	// Column turns a column as printed into its name; nil keeps it.
	Column func(string) string
}

// Parse parses text into a predicate tree over table (each Pred's Table).
// It returns nil, nil for an empty text or one whose filters are all
// "true". "false" and the Opaque functions become opaque nodes.
func (d Dialect) Parse(table, text string) (*expr.Node, error) {
	p := &parser{d: &d, table: table}
	if err := p.tokenize(text); err != nil {
		return nil, fmt.Errorf("parse filter %q: %w", text, err)
	}
	n, err := p.parseTop()
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
	text string // strings and identifiers unquoted
}

type parser struct {
	d     *Dialect
	table string
	toks  []token
	pos   int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '$' || c == '#' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// quoted reads the quoted text starting at s[i] (the opening quote q) and
// returns it unquoted with the index after the closing quote.
func quoted(s string, i int, q byte) (string, int, error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			b.WriteByte(q)
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	return "", 0, fmt.Errorf("unterminated quote")
}

func (p *parser) add(kind tokKind, text string) { p.toks = append(p.toks, token{kind, text}) }

func (p *parser) tokenize(s string) error {
	quotes := p.d.Quotes
	if quotes == "" {
		quotes = `"`
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			p.add(tLParen, "(")
			i++
		case c == ')':
			p.add(tRParen, ")")
			i++
		case c == ',':
			p.add(tComma, ",")
			i++
		case c == ':' && p.d.Cast != nil && i+1 < len(s) && s[i+1] == ':':
			p.add(tCast, "::")
			i += 2
		case c == '\'':
			text, j, err := quoted(s, i, '\'')
			if err != nil {
				return err
			}
			p.add(tString, text)
			i = j
		case (c == 'X' || c == 'x') && i+1 < len(s) && s[i+1] == '\'': // binary literal
			text, j, err := quoted(s, i+1, '\'')
			if err != nil {
				return err
			}
			p.add(tWord, "X'"+text+"'")
			i = j
		case strings.IndexByte(quotes, c) >= 0:
			text, j, err := quoted(s, i, c)
			if err != nil {
				return err
			}
			p.add(tIdent, text)
			i = j
		case c == '<' || c == '>' || c == '=' || c == '!':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			if s[i:j] == "!" {
				return fmt.Errorf("unexpected '!'")
			}
			p.add(tOp, s[i:j])
			i = j
		case c == '-' || c == '+' || isDigit(c):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == 'e' || s[j] == 'E' ||
				(s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				j++
			}
			if j == i+1 && !isDigit(c) {
				return fmt.Errorf("unexpected %q", c)
			}
			p.add(tNumber, s[i:j])
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '[') {
				if s[j] == '[' { // bucket[16]
					k := strings.IndexByte(s[j:], ']')
					if k < 0 {
						return fmt.Errorf("unterminated '['")
					}
					j += k
				}
				j++
			}
			w := s[i:j]
			if j < len(s) && s[j] == ':' && (j+1 == len(s) || s[j+1] != ':') && p.isMarker(w) {
				j++ // "optional:" is dropped
			} else {
				p.add(tWord, w)
			}
			i = j
		default:
			return fmt.Errorf("unexpected %q", c)
		}
	}
	return nil
}

func (p *parser) isMarker(w string) bool {
	for _, m := range p.d.Markers {
		if strings.EqualFold(m, w) {
			return true
		}
	}
	return false
}

func (p *parser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *parser) next(kind tokKind) bool {
	if t := p.peek(); t != nil && t.kind == kind {
		p.pos++
		return true
	}
	return false
}

func (p *parser) keyword(kw string) bool {
	if t := p.peek(); t != nil && t.kind == tWord && strings.EqualFold(t.text, kw) {
		p.pos++
		return true
	}
	return false
}

// parseTop reads the whole text: one expression, or with Dialect.List
// the AND of comma-separated ones.
func (p *parser) parseTop() (*expr.Node, error) {
	if len(p.toks) == 0 {
		return nil, nil
	}
	if !p.d.List {
		return p.parseOr()
	}
	var all *expr.Node
	for p.pos < len(p.toks) {
		if p.next(tComma) {
			continue
		}
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = n
		} else {
			all = combine(expr.NodeAnd, all, n)
		}
		if !p.next(tComma) {
			break
		}
	}
	return all, nil
}

func (p *parser) parseOr() (*expr.Node, error) { return p.parseChain("OR", expr.NodeOr, p.parseAnd) }

func (p *parser) parseAnd() (*expr.Node, error) {
	return p.parseChain("AND", expr.NodeAnd, p.parseUnary)
}

// parseChain reads operand (kw operand)… as one node of kind.
func (p *parser) parseChain(kw string, kind expr.NodeKind, operand func() (*expr.Node, error)) (*expr.Node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for p.keyword(kw) {
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = combine(kind, left, right)
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

func opaqueFalse() *expr.Node { return &expr.Node{Kind: expr.NodeOpaque, Text: "false"} }

func (p *parser) parseUnary() (*expr.Node, error) {
	if p.keyword("NOT") {
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if n == nil {
			return opaqueFalse(), nil
		}
		return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{n}}, nil
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (*expr.Node, error) {
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
		if !p.next(tRParen) {
			return nil, fmt.Errorf("missing ')'")
		}
		return n, nil
	}
	if t.kind != tWord && t.kind != tIdent {
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	if t.kind == tWord {
		switch strings.ToLower(t.text) {
		case "true":
			p.pos++
			return nil, nil
		case "false":
			p.pos++
			return opaqueFalse(), nil
		}
	}
	col, fn, err := p.parseTerm()
	if err != nil {
		return nil, err
	}
	if p.d.Opaque[fn] {
		return &expr.Node{Kind: expr.NodeOpaque, Text: fn + "(" + col + ")"}, nil
	}
	pred := &expr.Pred{Table: p.table, Column: col, Transform: fn}
	if op, ok := p.d.NullTests[fn]; ok {
		pred.Transform, pred.Op = "", op
		return &expr.Node{Kind: expr.NodePred, Pred: pred}, nil
	}
	if err := p.parseTest(pred); err != nil {
		return nil, err
	}
	return &expr.Node{Kind: expr.NodePred, Pred: pred}, nil
}

// parseTerm reads a column, or with Dialect.Transforms fn(column).
func (p *parser) parseTerm() (col, fn string, err error) {
	t := p.toks[p.pos]
	p.pos++
	if !p.d.Transforms || t.kind != tWord || !p.next(tLParen) {
		return p.column(t.text), "", nil
	}
	c := p.peek()
	if c == nil || c.kind != tWord && c.kind != tIdent {
		return "", "", fmt.Errorf("expected a column in %s(…)", t.text)
	}
	p.pos++
	if !p.next(tRParen) {
		return "", "", fmt.Errorf("missing ')' after %s(%s", t.text, c.text)
	}
	return p.column(c.text), strings.ToLower(t.text), nil
}

func (p *parser) column(s string) string {
	if p.d.Column != nil {
		return p.d.Column(s)
	}
	return s
}

// parseTest reads what follows the column: IS [NOT] NULL, [NOT] IN (…),
// [NOT] LIKE 'p', or a comparison with a literal.
func (p *parser) parseTest(pred *expr.Pred) error {
	var err error
	switch {
	case p.keyword("IS"):
		not := p.keyword("NOT")
		if !p.keyword("NULL") {
			return fmt.Errorf("expected NULL after IS")
		}
		pred.Op = expr.OpIsNull
		if not {
			pred.Op = expr.OpIsNotNull
		}
		return nil
	case p.keyword("NOT"):
		switch {
		case p.keyword("IN"):
			pred.Op = expr.OpNotIn
			pred.Values, err = p.parseList()
		case p.keyword("LIKE"):
			pred.Op = expr.OpNotLike
			pred.Values, err = p.parseOne()
		default:
			return fmt.Errorf("expected IN or LIKE after NOT")
		}
		return err
	case p.keyword("IN"):
		pred.Op = expr.OpIn
		pred.Values, err = p.parseList()
		return err
	case p.keyword("LIKE"):
		pred.Op = expr.OpLike
		pred.Values, err = p.parseOne()
		return err
	}
	op := p.peek()
	if op == nil || op.kind != tOp {
		return fmt.Errorf("expected an operator after %s", pred.Column)
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
		return fmt.Errorf("unknown operator %q", op.text)
	}
	pred.Values, err = p.parseOne()
	return err
}

func (p *parser) parseOne() ([]expr.Value, error) {
	v, err := p.parseValue()
	if err != nil {
		return nil, err
	}
	return []expr.Value{v}, nil
}

func (p *parser) parseList() ([]expr.Value, error) {
	if !p.next(tLParen) {
		return nil, fmt.Errorf("expected '(' after IN")
	}
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

// parseValue reads a literal and, with Dialect.Cast, an optional ::TYPE.
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
	if !p.next(tCast) {
		return v, nil
	}
	var typ []string
	for {
		w := p.peek()
		if w == nil || w.kind != tWord || len(typ) > 0 && isKeyword(w.text) {
			break
		}
		typ = append(typ, strings.ToUpper(w.text))
		p.pos++
	}
	if len(typ) == 0 {
		return expr.Value{}, fmt.Errorf("expected a type after ::")
	}
	if p.next(tLParen) { // DECIMAL(18,3)
		for p.pos < len(p.toks) && p.toks[p.pos].kind != tRParen {
			p.pos++
		}
		if !p.next(tRParen) {
			return expr.Value{}, fmt.Errorf("unterminated type parameters")
		}
	}
	return p.d.Cast(v, strings.Join(typ, " ")), nil
}

func isKeyword(w string) bool {
	switch strings.ToUpper(w) {
	case "AND", "OR", "NOT", "IS", "IN", "LIKE":
		return true
	}
	return false
}
