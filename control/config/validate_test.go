package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

const restFile = "catalogs:\n  prod:\n    type: rest\n    uri: http://polaris\n    warehouse: analytics\n"

// TestValidateRefusesSilentSettings covers settings that used to be
// accepted and ignored: each is an error wrapping ErrInvalid that names
// where it was set and says what to do.
func TestValidateRefusesSilentSettings(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", "state.db")
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{"misspelt property", "catalogs:\n  prod:\n    type: rest\n    uri: http://x\n    warehous: analytics\n",
			nil, []string{"floe.yaml:5", "catalogs.prod.warehous", "unknown catalog property", "did you mean warehouse?"}},
		{"unknown unprefixed property", "catalogs:\n  prod:\n    type: rest\n    uri: http://x\n    io-impl: org.apache.iceberg.aws.s3.S3FileIO\n",
			nil, []string{"catalogs.prod.io-impl", "unknown catalog property", "s3."}},
		{"near miss under a prefix", "catalogs:\n  prod:\n    type: rest\n    uri: http://x\n    s3.regoin: eu-west-1\n",
			nil, []string{"catalogs.prod.s3.regoin", "did you mean s3.region?"}},
		{"misspelt type", "catalogs:\n  local:\n    type: sqll\n    uri: x\n",
			nil, []string{"floe.yaml:3", "catalogs.local.type", `"sqll" is not a catalog type`, "did you mean sql?", "rest, sql, glue, hive or hadoop"}},
		{"bad timeout", "catalogs:\n  prod: {type: rest, uri: 'http://x', floe.timeout: soon}\n",
			nil, []string{"catalogs.prod.floe.timeout", `"soon"`, "30s"}},
		{"bad object-store timeout", "catalogs:\n  prod: {type: rest, uri: 'http://x', floe.io-timeout: -5s}\n",
			nil, []string{"catalogs.prod.floe.io-timeout", `"-5s"`, "30s"}},
		{"bad retry count", "catalogs:\n  prod: {type: rest, uri: 'http://x', floe.retries: 99}\n",
			nil, []string{"catalogs.prod.floe.retries", `"99"`, "from 0 to 20"}},
		{"catalog only in the environment", restFile,
			[]string{"FLOE_CATALOG__NOPE__TYPE=rest"}, []string{"FLOE_CATALOG__NOPE__TYPE", `no catalog "nope"`, "catalogs: prod", "define catalogs.nope"}},
		{"credential for a misspelt catalog", restFile,
			[]string{"FLOE_CATALOG__PORD__CREDENTIAL=id:secret"}, []string{"FLOE_CATALOG__PORD__CREDENTIAL", `no catalog "pord"`}},
		{"unknown property in the environment", restFile,
			[]string{"FLOE_CATALOG__PROD__WAREHOUS=x"}, []string{"FLOE_CATALOG__PROD__WAREHOUS", "did you mean warehouse?"}},
		{"log level", restFile, []string{"FLOE_LOG_LEVEL=verbose"}, []string{"FLOE_LOG_LEVEL", "log.level", `"verbose"`, "debug, info, warn or error"}},
		{"log format", restFile, []string{"FLOE_LOG_FORMAT=xml"}, []string{"FLOE_LOG_FORMAT", "log.format", `"xml"`, "text or json"}},
		{"log level in the file", restFile + "log:\n  level: loud\n", nil, []string{"floe.yaml:7", "log.level", `"loud"`}},
		{"no progress", restFile, []string{"FLOE_NO_PROGRESS=0"}, []string{"FLOE_NO_PROGRESS=0", "set it to 1"}},
		{"state path in a missing directory", restFile, []string{"FLOE_STATE_PATH=" + missing},
			[]string{"FLOE_STATE_PATH", "state.path", "directory " + filepath.Dir(missing) + " does not exist"}},
		{"state path in a missing directory, file", restFile + "state:\n  path: " + missing + "\n", nil,
			[]string{"floe.yaml:7", "state.path", "does not exist"}},
		{"state path is a directory", restFile, []string{"FLOE_STATE_PATH=" + os.TempDir()}, []string{"FLOE_STATE_PATH", "is a directory"}},
		{"unknown state driver", restFile + "state:\n  driver: mysql\n", nil,
			[]string{"floe.yaml:7", "state.driver", `"mysql"`, "sqlite or postgres"}},
		{"state driver from the environment", restFile, []string{"FLOE_STATE_DRIVER=pg"}, []string{"FLOE_STATE_DRIVER", "state.driver", `"pg"`}},
		{"postgres without dsn", restFile + "state:\n  driver: postgres\n", nil,
			[]string{"floe.yaml: state.dsn", "required with driver postgres"}},
		{"postgres with a path", restFile + "state:\n  driver: postgres\n  dsn: postgres://floe@db/floe\n  path: /tmp/state.db\n", nil,
			[]string{"floe.yaml:9", "state.path", "is for the sqlite driver"}},
		{"postgres with a path from the environment", restFile + "state:\n  driver: postgres\n  dsn: postgres://floe@db/floe\n", []string{"FLOE_STATE_PATH=/tmp/x.db"},
			[]string{"FLOE_STATE_PATH", "state.path", "is for the sqlite driver"}},
		{"dsn with sqlite", restFile + "state:\n  dsn: postgres://floe@db/floe\n", nil,
			[]string{"floe.yaml:7", "state.dsn", "is for the postgres driver"}},
		{"password with sqlite", restFile, []string{"FLOE_STATE_PASSWORD=hunter2"},
			[]string{"FLOE_STATE_PASSWORD", "state.password", "is for the postgres driver"}},
		{"dsn of another database", restFile + "state:\n  driver: postgres\n  dsn: mysql://floe:hunter2@db/floe\n", nil,
			[]string{"state.dsn", `scheme "mysql"`}},
		{"dsn without a database", restFile + "state:\n  driver: postgres\n  dsn: postgres://floe:hunter2@db:5432\n", nil,
			[]string{"state.dsn", "names no database"}},
		{"dsn that is no connection string", restFile + "state:\n  driver: postgres\n  dsn: hunter2\n", nil,
			[]string{"state.dsn", "not a connection string"}},
		{"bad size from the environment", restFile, []string{"FLOE_HEALTH_TARGET_FILE_SIZE=lots"}, []string{"FLOE_HEALTH_TARGET_FILE_SIZE", `"lots"`}},
		{"unknown default from the environment", restFile, []string{"FLOE_DEFAULT_CATALOG=nope"}, []string{"FLOE_DEFAULT_CATALOG", `"nope"`, "prod"}},
		{"telemetry to an unknown catalog", restFile, []string{"FLOE_TELEMETRY__TRINO__ICEBERG=nope"}, []string{"FLOE_TELEMETRY__TRINO__ICEBERG", `"nope"`}},
		{"unknown variable", restFile, []string{"FLOE_LOGLEVEL=debug"}, []string{"FLOE_LOGLEVEL", "unknown floe environment variable", "did you mean FLOE_LOG_LEVEL?"}},
		{"output is no variable", restFile, []string{"FLOE_OUTPUT=json"}, []string{"FLOE_OUTPUT", "unknown floe environment variable"}},
		{"no other test hook", restFile, []string{"FLOE_TEST_PAUSE=committed"}, []string{"FLOE_TEST_PAUSE", "unknown floe environment variable"}},
		{"every problem at once", "catalogs:\n  prod:\n    type: rests\n    warehous: x\n", []string{"FLOE_LOG_FORMAT=xml"},
			[]string{"catalogs.prod.type", "catalogs.prod.warehous", "log.format"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env...)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "hunter2", "a state password is never printed")
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		test func(t *testing.T, c *config.Config)
	}{
		{"documented prefixes", restFile + "    header.X-Tenant: acme\n    rest.sigv4-enabled: 'true'\n    s3.compat-mode: 'true'\n    gcs.whatever: x\n    adls.sas-token.acct.dfs.core.windows.net: tok\n    client.region: eu-west-1\n    glue.catalog-id: '1'\n    floe.timeout: 0s\n    floe.io-timeout: 10s\n    floe.retries: 2\n",
			nil, nil},
		{"credential from the environment", restFile, []string{"FLOE_CATALOG__PROD__CREDENTIAL=id:secret"}, func(t *testing.T, c *config.Config) {
			require.Equal(t, "id:secret", c.Catalogs["prod"]["credential"])
		}},
		{"prefixed property from the environment", restFile, []string{"FLOE_CATALOG__PROD__HEADER_X_TENANT=acme", "FLOE_CATALOG__PROD__FLOE_TIMEOUT=5s"}, func(t *testing.T, c *config.Config) {
			require.Equal(t, "acme", c.Catalogs["prod"]["header.x-tenant"])
			require.Equal(t, "5s", c.Catalogs["prod"]["floe.timeout"])
		}},
		{"log settings", restFile, []string{"FLOE_LOG_LEVEL=DEBUG", "FLOE_LOG_FORMAT=json", "FLOE_NO_PROGRESS=1"}, func(t *testing.T, c *config.Config) {
			require.Equal(t, "DEBUG", c.Log.Level)
			require.Equal(t, "DEBUG", c.Log.LevelOr("info"), "a level set is the level, for floe serve too")
			require.Equal(t, "json", c.Log.Format)
		}},
		{"test hook of the crash tests", restFile, []string{"FLOE_TEST_PAUSE_AT=before-commit-1"}, nil},
		{"store of the test lake", restFile, []string{"FLOE_TEST_STORE=versitygw", "FLOE_TEST_VERSITYGW=/usr/local/bin/versitygw"}, nil},
		{"log defaults", restFile, nil, func(t *testing.T, c *config.Config) {
			require.Equal(t, "warn", c.Log.Level)
			require.Equal(t, "info", c.Log.LevelOr("info"), "floe serve's default when none is set")
			require.Equal(t, "text", c.Log.Format)
		}},
		{"log level in the file", restFile + "log:\n  level: error\n", nil, func(t *testing.T, c *config.Config) {
			require.Equal(t, "error", c.Log.LevelOr("info"))
		}},
		{"empty values are unset", restFile, []string{"FLOE_LOG_LEVEL=", "FLOE_STATE_PATH=", "FLOE_NO_PROGRESS="}, func(t *testing.T, c *config.Config) {
			require.Equal(t, "warn", c.Log.Level)
			require.True(t, strings.HasSuffix(c.State.Path, "floe-data/state.db"), c.State.Path)
		}},
		{"state under data_dir is created later", restFile + "state:\n  path: '{data_dir}/sub/dir/state.db'\n", nil, nil},
		{"state path in an existing directory", restFile, []string{"FLOE_STATE_PATH=" + filepath.Join(os.TempDir(), "floe-state.db")}, nil},
		{"postgres state", restFile + "state:\n  driver: postgres\n  dsn: postgres://floe:hunter2@db.example.com:5432/floe?sslmode=require\n",
			[]string{"FLOE_STATE_PASSWORD=s3cret"}, func(t *testing.T, c *config.Config) {
				require.True(t, c.State.IsPostgres())
				require.Empty(t, c.State.Path, "no SQLite default with postgres")
				require.Equal(t, "s3cret", c.State.Password.Reveal())
				for _, s := range []string{c.State.String(), fmt.Sprint(c.State), fmt.Sprintf("%+v", c.State), fmt.Sprintf("%#v", c.State)} {
					require.NotContains(t, s, "hunter2")
					require.NotContains(t, s, "s3cret")
					require.Contains(t, s, "db.example.com:5432/floe")
				}
				require.ElementsMatch(t, []string{"s3cret", "hunter2", "hunter2"}, c.State.Secrets())
			}},
		{"postgres state from the environment", restFile, []string{"FLOE_STATE_DRIVER=postgres", "FLOE_STATE_DSN=host=db dbname=floe user=floe"},
			func(t *testing.T, c *config.Config) {
				require.True(t, c.State.IsPostgres())
				require.Equal(t, "host=db dbname=floe user=floe", c.State.DSN)
			}},
		{"sqlite state by name", restFile + "state:\n  driver: sqlite\n", nil, func(t *testing.T, c *config.Config) {
			require.Equal(t, config.StateSQLite, c.State.Driver)
			require.True(t, strings.HasSuffix(c.State.Path, "floe-data/state.db"), c.State.Path)
		}},
		{"uri scheme instead of type", "catalogs:\n  prod:\n    uri: http://polaris\n", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.file, tc.env...)
			require.NoError(t, err)
			if tc.test != nil {
				tc.test(t, c)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		opts config.Options
		want []string
	}{
		{"missing --config", config.Options{Path: filepath.Join(dir, "nope.yaml")}, []string{"config file", "nope.yaml", "(from --config) does not exist"}},
		{"missing FLOE_CONFIG", config.Options{Getenv: func(k string) string {
			if k == "FLOE_CONFIG" {
				return filepath.Join(dir, "nope.yaml")
			}
			return ""
		}}, []string{"nope.yaml", "(from FLOE_CONFIG) does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.WorkDir = dir
			tc.opts.Environ = func() []string { return nil }
			if tc.opts.Getenv == nil {
				tc.opts.Getenv = func(string) string { return "" }
			}
			_, err := config.Load(tc.opts)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	for name, file := range map[string]string{
		"unknown key": "catalogs:\n  a: {type: rest}\nhealth:\n  target_size: 1\n",
		"not yaml":    "catalogs: [\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, file)
			require.ErrorIs(t, err, config.ErrInvalid)
			require.Contains(t, err.Error(), "floe.yaml:")
			require.NotContains(t, err.Error(), "\n", "one line, without go-yaml's excerpt")
		})
	}
}
