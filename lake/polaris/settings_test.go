package polaris_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake/polaris"
	"github.com/floe-project/floe/lake/polaris/polaristest"
)

type kv struct {
	key, value string
	level      polaris.Level
	source     string
}

func flat(ss []polaris.Setting) []kv {
	out := make([]kv, 0, len(ss))
	for _, s := range ss {
		out = append(out, kv{s.Key, s.Value, s.Level, s.Source})
	}
	return out
}

func TestSettingsFromPolaris(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	c := client(t, s.Props())
	ps, err := c.ApplicablePolicies(t.Context(), []string{"web"}, "events")
	require.NoError(t, err)
	settings, warnings, err := polaris.Settings(ps)
	require.NoError(t, err)
	const (
		ev   = "polaris policy events_expiry (system.snapshot-expiry) on table web.events"
		orph = "polaris policy web_orphans (system.orphan-file-removal) on namespace web"
		comp = "polaris policy web_compaction (system.data-compaction) on namespace web"
		meta = "polaris policy catalog_meta (system.metadata-compaction) on the catalog"
	)
	require.Equal(t, []kv{
		{"enabled.expire", "true", polaris.LevelTable, ev},
		{"snapshots.older_than", "36h", polaris.LevelTable, ev},
		{"enabled.orphans", "true", polaris.LevelNamespace, orph},
		{"orphans.older_than", "3d", polaris.LevelNamespace, orph},
		{"enabled.compact", "true", polaris.LevelNamespace, comp},
		{"target_file_size", "536870912", polaris.LevelNamespace, comp},
		{"enabled.manifests", "false", polaris.LevelCatalog, meta},
	}, flat(settings))
	// The table's own expiry policy replaces the catalog's whole policy:
	// the catalog's min_snapshot_to_keep does not leak in.
	for _, st := range settings {
		require.NotEqual(t, "snapshots.retain_last", st.Key)
	}
	require.Equal(t, []string{"web", "events"}, settings[0].Path)
	require.Equal(t, []string{
		orph + ": locations is not mapped: floe removes orphans under the table's own location only, never elsewhere; ignored",
		comp + ": config.compaction_strategy is not mapped: floe chooses the layout (binpack, sort, zorder, hilbert) from query telemetry and the layout policy; ignored",
	}, warnings)

	// In the child namespace the catalog's expiry policy applies, with
	// every key.
	ps, err = c.ApplicablePolicies(t.Context(), []string{"web", "raw"}, "clicks")
	require.NoError(t, err)
	settings, _, err = polaris.Settings(ps)
	require.NoError(t, err)
	const cat = "polaris policy catalog_expiry (system.snapshot-expiry) on the catalog"
	require.Equal(t, []kv{
		{"enabled.expire", "true", polaris.LevelCatalog, cat},
		{"snapshots.older_than", "7d", polaris.LevelCatalog, cat},
		{"snapshots.retain_last", "5", polaris.LevelCatalog, cat},
	}, flat(settings)[:3])
}

func TestSettingsBadContentFromServer(t *testing.T) {
	s := polaristest.New(t, polaristest.Options{NoContentValidation: true})
	s.CreateTable([]string{"web"}, "events")
	ctx := t.Context()
	require.NoError(t, s.CreatePolicy(ctx, []string{"web"}, "broken", compact, `{"enable": tru`))
	require.NoError(t, s.Attach(ctx, []string{"web"}, "broken", "table-like", "web", "events"))
	ps, err := client(t, s.Props()).ApplicablePolicies(ctx, []string{"web"}, "events")
	require.NoError(t, err, "reading is fine; the content is what is bad")
	_, _, err = polaris.Settings(ps)
	require.ErrorIs(t, err, polaris.ErrBadContent)
	require.ErrorContains(t, err, "polaris policy broken (system.data-compaction) on table web.events: bad polaris policy content: content is not a JSON object")
}

