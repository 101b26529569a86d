package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/floe-project/floe/internal/editdist"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ParseFile reads a policies file: a mapping with the keys default,
// catalogs, namespaces, tables and from_catalog, optionally under a single
// top-level "policies:" key (so a floe.yaml's section can be moved to a
// file as it is). Errors wrap [ErrInvalid] and name source:line and key;
// as with [Parse], the set holds what could be read (nil when the text is
// no YAML).
func ParseFile(source string, data []byte) (*Set, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, source, firstLine(err.Error()))
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return &Set{}, nil
	}
	body := f.Docs[0].Body
	if m, ok := mapping(body); ok && len(m) == 1 && keyText(m[0]) == "policies" {
		return Parse(source, "policies", m[0].Value)
	}
	return Parse(source, "", body)
}

// Parse reads the policies mapping node (floe.yaml's "policies:" section,
// or a policies file's root). path is the node's key path for messages
// ("policies" or ""). Every problem is reported, each as
// "source:line: key: message". On error the set still holds every rule
// and value that could be read, so that [Set.Validate] can report what
// else is wrong with them at the same time.
func Parse(source, path string, node ast.Node) (*Set, error) {
	p := &parse{source: source}
	set := &Set{}
	entries, ok := mapping(node)
	if !ok {
		if isNull(node) {
			return set, nil
		}
		p.errorf(node, path, "want a mapping with default, catalogs, namespaces, tables or from_catalog")
		return set, p.err()
	}
	for _, e := range entries {
		k := keyText(e)
		kp := join(path, k)
		switch k {
		case "default":
			r := p.rule(LevelDefault, "", e, kp)
			set.Default = &r
		case "catalogs", "namespaces", "tables":
			level := map[string]Level{"catalogs": LevelCatalog, "namespaces": LevelNamespace, "tables": LevelTable}[k]
			rules, ok := mapping(e.Value)
			if !ok {
				if !isNull(e.Value) {
					p.errorf(e.Value, kp, "want a mapping of %s to policies", map[string]string{"catalogs": "catalog names", "namespaces": "namespace patterns such as local.raw_*", "tables": "table patterns such as local.web.events"}[k])
				}
				continue
			}
			for _, re := range rules {
				pat := keyText(re)
				if msg := checkPattern(level, pat); msg != "" {
					p.errorf(re.Key, join(kp, pat), "%s", msg)
					continue
				}
				r := p.rule(level, pat, re, join(kp, pat))
				switch level {
				case LevelCatalog:
					set.Catalogs = append(set.Catalogs, r)
				case LevelNamespace:
					set.Namespaces = append(set.Namespaces, r)
				default:
					set.Tables = append(set.Tables, r)
				}
			}
		case "from_catalog":
			switch strings.ToLower(scalar(e.Value)) {
			case "true":
				set.FromCatalog = true
			case "false":
			default:
				p.errorf(e.Value, kp, "%q: want true or false", scalar(e.Value))
			}
		default:
			msg := "unknown key: want default, catalogs, namespaces, tables or from_catalog"
			if s := Suggest(k, topKeys); s != "" {
				msg = fmt.Sprintf("unknown key (did you mean %s?)", s)
			}
			p.errorf(e.Key, kp, "%s", msg)
		}
	}
	return set, p.err()
}

// checkPattern says what is wrong with a rule's name at level, or "".
func checkPattern(level Level, pat string) string {
	if strings.TrimSpace(pat) == "" {
		return "empty name"
	}
	if strings.ContainsAny(pat, " \t") {
		return "names may not contain spaces"
	}
	switch level {
	case LevelCatalog:
		if strings.ContainsAny(pat, ".*?") {
			return "a catalog rule names one catalog, without dots or wildcards"
		}
	case LevelNamespace:
		if !strings.Contains(pat, ".") {
			return "a namespace pattern starts with its catalog: catalog.namespace, such as local.raw_*"
		}
	case LevelTable:
		if strings.Count(pat, ".") < 2 && !strings.Contains(pat, "*") {
			return "a table pattern names catalog.namespace.table, such as local.web.events"
		}
	}
	return ""
}

type parse struct {
	source string
	errs   []error
}

