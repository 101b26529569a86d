package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
)

// TestNumbersOutOfBounds: every number floe.yaml holds has bounds, and a
// value out of them is refused with file:line (or the variable) and key,
// all at once.
func TestNumbersOutOfBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{"health target without its unit", restFile + "health:\n  target_file_size: 512\n", nil,
			[]string{"floe.yaml:7", "health.target_file_size", "512B: want at least 1KiB", "did you mean 512MiB?"}},
		{"health target below the floor", restFile + "health:\n  target_file_size: 1MiB\n", nil,
			[]string{"floe.yaml:7", "health.target_file_size", "1MiB is below the 4MiB floor", "allow_small_target_file_size"}},
		{"health target from the environment", restFile, []string{"FLOE_HEALTH_TARGET_FILE_SIZE=64KiB"},
			[]string{"FLOE_HEALTH_TARGET_FILE_SIZE", "health.target_file_size", "64KiB is below the 4MiB floor"}},
		{"alerts silenced for a year", restFile + "alerts:\n  repeat: 365d\n", nil, []string{"floe.yaml:7", "alerts.repeat", "at most 30d"}},
		{"a thousand runs at once", restFile + "server:\n  max_concurrent_runs: 1000\n", nil, []string{"floe.yaml:7", "server.max_concurrent_runs", "1000: want at least 1 and at most 64"}},
		{"negative runs from the environment", restFile, []string{"FLOE_SERVER_MAX_CONCURRENT_RUNS=-2"}, []string{"FLOE_SERVER_MAX_CONCURRENT_RUNS", "-2: want at least 1"}},
		{"lease held for days", restFile + "server:\n  lease_ttl: 48h\n", nil, []string{"floe.yaml:7", "server.lease_ttl", "at most 1h"}},
		{"runs kept a day", restFile + "server:\n  run_retention: 1d\n", nil, []string{"floe.yaml:7", "server.run_retention", "1d: want at least 7d and at most 3650d"}},
		{"runs kept forever", restFile, []string{"FLOE_SERVER_RUN_RETENTION=4000d"}, []string{"FLOE_SERVER_RUN_RETENTION", "server.run_retention", "4000d: want at least 7d"}},
		{"run retention unreadable", restFile + "server:\n  run_retention: a quarter\n", nil, []string{"floe.yaml:7", "server.run_retention", "want e.g. 30d"}},
		{"late alert after a month", restFile + "server:\n  run_late_after: 720h\n", nil, []string{"floe.yaml:7", "server.run_late_after", "at most 7d"}},
		{"unreachable at once", restFile, []string{"FLOE_SERVER_UNREACHABLE_AFTER=0s"}, []string{"FLOE_SERVER_UNREACHABLE_AFTER", "server.unreachable_after", "want a positive duration"}},
		{"negative grace", restFile + "server:\n  shutdown_grace: -1m\n", nil, []string{"server.shutdown_grace", "want a positive duration"}},
		{"engine timeout of a month", restFile + "engines:\n  trino:\n    type: trino\n    dsn: http://floe@trino:8080?catalog=iceberg\n    timeout: 720h\n", nil,
			[]string{"floe.yaml:10", "engines.trino.timeout", "at most 7d"}},
		{"catalog timeout of days", "catalogs:\n  prod: {type: rest, uri: 'http://x', floe.timeout: 72h}\n", nil, []string{"catalogs.prod.floe.timeout", "at most 1d"}},
		{"telemetry kept an hour", restFile + "telemetry:\n  retention: 1h\n", nil, []string{"floe.yaml:7", "telemetry.retention", "1h: want at least 1d and at most 3650d"}},
		{"telemetry kept forever", restFile + "telemetry:\n  retention: 4000d\n", nil, []string{"floe.yaml:7", "telemetry.retention", "4000d: want at least 1d"}},
		{"telemetry retention unreadable", restFile + "telemetry:\n  retention: a month\n", nil, []string{"floe.yaml:7", "telemetry.retention", "want e.g. 30d"}},
		{"history shorter than the retention", restFile + "telemetry:\n  retention: 90d\n  history: 60d\n", nil,
			[]string{"floe.yaml:8", "telemetry.history", "60d: want at least telemetry.retention (90d) and at most 3650d"}},
		{"history shorter than the default retention", restFile + "telemetry:\n  history: 7d\n", nil,
			[]string{"floe.yaml:7", "telemetry.history", "7d: want at least telemetry.retention (30d)"}},
		{"history of twenty years", restFile + "telemetry:\n  history: 7300d\n", nil, []string{"floe.yaml:7", "telemetry.history", "7300d: want at least"}},
		{"history unreadable", restFile + "telemetry:\n  history: a year\n", nil, []string{"floe.yaml:7", "telemetry.history", "want e.g. 30d"}},
		{"every problem at once", restFile + "health:\n  target_file_size: 512\nserver:\n  max_concurrent_runs: 0\npolicies:\n  default: {retain: 1}\n", nil,
			[]string{"health.target_file_size", "server.max_concurrent_runs", "floe.yaml:11: policies.default.retain: unknown policy key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env...)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestPoliciesValidatedOnLoad: loading floe.yaml runs the policies' whole
// validation (config.CheckPolicies), so that the daemon and every verb
// refuse what floe policy validate refuses.
func TestPoliciesValidatedOnLoad(t *testing.T) {
	file := restFile + `policies:
  default:
    mode: scheduled
    schedule: "0 0 30 2 *"
  tables:
    prod.web.events: {target_file_size: 512KiB}
`
	_, err := load(t, file)
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorContains(t, err, `floe.yaml:9: policies.default.schedule: schedule "0 0 30 2 *": schedule never fires`)
	require.ErrorContains(t, err, `floe.yaml:11: policies.tables.prod.web.events.target_file_size: 512KiB is below the 4MiB floor`)

	forced := strings.Replace(file, "512KiB}", "512KiB, allow_small_target_file_size: true}", 1)
	forced = strings.Replace(forced, "0 0 30 2 *", "0 3 * * 0", 1)
	_, err = load(t, forced)
	require.NoError(t, err)
}

// TestScheduleJudgedByTheInjectedClock: the five-year horizon is counted
// from Options.Now. A leap-day schedule fires within five years of 2026;
// from March 2097 its next occurrence is in 2104 (2100 is no leap year).
func TestScheduleJudgedByTheInjectedClock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "floe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(restFile+"policies:\n  default: {mode: scheduled, schedule: \"0 0 29 2 *\"}\n"), 0o644))
	loadAt := func(now time.Time) error {
		_, err := config.Load(config.Options{Path: path, WorkDir: dir, Getenv: func(string) string { return "" },
			Environ: func() []string { return nil }, Now: func() time.Time { return now }})
		return err
	}
	require.NoError(t, loadAt(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	err := loadAt(time.Date(2097, 3, 1, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, err, policy.ErrNoOccurrence)
	require.ErrorContains(t, err, "floe.yaml:7: policies.default.schedule")
}

// TestCheckPoliciesWithoutConfig: a policies file checked with no
// configuration to load still gets the policies' own validation.
func TestCheckPoliciesWithoutConfig(t *testing.T) {
	_, err := config.CheckPoliciesFile(nil, "p.yaml", []byte("default: {schedule: \"0 0 31 6 *\", mode: scheduled, retain_last: 2}\n"), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrNoOccurrence)
	require.ErrorContains(t, err, `p.yaml:1: default.schedule: schedule "0 0 31 6 *": schedule never fires`)
	require.ErrorContains(t, err, `p.yaml:1: default.retain_last: unknown policy key`, "what reading finds, with the rest")
}

// TestTelemetryRetention: telemetry.retention defaults to 30 days and
// telemetry.history to 400 days, or the retention when that is longer;
// both read days as floe's other durations do.
func TestTelemetryRetention(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		file               string
		retention, history time.Duration
	}{
		{restFile, config.DefaultTelemetryRetention, config.DefaultTelemetryHistory},
		{restFile + "telemetry:\n  retention: 90d\n", 90 * day, 400 * day},
		{restFile + "telemetry:\n  retention: 36h\n", 36 * time.Hour, 400 * day},
		{restFile + "telemetry:\n  retention: 500d\n", 500 * day, 500 * day},
		{restFile + "telemetry:\n  retention: 7d\n  history: 60d\n", 7 * day, 60 * day},
		{restFile + "telemetry:\n  history: 30d\n", 30 * day, 30 * day},
	} {
		c, err := load(t, tc.file)
		require.NoError(t, err, tc.file)
		require.Equal(t, tc.retention, c.Telemetry.RetentionDuration(), tc.file)
		require.Equal(t, tc.history, c.Telemetry.HistoryDuration(), tc.file)
	}
}