func TestFakeValidatesContent(t *testing.T) {
	s := polaristest.New(t, polaristest.Options{})
	s.CreateNamespace("web")
	err := s.CreatePolicy(t.Context(), []string{"web"}, "p", compact, `{"config":{}}`)
	require.ErrorContains(t, err, "400")
	require.ErrorContains(t, err, "InvalidPolicyException")
	require.NoError(t, s.CreatePolicy(t.Context(), []string{"web"}, "p", compact, `{"enable":true}`))
	require.NoError(t, s.CreatePolicy(t.Context(), []string{"web"}, "q", compact, `{"enable":false}`))
	require.NoError(t, s.Attach(t.Context(), []string{"web"}, "p", "namespace", "web"))
	err = s.Attach(t.Context(), []string{"web"}, "q", "namespace", "web")
	require.ErrorContains(t, err, "409")
	require.ErrorContains(t, err, "ConflictPolicyAttachmentException")
	require.ErrorContains(t, s.Attach(t.Context(), []string{"web"}, "p", "table-like", "web", "nope"), "NoSuchTargetException")
	require.ErrorContains(t, s.CreatePolicy(t.Context(), []string{"web"}, "p", compact, `{"enable":true}`), "AlreadyExistsException")
	require.NoError(t, s.Detach(t.Context(), []string{"web"}, "p", "namespace", "web"))
	require.NoError(t, s.Attach(t.Context(), []string{"web"}, "q", "namespace", "web"))
}

func policy(typ, content string) polaris.Policy {
	return polaris.Policy{Type: typ, Name: "p", Content: content, Inheritable: true, Level: polaris.LevelNamespace, AttachedTo: []string{"web"}}
}

