package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
)

const example = `policies:
  default:
    snapshots: {older_than: 5d, retain_last: 50}
    orphans: {older_than: 3d}
    target_file_size: 512MiB
    approval: {layout: required, binpack: auto}
    freshness_sla: 48h
    health:
      small_file_ratio: {warning: 0.2}
  catalogs:
    local:
      orphans: {older_than: 4d}
  namespaces:
    "local.web":
      mode: scheduled
      schedule: "0 3 * * *"
    "local.raw_*":
      target_file_size: 256MiB
    "local.raw_e*":
      window: "22:00-04:00"
  tables:
    "local.web.events":
      target_file_size: 128MiB
    "local.raw_events.*":
      layout: "sort(tenant_id, ts)"
`

func ident(s string) lake.Ident {
	parts := strings.Split(s, ".")
	return lake.Ident{Catalog: parts[0], Namespace: parts[1 : len(parts)-1], Name: parts[len(parts)-1]}
}

func TestResolvePrecedence(t *testing.T) {
	set, err := policy.ParseFile("floe.yaml", []byte(example))
	require.NoError(t, err)
	tests := []struct {
		table, key, value string
		level             policy.Level
		where             string
	}{
		{"local.web.events", "target_file_size", "128MiB", policy.LevelTable, "floe.yaml:23"},
		{"local.web.clicks", "target_file_size", "512MiB", policy.LevelDefault, "floe.yaml:5"},
		{"local.web.clicks", "mode", "scheduled", policy.LevelNamespace, "floe.yaml:15"},
		{"local.web.clicks", "orphans.older_than", "4d", policy.LevelCatalog, "floe.yaml:12"},
		{"local.web.clicks", "snapshots.retain_last", "50", policy.LevelDefault, "floe.yaml:3"},
		{"local.web.clicks", "health.small_file_ratio.warning", "0.2", policy.LevelDefault, "floe.yaml:9"},
		{"local.web.clicks", "health.small_file_ratio.critical", "0.7", policy.LevelBuiltin, ""},
		{"local.web.clicks", "approval.layout", "required", policy.LevelDefault, "floe.yaml:6"},
		{"local.web.clicks", "approval.orphans", "auto", policy.LevelBuiltin, ""},
		// raw_events matches both raw_* and raw_e*: the longer literal prefix wins per key,
		// and the other keys still come from the level's winner only.
		{"local.raw_events.e1", "window", "22:00-04:00", policy.LevelNamespace, "floe.yaml:20"},
		{"local.raw_events.e1", "target_file_size", "512MiB", policy.LevelDefault, "floe.yaml:5"},
		{"local.raw_clicks.c1", "target_file_size", "256MiB", policy.LevelNamespace, "floe.yaml:18"},
		{"local.raw_events.e1", "layout", "sort(tenant_id, ts)", policy.LevelTable, "floe.yaml:25"},
		// A table no rule names inherits with zero configuration.
		{"other.sales.orders", "target_file_size", "512MiB", policy.LevelDefault, "floe.yaml:5"},
		{"other.sales.orders", "orphans.older_than", "3d", policy.LevelDefault, "floe.yaml:4"},
		{"other.sales.orders", "layout", "auto", policy.LevelBuiltin, ""},
	}
	for _, tt := range tests {
		t.Run(tt.table+"/"+tt.key, func(t *testing.T) {
			eff, err := set.Resolve(ident(tt.table))
			require.NoError(t, err)
			s, ok := eff.Setting(tt.key)
			require.True(t, ok)
			require.Equal(t, tt.value, s.Value)
			require.Equal(t, tt.level, s.Level)
			require.Equal(t, tt.where, s.Where)
		})
	}
	eff, err := set.Resolve(ident("local.web.events"))
	require.NoError(t, err)
	p := eff.Policy
	require.Equal(t, int64(128<<20), p.TargetFileSizeBytes)
	require.Equal(t, 5*24*time.Hour, *p.Snapshots.OlderThan)
	require.Equal(t, 50, *p.Snapshots.RetainLast)
	require.Equal(t, 4*24*time.Hour, p.Orphans.OlderThan)
	require.Equal(t, policy.ModeScheduled, p.Mode)
	require.Equal(t, "0 3 * * *", p.Schedule)
	require.Equal(t, 48*time.Hour, p.FreshnessSLA)
	require.Equal(t, 48*time.Hour, p.Health.FreshnessSLA)
	require.Equal(t, 0.2, p.Health.SmallFileRatioWarning)
	require.Nil(t, p.Window)
}

