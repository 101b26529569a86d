package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
)

// policyOf is the value and origin of a policy key for table name.
func policyOf(t *testing.T, cfg *config.Config, name, key string) string {
	t.Helper()
	parts := strings.Split(name, ".")
	id := lake.Ident{Catalog: parts[0], Namespace: parts[1:2], Name: parts[2]}
	eff, err := cfg.Policies.Resolve(id)
	require.NoError(t, err)
	s, ok := eff.Setting(key)
	require.True(t, ok, key)
	return s.Value + " (" + string(s.Level) + ")"
}

// TestFileExtendsDefault pins what a floe.yaml overrides of the embedded
// default (docs/config.md): a file that names no catalog keeps the
// default's catalog and all that names it; a file that names catalogs
// replaces the catalog set, and the default's default_catalog,
// telemetry.catalog_map and policies go with it; every other section
// merges key by key; policies merge rule by rule, key by key.
func TestFileExtendsDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		extra map[string]string // other files beside floe.yaml
		check func(t *testing.T, cfg *config.Config)
	}{
		{"no catalogs: the default's local catalog stays", "log:\n  level: debug\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, []string{"local"}, cfg.CatalogNames())
			require.Equal(t, "local", cfg.DefaultCatalog)
			require.Equal(t, "debug", cfg.Log.Level)
			require.Equal(t, "text", cfg.Log.Format)
			require.Equal(t, "30d", cfg.Telemetry.Retention)
			fc, ok := cfg.MapEngineCatalog("trino", "iceberg")
			require.True(t, ok)
			require.Equal(t, "local", fc)
			require.Equal(t, "64KiB (catalog)", policyOf(t, cfg, "local.web.events", "target_file_size"))
		}},
		{"catalogs: the set is replaced, and what named local goes with it", "catalogs:\n  prod: {type: rest, uri: 'http://127.0.0.1:1'}\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, []string{"prod"}, cfg.CatalogNames())
			require.Equal(t, "prod", cfg.DefaultCatalog, "the only catalog is the default")
			require.Empty(t, cfg.Telemetry.CatalogMap)
			require.Empty(t, cfg.Policies.Catalogs, "the demo's 64KiB rule is about its local catalog")
			require.Equal(t, " (builtin)", policyOf(t, cfg, "prod.web.events", "target_file_size"))
			require.Equal(t, "30d", cfg.Telemetry.Retention, "the rest of the default stays")
			require.Equal(t, int64(512<<20), cfg.TargetFileSizeBytes())
		}},
		{"catalogs named local too: the file's local, no default rule", "catalogs:\n  local: {type: rest, uri: 'http://127.0.0.1:1'}\n  prod: {type: rest, uri: 'http://127.0.0.1:2'}\ndefault_catalog: prod\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, []string{"local", "prod"}, cfg.CatalogNames())
			require.Equal(t, "prod", cfg.DefaultCatalog)
			require.Equal(t, "rest", cfg.Catalogs["local"]["type"])
			require.NotContains(t, cfg.Catalogs["local"], "sql.driver", "a replaced catalog keeps none of the default's properties")
			require.Equal(t, " (builtin)", policyOf(t, cfg, "local.web.events", "target_file_size"))
		}},
		{"catalog_map merges key by key", "telemetry:\n  catalog_map:\n    trino: {hive: local}\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, map[string]string{"iceberg": "local", "lake": "local", "hive": "local"}, cfg.Telemetry.CatalogMap["trino"])
			require.Contains(t, cfg.Telemetry.CatalogMap, "spark")
		}},
		{"a section merges key by key", "server:\n  listen: 127.0.0.1:9999\ntelemetry:\n  retention: 7d\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, "127.0.0.1:9999", cfg.Server.Listen)
			require.Equal(t, config.DefaultServerMaxConcurrentRuns, cfg.Server.MaxConcurrentRuns)
			require.Equal(t, "7d", cfg.Telemetry.Retention)
			require.NotEmpty(t, cfg.Telemetry.CatalogMap, "telemetry's other keys stay")
		}},
		{"data_dir moves the default's catalog", "data_dir: ./elsewhere\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Contains(t, cfg.Catalogs["local"]["uri"], "/elsewhere/catalog.db")
			require.True(t, strings.HasSuffix(cfg.State.Path, "/elsewhere/state.db"), cfg.State.Path)
		}},
		{"policies merge over the default's, key by key", "policies:\n  catalogs:\n    local: {mode: manual}\n  default: {snapshots: {retain_last: 7}}\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, "64KiB (catalog)", policyOf(t, cfg, "local.web.events", "target_file_size"))
			require.Equal(t, "manual (catalog)", policyOf(t, cfg, "local.web.events", "mode"))
			require.Equal(t, "7 (default)", policyOf(t, cfg, "local.web.events", "snapshots.retain_last"))
		}},
		{"a policies_file merges likewise", "policies_file: p.yaml\n", map[string]string{"p.yaml": "catalogs:\n  local:\n    target_file_size: 128KiB\n"}, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, "128KiB (catalog)", policyOf(t, cfg, "local.web.events", "target_file_size"), "allowed small by the default's rule")
			require.True(t, strings.HasSuffix(cfg.PoliciesFile, "p.yaml"))
		}},
		{"a file of comments only is the default", "# catalogs:\n#   prod: {type: rest}\n", nil, func(t *testing.T, cfg *config.Config) {
			require.Equal(t, []string{"local"}, cfg.CatalogNames())
			require.Equal(t, "64KiB (catalog)", policyOf(t, cfg, "local.web.events", "target_file_size"))
		}},
		{"postgres state: the default sets no sqlite path", "state:\n  driver: postgres\n  dsn: postgres://floe@db:5432/floe\n", nil, func(t *testing.T, cfg *config.Config) {
			require.True(t, cfg.State.IsPostgres())
			require.Empty(t, cfg.State.Path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "floe.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
			for name, text := range tc.extra {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
			}
			cfg, err := config.Load(config.Options{Path: path, WorkDir: dir, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
			require.NoError(t, err)
			require.Equal(t, path, cfg.Source)
			tc.check(t, cfg)
		})
	}
}

// goInternals are what a Go YAML decoder's messages say that a user of
// floe.yaml should never read.
var goInternals = regexp.MustCompile(`Go struct|Go value|config\.[A-Z]|\buint64\b|\bint64\b|\bfloat64\b|map\[|\[\]|unmarshal|reflect`)

// TestEveryProblemAtOnce: one load reports what the file's decoding, the
// environment and validation each find, with file:line and the key, in
// the user's words; a value of the wrong shape is reported once (not again
// as missing).
func TestEveryProblemAtOnce(t *testing.T) {
	file := `catalogs:
  prod:
    type: [rest]
    uri: http://127.0.0.1:1
  lake:
    type: sqll
plan: 5
server:
  max_concurrent_runs: two
  public_read: maybe
log:
  level: loud
helth:
  target_file_size: 1GiB
policies:
  default:
    mode: sometimes
`
	_, err := load(t, file, "FLOE_LOG_FORMAT=xml", "FLOE_TYPO=1")
	require.ErrorIs(t, err, config.ErrInvalid)
	msg := err.Error()
	for _, want := range []string{
		"floe.yaml:3: catalogs.prod.type: want a single value, not a list",
		"floe.yaml:6: catalogs.lake.type: \"sqll\" is not a catalog type",
		"floe.yaml:7: plan: want a mapping of keys (min_gain_pp), not the number 5",
		"floe.yaml:9: server.max_concurrent_runs: want a whole number, not \"two\"",
		"floe.yaml:10: server.public_read: want true or false, not \"maybe\"",
		"floe.yaml:12: log.level: \"loud\"",
		"floe.yaml:13: helth: unknown key (did you mean health?)",
		"floe.yaml:17: policies.default.mode",
		"FLOE_LOG_FORMAT",
		"FLOE_TYPO: unknown floe environment variable",
	} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, msg, "catalogs.prod.type: required", "a value of the wrong shape is not missing too")
	require.NotRegexp(t, goInternals, msg)
}

