package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

// TestInitYAMLLoads: the floe.yaml floe init writes, for each catalog type
// and store, loads with floe's own loading and says what was asked; its
// comments name the FLOE_ variable of every secret, and it holds none.
func TestInitYAMLLoads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  config.InitOptions
		props config.Props // the catalog's properties, at least
		has   []string     // the file's text holds each
		check func(t *testing.T, cfg *config.Config)
	}{
		{"rest, oauth2, s3", config.InitOptions{Catalog: "rest", URI: "https://polaris.example.com/api/catalog", Warehouse: "analytics",
			Auth: "oauth2", Scope: "PRINCIPAL_ROLE:ALL", Storage: "s3", Region: "eu-west-1", Endpoint: "http://minio:9000", PathStyle: true},
			config.Props{"type": "rest", "uri": "https://polaris.example.com/api/catalog", "warehouse": "analytics", "scope": "PRINCIPAL_ROLE:ALL",
				"s3.region": "eu-west-1", "s3.endpoint": "http://minio:9000", "s3.force-virtual-addressing": "false"},
			[]string{"export FLOE_CATALOG__LAKE__CREDENTIAL=", "FLOE_CATALOG__LAKE__S3_ACCESS_KEY_ID"}, nil},
		{"rest, token", config.InitOptions{Name: "prod", Catalog: "rest", URI: "https://cat.example.com", Auth: "token"},
			config.Props{"type": "rest", "uri": "https://cat.example.com"}, []string{"export FLOE_CATALOG__PROD__TOKEN="}, nil},
		{"glue, s3", config.InitOptions{Catalog: "glue", Region: "eu-west-1", Warehouse: "s3://analytics/warehouse", Storage: "s3"},
			config.Props{"type": "glue", "glue.region": "eu-west-1", "warehouse": "s3://analytics/warehouse"},
			[]string{"FLOE_CATALOG__LAKE__GLUE_ACCESS_KEY_ID"}, func(t *testing.T, cfg *config.Config) {
				require.NotContains(t, cfg.Catalogs["lake"], "s3.region", "the Glue region is the files' too (lake.IOProps)")
			}},
		{"hive, gcs", config.InitOptions{Catalog: "hive", URI: "thrift://metastore:9083", Warehouse: "gs://lake/warehouse", Storage: "gcs"},
			config.Props{"type": "hive", "uri": "thrift://metastore:9083", "warehouse": "gs://lake/warehouse"}, []string{"GOOGLE_APPLICATION_CREDENTIALS"}, nil},
		{"sql on sqlite, local", config.InitOptions{Catalog: "sql", URI: "catalog.db", Storage: "local"},
			config.Props{"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite"}, nil, func(t *testing.T, cfg *config.Config) {
				require.Equal(t, "file://"+filepath.Join(cfg.DataDir, "warehouse"), cfg.Catalogs["lake"]["warehouse"])
			}},
		{"sql on postgres, azure", config.InitOptions{Catalog: "sql", URI: "postgres://floe@db:5432/iceberg", Storage: "azure", Account: "lakeacct", Warehouse: "abfs://lake@lakeacct.dfs.core.windows.net/wh"},
			config.Props{"type": "sql", "sql.driver": "pgx", "sql.dialect": "postgres", "uri": "postgres://floe@db:5432/iceberg", "adls.auth.shared-key.account.name": "lakeacct"},
			[]string{"PGPASSWORD", "FLOE_CATALOG__LAKE__ADLS_AUTH_SHARED_KEY_ACCOUNT_KEY"}, nil},
		{"engines and sources", config.InitOptions{Catalog: "rest", URI: "http://127.0.0.1:8181", Trino: "http://floe@trino:8080?catalog=iceberg", Spark: "sc://spark:15002",
			Sources: []string{"files:/var/log/spark-events,/var/log/more", "trino:http://floe@trino:8080", "athena:eu-west-1", "files:/tmp/x"}},
			config.Props{"type": "rest"}, []string{"FLOE_ENGINE__TRINO__PASSWORD", "FLOE_SOURCE__TRINO__PASSWORD", "FLOE_SOURCE__ATHENA__AWS_ACCESS_KEY_ID"},
			func(t *testing.T, cfg *config.Config) {
				require.Equal(t, []string{"spark", "trino"}, cfg.EngineNames())
				require.Len(t, cfg.Telemetry.Sources, 4)
				require.Equal(t, []string{"/var/log/spark-events", "/var/log/more"}, cfg.Telemetry.Sources[0].Paths)
				require.Equal(t, "files-2", cfg.Telemetry.Sources[3].Name)
				require.Equal(t, "eu-west-1", cfg.Telemetry.Sources[2].Region)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := config.InitYAML(tc.opts)
			require.NoError(t, err)
			cfg, err := load(t, string(data))
			require.NoError(t, err, "%s", data)
			name := tc.opts.Name
			if name == "" {
				name = "lake"
			}
			require.Equal(t, []string{name}, cfg.CatalogNames(), "the embedded default's local catalog is gone")
			require.Equal(t, name, cfg.DefaultCatalog)
			for k, v := range tc.props {
				require.Equal(t, v, cfg.Catalogs[name][k], k)
			}
			for _, h := range tc.has {
				require.Contains(t, string(data), h)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
		})
	}
}

