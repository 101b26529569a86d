package config

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/floe-project/floe/control/policy"
)

// SourceDefault is [Setting.Source] for a value of the embedded default or
// a built-in default.
const SourceDefault = "default"

// Setting is one key of the effective configuration, as floe config view
// prints it: the value floe uses (secrets redacted) and where it came
// from.
type Setting struct {
	// Key is the key as floe's messages name it:
	// catalogs.prod.s3.region, telemetry.sources[0].name,
	// policies.catalogs.local.target_file_size.
	Key string `json:"key"`
	// Value is the value as text: "****" for a secret, a URI with its
	// password and secret parameters redacted ([RedactURI]), a webhook URL
	// as [RedactURL] shows it.
	Value string `json:"value"`
	// Source is where the value came from: [SourceDefault] (the embedded
	// default, or floe's built-in default for a key nobody set), file:line,
	// or the FLOE_ environment variable that set it.
	Source string `json:"source"`

	// path is Key's segments, a list item as "[i]"; literal says the value
	// is a number or boolean, written without quotes in YAML; envOnly that
	// the key is a secret the environment alone sets, written as a comment.
	path             []string
	literal, envOnly bool
}

// Settings are the effective configuration, key by key in the order of
// floe.yaml's sections, each with where its value came from: what floe
// config view prints. Keys nobody set and floe leaves empty are left out;
// every secret is redacted, and no value holds one.
func (c *Config) Settings() []Setting {
	w := &settingsWalk{c: c}
	w.walk(reflect.ValueOf(c).Elem(), nil, "")
	w.policies(c.Policies)
	secrets := c.secrets()
	for i := range w.out {
		for _, s := range secrets {
			if len(s) >= 4 {
				w.out[i].Value = strings.ReplaceAll(w.out[i].Value, s, redacted)
			}
		}
	}
	return w.out
}

// secrets are every secret value the configuration holds, to make sure
// none is shown.
func (c *Config) secrets() []string {
	out := c.State.Secrets()
	for _, p := range c.Catalogs {
		out = append(out, p.Secrets()...)
	}
	for _, s := range c.Telemetry.Sources {
		out = append(out, s.Secrets()...)
	}
	for _, e := range c.Engines {
		for _, s := range []Secret{e.DSN, e.Remote, e.Password, e.Token} {
			if s != "" {
				out = append(out, s.Reveal())
			}
		}
	}
	for _, s := range []Secret{c.Server.Token, c.Server.ReadToken} {
		if s != "" {
			out = append(out, s.Reveal())
		}
	}
	for _, w := range c.Alerts.Webhooks {
		for _, v := range w.Headers {
			out = append(out, v)
		}
	}
	return out
}

type settingsWalk struct {
	c   *Config
	out []Setting
}

var secretType = reflect.TypeFor[Secret]()

// walk adds the settings of v at path; redact is the field's redact tag:
// uri ([RedactURI]), url ([RedactURL]) or all.
func (w *settingsWalk) walk(v reflect.Value, path []string, redact string) {
	switch {
	case v.Type() == secretType:
		if v.String() != "" {
			w.add(path, redacted, false)
		}
		return
	case v.Type() == reflect.TypeFor[Props]():
		props := v.Interface().(Props).Redacted()
		for _, k := range slices.Sorted(maps.Keys(props)) {
			w.add(append(slices.Clip(path), k), props[k], false)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				// A secret the environment sets (env:"key=VARIABLE").
				if key, _, ok := strings.Cut(f.Tag.Get("env"), "="); ok {
					n := len(w.out)
					w.walk(v.Field(i), append(slices.Clip(path), key), "all")
					for j := n; j < len(w.out); j++ {
						w.out[j].envOnly = true
					}
				}
				continue
			}
			if name == "" || f.Type.Kind() == reflect.Interface {
				continue // unexported state; the policies node (see policies)
			}
			w.walk(v.Field(i), append(slices.Clip(path), name), f.Tag.Get("redact"))
		}
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.walk(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), append(slices.Clip(path), k), redact)
		}
	case reflect.Slice:
		for i := range v.Len() {
			w.walk(v.Index(i), append(slices.Clip(path), "["+strconv.Itoa(i)+"]"), redact)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			w.walk(v.Elem(), path, redact)
		}
	case reflect.String:
		s := v.String()
		if s == "" {
			return
		}
		switch redact {
		case "uri":
			s = RedactURI(s)
		case "url":
			s = RedactURL(s)
		case "all":
			s = redacted
		}
		w.add(path, s, false)
	case reflect.Bool:
		if v.Bool() || w.set(path) {
			w.add(path, strconv.FormatBool(v.Bool()), true)
		}
	case reflect.Int:
		if v.Int() != 0 || w.set(path) {
			w.add(path, strconv.FormatInt(v.Int(), 10), true)
		}
	case reflect.Float64:
		w.add(path, strconv.FormatFloat(v.Float(), 'g', -1, 64), true)
	}
}

// set reports whether a file or variable set key (its path).
func (w *settingsWalk) set(path []string) bool {
	k := strings.Join(path, ".")
	_, env := w.c.envKeys[k]
	_, file := w.c.origins[k]
	return env || file
}

func (w *settingsWalk) add(path []string, value string, literal bool) {
	k := strings.Join(path, ".")
	source := SourceDefault
	if env, ok := w.c.envKeys[k]; ok {
		source = env
	} else if o, ok := w.c.origins[k]; ok && o.file != "" {
		source = w.c.relative(o.String())
	}
	w.out = append(w.out, Setting{Key: keyName(path), Value: value, Source: source, path: path, literal: literal})
}

