package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/policy"
)

// now is the clock the tests validate schedules by.
var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// TestBoundsRefused covers values every key used to accept although no
// table can run with them: each is refused where it is written, with
// file:line, the key and what would be accepted.
func TestBoundsRefused(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unit forgotten", "tables:\n  local.a.b: {target_file_size: 512}\n",
			`f.yaml:2: tables.local.a.b.target_file_size: 512B: want at least 1KiB (a number without a unit is bytes: did you mean 512MiB?)`},
		{"absurd target", "default:\n  target_file_size: 1TiB\n", `f.yaml:2: default.target_file_size: 1TiB: want at most 16GiB`},
		{"retain none", "default:\n  snapshots: {retain_last: -3}\n", `default.snapshots.retain_last: -3: want at least 1`},
		{"retain absurd", "default:\n  snapshots: {retain_last: 1000000000}\n", `default.snapshots.retain_last: 1000000000: want at most 100000`},
		{"orphan age the step refuses", "default:\n  orphans: {older_than: 1h}\n", `f.yaml:2: default.orphans.older_than: 1h: want at least 1d`},
		{"negative age", "default:\n  snapshots: {older_than: -5d}\n", `default.snapshots.older_than: duration "-5d"`},
		{"ages beyond reason", "default:\n  snapshots: {older_than: 100000h}\n", `default.snapshots.older_than: 4166d16h: want at most 3650d`},
		{"sla of seconds", "default:\n  freshness_sla: 30s\n", `default.freshness_sla: 30s: want at least 1h (or 0 to turn it off)`},
		{"poll every pass", "default:\n  poll_interval: 0s\n", `default.poll_interval: 0s: want at least 1s`},
		{"ratio above one", "default:\n  triggers: {small_file_ratio: 30}\n", `default.triggers.small_file_ratio: 30: want at most 1`},
		{"negative trigger", "default:\n  triggers: {snapshots: -1}\n", `default.triggers.snapshots: -1: want at least 0`},
		{"depth that always fires", "default:\n  triggers: {clustering_depth: 0.5}\n", `default.triggers.clustering_depth: 0.5: want at least 1.5 (or 0 to turn it off)`},
		{"budget without a unit", "default:\n  max_bytes_per_run: 500\n", `default.max_bytes_per_run: 500B: want at least 1MiB`},
		{"alerts never", "default:\n  alert_after_failures: 0\n", `default.alert_after_failures: 0: want at least 1`},
		{"payback of nothing", "default:\n  max_payback: 0s\n", `default.max_payback: 0s: want at least 1h`},
		{"engine threshold of bytes", "default:\n  auto_engine_bytes: 100\n", `default.auto_engine_bytes: 100B: want at least 1MiB`},
		{"health ratio above one", "default:\n  health: {small_file_ratio: {warning: 3}}\n", `default.health.small_file_ratio.warning: 3: want at most 1`},
		{"negative health count", "default:\n  health: {manifests: {critical: -10}}\n", `default.health.manifests.critical: -10: want at least 0`},
		{"delete files negative", "default:\n  triggers: {delete_files: -1}\n", `default.triggers.delete_files: -1: want at least 0`},
		{"merge one delete file", "default:\n  triggers: {position_delete_files: 1}\n", `default.triggers.position_delete_files: 1: want at least 2`},
		{"equality ratio of nothing", "default:\n  triggers: {equality_delete_ratio: 0}\n", `default.triggers.equality_delete_ratio: 0: want at least 0.01`},
		{"equality ratio above one", "default:\n  triggers: {equality_delete_ratio: 2}\n", `default.triggers.equality_delete_ratio: 2: want at most 1`},
		{"file cost without a unit", "default:\n  cost: {file_open_bytes: 4}\n", `default.cost.file_open_bytes: 4B: want at least 1KiB (or 0 to turn it off)`},
		{"file cost beyond reason", "default:\n  cost: {file_open_bytes: 4GiB}\n", `default.cost.file_open_bytes: 4GiB: want at most 1GiB`},
		{"negative price", "default:\n  cost: {usd_per_tb_scanned: -5}\n", `default.cost.usd_per_tb_scanned: -5: want at least 0`},
		{"price beyond reason", "default:\n  cost: {usd_per_vcpu_hour: 5000}\n", `default.cost.usd_per_vcpu_hour: 5000: want at most 1000`},
		{"cron every second", "default:\n  schedule: \"@every 1s\"\n", `default.schedule: "@every 1s": fires every 1s: want at most once a minute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.ParseFile("f.yaml", []byte(tt.yaml))
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestBoundsAccepted(t *testing.T) {
	set, err := policy.ParseFile("f.yaml", []byte(`default:
  snapshots: {older_than: 0s, retain_last: 100000}
  orphans: {older_than: 24h}
  target_file_size: 4MiB
  freshness_sla: 0s
  poll_interval: 1s
  triggers: {small_file_ratio: 1, snapshots: 0, clustering_depth: 0, delete_ratio: 0, delete_files: 0, position_delete_files: 2, equality_delete_ratio: 1}
  enabled: {deletes: false}
  approval: {deletes: required}
  max_bytes_per_run: 1MiB
  schedule: "@hourly"
  health: {partition_skew: {warning: 0}, min_files: 0, snapshots: {warning: 0, critical: 0}}
  cost: {file_open_bytes: 0, usd_per_tb_scanned: 5, usd_per_vcpu_hour: 0.05}
`))
	require.NoError(t, err)
	require.NoError(t, set.Validate(now))
	eff, err := set.Resolve(ident("local.web.events"))
	require.NoError(t, err)
	require.Equal(t, int64(4<<20), eff.Policy.TargetFileSizeBytes)
	require.Zero(t, eff.Policy.FreshnessSLA)
	require.Zero(t, eff.Policy.Triggers.DeleteFiles)
	require.Equal(t, 2, eff.Policy.Triggers.PositionDeleteFiles)
	require.InDelta(t, 1.0, eff.Policy.Triggers.EqualityDeleteRatio, 1e-9)
	require.False(t, eff.Policy.Enabled.Deletes)
	require.Equal(t, policy.ApprovalRequired, eff.Policy.Approval.Deletes)
	require.Zero(t, eff.Policy.Cost.FileOpenBytes, "0 counts bytes only")
	require.InDelta(t, 5.0, eff.Policy.Cost.USDPerTBScanned, 1e-9)
	require.InDelta(t, 0.05, eff.Policy.Cost.USDPerVCPUHour, 1e-9)
	require.Equal(t, int64(4<<20), policy.Default().Cost.FileOpenBytes, "Iceberg's read.split.open-file-cost")
}

// TestTargetFloor: a target below 4MiB is what a size written without its
// unit looks like; it runs only where allow_small_target_file_size
// accepts it, inherited key by key like any other key.
func TestTargetFloor(t *testing.T) {
	tests := []struct {
		name, yaml string
		table      string
		want       string // "" when the table's policy resolves
	}{
		{"refused", "tables:\n  local.web.events: {target_file_size: 2MiB}\n", "local.web.events",
			"f.yaml:2: tables.local.web.events.target_file_size: 2MiB is below the 4MiB floor"},
		{"forced in the rule", "tables:\n  local.web.events: {target_file_size: 2MiB, allow_small_target_file_size: true}\n", "local.web.events", ""},
		{"forced by the default", "default:\n  allow_small_target_file_size: true\nnamespaces:\n  local.raw_*: {target_file_size: 64KiB}\n", "local.raw_events.clicks", ""},
		{"unforced by a table rule", "default:\n  allow_small_target_file_size: true\nnamespaces:\n  local.raw_*: {target_file_size: 64KiB}\ntables:\n  local.raw_events.clicks: {allow_small_target_file_size: false}\n",
			"local.raw_events.clicks", "f.yaml:4: namespaces.local.raw_*.target_file_size: 64KiB is below the 4MiB floor: files that small cost more to open than to read (a number without a unit is bytes); set allow_small_target_file_size: true to write files this small (f.yaml:6 sets allow_small_target_file_size: false)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := policy.ParseFile("f.yaml", []byte(tt.yaml))
			require.NoError(t, err, "each value is within its own bounds")
			eff, rerr := set.Resolve(ident(tt.table))
			verr := set.Validate(now)
			if tt.want == "" {
				require.NoError(t, rerr)
				require.NoError(t, verr)
				require.True(t, eff.Policy.AllowSmallTargetFileSize)
				return
			}
			for _, err := range []error{rerr, verr} {
				require.ErrorIs(t, err, policy.ErrInvalid)
				require.ErrorContains(t, err, tt.want)
			}
		})
	}
}

func TestNextRun(t *testing.T) {
	next, err := policy.NextRun("0 2 * * *", now)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 5, 2, 2, 0, 0, 0, time.UTC), next)
	next, err = policy.NextRun("0 0 29 2 *", now)
	require.NoError(t, err, "a leap day comes within five years")
	require.Equal(t, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), next)
	for _, never := range []string{"0 0 30 2 *", "0 0 31 4 *", "0 0 31 11 *"} {
		_, err := policy.NextRun(never, now)
		require.ErrorIs(t, err, policy.ErrNoOccurrence, never)
		require.ErrorContains(t, err, "no occurrence in the five years after 2026-05-01")
	}
	_, err = policy.NextRun("61 * * * *", now)
	require.Error(t, err)
}

// TestValidateReportsEverythingAtOnce: what key-by-key parsing cannot see
// — a schedule that never fires, a tie between rules, a floor that no
// rule forces, thresholds in the wrong order — is reported in one error,
// each problem with file:line and key.
func TestValidateReportsEverythingAtOnce(t *testing.T) {
	set, err := policy.ParseFile("f.yaml", []byte(`default:
  mode: scheduled
  schedule: "0 0 30 2 *"
  health:
    snapshots: {warning: 2000}
namespaces:
  local.raw_*: {target_file_size: 1MiB}
tables:
  "local.web.a*": {layout: none}
  "local.web.a?": {layout: "sort(ts)"}
`))
	require.NoError(t, err, "every value parses on its own")
	err = set.Validate(now)
	require.ErrorIs(t, err, policy.ErrInvalid)
	for _, want := range []string{
		`f.yaml:3: default.schedule: schedule "0 0 30 2 *": schedule never fires: no occurrence in the five years after 2026-05-01`,
		`f.yaml:7: namespaces.local.raw_*.target_file_size: 1MiB is below the 4MiB floor`,
		`f.yaml:5: default.health.snapshots.warning: health.snapshots.warning 2000 is above health.snapshots.critical 1000`,
		`"local.web.a*" (f.yaml:9) and "local.web.a?" (f.yaml:10) both match it equally well`,
	} {
		require.ErrorContains(t, err, want)
	}
	require.Equal(t, 1, strings.Count(err.Error(), "health.snapshots.warning 2000"), "a problem every rule's tables share is reported once")

	// The clock matters only to the five-year horizon: a valid schedule
	// passes whenever it is checked.
	ok, err := policy.ParseFile("f.yaml", []byte("default: {mode: scheduled, schedule: \"0 0 29 2 *\"}\n"))
	require.NoError(t, err)
	require.NoError(t, ok.Validate(now))
}

func TestCheckValue(t *testing.T) {
	require.NoError(t, policy.CheckValue("max_bytes_per_run", "10GiB"))
	require.ErrorContains(t, policy.CheckValue("max_bytes_per_run", "512"), "512B: want at least 1MiB")
	require.ErrorContains(t, policy.CheckValue("no_such_key", "1"), `no policy key "no_such_key"`)
}

func TestFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 30 * time.Second: "30s", 90 * time.Minute: "1h30m", 2 * time.Hour: "2h",
		5 * 24 * time.Hour: "5d", 36 * time.Hour: "1d12h", 500 * time.Millisecond: "500ms",
	} {
		require.Equal(t, want, policy.FormatDuration(d))
		back, err := policy.ParseDuration(want)
		require.NoError(t, err)
		require.Equal(t, d, back, want)
	}
	for n, want := range map[int64]string{512: "512B", 4 << 20: "4MiB", 16 << 30: "16GiB", 1536: "1.5 KiB", 64 << 10: "64KiB"} {
		require.Equal(t, want, policy.FormatSize(n))
		back, err := policy.ParseSize(want)
		require.NoError(t, err)
		require.Equal(t, n, back, want)
	}
}

// TestRetainLastUnderTheSnapshotThresholds: expiry always keeps
// snapshots.retain_last snapshots, so a retain_last at or above a
// snapshot-count threshold leaves every table that has had that many
// commits warning (or critical) for good — as the README's example policy
// did (retain_last 100 against the default warning at 100). Such a policy
// is refused where retain_last is set, naming the threshold and where it
// comes from; one that keeps fewer passes.
func TestRetainLastUnderTheSnapshotThresholds(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"the default warning", "default:\n  snapshots: {older_than: 5d, retain_last: 100}\n",
			"f.yaml:2: default.snapshots.retain_last: 100 is at least health.snapshots.warning (100, its default): expiry always keeps that many snapshots, so a table that has had 100 commits stays warning; keep fewer or raise the threshold"},
		{"a table's own warning", "default:\n  snapshots: {retain_last: 20}\ntables:\n  local.web.events: {health: {snapshots: {warning: 20}}}\n",
			"f.yaml:2: default.snapshots.retain_last: 20 is at least health.snapshots.warning (20, f.yaml:4)"},
		{"critical with no warning", "default:\n  snapshots: {retain_last: 1000}\n  health: {snapshots: {warning: 0}}\n",
			"default.snapshots.retain_last: 1000 is at least health.snapshots.critical (1000, its default): expiry always keeps that many snapshots, so a table that has had 1000 commits stays critical"},
		{"fewer than the warning", "default:\n  snapshots: {older_than: 1d, retain_last: 10}\n  health: {snapshots: {warning: 500}}\n", ""},
		{"thresholds off", "default:\n  snapshots: {retain_last: 5000}\n  health: {snapshots: {warning: 0, critical: 0}}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := policy.ParseFile("f.yaml", []byte(tt.yaml))
			require.NoError(t, err, "each value is within its own bounds")
			err = set.Validate(now)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
