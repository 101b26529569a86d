package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

var updateGolden = flag.Bool("update", false, "rewrite cmd/floe/testdata/json/*.json from what the verbs print")

// TestJSONShapeGolden pins the shape of every verb's --output json: the
// keys at every level and the JSON type of every value, as
// testdata/json/<verb>.json holds them (go test -run TestJSONShapeGolden
// -update rewrites them). Values are not compared — they hold times and
// ids — but a renamed key, a null where a list was, or a snapshot id that
// became a number fails. An empty list matches a list of anything. Every
// layout in every verb's output has the one shape ([checkLayouts]).
func TestJSONShapeGolden(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "20", "--orders", "300", "--queries", "40")...)
	require.Equal(t, 0, code, errOut)
	since := sinceAsOf()

	steps := []struct {
		name string
		args []string
	}{
		{"tables", []string{"tables"}},
		{"queries", []string{"queries"}},
		{"queries-events", []string{"queries", "--events", "--limit", "3"}},
		{"predicates", []string{"predicates", sqlFile(t, "SELECT * FROM web.events WHERE tenant_id = 3 AND NOT (ts < DATE '2026-01-01' OR country IN ('DE', 'FR'))")}},
		{"analyze", []string{"analyze", "web.events", "--since", since}},
		{"simulate", []string{"simulate", "web.events", "--since", since, "--layout", "sort(tenant_id)"}},
		{"health", []string{"health", "web.events"}},
		{"policy-show", []string{"policy", "show", "web.events"}},
		{"policy-validate", []string{"policy", "validate"}},
		{"config-view", []string{"config", "view"}},
		{"optimize-dry-run", []string{"optimize", "web.events", "--dry-run"}},
		{"compact-dry-run", []string{"compact", "sales.orders", "--layout", "sort(o_custkey)", "--dry-run"}},
		{"compact", []string{"compact", "sales.orders", "--layout", "sort(o_custkey)"}},
		{"expire-dry-run", []string{"expire", "web.events", "--older-than", "0s", "--retain-last", "5", "--dry-run"}},
		{"expire", []string{"expire", "web.events", "--older-than", "0s", "--retain-last", "5"}},
		{"orphans", []string{"orphans", "web.events", "--dry-run"}},
		{"rewrite-manifests", []string{"rewrite-manifests", "web.events"}},
		{"rewrite-deletes-dry-run", []string{"rewrite-deletes", "crm.accounts", "--min-position-delete-files", "2", "--dry-run"}},
		{"rewrite-deletes", []string{"rewrite-deletes", "crm.accounts"}},
		{"plan", []string{"plan", "web.events", "--since", since, "--layout", "sort(tenant_id)", "--target-file-size", "32KiB", "--allow-small-target-file-size", "--force"}},
		{"plan-none", []string{"plan", "web.events", "--since", since, "--layout", "binpack", "--target-file-size", "32KiB", "--allow-small-target-file-size"}},
		// The lake-wide report before any layout rewrite: a ranking with a
		// recommended layout.
		{"report-lake", []string{"report", "--since", since, "--target-file-size", "32KiB", "--allow-small-target-file-size"}},
	}
	for _, s := range steps {
		out, errOut, code := run(t, dir, append(s.args, "-o", "json")...)
		require.Equal(t, 0, code, "%s: %s", s.name, errOut)
		checkShape(t, s.name, out)
	}
	var p struct {
		ID string `json:"id"`
	}
	out, _, _ := run(t, dir, "plan", "list", "-o", "json")
	checkShape(t, "plan-list", out)
	var plans []struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &plans))
	require.NotEmpty(t, plans)
	p.ID = plans[0].ID
	for _, s := range []struct {
		name string
		args []string
	}{
		{"plan-show", []string{"plan", "show", p.ID}},
		{"plan-approve", []string{"plan", "approve", p.ID, "--by", "alice"}},
		{"optimize", []string{"optimize", "--plan", p.ID}},
		{"runs", []string{"runs", "web.events"}},
		{"optimize-policy", []string{"optimize", "sales.orders"}},
		{"collect", []string{"collect", filepath.Join(dir, "data", "logs"), "--force"}},
		// A table's report after its plan ran: runs with their layout check.
		{"report", []string{"report", "web.events", "--since", since}},
	} {
		out, errOut, code := run(t, dir, append(s.args, "-o", "json")...)
		require.Equal(t, 0, code, "%s: %s", s.name, errOut)
		checkShape(t, s.name, out)
	}
}