// policies adds the rules of the effective policy set, each key with the
// file:line that set it.
func (w *settingsWalk) policies(set *policy.Set) {
	if set == nil {
		return
	}
	if set.FromCatalog {
		w.out = append(w.out, Setting{Key: "policies.from_catalog", Value: "true", Source: w.policySource("policies.from_catalog", ""),
			path: []string{"policies", "from_catalog"}, literal: true})
	}
	rule := func(r policy.Rule, path []string) {
		for _, k := range slices.Sorted(maps.Keys(r.Values)) {
			v := r.Values[k]
			p := append(slices.Clip(path), strings.Split(k, ".")...)
			_, errBool := strconv.ParseBool(v.Raw)
			_, errNum := strconv.ParseFloat(v.Raw, 64)
			w.out = append(w.out, Setting{Key: keyName(p), Value: v.Raw, Source: w.policySource(keyName(p), v.Where), path: p,
				literal: errBool == nil || errNum == nil})
		}
	}
	if set.Default != nil {
		rule(*set.Default, []string{"policies", "default"})
	}
	for _, level := range []struct {
		name  string
		rules []policy.Rule
	}{{"catalogs", set.Catalogs}, {"namespaces", set.Namespaces}, {"tables", set.Tables}} {
		for _, r := range level.rules {
			rule(r, []string{"policies", level.name, r.Pattern})
		}
	}
}

// policySource is where a policy key was set: its file:line, or
// [SourceDefault] for the embedded default's rules.
func (w *settingsWalk) policySource(key, where string) string {
	if where == "" || strings.HasPrefix(where, EmbeddedSource) {
		if o, ok := w.c.origins[key]; ok && o.file != "" {
			return w.c.relative(o.String())
		}
		return SourceDefault
	}
	return w.c.relative(where)
}

// ShownSource is [Config.Source] as floe config view shows it: its path
// from the working directory when it is under it.
func (c *Config) ShownSource() string { return c.relative(c.Source) }

// relative shortens a file:line in the working directory the
// configuration was loaded in to its path from there.
func (c *Config) relative(where string) string {
	if c.workDir == "" {
		return where
	}
	if rest, ok := strings.CutPrefix(where, c.workDir+string(filepath.Separator)); ok {
		return rest
	}
	return where
}

// WriteYAML writes settings as a YAML document floe reads back as the
// same configuration, secrets aside: they print as "****", and a secret
// only the environment sets (state.password, a source's password) is a
// comment. With sources, each value is followed by a comment saying where
// it came from.
func WriteYAML(out io.Writer, settings []Setting, sources bool) error {
	root := &viewNode{}
	for _, s := range settings {
		n := root
		for _, seg := range s.path {
			n = n.child(seg)
		}
		n.leaf, n.value, n.literal, n.source, n.envOnly = true, s.Value, s.literal, s.Source, s.envOnly
	}
	var lines [][2]string // text, source
	root.emit(&lines, -2)
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	width = min(width, 64)
	for _, l := range lines {
		text := l[0]
		if sources && l[1] != "" {
			text = fmt.Sprintf("%-*s  # %s", width, text, l[1])
		}
		if _, err := fmt.Fprintln(out, text); err != nil {
			return err
		}
	}
	return nil
}

// viewNode is a key of the YAML floe config view prints: a value, a
// mapping of keys, or a list (its children's keys are "[i]").
type viewNode struct {
	key      string
	children []*viewNode
	leaf     bool
	value    string
	literal  bool
	envOnly  bool
	source   string
}

func (n *viewNode) child(key string) *viewNode {
	for _, c := range n.children {
		if c.key == key {
			return c
		}
	}
	c := &viewNode{key: key}
	n.children = append(n.children, c)
	return c
}

func (n *viewNode) isList() bool {
	return len(n.children) > 0 && strings.HasPrefix(n.children[0].key, "[")
}

// emit adds n's children as lines at indent.
func (n *viewNode) emit(lines *[][2]string, indent int) {
	for _, c := range n.children {
		c.line(lines, strings.Repeat(" ", indent+2), indent+2)
	}
}

// line adds n's lines, its first one starting with lead (its indent, or
// the indent and "- " of a list item).
func (n *viewNode) line(lines *[][2]string, lead string, indent int) {
	if n.leaf {
		text := yamlKey(n.key) + ": " + n.scalar()
		if n.envOnly {
			// Set by the environment, never read from a file: a comment,
			// so that the document reads back.
			text = "# " + text
		}
		*lines = append(*lines, [2]string{lead + text, n.source})
		return
	}
	*lines = append(*lines, [2]string{lead + yamlKey(n.key) + ":", ""})
	if !n.isList() {
		n.emit(lines, indent)
		return
	}
	for _, item := range n.children {
		dash := strings.Repeat(" ", indent+2) + "- "
		if item.leaf {
			*lines = append(*lines, [2]string{dash + item.scalar(), item.source})
			continue
		}
		for i, c := range item.children {
			if i > 0 {
				dash = strings.Repeat(" ", indent+4)
			}
			c.line(lines, dash, indent+4)
		}
	}
}

// scalar is the value as YAML writes it.
func (n *viewNode) scalar() string {
	if n.literal {
		return n.value
	}
	return yamlString(n.value)
}

func yamlKey(k string) string { return yamlString(k) }

// yamlString quotes s when YAML would read it as something else.
func yamlString(s string) string {
	if strings.ContainsAny(s, "\n\r") {
		return strconv.Quote(s)
	}
	b, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(b), "\n")
}
