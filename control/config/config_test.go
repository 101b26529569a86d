package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

func load(t *testing.T, file string, env ...string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	opts := config.Options{WorkDir: dir, Getenv: func(string) string { return "" }, Environ: func() []string { return env }}
	if file != "" {
		opts.Path = filepath.Join(dir, "floe.yaml")
		require.NoError(t, os.WriteFile(opts.Path, []byte(file), 0o644))
	}
	return config.Load(opts)
}

func TestEmbeddedDefault(t *testing.T) {
	cfg, err := load(t, "")
	require.NoError(t, err)
	require.Equal(t, "(embedded default)", cfg.Source)
	require.Equal(t, "local", cfg.DefaultCatalog)
	props := cfg.Catalogs["local"]
	require.Equal(t, "sql", props["type"])
	require.True(t, strings.HasPrefix(props["uri"], "file:/"), props["uri"])
	require.Contains(t, props["uri"], "floe-data/catalog.db?_pragma=busy_timeout")
	require.True(t, strings.HasPrefix(props["warehouse"], "file:///"), props["warehouse"])
	require.True(t, strings.HasSuffix(cfg.State.Path, "floe-data/state.db"))
	require.Equal(t, int64(512<<20), cfg.TargetFileSizeBytes())
	fc, ok := cfg.MapEngineCatalog("trino", "ICEBERG")
	require.True(t, ok)
	require.Equal(t, "local", fc)
}

