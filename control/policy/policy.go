package policy

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/floe-project/floe/lake"
)

// Policy is a table's effective maintenance policy, typed. Unset optional
// keys are nil or zero, and the step's own default applies.
type Policy struct {
	Snapshots struct {
		// OlderThan and RetainLast are nil when unset: expiry then defers
		// to the table's history.expire.* properties.
		OlderThan  *time.Duration
		RetainLast *int
	}
	Orphans struct {
		OlderThan time.Duration
	}
	// TargetFileSizeBytes is 0 when unset: the table's own target applies.
	// It is at least [MinTargetFileSizeBytes] unless
	// AllowSmallTargetFileSize.
	TargetFileSizeBytes int64
	// AllowSmallTargetFileSize accepts a TargetFileSizeBytes below
	// [MinTargetFileSizeBytes] (allow_small_target_file_size), and makes
	// health judge small files by the table's target as it is.
	AllowSmallTargetFileSize bool
	// Layout is LayoutAuto, LayoutNone or a layout spec.
	Layout   string
	Approval struct {
		Layout, Binpack, Expire, Orphans, Manifests, Deletes string
	}
	Enabled struct {
		Expire, Orphans, Compact, Manifests, Deletes bool
	}
	Mode     string
	Schedule string
	// Window is nil when maintenance may run at any time.
	Window             *Window
	PollInterval       time.Duration
	FreshnessSLA       time.Duration
	AlertAfterFailures int
	Triggers           Triggers
	// MaxBytesPerRun is 0 for no limit.
	MaxBytesPerRun int64
	MaxPayback     time.Duration
	// MaxDeferral is how long a table's compaction backlog may wait while
	// a budget defers it before the table runs ahead of the gain ranking
	// (its freshness SLA, when shorter, bounds it too).
	MaxDeferral time.Duration
	// Cost prices what engines pay for a query and a rewrite (cost.*):
	// the payback [Policy.MaxPayback] judges is reckoned with it.
	Cost Cost
	// Engine is EngineNative, EngineAuto or the name of an engine under
	// engines: in floe.yaml; AutoEngineBytes and DistributedEngine say
	// where engine: auto sends a table (see control.ChooseEngine).
	Engine            string
	AutoEngineBytes   int64
	DistributedEngine string
	// Health holds the thresholds health classifies the table by, with
	// FreshnessSLA copied in.
	Health lake.Thresholds
}

// Cost is the cost model's policy keys: what one data file costs an
// engine beyond its bytes, and the optional prices that state a payback in
// money.
type Cost struct {
	// FileOpenBytes is what opening one data file costs a query (open,
	// footer, planning), in bytes of scan that take as long
	// (cost.file_open_bytes). Zero counts bytes alone.
	FileOpenBytes int64
	// USDPerTBScanned prices a terabyte (10^12 bytes) scanned; zero: not
	// priced, and paybacks are stated in bytes only.
	USDPerTBScanned float64
	// USDPerVCPUHour prices a vCPU-hour of a rewrite; zero: a rewrite's
	// CPU is not priced.
	USDPerVCPUHour float64
}

// Triggers are the health figures at which mode: adaptive (and optimize
// with no flags) runs a step. A zero trigger never fires.
type Triggers struct {
	SmallFileRatio      float64
	DeleteRatio         float64
	Snapshots           int
	ManifestsPer1kFiles float64
	ClusteringDepth     float64
	// DeleteFiles is how many position and equality delete files make
	// the delete-maintenance step due (deletion vectors, one per data
	// file at most, are not counted).
	DeleteFiles int
	// PositionDeleteFiles is how many position delete files a partition
	// of a format 1 or 2 table needs for the step to merge them.
	PositionDeleteFiles int
	// EqualityDeleteRatio is the share of a partition's records its
	// equality deletes must delete for the step to rewrite the partition
	// with them applied.
	EqualityDeleteRatio float64
}

// Level is where a setting came from.
type Level string

// Levels, from the weakest to the strongest.
const (
	LevelBuiltin   Level = "builtin"
	LevelDefault   Level = "default"
	LevelCatalog   Level = "catalog"
	LevelNamespace Level = "namespace"
	LevelTable     Level = "table"
)

func (l Level) rank() int {
	switch l {
	case LevelDefault:
		return 1
	case LevelCatalog:
		return 2
	case LevelNamespace:
		return 3
	case LevelTable:
		return 4
	}
	return 0
}

// Value is one key's text as a rule sets it, and where it was set.
type Value struct {
	Raw   string
	Where string
}