// A snowflake source loads once its key is in the environment, which the
// file names.
func TestInitYAMLSnowflakeSource(t *testing.T) {
	data, err := config.InitYAML(config.InitOptions{Catalog: "glue", Region: "us-east-1", Sources: []string{"snowflake:FLOE@MYORG-MYACCOUNT"}})
	require.NoError(t, err)
	require.Contains(t, string(data), "export FLOE_SOURCE__SNOWFLAKE__PRIVATE_KEY_FILE=")
	_, err = load(t, string(data))
	require.ErrorContains(t, err, "FLOE_SOURCE__SNOWFLAKE__PRIVATE_KEY")
	key := filepath.Join(t.TempDir(), "key.p8")
	require.NoError(t, os.WriteFile(key, []byte("not read when loading"), 0o600))
	cfg, err := load(t, string(data), "FLOE_SOURCE__SNOWFLAKE__PRIVATE_KEY_FILE="+key)
	require.NoError(t, err)
	require.Equal(t, "MYORG-MYACCOUNT", cfg.Telemetry.Sources[0].Account)
	require.Equal(t, "FLOE", cfg.Telemetry.Sources[0].User)
}

// Bad options are refused all at once, each naming its option, and a
// secret in a URI is refused rather than written.
func TestInitOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts config.InitOptions
		want []string
	}{
		{"nothing", config.InitOptions{}, []string{"catalog: required: rest, glue, hive or sql"}},
		{"rest without uri", config.InitOptions{Catalog: "rest"}, []string{"uri: required for a rest catalog"}},
		{"glue without region", config.InitOptions{Catalog: "glue"}, []string{"region: required for a glue catalog"}},
		{"azure without account", config.InitOptions{Catalog: "glue", Region: "x", Storage: "azure"}, []string{"account: required for --storage azure"}},
		{"everything wrong at once", config.InitOptions{Catalog: "hive", URI: "thrift://h:9083", Name: "Prod.1", Storage: "ftp", Auth: "oauth2", PathStyle: true, Endpoint: "http://x",
			Spark: "http://spark", Sources: []string{"kafka:x", "files"}},
			[]string{`name: "Prod.1"`, `storage: "ftp"`, "auth: is for a rest catalog", "path-style: is for --storage s3", "endpoint: is for --storage s3, gcs or azure",
				"spark: want a Spark Connect address", `source: kind "kafka"`, `source: "files": want KIND:VALUE`}},
		{"a region nothing reads", config.InitOptions{Catalog: "rest", URI: "http://x", Region: "eu-west-1", Storage: "gcs"}, []string{"region: is for a glue catalog or --storage s3"}},
		{"password in the uri", config.InitOptions{Catalog: "sql", URI: "postgres://floe:hunter2@db/iceberg"}, []string{"uri: holds a password", "PGPASSWORD"}},
		{"password in trino", config.InitOptions{Catalog: "glue", Region: "x", Trino: "http://floe:hunter2@trino:8080"}, []string{"trino: holds a password", "FLOE_ENGINE__TRINO__PASSWORD"}},
		{"token in spark", config.InitOptions{Catalog: "glue", Region: "x", Spark: "sc://spark:15002/;token=hunter2"}, []string{"spark: holds a password or token"}},
		{"password in a source", config.InitOptions{Catalog: "glue", Region: "x", Sources: []string{"trino:http://floe:hunter2@trino:8080"}}, []string{"FLOE_SOURCE__TRINO__PASSWORD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "hunter2")
			_, err = config.InitYAML(tc.opts)
			require.Error(t, err)
			if strings.HasPrefix(tc.name, "everything") {
				require.Equal(t, len(tc.want), strings.Count(err.Error(), "\n")+1, "one line a problem: %s", err)
			}
		})
	}
}
