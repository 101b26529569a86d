package config_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

// sourcesFile is restFile with telemetry.sources holding items.
func sourcesFile(items string) string {
	return restFile + "telemetry:\n  sources:\n" + items
}

// TestValidateSources: every problem of telemetry.sources is reported at
// once, each with its key path and line (or variable), and no secret is
// ever echoed.
func TestValidateSources(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{"no name, no kind", sourcesFile("    - paths: [x]\n"), nil,
			[]string{"floe.yaml:8", "telemetry.sources[0].name: required", "telemetry.sources[0].kind: required: athena, files, snowflake or trino"}},
		{"unknown kind", sourcesFile("    - {name: s, kind: kafka}\n"), nil,
			[]string{"telemetry.sources[0].kind", `"kafka"`, "athena, files, snowflake or trino"}},
		{"bad name", sourcesFile("    - {name: Trino Prod, kind: files, paths: [x]}\n"), nil,
			[]string{"telemetry.sources[0].name", `"Trino Prod"`, "lower case"}},
		{"duplicate names", sourcesFile("    - {name: s, kind: files, paths: [x]}\n    - {name: s, kind: files, paths: [y]}\n"), nil,
			[]string{"floe.yaml:9", "telemetry.sources[1].name", "names telemetry.sources[0] too"}},
		{"files without paths", sourcesFile("    - {name: s, kind: files}\n"), nil,
			[]string{"telemetry.sources[0].paths: required for kind files"}},
		{"a key of another kind", sourcesFile("    - {name: s, kind: files, paths: [x], region: eu-west-1}\n"), nil,
			[]string{"telemetry.sources[0].region: is for kind athena; kind files takes paths or format"}},
		{"trino without dsn", sourcesFile("    - {name: t, kind: trino}\n"), nil,
			[]string{"telemetry.sources[0].dsn: required for kind trino"}},
		{"trino dsn without user", sourcesFile("    - {name: t, kind: trino, dsn: 'http://:hunter2@trino:8080'}\n"), nil,
			[]string{"telemetry.sources[0].dsn", "the user is required"}},
		{"trino dsn of another scheme", sourcesFile("    - {name: t, kind: trino, dsn: 'jdbc:trino://floe:hunter2@trino:8080'}\n"), nil,
			[]string{"telemetry.sources[0].dsn", "want http://user@host:port"}},
		{"athena without region", sourcesFile("    - {name: a, kind: athena, endpoint: 'ftp://x'}\n"), nil,
			[]string{"telemetry.sources[0].region: required", "telemetry.sources[0].endpoint", `"ftp://x"`}},
		{"athena with half its keys", sourcesFile("    - {name: a, kind: athena, region: eu-west-1}\n"), []string{"FLOE_SOURCE__A__AWS_SECRET_ACCESS_KEY=hunter2"},
			[]string{"FLOE_SOURCE__A__AWS_SECRET_ACCESS_KEY", "need both FLOE_SOURCE__A__AWS_ACCESS_KEY_ID"}},
		{"snowflake without account, user or key", sourcesFile("    - {name: snow, kind: snowflake}\n"), nil,
			[]string{"floe.yaml:8", "telemetry.sources[0].account: required for kind snowflake", "telemetry.sources[0].user: required with auth keypair",
				"telemetry.sources[0].private_key: auth keypair needs FLOE_SOURCE__SNOW__PRIVATE_KEY (the PEM) or FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE"}},
		{"snowflake account given as its URL", sourcesFile("    - {name: snow, kind: snowflake, account: 'https://myorg-acct.snowflakecomputing.com', user: floe}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE=/etc/floe/snow.p8"},
			[]string{"telemetry.sources[0].account", "not its URL"}},
		{"snowflake account that is no identifier", sourcesFile("    - {name: snow, kind: snowflake, account: 'my org', user: floe}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE=/etc/floe/snow.p8"},
			[]string{"telemetry.sources[0].account", `"my org"`, "want an account identifier"}},
		{"snowflake url with a password", sourcesFile("    - {name: snow, kind: snowflake, account: a, user: floe, url: 'https://floe:hunter2@x.privatelink.snowflakecomputing.com'}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE=/etc/floe/snow.p8"},
			[]string{"telemetry.sources[0].url", "no user or password"}},
		{"snowflake unknown auth", sourcesFile("    - {name: snow, kind: snowflake, account: a, auth: password}\n"), nil,
			[]string{"telemetry.sources[0].auth", `"password": want keypair or oauth`}},
		{"snowflake key given twice", sourcesFile("    - {name: snow, kind: snowflake, account: a, user: floe}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY=hunter2", "FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE=/etc/floe/snow.p8"},
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE: telemetry.sources[0].private_key_file: set with FLOE_SOURCE__SNOW__PRIVATE_KEY"}},
		{"snowflake token with keypair auth", sourcesFile("    - {name: snow, kind: snowflake, account: a, user: floe}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY=hunter2", "FLOE_SOURCE__SNOW__OAUTH_TOKEN=hunter2"},
			[]string{"FLOE_SOURCE__SNOW__OAUTH_TOKEN: telemetry.sources[0].oauth_token", "auth is keypair: set auth: oauth"}},
		{"snowflake oauth without its token", sourcesFile("    - {name: snow, kind: snowflake, account: a, auth: oauth}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY=hunter2"},
			[]string{"telemetry.sources[0].oauth_token: auth oauth needs FLOE_SOURCE__SNOW__OAUTH_TOKEN",
				"FLOE_SOURCE__SNOW__PRIVATE_KEY: telemetry.sources[0].private_key: set, but auth is oauth"}},
		{"snowflake bad settle and batch size", sourcesFile("    - {name: snow, kind: snowflake, account: a, auth: oauth, settle: 2d, batch_size: -5}\n"),
			[]string{"FLOE_SOURCE__SNOW__OAUTH_TOKEN=hunter2"},
			[]string{"telemetry.sources[0].settle", `"2d": want a positive duration of at most 1d`, "telemetry.sources[0].batch_size: -5"}},
		{"snowflake passphrase", sourcesFile("    - {name: snow, kind: snowflake, account: a, user: floe}\n"),
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY=hunter2", "FLOE_SOURCE__SNOW__PRIVATE_KEY_PASSPHRASE=hunter2"},
			[]string{"FLOE_SOURCE__SNOW__PRIVATE_KEY_PASSPHRASE", "takes no secret PRIVATE_KEY_PASSPHRASE", "PRIVATE_KEY, PRIVATE_KEY_FILE, OAUTH_TOKEN"}},
		{"a snowflake key on a trino source", sourcesFile("    - {name: t, kind: trino, dsn: 'http://floe@trino:8080', warehouse: wh}\n"), nil,
			[]string{"telemetry.sources[0].warehouse: is for kind snowflake; kind trino takes dsn"}},
		{"bad interval", sourcesFile("    - {name: s, kind: files, paths: [x], interval: 100ms}\n"), nil,
			[]string{"telemetry.sources[0].interval", `"100ms"`, "at least 1s"}},
		{"bad silence", sourcesFile("    - {name: s, kind: files, paths: [x], silence: soon}\n"), nil,
			[]string{"telemetry.sources[0].silence", `"soon"`, "want off or a positive duration"}},
		{"silence shorter than the interval", sourcesFile("    - {name: t, kind: trino, dsn: 'http://floe@trino:8080', silence: 30s}\n"), nil,
			[]string{"telemetry.sources[0].silence", "shorter than the interval (1m0s)"}},
		{"secret for a source not in the file", sourcesFile("    - {name: t, kind: trino, dsn: 'http://floe@trino:8080'}\n"), []string{"FLOE_SOURCE__TRINOPROD__PASSWORD=hunter2"},
			[]string{"FLOE_SOURCE__TRINOPROD__PASSWORD", `no source "trinoprod"`, "telemetry.sources: t"}},
		{"secret a kind does not take", sourcesFile("    - {name: s, kind: files, paths: [x]}\n"), []string{"FLOE_SOURCE__S__PASSWORD=hunter2"},
			[]string{"FLOE_SOURCE__S__PASSWORD", "takes no secret PASSWORD"}},
		{"password in the file", sourcesFile("    - {name: t, kind: trino, dsn: 'http://floe@trino:8080', password: hunter2}\n"), nil,
			[]string{"floe.yaml:8: telemetry.sources[0].password: is read from the environment only (FLOE_SOURCE__<NAME>__PASSWORD)"}},
		{"every problem at once", sourcesFile("    - {name: s, kind: files}\n    - {name: t, kind: trino, interval: 0s}\n"), []string{"FLOE_LOG_FORMAT=xml"},
			[]string{"telemetry.sources[0].paths", "telemetry.sources[1].dsn", "telemetry.sources[1].interval", "log.format"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env...)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "hunter2", "a source's secret is never printed")
		})
	}
}