// checkShape compares the shape of the JSON document got with the golden
// file of name.
func checkShape(t *testing.T, name, got string) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(got), &v), "%s printed no JSON: %s", name, got)
	shape := shapeOf("", v)
	path := filepath.Join("testdata", "json", name+".json")
	if *updateGolden {
		b, err := json.MarshalIndent(shape, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "no golden shape for %s: run go test -run TestJSONShapeGolden -update", name)
	var want any
	require.NoError(t, json.Unmarshal(b, &want))
	if diffs := shapeDiff("", want, shape); len(diffs) > 0 {
		t.Errorf("%s: --output json changed shape (go test -run TestJSONShapeGolden -update if on purpose):\n  %s", name, strings.Join(diffs, "\n  "))
	}
	for _, key := range badKeys(v) {
		t.Errorf("%s: key %q is not snake_case", name, key)
	}
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(got, esc) {
			t.Errorf("%s: --output json escapes <, > or & as %s (a MarshalJSON not encoding with internal/jsonenc)", name, esc)
		}
	}
	checkLayouts(t, name, v)
}

// withoutLayout are the verbs whose JSON carries no layout; every other
// verb of TestJSONShapeGolden prints at least one.
var withoutLayout = map[string]bool{
	"tables": true, "queries": true, "queries-events": true, "predicates": true, "health": true,
	"policy-show": true, "policy-validate": true, "config-view": true, "collect": true, "doctor": true,
}

// checkLayouts checks that every layout in the JSON document v of verb
// name has the one shape docs/json.md gives — {"spec", "strategy",
// "columns": [{"name", "desc", "nulls_last"}], "target_file_size_bytes"},
// every key present, the parts those of the spec — wherever it sits: under
// "layout" (decisions, plans, projections, candidates, compaction plans,
// layout checks, the report's recommendation), "best" (floe plan without a
// plan) or a report ranking's "recommended".
func checkLayouts(t *testing.T, name string, v any) {
	t.Helper()
	found := 0
	var walk func(path, key string, v any)
	walk = func(path, key string, v any) {
		if key == "layout" || key == "best" || (key == "recommended" && !isBool(v)) {
			found++
			for _, p := range layoutShapeProblems(v) {
				t.Errorf("%s: %s: %s", name, or(path), p)
			}
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if dataKeyed(key) {
				return
			}
			for _, k := range sortedKeys(x) {
				walk(path+"."+k, k, x[k])
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", key, e)
			}
		}
	}
	walk("", "", v)
	if !withoutLayout[name] {
		require.Positive(t, found, "%s: no layout in its JSON; list it in withoutLayout if it carries none", name)
	}
}

func isBool(v any) bool {
	_, ok := v.(bool)
	return ok
}

// layoutShapeProblems says how v differs from a layout's one JSON shape.
func layoutShapeProblems(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("want a layout object, got %#v", v)}
	}
	var out []string
	if got, want := sortedKeys(m), []string{"columns", "spec", "strategy", "target_file_size_bytes"}; !slices.Equal(got, want) {
		out = append(out, fmt.Sprintf("keys %v, want %v", got, want))
	}
	spec, _ := m["spec"].(string)
	l, err := layout.Parse(spec)
	if err != nil {
		return append(out, fmt.Sprintf("spec %q: %v", spec, err))
	}
	if m["strategy"] != string(l.Strategy) {
		out = append(out, fmt.Sprintf("strategy %v, the spec %q says %s", m["strategy"], spec, l.Strategy))
	}
	if m["target_file_size_bytes"] != float64(l.TargetFileSizeBytes) {
		out = append(out, fmt.Sprintf("target_file_size_bytes %v, the spec %q says %d", m["target_file_size_bytes"], spec, l.TargetFileSizeBytes))
	}
	cols, ok := m["columns"].([]any)
	if !ok {
		return append(out, fmt.Sprintf("columns %#v, want a list", m["columns"]))
	}
	if len(cols) != len(l.Columns) {
		return append(out, fmt.Sprintf("%d columns, the spec %q names %d", len(cols), spec, len(l.Columns)))
	}
	for i, c := range cols {
		cm, ok := c.(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("columns[%d]: %#v, want an object", i, c))
			continue
		}
		if got, want := sortedKeys(cm), []string{"desc", "name", "nulls_last"}; !slices.Equal(got, want) {
			out = append(out, fmt.Sprintf("columns[%d]: keys %v, want %v", i, got, want))
		}
		lc := l.Columns[i]
		if cm["name"] != lc.Name || cm["desc"] != lc.Desc || cm["nulls_last"] != lc.NullsLast {
			out = append(out, fmt.Sprintf("columns[%d]: %v, the spec %q says %+v", i, cm, spec, lc))
		}
	}
	return out
}

