package config_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

const viewFile = `catalogs:
  prod:
    type: rest
    uri: https://alice:pw0rd@cat.example.com/api
    credential: client:s3cr3t
    s3.region: eu-west-1
telemetry:
  sources:
    - {name: t, kind: trino, dsn: 'http://floe:trinopw@trino:8080'}
    - {name: f, kind: files, paths: [/var/log/spark]}
alerts:
  webhooks:
    - {name: ops, url: 'https://hooks.slack.com/services/T0/B0/XYZSECRET', headers: {Authorization: 'Bearer hdrsecret'}}
policies:
  catalogs:
    prod: {snapshots: {older_than: 5d}}
`

// viewSecrets are the secrets viewFile and its environment hold.
var viewSecrets = []string{"pw0rd", "s3cr3t", "trinopw", "XYZSECRET", "hdrsecret", "envsecret", "tokensecret-0123456789abcdef0123456789"}

// TestSettingsSayWhereEachValueCameFrom: floe config view's rows — the
// embedded default, the file's lines and the variables — with every
// secret redacted.
func TestSettingsSayWhereEachValueCameFrom(t *testing.T) {
	cfg, err := load(t, viewFile, "FLOE_SOURCE__T__PASSWORD=envsecret", "FLOE_LOG_LEVEL=debug",
		"FLOE_SERVER_TOKEN=tokensecret-0123456789abcdef0123456789", "FLOE_CATALOG__PROD__WAREHOUSE=analytics")
	require.NoError(t, err)
	got := map[string][2]string{}
	for _, s := range cfg.Settings() {
		got[s.Key] = [2]string{s.Value, s.Source}
	}
	for key, want := range map[string][2]string{
		"catalogs.prod.type":                          {"rest", "floe.yaml:3"},
		"catalogs.prod.uri":                           {"https://alice:****@cat.example.com/api", "floe.yaml:4"},
		"catalogs.prod.credential":                    {"****", "floe.yaml:5"},
		"catalogs.prod.s3.region":                     {"eu-west-1", "floe.yaml:6"},
		"catalogs.prod.warehouse":                     {"analytics", "FLOE_CATALOG__PROD__WAREHOUSE"},
		"default_catalog":                             {"prod", "default"},
		"telemetry.sources[0].name":                   {"t", "floe.yaml:9"},
		"telemetry.sources[0].dsn":                    {"****", "floe.yaml:9"},
		"telemetry.sources[0].password":               {"****", "FLOE_SOURCE__T__PASSWORD"},
		"telemetry.sources[1].paths[0]":               {"/var/log/spark", "floe.yaml:10"},
		"telemetry.retention":                         {"30d", "default"},
		"log.level":                                   {"debug", "FLOE_LOG_LEVEL"},
		"log.format":                                  {"text", "default"},
		"server.token":                                {"****", "FLOE_SERVER_TOKEN"},
		"server.max_concurrent_runs":                  {"2", "default"},
		"alerts.webhooks[0].url":                      {"https://hooks.slack.com/services/****", "floe.yaml:13"},
		"alerts.webhooks[0].headers.Authorization":    {"****", "floe.yaml:13"},
		"policies.catalogs.prod.snapshots.older_than": {"5d", "floe.yaml:16"},
	} {
		require.Equal(t, want, got[key], key)
	}
	require.NotContains(t, got, "catalogs.local.type", "the file names its catalogs")
	require.NotContains(t, got, "telemetry.catalog_map.trino.iceberg")
	require.NotContains(t, got, "policies.catalogs.local.target_file_size")

	var yamlOut, sourced bytes.Buffer
	require.NoError(t, config.WriteYAML(&yamlOut, cfg.Settings(), false))
	require.NoError(t, config.WriteYAML(&sourced, cfg.Settings(), true))
	js, err := json.Marshal(cfg.Settings())
	require.NoError(t, err)
	for _, out := range []string{yamlOut.String(), sourced.String(), string(js)} {
		for _, s := range viewSecrets {
			require.NotContains(t, out, s)
		}
	}
	require.Contains(t, sourced.String(), "  # floe.yaml:4\n")
	require.Contains(t, sourced.String(), "  # FLOE_LOG_LEVEL\n")
	require.NotContains(t, yamlOut.String(), "#  ", "no source comments without --sources")
	require.True(t, strings.HasPrefix(string(js), `[{"key":"data_dir","value":`), "rows with snake_case keys: %s", js[:40])

	// What it prints reads back as the same configuration.
	back, err := config.Parse("view.yaml", yamlOut.Bytes())
	require.NoError(t, err, yamlOut.String())
	require.Equal(t, cfg.CatalogNames(), back.CatalogNames())
	require.Equal(t, cfg.Catalogs["prod"]["s3.region"], back.Catalogs["prod"]["s3.region"])
	require.Equal(t, cfg.Telemetry.Sources[1].Paths, back.Telemetry.Sources[1].Paths)
	require.Equal(t, cfg.Server.MaxConcurrentRuns, back.Server.MaxConcurrentRuns)
	require.Len(t, back.Policies.Catalogs, 1)
}

// The embedded default alone: every value's source is the default, and
// its policy on the local catalog is shown.
func TestSettingsOfTheDefault(t *testing.T) {
	cfg, err := load(t, "")
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, config.WriteYAML(&out, cfg.Settings(), true))
	for _, s := range cfg.Settings() {
		require.Equal(t, config.SourceDefault, s.Source, s.Key)
	}
	require.Contains(t, out.String(), "policies:\n  catalogs:\n    local:\n      allow_small_target_file_size: true")
	back, err := config.Parse("view.yaml", out.Bytes())
	require.NoError(t, err, out.String())
	require.Equal(t, []string{"local"}, back.CatalogNames())
}