// Rule is one entry of one level: its pattern ("" for the default), where
// it is written, and the keys it sets.
type Rule struct {
	Level   Level
	Pattern string
	Where   string
	Values  map[string]Value
	// External rules come from the catalog (Polaris); at one level a
	// floe.yaml rule beats them.
	External bool
	// path is the rule's key path as written (policies.tables.local.web.events),
	// to name its keys in messages; "" for rules not read from a file.
	path string
}

// Set is the policies of one configuration.
type Set struct {
	Default    *Rule
	Catalogs   []Rule
	Namespaces []Rule
	Tables     []Rule
	// FromCatalog turns on reading policies from catalogs that store them
	// (Apache Polaris).
	FromCatalog bool
}

// Over returns s laid over base, as floe.yaml's policies are laid over the
// embedded default's (docs/config.md): a rule of s at the level and
// pattern of one of base's keeps base's keys and replaces those s sets
// too, key by key, each value keeping where it was set; base's other
// rules stay, and s's other rules are added after them. from_catalog is on
// when either turns it on. With base nil it is s; neither is changed.
func (s *Set) Over(base *Set) *Set {
	if base == nil {
		return s
	}
	if s == nil {
		s = &Set{}
	}
	out := &Set{FromCatalog: s.FromCatalog || base.FromCatalog}
	switch {
	case base.Default == nil:
		out.Default = s.Default
	case s.Default == nil:
		out.Default = base.Default
	default:
		r := overRule(*s.Default, *base.Default)
		out.Default = &r
	}
	out.Catalogs = overRules(s.Catalogs, base.Catalogs)
	out.Namespaces = overRules(s.Namespaces, base.Namespaces)
	out.Tables = overRules(s.Tables, base.Tables)
	return out
}

// overRules lays the rules of one level over base's (see [Set.Over]).
func overRules(rules, base []Rule) []Rule {
	out := make([]Rule, 0, len(base)+len(rules))
	used := make([]bool, len(rules))
	for _, b := range base {
		for i, r := range rules {
			if r.Pattern == b.Pattern {
				b, used[i] = overRule(r, b), true
			}
		}
		out = append(out, b)
	}
	for i, r := range rules {
		if !used[i] {
			out = append(out, r)
		}
	}
	return out
}

// overRule is rule r with the keys of base it does not set.
func overRule(r, base Rule) Rule {
	values := make(map[string]Value, len(base.Values)+len(r.Values))
	maps.Copy(values, base.Values)
	maps.Copy(values, r.Values)
	r.Values = values
	return r
}

// Setting is one key of an effective policy with its provenance.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Level is builtin, default, catalog, namespace or table.
	Level Level `json:"level"`
	// Rule is the pattern of the rule that set it ("" for builtin and
	// default).
	Rule string `json:"rule"`
	// Where is file:line, or the catalog policy, that set it ("" for
	// builtin).
	Where string `json:"where"`
	// path is the key's path as written, for messages (see [Rule]).
	path string
}

// Effective is a table's resolved policy: the typed values and, for every
// key, what set it.
type Effective struct {
	Table    string    `json:"table"`
	Settings []Setting `json:"settings"`
	// Warnings name what a catalog's policies set that floe cannot map.
	Warnings []string `json:"warnings"`
	Policy   Policy   `json:"-"`
}

