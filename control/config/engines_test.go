package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

const enginesFile = restFile + `engines:
  trino:
    type: trino
    dsn: "http://floe@trino.example.com:8080?catalog=iceberg"
    catalogs: {prod: iceberg}
    timeout: 6h
  spark:
    type: spark
    remote: "sc://spark-connect.example.com:15002"
`

func TestEngines(t *testing.T) {
	cfg, err := load(t, enginesFile, "FLOE_ENGINE__TRINO__PASSWORD=s3cret", "FLOE_ENGINE__SPARK__TOKEN=tok")
	require.NoError(t, err)
	require.Equal(t, []string{"spark", "trino"}, cfg.EngineNames())
	tr := cfg.Engines["trino"]
	require.Equal(t, "iceberg", tr.EngineCatalog("prod"))
	require.Equal(t, "other", tr.EngineCatalog("other"), "an unmapped catalog keeps its name")
	require.Equal(t, 6*time.Hour, tr.TimeoutDuration())
	require.Equal(t, "s3cret", tr.Password.Reveal())
	require.Equal(t, "tok", cfg.Engines["spark"].Token.Reveal())
	require.NotContains(t, tr.Password.String(), "s3cret")
}

func TestEngineValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{"unknown type", restFile + "engines:\n  x:\n    type: flink\n", nil, []string{"engines.x.type", `"flink"`, "trino or spark"}},
		{"trino without dsn", restFile + "engines:\n  t:\n    type: trino\n", nil, []string{"engines.t.dsn", "required"}},
		{"spark without remote", restFile + "engines:\n  s:\n    type: spark\n", nil, []string{"engines.s.remote", "sc://"}},
		{"bad remote", restFile + "engines:\n  s:\n    type: spark\n    remote: http://x\n", nil, []string{"engines.s.remote", "want sc://host:port"}},
		{"reserved name", restFile + "engines:\n  native:\n    type: spark\n    remote: sc://x:1\n", nil, []string{"engines.native", "means something of its own"}},
		{"unknown catalog", restFile + "engines:\n  t:\n    type: trino\n    dsn: http://u@h:1\n    catalogs: {nope: iceberg}\n", nil, []string{"engines.t.catalogs.nope", "not one of the catalogs"}},
		{"bad timeout", restFile + "engines:\n  t:\n    type: trino\n    dsn: http://u@h:1\n    timeout: forever\n", nil, []string{"engines.t.timeout", `"forever"`}},
		{"password for an engine that is not there", restFile, []string{"FLOE_ENGINE__TRINO__PASSWORD=x"}, []string{"FLOE_ENGINE__TRINO__PASSWORD", `no engine "trino"`}},
		{"a policy naming no engine", restFile + "policies:\n  default:\n    engine: trino\n", nil, []string{"floe.yaml:8", "engine", `"trino"`, "none are configured"}},
		{"a distributed engine that is not there", enginesFile + "policies:\n  default:\n    engine: auto\n    distributed_engine: flink\n", nil, []string{"distributed_engine", `"flink"`, "engines: spark, trino"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env...)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := load(t, enginesFile+"policies:\n  default:\n    engine: auto\n    distributed_engine: spark\n  tables:\n    prod.db.big: {engine: trino}\n")
	require.NoError(t, err, "engine names that are configured are accepted")
}
