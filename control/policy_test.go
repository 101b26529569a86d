package control_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/lake/polaris/polaristest"
)

// TestResolvePolicyFromPolaris reads a table's policies from the Polaris
// fake (written from Polaris's published OpenAPI) over real HTTP, maps
// them at the level Polaris reports, and lets floe.yaml win at its level.
func TestResolvePolicyFromPolaris(t *testing.T) {
	ctx := t.Context()
	s := polaristest.New(t, polaristest.Options{})
	s.CreateNamespace("ops")
	s.CreateTable([]string{"web"}, "events")
	for _, p := range []struct {
		ns                 []string
		name, typ, content string
		targetType         string
		target             []string
	}{
		{[]string{"ops"}, "lake_expiry", "system.snapshot-expiry", `{"enable":true,"config":{"min_snapshot_to_keep":5,"max_snapshot_age_days":7,"max_ref_age_days":30}}`, "catalog", nil},
		{[]string{"web"}, "web_orphans", "system.orphan-file-removal", `{"enable":true,"max_orphan_file_age_in_days":4}`, "namespace", []string{"web"}},
		{[]string{"web"}, "events_compaction", "system.data-compaction", `{"enable":false,"config":{"target_file_size_bytes":268435456}}`, "table-like", []string{"web", "events"}},
	} {
		require.NoError(t, s.CreatePolicy(ctx, p.ns, p.name, p.typ, p.content))
		require.NoError(t, s.Attach(ctx, p.ns, p.name, p.targetType, p.target...))
	}
	var b strings.Builder
	b.WriteString("catalogs:\n  lake:\n")
	for k, v := range s.Props() {
		fmt.Fprintf(&b, "    %s: %q\n", k, v)
	}
	b.WriteString(`policies:
  from_catalog: true
  default:
    snapshots: {retain_last: 10}
  namespaces:
    lake.web: {orphans: {older_than: 6d}}
`)
	dir := t.TempDir()
	path := filepath.Join(dir, "floe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	cfg, err := config.Load(config.Options{Path: path, WorkDir: dir, Environ: func() []string { return nil }})
	require.NoError(t, err)

	eff, err := control.ResolvePolicy(ctx, cfg, lake.Ident{Catalog: "lake", Namespace: []string{"web"}, Name: "events"})
	require.NoError(t, err)
	tests := []struct {
		key, value string
		level      policy.Level
		where      string
	}{
		// Polaris's catalog level beats floe.yaml's default level.
		{"snapshots.retain_last", "5", policy.LevelCatalog, "lake_expiry"},
		{"snapshots.older_than", "7d", policy.LevelCatalog, "lake_expiry"},
		// floe.yaml wins at the same level.
		{"orphans.older_than", "6d", policy.LevelNamespace, path + ":"},
		{"enabled.orphans", "true", policy.LevelNamespace, "web_orphans"},
		{"target_file_size", "268435456", policy.LevelTable, "events_compaction"},
		{"enabled.compact", "false", policy.LevelTable, "events_compaction"},
		{"enabled.manifests", "true", policy.LevelBuiltin, ""},
	}
	for _, tt := range tests {
		st, ok := eff.Setting(tt.key)
		require.True(t, ok, tt.key)
		require.Equal(t, tt.value, st.Value, tt.key)
		require.Equal(t, tt.level, st.Level, tt.key)
		require.Contains(t, st.Where, tt.where, tt.key)
	}
	require.False(t, eff.Policy.Enabled.Compact)
	require.Equal(t, 6*24*time.Hour, eff.Policy.Orphans.OlderThan)
	require.Len(t, eff.Warnings, 1)
	require.Contains(t, eff.Warnings[0], "max_ref_age_days")

	// A Polaris that refuses the credential fails the resolution, naming
	// the catalog, and never prints the secret.
	cfg.Catalogs["lake"]["credential"] = "floe:wrong-secret"
	_, err = control.ResolvePolicy(ctx, cfg, lake.Ident{Catalog: "lake", Namespace: []string{"web"}, Name: "events"})
	require.Error(t, err)
	require.ErrorContains(t, err, "catalog lake")
	require.NotContains(t, err.Error(), "wrong-secret")
}
