package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/restfake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// loadFile loads the configuration at path as floe does, with the
// process's environment.
func loadFile(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.Options{Path: path, WorkDir: filepath.Dir(path)})
	require.NoError(t, err)
	return cfg
}

// floe init for a REST catalog with OAuth2 on S3, against the REST fake
// over a warehouse on the in-process S3 server: the file it writes holds
// no secret (they come from the FLOE_ variables it names), floe doctor's
// checks pass on it, and floe reads the lake's tables with it.
func TestInitRESTOnS3(t *testing.T) {
	w := testlake.NewS3(t)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	w.CreateTable(t, "db", "t", schema, nil, nil, nil)
	s := restfake.New(t, restfake.Options{Backend: w.Catalog, ClientID: "floe", ClientSecret: "client-s3cret"})
	s3 := testlake.S3Props(w.S3.URL)
	t.Setenv("FLOE_CATALOG__LAKE__CREDENTIAL", "floe:client-s3cret")
	t.Setenv("FLOE_CATALOG__LAKE__S3_ACCESS_KEY_ID", s3["s3.access-key-id"])
	t.Setenv("FLOE_CATALOG__LAKE__S3_SECRET_ACCESS_KEY", s3["s3.secret-access-key"])
	dir := t.TempDir()

	out, errOut, code := run(t, dir, "init", "--catalog", "rest", "--uri", s.URL, "--auth", "oauth2", "--scope", "catalog",
		"--storage", "s3", "--region", "us-east-1", "--endpoint", w.S3.URL, "--path-style", "--data-dir", filepath.Join(dir, "data"))
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	require.Contains(t, out, "wrote "+filepath.Join(dir, "floe.yaml")+" for the rest catalog lake on s3")
	for _, line := range []string{"✓ catalog lake (rest, " + s.URL + "): 1 namespace; loaded db.t", "✓ object store s3://floe/warehouse/db.db/t (catalog lake): listed", "✓ state store "} {
		require.Contains(t, out, "\n"+line)
	}
	require.GreaterOrEqual(t, s.TokensIssued(), 1, "signed in with the credential from the environment")

	data, err := os.ReadFile(filepath.Join(dir, "floe.yaml"))
	require.NoError(t, err)
	for _, secret := range []string{"client-s3cret", s3["s3.secret-access-key"]} {
		require.NotContains(t, string(data), secret)
	}
	require.Contains(t, string(data), "export FLOE_CATALOG__LAKE__CREDENTIAL=")
	cfg := loadFile(t, filepath.Join(dir, "floe.yaml"))
	require.Equal(t, []string{"lake"}, cfg.CatalogNames())
	require.Equal(t, config.Props{"type": "rest", "uri": s.URL, "scope": "catalog", "credential": "floe:client-s3cret",
		"s3.region": "us-east-1", "s3.endpoint": w.S3.URL, "s3.force-virtual-addressing": "false",
		"s3.access-key-id": s3["s3.access-key-id"], "s3.secret-access-key": s3["s3.secret-access-key"]}, cfg.Catalogs["lake"])

	out, errOut, code = run(t, dir, "tables")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "lake.db.t")
}

// floe init for Glue on S3, offline: the file loads, the Glue region
// reaches the tables' S3 IO, and the catalog check fails with a line that
// names the catalog and the address it could not reach (the file stays).
func TestInitGlueOnS3(t *testing.T) {
	// The AWS SDK reaches nothing but a closed port on loopback.
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "AKIATEST", "AWS_SECRET_ACCESS_KEY": "test-secret",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "1", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
	} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	out, errOut, code := run(t, dir, "init", "--catalog", "glue", "--region", "eu-west-1", "--storage", "s3",
		"--data-dir", filepath.Join(dir, "data"), "--timeout", "5s")
	require.Equal(t, exitError, code, "%s%s", out, errOut)
	require.Contains(t, out, "\n✗ catalog lake (glue): ")
	require.Contains(t, out, "127.0.0.1:1")
	require.Contains(t, out, "\n– object store catalog lake: not checked")
	require.Contains(t, out, "\n✓ state store ")
	require.Equal(t, "floe: wrote "+filepath.Join(dir, "floe.yaml")+"; 1 of 2 checks failed, 1 not checked: fix what the lines above say (or the environment), then run floe doctor\n",
		lastLine(errOut))

	cfg := loadFile(t, filepath.Join(dir, "floe.yaml"))
	props := cfg.Catalogs["lake"]
	require.Equal(t, "eu-west-1", props["glue.region"])
	require.Equal(t, "eu-west-1", lake.IOProps(props)["s3.region"], "the Glue region is the S3 files' region")
}