func (p *parse) errorf(n ast.Node, key, format string, args ...any) {
	where := p.source
	if n != nil && n.GetToken() != nil {
		where = fmt.Sprintf("%s:%d", p.source, n.GetToken().Position.Line)
	}
	p.errs = append(p.errs, fmt.Errorf("%s: %s: %s", where, key, fmt.Sprintf(format, args...)))
}

func (p *parse) err() error { return Invalid(p.errs...) }

func (p *parse) where(n ast.Node) string {
	if n == nil || n.GetToken() == nil {
		return p.source
	}
	return fmt.Sprintf("%s:%d", p.source, n.GetToken().Position.Line)
}

// rule reads one rule's mapping of keys, nested ("snapshots:
// {older_than: 5d}") or dotted ("snapshots.older_than: 5d").
func (p *parse) rule(level Level, pattern string, e *ast.MappingValueNode, path string) Rule {
	r := Rule{Level: level, Pattern: pattern, Where: p.where(e.Key), Values: map[string]Value{}, path: path}
	var walk func(prefix string, n ast.Node, at ast.Node)
	walk = func(prefix string, n ast.Node, at ast.Node) {
		if entries, ok := mapping(n); ok {
			for _, c := range entries {
				walk(join(prefix, keyText(c)), c.Value, c.Key)
			}
			return
		}
		if isNull(n) && prefix == "" {
			return // an empty rule
		}
		k, ok := spec(prefix)
		if bk, budget := budgetSpec(prefix); !ok && budget {
			if level != LevelDefault && level != LevelNamespace {
				p.errorf(at, join(path, prefix), "a budget bounds the lake (set it under default:) or each namespace (under namespaces:), not a %s", level)
				return
			}
			k, ok = bk, true
		}
		if !ok {
			msg := "unknown policy key"
			if s := Suggest(prefix, append(Keys(), BudgetKeys()...)); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			p.errorf(at, join(path, prefix), "%s", msg)
			return
		}
		raw, ok := scalarOK(n)
		if !ok {
			p.errorf(at, join(path, prefix), "want a single value")
			return
		}
		if _, err := k.parse(raw); err != nil {
			p.errorf(at, join(path, prefix), "%v", err)
			return
		}
		if _, dup := r.Values[prefix]; dup {
			p.errorf(at, join(path, prefix), "set twice in one rule")
			return
		}
		r.Values[prefix] = Value{Raw: raw, Where: p.where(at)}
	}
	walk("", e.Value, e.Key)
	return r
}

// mapping returns a mapping node's entries; a one-entry block mapping is a
// lone MappingValueNode in go-yaml's tree.
func mapping(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := unwrap(n).(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

// unwrap looks through tags, anchors and comments.
func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		default:
			return n
		}
	}
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := unwrap(n).(*ast.NullNode)
	return ok
}

func keyText(e *ast.MappingValueNode) string {
	if e.Key == nil || e.Key.GetToken() == nil {
		return ""
	}
	return e.Key.GetToken().Value
}

// scalarOK returns a scalar node's text as written (without quotes).
func scalarOK(n ast.Node) (string, bool) {
	switch s := unwrap(n).(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode, *ast.LiteralNode:
		return s.GetToken().Value, true
	}
	return "", false
}

func scalar(n ast.Node) string {
	s, _ := scalarOK(n)
	return s
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Suggest returns the candidate closest to s by edit distance, or "" when
// none is close enough to be a likely typo.
func Suggest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editdist.Distance(strings.ToLower(s), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(s)/3) {
		return ""
	}
	return best
}

// topKeys are the keys of a policies file's root.
var topKeys = []string{"default", "catalogs", "namespaces", "tables", "from_catalog"}

// IsPoliciesFile reports whether data is a policies file — its root holds
// only [Parse]'s keys, or a single "policies:" key — rather than a whole
// floe.yaml. Text that is no YAML mapping counts as a policies file, so
// that [ParseFile] reports what is wrong with it.
func IsPoliciesFile(data []byte) bool {
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return true
	}
	m, ok := mapping(f.Docs[0].Body)
	if !ok {
		return true
	}
	if len(m) == 1 && keyText(m[0]) == "policies" {
		return true
	}
	for _, e := range m {
		if !slices.Contains(topKeys, keyText(e)) {
			return false
		}
	}
	return true
}