func TestDefaultPolicy(t *testing.T) {
	p := policy.Default()
	th := lake.DefaultThresholds()
	// The default mode is adaptive, whose tables have a freshness SLA.
	th.FreshnessSLA = policy.DefaultFreshnessSLA
	require.Equal(t, th, p.Health, "the built-in health keys are lake's defaults, with the SLA of an adaptive table")
	require.Nil(t, p.Snapshots.OlderThan, "unset: expiry defers to the table's properties")
	require.Nil(t, p.Snapshots.RetainLast)
	require.Equal(t, 72*time.Hour, p.Orphans.OlderThan)
	require.Zero(t, p.TargetFileSizeBytes)
	require.Equal(t, policy.LayoutAuto, p.Layout)
	require.Equal(t, policy.ApprovalRequired, p.Approval.Layout)
	require.Equal(t, policy.ApprovalAuto, p.Approval.Binpack)
	require.True(t, p.Enabled.Expire && p.Enabled.Orphans && p.Enabled.Compact && p.Enabled.Manifests && p.Enabled.Deletes)
	require.Equal(t, policy.ApprovalAuto, p.Approval.Deletes)
	require.Equal(t, policy.ModeAdaptive, p.Mode)
	require.Equal(t, 30*24*time.Hour, p.MaxPayback)
	require.Equal(t, 5*time.Minute, p.PollInterval)
	require.Equal(t, 2, p.AlertAfterFailures)
	require.Equal(t, policy.Triggers{SmallFileRatio: 0.3, DeleteRatio: 0.2, Snapshots: 500, ManifestsPer1kFiles: 50, ClusteringDepth: 4,
		DeleteFiles: 10, PositionDeleteFiles: 2, EqualityDeleteRatio: 0.3}, p.Triggers)
}