// dataKeyed says whether the object under key is a map keyed by data
// (operators, partition or column names) rather than by field names.
func dataKeyed(key string) bool {
	return key == "op_mix" || key == "properties" || strings.Contains(key, "_by_")
}

// shapeOf replaces every value of v (found under key) by its JSON type
// name, every list by a one-element list of its elements' merged shape, and
// a map keyed by data by {"*": its values' merged shape}.
func shapeOf(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		if dataKeyed(key) {
			var merged any
			for _, k := range sortedKeys(v) {
				merged = mergeShapes(merged, shapeOf("", v[k]))
			}
			return map[string]any{"*": merged}
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = shapeOf(k, x)
		}
		return out
	case []any:
		if len(v) == 0 {
			return []any{}
		}
		var merged any
		for _, x := range v {
			merged = mergeShapes(merged, shapeOf(key, x))
		}
		return []any{merged}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// mergeShapes unions the keys of two object shapes (elements of one list
// may omit empty fields); other shapes keep the first seen.
func mergeShapes(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if a == nil {
			return b
		}
		if al, ok := a.([]any); ok && len(al) == 0 {
			return b
		}
		return a
	}
	for k, x := range bm {
		am[k] = mergeShapes(am[k], x)
	}
	return am
}

func shapeDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", or(path), got)}
		}
		var out []string
		for _, k := range sortedKeys(w) {
			if _, ok := g[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			out = append(out, shapeDiff(path+"."+k, w[k], g[k])...)
		}
		for _, k := range sortedKeys(g) {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: new key", path, k))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want a list, got %v", or(path), got)}
		}
		if len(w) == 0 || len(g) == 0 {
			return nil
		}
		return shapeDiff(path+"[]", w[0], g[0])
	}
	if want != got {
		return []string{fmt.Sprintf("%s: want %v, got %v", or(path), want, got)}
	}
	return nil
}

func or(path string) string {
	if path == "" {
		return "(top)"
	}
	return path
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// badKeys lists the object keys in v that are not snake_case; the keys of
// maps keyed by data ([dataKeyed]) are exempt.
func badKeys(v any) []string {
	var out []string
	var walk func(parent string, v any)
	walk = func(parent string, v any) {
		switch v := v.(type) {
		case map[string]any:
			byData := dataKeyed(parent)
			for k, x := range v {
				if !byData && !snakeCase.MatchString(k) {
					out = append(out, k)
				}
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(parent, x)
			}
		}
	}
	walk("", v)
	sort.Strings(out)
	return out
}

// sqlFile writes sql to a file for floe predicates.
func sqlFile(t *testing.T, sql string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q.sql")
	require.NoError(t, os.WriteFile(path, []byte(sql), 0o644))
	return path
}

// TestLayoutShapeProblems: the layout check of TestJSONShapeGolden finds
// the shapes floe printed before layouts were one object, and a layout
// whose parts disagree with its spec.
func TestLayoutShapeProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want string // a problem's text; "" for none
	}{
		{name: "the one shape", in: `{"spec": "sort(a, b desc) target 65536", "strategy": "sort", "target_file_size_bytes": 65536,
			"columns": [{"name": "a", "desc": false, "nulls_last": false}, {"name": "b", "desc": true, "nulls_last": true}]}`},
		{name: "binpack", in: `{"spec": "binpack", "strategy": "binpack", "columns": [], "target_file_size_bytes": 0}`},
		{name: "a spec string", in: `"sort(a)"`, want: "want a layout object"},
		{name: "keys left out when empty", in: `{"spec": "binpack", "strategy": "binpack"}`, want: "keys [spec strategy]"},
		{name: "a column without its order", in: `{"spec": "sort(a)", "strategy": "sort", "columns": [{"name": "a"}], "target_file_size_bytes": 0}`,
			want: "columns[0]: keys [name]"},
		{name: "parts that disagree with the spec", in: `{"spec": "sort(a)", "strategy": "zorder", "columns": [{"name": "a", "desc": false, "nulls_last": false}], "target_file_size_bytes": 0}`,
			want: `strategy zorder, the spec "sort(a)" says sort`},
		{name: "a spec that does not parse", in: `{"spec": "sort(", "strategy": "sort", "columns": [], "target_file_size_bytes": 0}`, want: `spec "sort("`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &v))
			got := layoutShapeProblems(v)
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.NotEmpty(t, got)
			require.Contains(t, strings.Join(got, "\n"), tc.want)
		})
	}
}