// TestMapEngineCatalog pins the mapping telemetry ingestion relies on
// (collectors/ingest's Catalogs): catalog_map, then a floe catalog of the
// same name, then the default; no catalog part means the default.
func TestMapEngineCatalog(t *testing.T) {
	two := "catalogs:\n  lake: {type: sql}\n  prod: {type: sql}\ntelemetry:\n  catalog_map:\n    trino: {iceberg: prod}\n"
	withDefault := "default_catalog: lake\n" + two
	for _, tc := range []struct {
		name, file, engine, catalog, want string
		ok                                bool
	}{
		{"catalog_map entry", two, "TRINO", "Iceberg", "prod", true},
		{"catalog_map is per engine", withDefault, "spark", "iceberg", "lake", true},
		{"floe catalog of the same name", two, "spark", "PROD", "prod", true},
		{"unknown, no default", two, "spark", "other", "", false},
		{"unknown, default", withDefault, "spark", "other", "lake", true},
		{"no catalog part, default", withDefault, "trino", "", "lake", true},
		{"no catalog part, no default", two, "trino", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := load(t, tc.file)
			require.NoError(t, err)
			require.Equal(t, []string{"lake", "prod"}, cfg.CatalogNames())
			got, ok := cfg.MapEngineCatalog(tc.engine, tc.catalog)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestErrorsNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"unknown key", "catalogs:\n  a: {type: rest}\nhealth:\n  target_size: 1\n", []string{"floe.yaml:4:", "target_size"}},
		{"bad size", "catalogs:\n  a: {type: rest, uri: 'http://x'}\nhealth:\n  target_file_size: lots\n", []string{"floe.yaml", "health.target_file_size", "lots"}},
		{"unknown default", "default_catalog: nope\ncatalogs:\n  a: {type: rest}\n", []string{"default_catalog", `"nope"`}},
		{"no type", "catalogs:\n  a: {warehouse: x}\n", []string{"catalogs.a.type"}},
		{"bad map", "catalogs:\n  a: {type: sql}\ntelemetry:\n  catalog_map:\n    trino: {iceberg: b}\n", []string{"telemetry.catalog_map.trino.iceberg"}},
		{"not yaml", "catalogs: [\n", []string{"floe.yaml:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file)
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestEnvOverrides(t *testing.T) {
	file := "catalogs:\n  prod:\n    type: rest\n    uri: http://old\n    s3.access-key-id: AKIA\n"
	cfg, err := load(t, file,
		"FLOE_CATALOG__PROD__URI=http://new",
		"FLOE_CATALOG__PROD__S3_SECRET_ACCESS_KEY=shh",
		"FLOE_CATALOG__PROD__S3_ACCESS_KEY_ID=AKIB",
		"FLOE_TELEMETRY__TRINO__LAKE=prod",
		"FLOE_HEALTH_TARGET_FILE_SIZE=128MiB",
		"HOME=/root",
	)
	require.NoError(t, err)
	p := cfg.Catalogs["prod"]
	require.Equal(t, "http://new", p["uri"])
	require.Equal(t, "shh", p["s3.secret-access-key"])
	require.Equal(t, "AKIB", p["s3.access-key-id"])
	require.Equal(t, int64(128<<20), cfg.TargetFileSizeBytes())
	fc, ok := cfg.MapEngineCatalog("trino", "lake")
	require.True(t, ok)
	require.Equal(t, "prod", fc)
	// Secrets never print.
	require.NotContains(t, p.String(), "shh")
	require.NotContains(t, p.String(), "AKIB")
	require.Contains(t, p.String(), "uri=http://new")

	_, err = load(t, file, "FLOE_TYPO=1")
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorContains(t, err, "FLOE_TYPO")
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("catalogs:\n  a: {type: sql}\n"))
	f.Add(config.DefaultYAML())
	f.Add([]byte("health: [1, 2\n"))
	f.Add([]byte("catalogs:\n  a: &x {type: sql}\n  b:\n    <<: *x\n    uri: u\n  c: *x\nserver: {max_concurrent_runs: 2.5, public_read: yes}\n"))
	f.Add([]byte("telemetry:\n  sources:\n    - {name: s, kind: files, paths: [a, *nope]}\n---\nlog: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse("fuzz.yaml", data)
		if err == nil {
			require.NotNil(t, cfg)
		} else {
			require.Contains(t, err.Error(), "fuzz.yaml")
		}
	})
}

// TestRedactURI checks that the secrets a catalog URI can embed are never
// printed, and that the rest still says where the catalog is.
func TestRedactURI(t *testing.T) {
	for _, tc := range []struct {
		name, uri, want string
	}{
		{"plain", "http://127.0.0.1:1", "http://127.0.0.1:1"},
		{"user and password", "https://alice:s3cret@polaris.example.com/api/catalog", "https://alice:****@polaris.example.com/api/catalog"},
		{"user only", "https://alice@polaris.example.com", "https://alice@polaris.example.com"},
		{"secret query", "postgres://db/iceberg?sslmode=require&password=s3cret", "postgres://db/iceberg?password=****&sslmode=require"},
		{"token query", "https://cat.example.com/?access_token=s3cret", "https://cat.example.com/?access_token=****"},
		{"sqlite pragmas", "file:/data/catalog.db?_pragma=busy_timeout(10000)", "file:/data/catalog.db?_pragma=busy_timeout(10000)"},
		{"key=value dsn", "host=db user=floe password=s3cret dbname=iceberg", "host=db user=floe password=**** dbname=iceberg"},
		{"quoted dsn", "host=db password='s3 cret' dbname=iceberg", "host=db password=**** dbname=iceberg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := config.RedactURI(tc.uri)
			require.Equal(t, tc.want, got)
			require.NotContains(t, got, "s3cret")
		})
	}
	p := config.Props{"uri": "https://alice:s3cret@cat.example.com", "token": "t0ken", "warehouse": "analytics"}
	require.Equal(t, "token=**** uri=https://alice:****@cat.example.com warehouse=analytics", p.String())
	require.ElementsMatch(t, []string{"s3cret", "s3cret", "t0ken"}, p.Secrets(), "the password as written and escaped, and the token")
	require.Empty(t, config.Props{"uri": "http://127.0.0.1:1", "warehouse": "analytics"}.Secrets())
}
