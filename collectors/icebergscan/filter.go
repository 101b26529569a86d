package icebergscan

import (
	"bytes"
	"encoding/json"
	"github.com/floe-project/floe/expr"
	"strings"
)

// maxDepth bounds the conversion's recursion. Iceberg builds long OR
// chains as left-deep trees, so real filters can nest hundreds deep;
// encoding/json itself stops at 10,000.
const maxDepth = 5000

var ops = map[string]expr.Op{
	"eq":              expr.OpEq,
	"not-eq":          expr.OpNotEq,
	"lt":              expr.OpLt,
	"lt-eq":           expr.OpLtEq,
	"gt":              expr.OpGt,
	"gt-eq":           expr.OpGtEq,
	"in":              expr.OpIn,
	"not-in":          expr.OpNotIn,
	"is-null":         expr.OpIsNull,
	"not-null":        expr.OpIsNotNull,
	"starts-with":     expr.OpLike,
	"not-starts-with": expr.OpNotLike,
}

// convert turns an Iceberg JSON expression into a predicate tree over
// table. A nil result means "no filter" (absent or always true). Shapes it
// does not know become opaque nodes; convert never fails. The expression
// is decoded once into generic values, so the work is linear in its size
// however deep it nests.
func convert(raw json.RawMessage, table string) *expr.Node {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return opaque(clip(string(raw)))
	}
	return conv(v, table, 0)
}

func conv(v any, table string, depth int) *expr.Node {
	if depth > maxDepth {
		return opaque("expression nested too deep")
	}
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		if x {
			return nil
		}
		return opaque("false")
	case string:
		switch strings.ToLower(x) {
		case "true":
			return nil
		case "false":
			return opaque("false")
		}
		return opaque(clip(x))
	case map[string]any:
		return convObject(x, table, depth)
	}
	return opaque(text(v))
}

func convObject(m map[string]any, table string, depth int) *expr.Node {
	typ, _ := m["type"].(string)
	typ = strings.ToLower(typ)
	switch typ {
	case "true":
		return nil
	case "false":
		return opaque("false")
	case "and":
		l, r := conv(m["left"], table, depth+1), conv(m["right"], table, depth+1)
		switch {
		case l == nil:
			return r
		case r == nil:
			return l
		}
		return flatten(expr.NodeAnd, l, r)
	case "or":
		l, r := conv(m["left"], table, depth+1), conv(m["right"], table, depth+1)
		if l == nil || r == nil {
			return nil // x OR true
		}
		return flatten(expr.NodeOr, l, r)
	case "not":
		c := conv(m["child"], table, depth+1)
		if c == nil {
			return opaque("false") // NOT true
		}
		return &expr.Node{Kind: expr.NodeNot, Children: []*expr.Node{c}}
	}
	col, transform, ok := term(m["term"], 0)
	if !ok {
		return opaque(text(m))
	}
	switch typ {
	case "is-nan", "not-nan":
		return opaque(strings.ReplaceAll(typ, "-", "_") + "(" + col + ")")
	}
	op, ok := ops[typ]
	if !ok {
		return opaque(text(m))
	}
	p := &expr.Pred{Table: table, Column: col, Op: op, Transform: transform, Values: []expr.Value{}}
	switch op {
	case expr.OpIsNull, expr.OpIsNotNull:
	case expr.OpIn, expr.OpNotIn:
		vals, _ := m["values"].([]any)
		if len(vals) == 0 {
			if v, ok := m["value"]; ok {
				vals = []any{v}
			}
		}
		for _, v := range vals {
			p.Values = append(p.Values, value(v))
		}
	default:
		raw, ok := m["value"]
		if !ok {
			return opaque(text(m))
		}
		v := value(raw)
		if (op == expr.OpLike || op == expr.OpNotLike) && v.Kind == expr.KindString {
			v.Text += "%"
		}
		p.Values = append(p.Values, v)
	}
	return &expr.Node{Kind: expr.NodePred, Pred: p}
}

// term reads a term: a column name, {"type":"reference","term":"x"}, or
// {"type":"transform","transform":"day","term":…}.
func term(v any, depth int) (col, transform string, ok bool) {
	if depth > 3 {
		return "", "", false
	}
	switch x := v.(type) {
	case string:
		return x, "", x != ""
	case map[string]any:
		typ, _ := x["type"].(string)
		switch strings.ToLower(typ) {
		case "reference", "ref", "":
			if name, _ := x["name"].(string); name != "" && x["term"] == nil {
				return name, "", true
			}
			col, _, ok := term(x["term"], depth+1)
			return col, "", ok
		case "transform":
			col, _, ok := term(x["term"], depth+1)
			tr, _ := x["transform"].(string)
			tr = strings.ToLower(strings.TrimSpace(tr))
			if tr == "identity" {
				tr = ""
			}
			return col, tr, ok
		}
	}
	return "", "", false
}

// value types a literal. Sanitized literals are strings in parentheses.
func value(v any) expr.Value {
	switch x := v.(type) {
	case string:
		if len(x) >= 2 && x[0] == '(' && x[len(x)-1] == ')' {
			return expr.Value{Kind: expr.KindUnknown, Text: x}
		}
		return expr.Value{Kind: expr.KindString, Text: x}
	case nil:
		return expr.Value{Kind: expr.KindNull, Text: "null"}
	case bool:
		if x {
			return expr.Value{Kind: expr.KindBool, Text: "true"}
		}
		return expr.Value{Kind: expr.KindBool, Text: "false"}
	case json.Number:
		return expr.Value{Kind: expr.KindNumber, Text: x.String()}
	}
	return expr.Value{Kind: expr.KindUnknown, Text: text(v)}
}

// text is v as compact JSON (object keys sorted), clipped.
func text(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unprintable expression"
	}
	return clip(string(b))
}

func opaque(text string) *expr.Node {
	return &expr.Node{Kind: expr.NodeOpaque, Text: text}
}

// flatten joins l and r under kind, lifting children of the same kind so
// a chain of ands is one node. It reuses l when l is already of kind
// (nodes are fresh per conversion), so a left-deep chain of n ORs takes
// O(n), not O(n²).
func flatten(kind expr.NodeKind, l, r *expr.Node) *expr.Node {
	n := l
	if l.Kind != kind {
		n = &expr.Node{Kind: kind, Children: []*expr.Node{l}}
	}
	if r.Kind == kind {
		n.Children = append(n.Children, r.Children...)
	} else {
		n.Children = append(n.Children, r)
	}
	return n
}

func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// columns lists the columns of the tree's leaves (opaque is_nan/not_nan
// included), in first-seen order.
func columns(n *expr.Node, out []string, seen map[string]bool) []string {
	if n == nil {
		return out
	}
	add := func(c string) []string {
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
		return out
	}
	switch n.Kind {
	case expr.NodePred:
		out = add(n.Pred.Column)
	case expr.NodeOpaque:
		for _, fn := range []string{"is_nan(", "not_nan("} {
			if strings.HasPrefix(n.Text, fn) && strings.HasSuffix(n.Text, ")") {
				out = add(n.Text[len(fn) : len(n.Text)-1])
			}
		}
	}
	for _, c := range n.Children {
		out = columns(c, out, seen)
	}
	return out
}