func TestSourcesAccepted(t *testing.T) {
	cfg, err := load(t, sourcesFile(`    - {name: spark-history, kind: files, paths: [/var/log/spark-events, 'logs/*.ndjson'], format: spark-eventlog}
    - {name: trino_prod, kind: trino, dsn: 'https://floe:inline-pw@trino.example.com:8443?catalog=iceberg', interval: 30s, silence: 1h}
    - {name: athena, kind: athena, region: eu-west-1, workgroup: analysts, silence: "off"}
    - {name: snow-prod, kind: snowflake, account: MYORG-MYACCOUNT, user: FLOE, warehouse: FLOE_WH, role: FLOE_READER, settle: 3h, batch_size: 5000}
    - {name: snow-sso, kind: snowflake, account: xy12345.us-east-1, auth: oauth, url: 'https://xy12345.privatelink.snowflakecomputing.com'}
`), "FLOE_SOURCE__TRINO_PROD__PASSWORD=s3cret-pw", "FLOE_SOURCE__ATHENA__AWS_ACCESS_KEY_ID=AKIDEXAMPLE",
		"FLOE_SOURCE__ATHENA__AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "FLOE_SOURCE__SNOW_PROD__PRIVATE_KEY=-----BEGIN PRIVATE KEY-----pemkey",
		"FLOE_SOURCE__SNOW_SSO__OAUTH_TOKEN=oauth-tok")
	require.NoError(t, err)
	src := cfg.Telemetry.Sources
	require.Len(t, src, 5)
	require.Equal(t, config.DefaultFilesSourceInterval, src[0].IntervalDuration())
	require.Zero(t, src[0].SilenceDuration(), "silence is off by default")
	require.False(t, src[0].Polled())
	require.Equal(t, 30*time.Second, src[1].IntervalDuration())
	require.Equal(t, time.Hour, src[1].SilenceDuration())
	require.True(t, src[1].Polled())
	require.Equal(t, "s3cret-pw", src[1].Password.Reveal())
	require.Equal(t, config.DefaultPolledSourceInterval, src[2].IntervalDuration())
	require.Zero(t, src[2].SilenceDuration())
	require.Equal(t, "wJalrXUtnFEMI", src[2].SecretAccessKey.Reveal())
	require.True(t, src[3].Polled())
	require.Equal(t, 3*time.Hour, src[3].SettleDuration())
	require.Equal(t, 5000, src[3].BatchSize)
	require.Equal(t, "-----BEGIN PRIVATE KEY-----pemkey", src[3].PrivateKey.Reveal())
	require.Equal(t, "snow-prod (snowflake MYORG-MYACCOUNT user FLOE)", src[3].Target())
	require.Zero(t, src[4].SettleDuration(), "unset: the poller's default")
	require.Equal(t, "oauth-tok", src[4].OAuthToken.Reveal())
	require.Equal(t, "snow-sso (snowflake xy12345.us-east-1 at https://xy12345.privatelink.snowflakecomputing.com)", src[4].Target())
	got, ok := cfg.TelemetrySource("trino_prod")
	require.True(t, ok)
	require.Equal(t, "trino_prod (trino https://floe@trino.example.com:8443)", got.Target())
	for _, s := range src {
		for _, printed := range []string{s.Target(), fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s)} {
			for _, secret := range []string{"inline-pw", "s3cret-pw", "wJalrXUtnFEMI", "AKIDEXAMPLE", "pemkey", "oauth-tok"} {
				require.NotContains(t, printed, secret)
			}
		}
	}
	require.Contains(t, src[1].Secrets(), "inline-pw")
	require.Contains(t, src[1].Secrets(), "s3cret-pw")
	require.Contains(t, src[3].Secrets(), "-----BEGIN PRIVATE KEY-----pemkey")
	require.Contains(t, src[4].Secrets(), "oauth-tok")
}
