package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/floe-project/floe/control/policy"
)

// EmbeddedSource is [Config.Source] when no file was read, and names the
// embedded default in messages.
const EmbeddedSource = "(embedded default)"

// origin is where one key of the configuration was set: a line of the
// embedded default or of the file. (A key an environment variable set is
// in Config.envKeys.)
type origin struct {
	// file is the file's name as given; "" for the embedded default.
	file string
	line int
}

// String is "file:line", or "(embedded default)".
func (o origin) String() string {
	if o.file == "" {
		return EmbeddedSource
	}
	return fmt.Sprintf("%s:%d", o.file, o.line)
}

// decoder reads one YAML document over a configuration the way floe.yaml
// is read: strictly, every problem at once, each with the file's line, the
// key as floe names it and what was wanted in words (never a Go type).
// Mappings merge key by key into what the configuration holds (so a file
// extends the embedded default); lists and single values replace it. A
// value that has the wrong shape is reported and left as it was, and its
// key is remembered (Config.badKeys), so that validation does not report
// it again as missing.
type decoder struct {
	c *Config
	// source is the document's name in messages; file is "" for the
	// embedded default (see origin).
	source, file string
	anchors      map[string]ast.Node
}

// decode reads data, named source, over c: the embedded default (isDefault)
// or the file. A file that names catalogs replaces the default's catalog
// set and what is tied to it (see [Config.dropDefaultCatalogs]). It
// returns an error only when data is no YAML at all; every other problem
// is kept for [Config.Validate] to report with the rest.
func (c *Config) decode(source string, data []byte, isDefault bool) error {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, formatYAMLError(source, err))
	}
	d := &decoder{c: c, source: source, file: source, anchors: map[string]ast.Node{}}
	if isDefault {
		d.file = ""
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || d.isNull(doc.Body) {
			continue
		}
		if body != nil {
			d.problem(doc.Body, nil, "a second YAML document (after ---): floe reads one")
			continue
		}
		body = doc.Body
	}
	if body == nil {
		return nil
	}
	ast.Walk(anchorVisitor(d.anchors), body)
	entries, ok := d.mapping(body)
	if !ok {
		d.problem(body, nil, "want a mapping of keys (%s), not %s", strings.Join(yamlKeys(reflect.TypeFor[Config]()), ", "), d.describe(body))
		return nil
	}
	if !isDefault {
		for _, e := range entries {
			if keyText(e) == "catalogs" && !d.isNull(e.Value) {
				c.dropDefaultCatalogs()
			}
		}
	}
	d.fields(entries, reflect.ValueOf(c).Elem(), nil)
	return nil
}

// dropDefaultCatalogs forgets the embedded default's catalogs and what
// names them — default_catalog, telemetry.catalog_map and the policies —
// when the file names catalogs of its own: a user's lake does not
// silently gain the demo's local catalog, nor its rules.
func (c *Config) dropDefaultCatalogs() {
	c.Catalogs = nil
	c.DefaultCatalog = ""
	c.Telemetry.CatalogMap = nil
	c.basePolicies = nil
	for _, k := range []string{"catalogs", "default_catalog", "telemetry.catalog_map"} {
		c.forget(k)
	}
}

// forget drops the origins of key and every key under it.
func (c *Config) forget(key string) {
	for k := range c.origins {
		if k == key || strings.HasPrefix(k, key+".") {
			delete(c.origins, k)
		}
	}
}

// anchorVisitor collects a document's anchors, for aliases to resolve.
type anchorVisitor map[string]ast.Node

func (v anchorVisitor) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil && a.Name.GetToken() != nil {
		v[a.Name.GetToken().Value] = a.Value
	}
	return v
}

// record notes that n set key (its path segments).
func (d *decoder) record(path []string, n ast.Node) {
	if d.c.origins == nil {
		d.c.origins = map[string]origin{}
	}
	d.c.origins[strings.Join(path, ".")] = origin{file: d.file, line: line(n)}
}