func TestSettingsMapping(t *testing.T) {
	const src = "polaris policy p (%s) on namespace web"
	for _, tc := range []struct {
		name, typ, content string
		want               map[string]string
		warn               []string // substrings, one a warning
		err                string
	}{
		{name: "expiry every key", typ: expiry,
			content: `{"version":"2025-02-03","enable":true,"config":{"min_snapshot_to_keep":3,"max_snapshot_age_days":2,"max_ref_age_days":3,"key1":"value1"}}`,
			want:    map[string]string{"enabled.expire": "true", "snapshots.retain_last": "3", "snapshots.older_than": "2d"},
			warn:    []string{"config.key1 is not mapped: floe has no equivalent", "config.max_ref_age_days is not mapped: floe has no ref-age key"}},
		{name: "numbers as strings", typ: expiry, content: `{"enable":false,"config":{"min_snapshot_to_keep":"2","max_snapshot_age_days":"0.25"}}`,
			want: map[string]string{"enabled.expire": "false", "snapshots.retain_last": "2", "snapshots.older_than": "6h"}},
		{name: "minutes", typ: expiry, content: `{"enable":true,"config":{"max_snapshot_age_days":0.0625}}`,
			want: map[string]string{"enabled.expire": "true", "snapshots.older_than": "90m"}},
		{name: "seconds, rounded", typ: expiry, content: `{"enable":true,"config":{"max_snapshot_age_days":0.001}}`,
			want: map[string]string{"enabled.expire": "true", "snapshots.older_than": "86s"}},
		{name: "orphans", typ: orphans, content: `{"enable":true,"max_orphan_file_age_in_days":30,"config":{"prefix_mismatch_mode":"ignore"}}`,
			want: map[string]string{"enabled.orphans": "true", "orphans.older_than": "30d"},
			warn: []string{"config.prefix_mismatch_mode is not mapped"}},
		{name: "orphans fractional", typ: orphans, content: `{"enable":true,"max_orphan_file_age_in_days":1.5}`,
			want: map[string]string{"enabled.orphans": "true", "orphans.older_than": "36h"}},
		{name: "compaction", typ: compact, content: `{"enable":true,"config":{"target_file_size_bytes":134217728,"max-concurrent-file-group-rewrites":5}}`,
			want: map[string]string{"enabled.compact": "true", "target_file_size": "134217728"},
			warn: []string{"config.max-concurrent-file-group-rewrites is not mapped"}},
		{name: "metadata", typ: metadata, content: `{"enable":true,"config":{"spec_id":1}}`,
			want: map[string]string{"enabled.manifests": "true"}, warn: []string{"config.spec_id is not mapped"}},
		{name: "unknown top-level field", typ: compact, content: `{"enable":true,"max_orphan_file_age_in_days":3}`,
			want: map[string]string{"enabled.compact": "true"}, warn: []string{"max_orphan_file_age_in_days is not mapped"}},
		{name: "not JSON", typ: compact, content: `enable=true`, err: "content is not a JSON object"},
		{name: "empty", typ: compact, content: ``, err: "content is empty; enable is required"},
		{name: "trailing data", typ: compact, content: `{"enable":true} {}`, err: "data after its JSON object"},
		{name: "no enable", typ: compact, content: `{"config":{}}`, err: "enable is required"},
		{name: "enable not bool", typ: compact, content: `{"enable":"yes"}`, err: `enable: want true or false, got "yes"`},
		{name: "other version", typ: compact, content: `{"version":"2030-01-01","enable":true}`, err: `version "2030-01-01": floe reads schema version 2025-02-03 only`},
		{name: "negative age", typ: orphans, content: `{"enable":true,"max_orphan_file_age_in_days":-1}`, err: "max_orphan_file_age_in_days: want zero or more days, got -1"},
		{name: "age not a number", typ: orphans, content: `{"enable":true,"max_orphan_file_age_in_days":"x"}`, err: "max_orphan_file_age_in_days: want a number"},
		{name: "huge age", typ: expiry, content: `{"enable":true,"config":{"max_snapshot_age_days":1e300}}`, err: "more than 36500"},
		{name: "negative keep", typ: expiry, content: `{"enable":true,"config":{"min_snapshot_to_keep":-2}}`, err: "config.min_snapshot_to_keep: want at least 1, got -2"},
		{name: "zero keep", typ: expiry, content: `{"enable":true,"config":{"min_snapshot_to_keep":0}}`, err: "want at least 1"},
		{name: "fractional keep", typ: expiry, content: `{"enable":true,"config":{"min_snapshot_to_keep":1.5}}`, err: "want a whole number"},
		{name: "negative size", typ: compact, content: `{"enable":true,"config":{"target_file_size_bytes":-5}}`, err: "config.target_file_size_bytes: want at least 1"},
		{name: "bool size", typ: compact, content: `{"enable":true,"config":{"target_file_size_bytes":true}}`, err: "want a number, got true"},
		{name: "config value an object", typ: compact, content: `{"enable":true,"config":{"a":{}}}`, err: "config: a: want a string, number or boolean"},
		{name: "locations not strings", typ: orphans, content: `{"enable":true,"locations":[1]}`, err: "locations: want a list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings, warnings, err := polaris.Settings([]polaris.Policy{policy(tc.typ, tc.content)})
			prefix := strings.Replace(src, "%s", tc.typ, 1)
			if tc.err != "" {
				require.ErrorIs(t, err, polaris.ErrBadContent)
				require.ErrorContains(t, err, prefix+": ")
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			got := map[string]string{}
			for _, s := range settings {
				require.Equal(t, prefix, s.Source)
				require.Equal(t, polaris.LevelNamespace, s.Level)
				got[s.Key] = s.Value
			}
			require.Equal(t, tc.want, got)
			require.Len(t, warnings, len(tc.warn), "%q", warnings)
			for i, w := range tc.warn {
				require.Contains(t, warnings[i], prefix+": ")
				require.Contains(t, warnings[i], w)
			}
		})
	}
}

func TestSettingsSkipsOtherTypesAndNeedsALevel(t *testing.T) {
	settings, warnings, err := polaris.Settings([]polaris.Policy{policy("system.access-control", `not json`)})
	require.NoError(t, err)
	require.Empty(t, settings)
	require.Empty(t, warnings)

	p := policy(compact, `{"enable":true}`)
	p.Level = ""
	_, _, err = polaris.Settings([]polaris.Policy{p, policy(expiry, `{}`)})
	require.ErrorContains(t, err, `polaris policy p (system.data-compaction) at an unknown level: level "": want catalog, namespace or table`)
	require.ErrorContains(t, err, "polaris policy p (system.snapshot-expiry) on namespace web: bad polaris policy content: enable is required", "every bad policy is reported")
}