func TestGlobTie(t *testing.T) {
	set, err := policy.ParseFile("p.yaml", []byte(`
namespaces:
  "local.raw_*": {mode: manual}
  "local.raw?x": {mode: scheduled}
tables:
  "local.web.ev*": {layout: none}
  "local.web.events": {layout: "sort(ts)"}
  "local.web.events*": {layout: "zorder(a, b)"}
`))
	require.NoError(t, err)
	// Same literal prefix "local.raw" vs "local.raw_": raw_* is longer.
	eff, err := set.Resolve(ident("local.raw_x.t"))
	require.NoError(t, err)
	s, _ := eff.Setting("mode")
	require.Equal(t, "manual", s.Value)
	// An exact name beats a glob of the same literal prefix.
	eff, err = set.Resolve(ident("local.web.events"))
	require.NoError(t, err)
	s, _ = eff.Setting("layout")
	require.Equal(t, "sort(ts)", s.Value)

	tie, err := policy.ParseFile("p.yaml", []byte(`
tables:
  "local.web.a*": {layout: none}
  "local.web.a?": {layout: "sort(ts)"}
`))
	require.NoError(t, err)
	_, err = tie.Resolve(ident("local.web.ab"))
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorContains(t, err, `"local.web.a*" (p.yaml:3)`)
	require.ErrorContains(t, err, `"local.web.a?" (p.yaml:4)`)
	_, err = tie.Resolve(ident("local.web.zz"))
	require.NoError(t, err, "a tie only matters for a table both match")
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "default:\n  snapshot: {older_than: 5d}\n", "f.yaml:2: default.snapshot.older_than: unknown policy key (did you mean snapshots.older_than?)"},
		{"bad duration", "default:\n  snapshots:\n    older_than: five days\n", `f.yaml:3: default.snapshots.older_than: duration "five days"`},
		{"bad size", "tables:\n  local.a.b: {target_file_size: big}\n", `f.yaml:2: tables.local.a.b.target_file_size: size "big"`},
		{"bad enum", "default:\n  mode: sometimes\n", `f.yaml:2: default.mode: "sometimes": want adaptive, scheduled, manual`},
		{"bad cron", "default:\n  schedule: \"61 * * * *\"\n", `f.yaml:2: default.schedule: "61 * * * *": want a five-field cron`},
		{"bad window", "default:\n  window: 1-5\n", `f.yaml:2: default.window: window "1-5"`},
		{"bad layout", "default:\n  layout: \"sort(\"\n", `f.yaml:2: default.layout: "sort("`},
		{"retain 0", "default:\n  snapshots: {retain_last: 0}\n", `f.yaml:2: default.snapshots.retain_last: 0: want at least 1`},
		{"list value", "default:\n  layout: [a, b]\n", `f.yaml:2: default.layout: want a single value`},
		{"catalog glob", "catalogs:\n  \"lo*\": {mode: manual}\n", `f.yaml:2: catalogs.lo*: a catalog rule names one catalog`},
		{"namespace without catalog", "namespaces:\n  web: {mode: manual}\n", `f.yaml:2: namespaces.web: a namespace pattern starts with its catalog`},
		{"top key", "defaults:\n  mode: manual\n", "f.yaml:1: defaults: unknown key (did you mean default?)"},
		{"from_catalog", "from_catalog: yes please\n", `f.yaml:1: from_catalog: "yes please": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.ParseFile("f.yaml", []byte(tt.yaml))
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
	// Every problem at once.
	_, err := policy.ParseFile("f.yaml", []byte("default:\n  mode: x\n  window: y\n"))
	require.ErrorContains(t, err, "f.yaml:2")
	require.ErrorContains(t, err, "f.yaml:3")
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"local.web.events", "local.web.events", true},
		{"local.web.events", "LOCAL.Web.Events", true},
		{"local.raw_*", "local.raw_events", true},
		{"local.raw_*", "local.raw_", true},
		{"local.raw_*", "local.web", false},
		{"local.*.events", "local.a.b.events", true},
		{"local.?", "local.a", true},
		{"local.?", "local.ab", false},
		{"*", "anything.at.all", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, policy.Match(tt.pattern, tt.name), "%s ~ %s", tt.pattern, tt.name)
	}
}

func TestWindow(t *testing.T) {
	w, err := policy.ParseWindow("22:00-04:00")
	require.NoError(t, err)
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	require.True(t, w.Contains(at(23, 0)))
	require.True(t, w.Contains(at(3, 59)))
	require.False(t, w.Contains(at(4, 0)))
	require.False(t, w.Contains(at(12, 0)))
	w, err = policy.ParseWindow("01:00-05:00")
	require.NoError(t, err)
	require.True(t, w.Contains(at(1, 0)))
	require.False(t, w.Contains(at(0, 59)))
	require.Equal(t, "01:00-05:00", w.String())
	for _, bad := range []string{"", "1-5", "25:00-01:00", "01:00-01:00", "01:60-02:00"} {
		_, err := policy.ParseWindow(bad)
		require.Error(t, err, bad)
	}
}

func TestWindowEndAfter(t *testing.T) {
	at := func(d, h, m int) time.Time { return time.Date(2026, 1, d, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		window string
		t      time.Time
		want   time.Time
	}{
		{"01:00-05:00", at(1, 0, 30), at(1, 5, 0)},  // before today's window
		{"01:00-05:00", at(1, 3, 0), at(1, 5, 0)},   // inside it
		{"01:00-05:00", at(1, 5, 0), at(2, 5, 0)},   // closed: tomorrow's
		{"22:00-04:00", at(2, 2, 0), at(2, 4, 0)},   // inside the one that opened yesterday
		{"22:00-04:00", at(2, 12, 0), at(3, 4, 0)},  // tonight's, closing tomorrow
		{"22:00-04:00", at(2, 23, 0), at(3, 4, 0)},  // inside tonight's
		{"00:00-24:00", at(2, 23, 59), at(3, 0, 0)}, // all day
	} {
		w, err := policy.ParseWindow(tc.window)
		require.NoError(t, err)
		require.Equal(t, tc.want, w.EndAfter(tc.t), "%s at %s", tc.window, tc.t)
	}
}

func TestExternalRulesYieldToFloeYAML(t *testing.T) {
	set, err := policy.ParseFile("floe.yaml", []byte("namespaces:\n  local.web: {orphans: {older_than: 5d}}\n"))
	require.NoError(t, err)
	polaris := []policy.Rule{
		{Level: policy.LevelNamespace, External: true, Values: map[string]policy.Value{
			"orphans.older_than":   {Raw: "7d", Where: "polaris policy o (system.orphan-file-removal) on namespace web"},
			"snapshots.older_than": {Raw: "10d", Where: "polaris policy s (system.snapshot-expiry) on namespace web"},
		}},
		{Level: policy.LevelTable, External: true, Values: map[string]policy.Value{
			"target_file_size": {Raw: "268435456", Where: "polaris policy c (system.data-compaction) on table web.events"},
		}},
	}
	eff, err := set.Resolve(ident("local.web.events"), polaris...)
	require.NoError(t, err)
	s, _ := eff.Setting("orphans.older_than")
	require.Equal(t, "5d", s.Value, "floe.yaml wins at the same level")
	s, _ = eff.Setting("snapshots.older_than")
	require.Equal(t, "10d", s.Value)
	require.Contains(t, s.Where, "polaris policy s")
	require.Equal(t, int64(256<<20), eff.Policy.TargetFileSizeBytes)
}

// TestResolveQuotedNames: patterns match a table's name as Ident.String
// writes it, so the table "a.b" of namespace db (local.db."a.b") and the
// table b of the nested namespace db.a (local.db.a.b) get their own rules,
// and a namespace whose one level holds a dot (local."x.y") is not the
// nested namespace x.y.
func TestResolveQuotedNames(t *testing.T) {
	const rules = `namespaces:
  'local.db.a': {mode: manual}
  'local."x.y"': {mode: scheduled}
  'local.x.y': {mode: manual}
tables:
  'local.db."a.b"': {target_file_size: 64MiB}
  'local.db.a.b': {target_file_size: 32MiB}
  'local."x.y".*': {layout: none}
`
	set, err := policy.ParseFile("floe.yaml", []byte(rules))
	require.NoError(t, err)
	for _, tc := range []struct {
		id          lake.Ident
		mode, size  string
		modeLevel   policy.Level
		layout      string
		layoutLevel policy.Level
	}{
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "a.b"}, "adaptive", "64MiB", policy.LevelBuiltin, "auto", policy.LevelBuiltin},
		{lake.Ident{Catalog: "local", Namespace: []string{"db", "a"}, Name: "b"}, "manual", "32MiB", policy.LevelNamespace, "auto", policy.LevelBuiltin},
		{lake.Ident{Catalog: "local", Namespace: []string{"x.y"}, Name: "t"}, "scheduled", "", policy.LevelNamespace, "none", policy.LevelTable},
		{lake.Ident{Catalog: "local", Namespace: []string{"x", "y"}, Name: "t"}, "manual", "", policy.LevelNamespace, "auto", policy.LevelBuiltin},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			eff, err := set.Resolve(tc.id)
			require.NoError(t, err)
			require.Equal(t, tc.id.String(), eff.Table)
			s, _ := eff.Setting("mode")
			require.Equal(t, tc.mode, s.Value)
			require.Equal(t, tc.modeLevel, s.Level)
			s, _ = eff.Setting("target_file_size")
			require.Equal(t, tc.size, s.Value)
			s, _ = eff.Setting("layout")
			require.Equal(t, tc.layout, s.Value)
			require.Equal(t, tc.layoutLevel, s.Level)
		})
	}
	require.True(t, policy.Match(`local.db.*`, `local.db."a.b"`), "a star spans quotes and dots")
	require.True(t, policy.Match(`local.db."a.*"`, `local.db."a.b"`))
	require.False(t, policy.Match(`local.db.a.*`, `local.db."a.b"`))
}

// A table floe maintains by itself (mode adaptive or scheduled) has a
// freshness SLA unless its policy turns it off; a manual table has one only
// when its policy sets one.
func TestDefaultFreshnessSLA(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
	}{
		{"default: {}\n", policy.DefaultFreshnessSLA},
		{"default: {mode: scheduled, schedule: \"@daily\"}\n", policy.DefaultFreshnessSLA},
		{"default: {mode: manual}\n", 0},
		{"default: {mode: manual, freshness_sla: 12h}\n", 12 * time.Hour},
		{"default: {freshness_sla: 0s}\n", 0},
		{"default: {freshness_sla: 6h}\n", 6 * time.Hour},
	} {
		set, err := policy.ParseFile("f.yaml", []byte(tc.yaml))
		require.NoError(t, err, tc.yaml)
		eff, err := set.Resolve(ident("local.web.events"))
		require.NoError(t, err, tc.yaml)
		require.Equal(t, tc.want, eff.Policy.FreshnessSLA, tc.yaml)
		require.Equal(t, tc.want, eff.Policy.Health.FreshnessSLA, tc.yaml)
	}
}

// A file's policies laid over the embedded default's: a rule of the same
// level and pattern keeps the keys it does not set, each key says which
// file set it, and the other rules of both stay.
func TestSetOver(t *testing.T) {
	base, err := policy.ParseFile("default.yaml", []byte("catalogs:\n  local:\n    target_file_size: 64KiB\n    allow_small_target_file_size: true\n"))
	require.NoError(t, err)
	over, err := policy.ParseFile("floe.yaml", []byte("default:\n  mode: manual\ncatalogs:\n  local:\n    target_file_size: 128MiB\n  other: {mode: scheduled}\n"))
	require.NoError(t, err)
	id := lake.Ident{Catalog: "local", Namespace: []string{"web"}, Name: "events"}
	for _, tc := range []struct {
		name  string
		set   *policy.Set
		want  map[string]string // key -> value@where
		rules int               // catalog rules
	}{
		{"over the default", over.Over(base), map[string]string{
			"target_file_size": "128MiB@floe.yaml:5", "allow_small_target_file_size": "true@default.yaml:4", "mode": "manual@floe.yaml:2"}, 2},
		{"no base", over.Over(nil), map[string]string{"target_file_size": "128MiB@floe.yaml:5", "allow_small_target_file_size": "false@", "mode": "manual@floe.yaml:2"}, 2},
		{"nothing over the base", (*policy.Set)(nil).Over(base), map[string]string{
			"target_file_size": "64KiB@default.yaml:3", "allow_small_target_file_size": "true@default.yaml:4", "mode": "adaptive@"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eff, err := tc.set.Resolve(id)
			require.NoError(t, err)
			for k, want := range tc.want {
				s, ok := eff.Setting(k)
				require.True(t, ok, k)
				require.Equal(t, want, s.Value+"@"+s.Where, k)
			}
			require.Len(t, tc.set.Catalogs, tc.rules)
			require.NoError(t, tc.set.Validate(time.Now()))
		})
	}
	// Neither set is changed.
	require.Len(t, base.Catalogs[0].Values, 2)
	require.Len(t, over.Catalogs[0].Values, 1)
}