// problem keeps a problem with the value n of key path.
func (d *decoder) problem(n ast.Node, path []string, format string, args ...any) {
	where := d.source
	if l := line(n); l > 0 {
		where = fmt.Sprintf("%s:%d", d.source, l)
	}
	msg := fmt.Sprintf(format, args...)
	if len(path) > 0 {
		msg = keyName(path) + ": " + msg
		if d.c.badKeys == nil {
			d.c.badKeys = map[string]bool{}
		}
		d.c.badKeys[keyName(path)] = true
	}
	d.c.problems = append(d.c.problems, fmt.Errorf("%s: %s", where, msg))
}

func line(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// resolve looks through tags, anchors and aliases.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for range 64 { // an alias of an alias …, bounded
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		case *ast.AliasNode:
			if t.Value == nil || t.Value.GetToken() == nil {
				return n
			}
			target, ok := d.anchors[t.Value.GetToken().Value]
			if !ok {
				return n
			}
			n = target
		default:
			return n
		}
	}
	return n
}

// mapping returns the entries of a mapping node, merge keys (<<: *base)
// expanded before the entries written beside them, which so win. (The
// parser refuses a key written twice.)
func (d *decoder) mapping(n ast.Node) ([]*ast.MappingValueNode, bool) {
	var entries []*ast.MappingValueNode
	switch m := d.resolve(n).(type) {
	case *ast.MappingNode:
		entries = m.Values
	case *ast.MappingValueNode:
		entries = []*ast.MappingValueNode{m}
	default:
		return nil, false
	}
	var merged, own []*ast.MappingValueNode
	for _, e := range entries {
		if _, ok := e.Key.(*ast.MergeKeyNode); !ok {
			own = append(own, e)
			continue
		}
		sources := []ast.Node{e.Value}
		if seq, ok := d.resolve(e.Value).(*ast.SequenceNode); ok {
			sources = seq.Values
		}
		for _, s := range sources {
			if m, ok := d.mapping(s); ok {
				merged = append(merged, m...)
			}
		}
	}
	return append(merged, own...), true
}

func keyText(e *ast.MappingValueNode) string {
	if e.Key == nil || e.Key.GetToken() == nil {
		return ""
	}
	return e.Key.GetToken().Value
}

// isNull reports whether n is no value ("key:" with nothing after it).
func (d *decoder) isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, null := d.resolve(n).(*ast.NullNode)
	return null
}

// describe names a value for "want X, not Y", in the words of YAML.
func (d *decoder) describe(n ast.Node) string {
	switch t := d.resolve(n).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return strconv.Quote(t.Value)
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.BoolNode:
		return t.Token.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "the number " + t.GetToken().Value
	}
	return "that"
}

// scalar returns a single value's text as written (without quotes).
func (d *decoder) scalar(n ast.Node) (string, bool) {
	switch s := d.resolve(n).(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.LiteralNode:
		if s.Value == nil {
			return "", true
		}
		return s.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if s.GetToken() == nil {
			return "", false
		}
		return s.GetToken().Value, true
	case *ast.NullNode:
		return "", true
	}
	return "", false
}