// Setting returns the setting of key.
func (e Effective) Setting(key string) (Setting, bool) {
	for _, s := range e.Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// IsSet reports whether a rule (not the built-in default) set key.
func (e Effective) IsSet(key string) bool {
	s, ok := e.Setting(key)
	return ok && s.Level != LevelBuiltin
}

// DefaultFreshnessSLA is the freshness SLA of a table in mode adaptive or
// scheduled whose policy sets none: writes may wait this long for a
// compaction before the table is warning and the freshness alert fires.
const DefaultFreshnessSLA = 48 * time.Hour

// Default returns the built-in policy, which a table gets with no policies
// configured.
func Default() Policy {
	e, err := (&Set{}).Resolve(lake.Ident{Catalog: "_", Namespace: []string{"_"}, Name: "_"})
	if err != nil {
		panic(fmt.Sprintf("built-in policy: %v", err)) // the built-in defaults are constants; a test pins them
	}
	return e.Policy
}

// Resolve returns id's effective policy: the built-in defaults, then the
// default rule, then the best-matching rule of each level (catalog,
// namespace, table), key by key. extra are rules from the catalog (see
// [Rule.External]); each goes just below floe.yaml's rules of its level.
// A policy that cannot run is an error wrapping [ErrInvalid] that names
// every problem with the file:line and key that set it: two rules that tie
// for the table, a value out of bounds, a target_file_size below
// [MinTargetFileSizeBytes] without allow_small_target_file_size, a health
// warning threshold above its critical one.
func (s *Set) Resolve(id lake.Ident, extra ...Rule) (Effective, error) {
	eff, errs := s.resolve(id, extra...)
	if len(errs) > 0 {
		return Effective{}, Invalid(errs...)
	}
	return eff, nil
}

// resolve is [Set.Resolve] with its problems apart, for [Set.Validate].
func (s *Set) resolve(id lake.Ident, extra ...Rule) (Effective, []error) {
	table := id.String()
	// Namespace patterns match catalog.namespace in the same syntax as
	// table patterns match id.String(): local.db."a.b" is in local.db.
	ns := id.NamespaceString()
	if id.Catalog != "" {
		ns = lake.JoinParts(append([]string{id.Catalog}, id.Namespace...)...)
	}
	chain := []Rule{}
	if s.Default != nil {
		chain = append(chain, *s.Default)
	}
	var errs []error
	for _, level := range []struct {
		l     Level
		rules []Rule
		name  string
	}{{LevelCatalog, s.Catalogs, id.Catalog}, {LevelNamespace, s.Namespaces, ns}, {LevelTable, s.Tables, table}} {
		for _, r := range extra {
			if r.Level == level.l {
				chain = append(chain, r)
			}
		}
		r, err := best(level.rules, level.name)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy of %s: %w", table, err))
			continue
		}
		if r != nil {
			chain = append(chain, *r)
		}
	}
	eff := Effective{Table: table, Settings: make([]Setting, 0, len(keys)), Warnings: []string{}}
	var p Policy
	for _, k := range keys {
		st := Setting{Key: k.name, Value: k.def, Level: LevelBuiltin}
		for _, r := range chain {
			if v, ok := r.Values[k.name]; ok {
				st = Setting{Key: k.name, Value: v.Raw, Level: r.Level, Rule: r.Pattern, Where: v.Where, path: r.keyPath(k.name)}
			}
		}
		if st.Value != "" {
			v, err := k.parse(st.Value)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", orBuiltin(st.Where), st.keyPath(), err))
			} else {
				k.set(&p, v)
			}
		}
		eff.Settings = append(eff.Settings, st)
	}
	if !eff.IsSet("freshness_sla") && p.Mode != ModeManual {
		// Tables floe maintains by itself are judged by default: a
		// compaction that stops landing must be seen (a policy turns it
		// off with freshness_sla: 0).
		p.FreshnessSLA = DefaultFreshnessSLA
	}
	p.Health.FreshnessSLA = p.FreshnessSLA
	eff.Policy = p
	if len(errs) > 0 {
		return eff, errs
	}
	return eff, checkEffective(eff)
}

func orBuiltin(where string) string {
	if where == "" {
		return "built-in default"
	}
	return where
}

// best is the rule of one level that applies to name: the match with the
// longest literal prefix, an exact pattern beating a glob; nil when none
// matches. Two equally good matches are an error naming both.
func best(rules []Rule, name string) (*Rule, error) {
	var (
		win   *Rule
		score int
		tie   *Rule
	)
	for i := range rules {
		r := &rules[i]
		if !Match(r.Pattern, name) {
			continue
		}
		sc := 2 * literalPrefix(r.Pattern)
		if !strings.ContainsAny(r.Pattern, "*?") {
			sc++
		}
		switch {
		case win == nil || sc > score:
			win, score, tie = r, sc, nil
		case sc == score:
			tie = r
		}
	}
	if tie != nil {
		return nil, fmt.Errorf("%s rules %q (%s) and %q (%s) both match it equally well (same literal prefix); make one more specific",
			win.Level, win.Pattern, win.Where, tie.Pattern, tie.Where)
	}
	return win, nil
}

// literalPrefix is the length of pattern before its first wildcard.
func literalPrefix(pattern string) int {
	if i := strings.IndexAny(pattern, "*?"); i >= 0 {
		return i
	}
	return len(pattern)
}

// Match reports whether name matches the glob pattern, case-insensitively:
// '*' matches any run of characters (dots included), '?' any one.
func Match(pattern, name string) bool {
	p, n := []rune(strings.ToLower(pattern)), []rune(strings.ToLower(name))
	// Iterative glob with backtracking to the last '*'.
	pi, ni, star, mark := 0, 0, -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
