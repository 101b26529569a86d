package icebergscan

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/floe-project/floe/analyzer/extract"
)

// maxDepth bounds filter nesting, so a hostile body cannot exhaust the
// stack.
const maxDepth = 200

var ops = map[string]extract.Op{
	"eq":              extract.OpEq,
	"not-eq":          extract.OpNotEq,
	"lt":              extract.OpLt,
	"lt-eq":           extract.OpLtEq,
	"gt":              extract.OpGt,
	"gt-eq":           extract.OpGtEq,
	"in":              extract.OpIn,
	"not-in":          extract.OpNotIn,
	"is-null":         extract.OpIsNull,
	"not-null":        extract.OpIsNotNull,
	"starts-with":     extract.OpLike,
	"not-starts-with": extract.OpNotLike,
}

type wireExpr struct {
	Type   string            `json:"type"`
	Left   json.RawMessage   `json:"left"`
	Right  json.RawMessage   `json:"right"`
	Child  json.RawMessage   `json:"child"`
	Term   json.RawMessage   `json:"term"`
	Value  json.RawMessage   `json:"value"`
	Values []json.RawMessage `json:"values"`
}

type wireTerm struct {
	Type      string          `json:"type"`
	Transform string          `json:"transform"`
	Term      json.RawMessage `json:"term"`
	Name      string          `json:"name"`
}

// convert turns an Iceberg JSON expression into a predicate tree over
// table. A nil result means "no filter" (absent or always true). Shapes it
// does not know become opaque nodes; convert never fails.
func convert(raw json.RawMessage, table string) *extract.Node {
	return conv(bytes.TrimSpace(raw), table, 0)
}

func conv(raw []byte, table string, depth int) *extract.Node {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("true")) {
		return nil
	}
	if depth > maxDepth {
		return opaque("expression nested too deep")
	}
	if bytes.Equal(raw, []byte("false")) {
		return opaque("false")
	}
	var e wireExpr
	if err := json.Unmarshal(raw, &e); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			switch strings.ToLower(s) {
			case "true":
				return nil
			case "false":
				return opaque("false")
			}
		}
		return opaque(clip(string(raw)))
	}
	typ := strings.ToLower(e.Type)
	switch typ {
	case "true":
		return nil
	case "false":
		return opaque("false")
	case "and":
		l, r := conv(bytes.TrimSpace(e.Left), table, depth+1), conv(bytes.TrimSpace(e.Right), table, depth+1)
		switch {
		case l == nil:
			return r
		case r == nil:
			return l
		}
		return flatten(extract.NodeAnd, l, r)
	case "or":
		l, r := conv(bytes.TrimSpace(e.Left), table, depth+1), conv(bytes.TrimSpace(e.Right), table, depth+1)
		if l == nil || r == nil {
			return nil // x OR true
		}
		return flatten(extract.NodeOr, l, r)
	case "not":
		c := conv(bytes.TrimSpace(e.Child), table, depth+1)
		if c == nil {
			return opaque("false") // NOT true
		}
		return &extract.Node{Kind: extract.NodeNot, Children: []*extract.Node{c}}
	}
	col, transform, ok := term(e.Term, 0)
	if !ok {
		return opaque(clip(string(raw)))
	}
	switch typ {
	case "is-nan", "not-nan":
		return opaque(strings.ReplaceAll(typ, "-", "_") + "(" + col + ")")
	}
	op, ok := ops[typ]
	if !ok {
		return opaque(clip(string(raw)))
	}
	p := &extract.Pred{Table: table, Column: col, Op: op, Transform: transform, Values: []extract.Value{}}
	switch op {
	case extract.OpIsNull, extract.OpIsNotNull:
	case extract.OpIn, extract.OpNotIn:
		vals := e.Values
		if len(vals) == 0 && len(e.Value) > 0 {
			vals = []json.RawMessage{e.Value}
		}
		for _, v := range vals {
			p.Values = append(p.Values, value(v))
		}
	default:
		if len(e.Value) == 0 {
			return opaque(clip(string(raw)))
		}
		v := value(e.Value)
		if op == extract.OpLike || op == extract.OpNotLike {
			if v.Kind == extract.KindString {
				v.Text += "%"
			}
		}
		p.Values = append(p.Values, v)
	}
	return &extract.Node{Kind: extract.NodePred, Pred: p}
}

// term reads a term: a column name, {"type":"reference","term":"x"}, or
// {"type":"transform","transform":"day","term":…}.
func term(raw json.RawMessage, depth int) (col, transform string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || depth > 3 {
		return "", "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, "", s != ""
	}
	var t wireTerm
	if json.Unmarshal(raw, &t) != nil {
		return "", "", false
	}
	switch strings.ToLower(t.Type) {
	case "reference", "ref", "":
		if t.Name != "" && len(t.Term) == 0 {
			return t.Name, "", true
		}
		col, _, ok := term(t.Term, depth+1)
		return col, "", ok
	case "transform":
		col, _, ok := term(t.Term, depth+1)
		tr := strings.ToLower(strings.TrimSpace(t.Transform))
		if tr == "identity" {
			tr = ""
		}
		return col, tr, ok
	}
	return "", "", false
}

// value types a literal. Sanitized literals are strings in parentheses.
func value(raw json.RawMessage) extract.Value {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
			return extract.Value{Kind: extract.KindUnknown, Text: s}
		}
		return extract.Value{Kind: extract.KindString, Text: s}
	}
	switch {
	case len(raw) == 0:
		return extract.Value{Kind: extract.KindUnknown}
	case bytes.Equal(raw, []byte("null")):
		return extract.Value{Kind: extract.KindNull, Text: "null"}
	case bytes.Equal(raw, []byte("true")) || bytes.Equal(raw, []byte("false")):
		return extract.Value{Kind: extract.KindBool, Text: string(raw)}
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return extract.Value{Kind: extract.KindNumber, Text: string(raw)}
	}
	return extract.Value{Kind: extract.KindUnknown, Text: clip(string(raw))}
}

func opaque(text string) *extract.Node {
	return &extract.Node{Kind: extract.NodeOpaque, Text: text}
}

// flatten joins l and r under kind, lifting children of the same kind so
// a chain of ands is one node.
func flatten(kind extract.NodeKind, l, r *extract.Node) *extract.Node {
	n := &extract.Node{Kind: kind}
	for _, c := range []*extract.Node{l, r} {
		if c.Kind == kind {
			n.Children = append(n.Children, c.Children...)
		} else {
			n.Children = append(n.Children, c)
		}
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
func columns(n *extract.Node, out []string, seen map[string]bool) []string {
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
	case extract.NodePred:
		out = add(n.Pred.Column)
	case extract.NodeOpaque:
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