// lastLine is the last line of s, with its newline.
func lastLine(s string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// floe init refuses, exit 2, what it cannot write, and writes nothing:
// a file that exists without --force, missing flags off a terminal,
// options that do not fit (all named at once), a secret in a URI.
func TestInitRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists bool
		args   []string
		want   []string
	}{
		{"existing file", true, []string{"--catalog", "glue", "--region", "eu-west-1"}, []string{"floe.yaml exists: pass --force to overwrite it"}},
		{"no catalog", false, nil, []string{"floe: init needs --catalog; usage: floe init --catalog rest|glue|hive|sql"}},
		{"no uri", false, []string{"--catalog", "rest"}, []string{"init needs --uri"}},
		{"no region, no account", false, []string{"--catalog", "glue", "--storage", "azure"}, []string{"init needs --region and --account"}},
		{"options that do not fit", false, []string{"--catalog", "hive", "--uri", "thrift://h:9083", "--auth", "oauth2", "--path-style", "--source", "kafka:x"},
			[]string{"--auth: is for a rest catalog", "--path-style: is for --storage s3", `--source: kind "kafka"`}},
		{"password in the uri", false, []string{"--catalog", "sql", "--uri", "postgres://floe:hunter2@db/iceberg"}, []string{"--uri: holds a password", "PGPASSWORD"}},
		{"bad timeout", false, []string{"--catalog", "glue", "--region", "x", "--timeout", "0s"}, []string{"--timeout 0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "floe.yaml")
			if tc.exists {
				require.NoError(t, os.WriteFile(path, []byte("log: {level: info}\n"), 0o644))
			}
			_, errOut, code := run(t, dir, append([]string{"init"}, tc.args...)...)
			require.Equal(t, exitUsage, code, errOut)
			for _, w := range tc.want {
				require.Contains(t, errOut, w)
			}
			require.NotContains(t, errOut, "hunter2")
			data, err := os.ReadFile(path)
			if tc.exists {
				require.Equal(t, "log: {level: info}\n", string(data), "left as it was")
			} else {
				require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
			}
		})
	}
}

// On a terminal floe init asks for what the flags leave out, the catalog
// type first; --force overwrites.
func TestInitPrompts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "floe.yaml")
	require.NoError(t, os.WriteFile(path, []byte("log: {level: info}\n"), 0o644))
	io, out, errOut := testIO()
	io.InTTY = true
	io.In = strings.NewReader("hive\nthrift://metastore:9083\n")
	f := newTestFactory(t, io)
	root := newRootCmd(f)
	root.SetArgs([]string{"--config", path, "init", "--force", "--no-check", "--storage", "local", "--warehouse", filepath.Join(dir, "wh")})
	err := root.ExecuteContext(context.Background())
	require.Equal(t, exitOK, exitCode(io, err), errOut.String())
	require.Equal(t, "catalog type (rest, glue, hive or sql): catalog URI (REST base URI, thrift://metastore:9083, SQLite file or postgres://user@host/db): ", errOut.String())
	require.Contains(t, out.String(), "for the hive catalog lake on local")
	cfg := loadFile(t, path)
	require.Equal(t, config.Props{"type": "hive", "uri": "thrift://metastore:9083", "warehouse": "file://" + filepath.Join(dir, "wh")}, cfg.Catalogs["lake"])

	// An empty answer writes nothing.
	io, _, errOut = testIO()
	io.InTTY, io.In = true, bytes.NewBufferString("\n")
	f = newTestFactory(t, io)
	root = newRootCmd(f)
	root.SetArgs([]string{"--config", filepath.Join(dir, "other.yaml"), "init"})
	require.Equal(t, exitUsage, exitCode(io, root.ExecuteContext(context.Background())))
	require.Contains(t, errOut.String(), "init needs --catalog: nothing was written")
	require.NoFileExists(t, filepath.Join(dir, "other.yaml"))
}

// A file that needs a secret the environment does not hold yet is
// written, and floe init says what to set (exit 1): here a Snowflake
// source's key.
func TestInitWrittenButNotLoadingYet(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := run(t, dir, "init", "--catalog", "sql", "--uri", filepath.Join(dir, "catalog.db"), "--storage", "local",
		"--data-dir", filepath.Join(dir, "data"), "--source", "snowflake:FLOE@MYORG-MYACCOUNT")
	require.Equal(t, exitError, code, "%s%s", out, errOut)
	require.Contains(t, out, "wrote "+filepath.Join(dir, "floe.yaml"))
	require.Contains(t, errOut, "floe: wrote "+filepath.Join(dir, "floe.yaml")+", but it does not load yet: invalid configuration: ")
	require.Contains(t, errOut, "FLOE_SOURCE__SNOWFLAKE__PRIVATE_KEY")
	require.FileExists(t, filepath.Join(dir, "floe.yaml"))
}