// TestDecodeErrorsInUsersWords: every wrong shape a value can have is said
// in YAML's words, at its line, never with Go's type names.
func TestDecodeErrorsInUsersWords(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"mapping for a value", "log:\n  level: {a: b}\n", "floe.yaml:2: log.level: want a single value, not a mapping"},
		{"value for a mapping", "state: sqlite\n", "floe.yaml:1: state: want a mapping of keys (driver, path, dsn), not \"sqlite\""},
		{"value for a list", "telemetry:\n  sources: trino\n", "floe.yaml:2: telemetry.sources: want a list"},
		{"value for a map", "catalogs: prod\n", "floe.yaml:1: catalogs: want a mapping of names to values, not \"prod\""},
		{"text for a number", "plan:\n  min_gain_pp: lots\n", "floe.yaml:2: plan.min_gain_pp: want a number, not \"lots\""},
		{"fraction for a whole number", "server:\n  max_concurrent_runs: 1.5\n", "floe.yaml:2: server.max_concurrent_runs: want a whole number, not the number 1.5"},
		{"list item of the wrong shape", "alerts:\n  webhooks:\n    - ops\n", "floe.yaml:3: alerts.webhooks[0]: want a mapping of keys (name, url, format, headers)"},
		{"key set twice", "log:\n  level: info\n  level: debug\n", "floe.yaml:3:3: mapping key \"level\" already defined at [2:3]"},
		{"a list at the top", "- catalogs\n", "floe.yaml:1: want a mapping of keys (data_dir, default_catalog, catalogs"},
		{"two documents", "log: {level: info}\n---\nlog: {level: debug}\n", "floe.yaml:3: a second YAML document"},
		{"a secret in the file", "state:\n  password: hunter2\n", "floe.yaml:2: state.password: is read from the environment only (FLOE_STATE_PASSWORD)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file)
			require.ErrorIs(t, err, config.ErrInvalid)
			require.Contains(t, err.Error(), tc.want)
			require.NotRegexp(t, goInternals, err.Error())
			require.NotContains(t, err.Error(), "hunter2")
		})
	}
}

// Anchors, aliases and merge keys read as YAML means them.
func TestDecodeAnchorsAndMergeKeys(t *testing.T) {
	file := `catalogs:
  prod: &rest
    type: rest
    uri: http://127.0.0.1:1
    s3.region: eu-west-1
  dr:
    <<: *rest
    uri: http://127.0.0.1:2
  copy: *rest
`
	cfg, err := load(t, file)
	require.NoError(t, err)
	require.Equal(t, config.Props{"type": "rest", "uri": "http://127.0.0.1:2", "s3.region": "eu-west-1"}, cfg.Catalogs["dr"])
	require.Equal(t, cfg.Catalogs["prod"], cfg.Catalogs["copy"])
}