// fields decodes a mapping's entries into the struct v, by the fields'
// yaml names.
func (d *decoder) fields(entries []*ast.MappingValueNode, v reflect.Value, path []string) {
	t := v.Type()
	for _, e := range entries {
		k := keyText(e)
		kp := append(slices.Clip(path), k)
		i, ok := fieldIndex(t, k)
		if !ok {
			d.problem(e.Key, kp, "%s", unknownKey(t, k))
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Interface {
			d.record(kp, e.Key)
			d.policies(e.Value)
			continue
		}
		if d.isNull(e.Value) {
			continue // "key:" with nothing after it leaves the key unset
		}
		d.record(kp, e.Key)
		d.value(e.Value, f, kp)
	}
}

// policies reads the policies: section: the embedded default's become the
// rules the file's are laid over (Config.basePolicies); the file's are
// Config.Policies, with what is wrong with them kept for Validate.
func (d *decoder) policies(n ast.Node) {
	set, err := policy.Parse(d.source, "policies", n)
	if d.file == "" {
		d.c.basePolicies = set
		if err != nil {
			d.c.problems = append(d.c.problems, err)
		}
		return
	}
	d.c.PoliciesNode, d.c.Policies, d.c.policiesErr = n, set, err
}

// value decodes n into v (a field, map element or list item at path).
func (d *decoder) value(n ast.Node, v reflect.Value, path []string) {
	if d.isNull(n) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		entries, ok := d.mapping(n)
		if !ok {
			d.problem(n, path, "want a mapping of keys (%s), not %s", strings.Join(yamlKeys(v.Type()), ", "), d.describe(n))
			return
		}
		d.fields(entries, v, path)
	case reflect.Map:
		d.mapValue(n, v, path)
	case reflect.Slice:
		seq, ok := d.resolve(n).(*ast.SequenceNode)
		if !ok {
			d.problem(n, path, "want a list (one \"- item\" a line, or [a, b]), not %s", d.describe(n))
			return
		}
		d.c.forget(strings.Join(path, "."))
		d.record(path, n)
		out := reflect.MakeSlice(v.Type(), 0, len(seq.Values))
		for i, item := range seq.Values {
			ip := append(slices.Clip(path), "["+strconv.Itoa(i)+"]")
			d.record(ip, item)
			elem := reflect.New(v.Type().Elem()).Elem()
			d.value(item, elem, ip)
			out = reflect.Append(out, elem)
		}
		v.Set(out)
	case reflect.String:
		s, ok := d.scalar(n)
		if !ok {
			d.problem(n, path, "want a single value, not %s", d.describe(n))
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := d.resolve(n).(*ast.BoolNode)
		if !ok {
			d.problem(n, path, "want true or false, not %s", d.describe(n))
			return
		}
		v.SetBool(b.Value)
	case reflect.Int:
		s, _ := d.scalar(n)
		i, err := strconv.ParseInt(s, 0, 64)
		if _, isInt := d.resolve(n).(*ast.IntegerNode); !isInt || err != nil {
			d.problem(n, path, "want a whole number, not %s", d.describe(n))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		s, _ := d.scalar(n)
		f, err := strconv.ParseFloat(s, 64)
		switch d.resolve(n).(type) {
		case *ast.IntegerNode, *ast.FloatNode:
		default:
			err = strconv.ErrSyntax
		}
		if err != nil {
			d.problem(n, path, "want a number, not %s", d.describe(n))
			return
		}
		v.SetFloat(f)
	case reflect.Pointer:
		before := len(d.c.problems)
		p := reflect.New(v.Type().Elem())
		d.value(n, p.Elem(), path)
		if len(d.c.problems) == before {
			v.Set(p)
		}
	default:
		// Every field of Config is one of the kinds above; a new kind is
		// a programmer's error that the decoding tests catch.
		d.problem(n, path, "cannot be read (floe does not know this key's type)")
	}
}

// mapValue decodes a mapping of names (catalogs, properties, engines, …)
// into the map v, merging into the entries it holds already.
func (d *decoder) mapValue(n ast.Node, v reflect.Value, path []string) {
	entries, ok := d.mapping(n)
	if !ok {
		d.problem(n, path, "want a mapping of names to values, not %s", d.describe(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, e := range entries {
		k := keyText(e)
		kp := append(slices.Clip(path), k)
		d.record(kp, e.Key)
		key := reflect.ValueOf(k).Convert(v.Type().Key())
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			elem.Set(old)
		}
		d.value(e.Value, elem, kp)
		v.SetMapIndex(key, elem)
	}
}

// fieldIndex is the index of t's field named k in YAML.
func fieldIndex(t reflect.Type, k string) (int, bool) {
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name == k && name != "-" {
			return i, true
		}
	}
	return 0, false
}

// yamlKeys are the keys a struct takes in YAML, in order.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// unknownKey says why k is not a key of t: a secret read from the
// environment only (a field tagged env:"key=VARIABLE"), a likely typo, or
// not a key at all, with the keys t takes.
func unknownKey(t reflect.Type, k string) string {
	for i := range t.NumField() {
		name, env, ok := strings.Cut(t.Field(i).Tag.Get("env"), "=")
		if ok && name == k {
			return fmt.Sprintf("is read from the environment only (%s), never from the file: keep secrets out of floe.yaml", env)
		}
	}
	keys := yamlKeys(t)
	if s := suggest(k, keys); s != "" {
		return fmt.Sprintf("unknown key (did you mean %s?)", s)
	}
	return "unknown key; want " + orList(keys)
}
