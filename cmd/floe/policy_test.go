package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-project/floe/control"
	"github.com/stretchr/testify/require"
)

// policyWarehouse is flatWarehouse's db.flat (8 files) with policies
// appended to its floe.yaml.
func policyWarehouse(t *testing.T, policies string) string {
	t.Helper()
	dir := flatWarehouse(t, 8, 50)
	f, err := os.OpenFile(filepath.Join(dir, "floe.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(policies)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dir
}

// policyLine is the line number in dir's floe.yaml of line n (from 1) of
// the policies policyWarehouse appended: the lines before them are the
// warehouse's catalog, as many as its store has properties.
func policyLine(t *testing.T, dir string, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "floe.yaml"))
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	i := slices.Index(lines, "policies:")
	require.NotEqual(t, -1, i, "no policies in %s", b)
	return strconv.Itoa(i + n)
}

const flatPolicies = `policies:
  default:
    orphans: {older_than: 4d}
  namespaces:
    "local.d*": {snapshots: {older_than: 0s}}
  tables:
    "local.db.flat":
      target_file_size: 1MiB
      snapshots: {retain_last: 3}
      max_bytes_per_run: 2MiB
      allow_small_target_file_size: true
`

func TestPolicyShow(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, flatPolicies)
	cfg := filepath.Join(dir, "floe.yaml")
	out, errOut, code := run(t, dir, "policy", "show", "db.flat")
	require.Equal(t, 0, code, errOut)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	require.Equal(t, "1MiB table local.db.flat ("+cfg+":"+policyLine(t, dir, 8)+")", lines["target_file_size"])
	require.Equal(t, "0s namespace local.d* ("+cfg+":"+policyLine(t, dir, 5)+")", lines["snapshots.older_than"])
	require.Equal(t, "4d default "+cfg+":"+policyLine(t, dir, 3), lines["orphans.older_than"])
	require.Equal(t, "auto builtin built-in default", lines["layout"])

	out, errOut, code = run(t, dir, "policy", "show", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var eff struct {
		Table    string `json:"table"`
		Settings []struct {
			Key, Value, Level, Rule, Where string
		} `json:"settings"`
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &eff))
	require.Equal(t, "local.db.flat", eff.Table)
	require.NotNil(t, eff.Warnings)
	found := false
	for _, s := range eff.Settings {
		if s.Key == "snapshots.retain_last" {
			found = true
			require.Equal(t, "3", s.Value)
			require.Equal(t, "table", s.Level)
			require.Equal(t, cfg+":"+policyLine(t, dir, 9), s.Where)
		}
	}
	require.True(t, found)
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, flatPolicies)
	out, errOut, code := run(t, dir, "policy", "validate")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "policies are valid (1 default, 0 catalog, 1 namespace, 1 table rules)")

	bad := filepath.Join(dir, "policies.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("default:\n  mode: sometimes\ntables:\n  nope.db.t: {layout: none}\n  local.db.t: {target_file_sise: 1MiB}\n"), 0o644))
	_, errOut, code = run(t, dir, "policy", "validate", bad)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, bad+`:2: default.mode: "sometimes": want adaptive, scheduled, manual`)
	require.Contains(t, errOut, bad+":5: tables.local.db.t.target_file_sise: unknown policy key (did you mean target_file_size?)")

	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("tables:\n  nope.db.t: {layout: none}\n"), 0o644))
	_, errOut, code = run(t, dir, "policy", "validate", good)
	require.Equal(t, 2, code, "a pattern for a catalog that is not configured")
	require.Contains(t, errOut, good+`:2: policies.tables.nope.db.t: no configured catalog matches "nope"`)

	// A floe.yaml whose policies are wrong fails to load for every verb.
	broken := policyWarehouse(t, "policies:\n  default:\n    window: 1-5\n")
	_, errOut, code = run(t, broken, "tables")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "floe.yaml:"+policyLine(t, broken, 3)+`: policies.default.window: window "1-5"`)
}

// TestVerbsTakePolicyDefaults: compact, expire and orphans take the
// table's policy values where no flag is given, and a flag overrides.
func TestVerbsTakePolicyDefaults(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, flatPolicies)
	out, errOut, code := run(t, dir, "compact", "db.flat", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	compact := dryRunOf(t, []byte(out)).Steps[0].Compact
	require.NotNil(t, compact, out)
	require.Equal(t, int64(1<<20), compact.TargetFileSizeBytes)
	out, errOut, code = run(t, dir, "compact", "db.flat", "--dry-run", "-o", "json", "--target-file-size", "2MiB", "--allow-small-target-file-size")
	require.Equal(t, 0, code, errOut)
	compact = dryRunOf(t, []byte(out)).Steps[0].Compact
	require.NotNil(t, compact, out)
	require.Equal(t, int64(2<<20), compact.TargetFileSizeBytes, "a flag overrides the policy")

	out, errOut, code = run(t, dir, "expire", "db.flat", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	expire := dryRunOf(t, []byte(out)).Steps[0].Expire
	require.NotNil(t, expire, out)
	require.Equal(t, 3, expire.Retained, "snapshots.retain_last from the table rule")
	require.Len(t, expire.Snapshots, 5, "snapshots.older_than 0s from the namespace rule: all but the 3 newest")

	start := time.Now()
	out, errOut, code = run(t, dir, "orphans", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	orphans := dryRunOf(t, []byte(out)).Steps[0].Orphans
	require.NotNil(t, orphans, out)
	require.WithinDuration(t, start.Add(-4*24*time.Hour), orphans.Cutoff, time.Minute, "orphans.older_than from the default rule")
}

// TestOptimizeFollowsPolicy: optimize without flags runs the steps the
// policy and health call for, and a fixed layout that needs approval is
// proposed with its approve command while the compaction waits.
func TestOptimizeFollowsPolicy(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "policies:\n  tables:\n    local.db.flat: {layout: 'sort(id)', enabled: {manifests: false}}\n")
	out, errOut, code := run(t, dir, "optimize", "db.flat")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "compact skipped: waits for approval of plan ")
	require.Contains(t, out, "manifests skipped: turned off by the policy (enabled.manifests: false)")
	require.Contains(t, out, "approve: floe plan approve ")
	id := strings.Fields(out[strings.Index(out, "approve: floe plan approve ")+len("approve: floe plan approve "):])[0]

	_, errOut, code = run(t, dir, "plan", "approve", id)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = run(t, dir, "optimize", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	pr := runResultOf(t, []byte(out))
	require.Equal(t, id, pr.Run.PlanID)
	require.Equal(t, control.StatusDone, pr.Run.Status)
	require.Equal(t, "sort(id)", pr.Decision.Layout.String())
}

// TestPolicyValidateRefusesWhatCannotRun: files that floe policy validate
// used to pass and that then failed (or ran wrongly) in the daemon and the
// verbs. validate now runs the validation loading floe.yaml runs
// (config.CheckPolicies), so each is refused with file:line and key, and
// the same policies in floe.yaml stop every verb with the same message.
func TestPolicyValidateRefusesWhatCannotRun(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "")
	for _, tc := range []struct {
		name, policies string
		want           string // after the file's name
		msg            string // what any verb says of the same policies in floe.yaml
	}{
		{"february 30th", "default:\n  mode: scheduled\n  schedule: \"0 0 30 2 *\"\n",
			`:3: default.schedule: schedule "0 0 30 2 *": schedule never fires`, "schedule never fires"},
		{"size without its unit", "tables:\n  local.db.flat: {target_file_size: 512}\n",
			":2: tables.local.db.flat.target_file_size: 512B: want at least 1KiB (a number without a unit is bytes: did you mean 512MiB?)", "did you mean 512MiB?"},
		{"target below the floor", "namespaces:\n  local.db: {target_file_size: 1MiB}\n",
			":2: namespaces.local.db.target_file_size: 1MiB is below the 4MiB floor", "1MiB is below the 4MiB floor"},
		{"orphan age the step refuses", "default:\n  orphans: {older_than: 1h}\n",
			":2: default.orphans.older_than: 1h: want at least 1d", "orphans.older_than: 1h: want at least 1d"},
		{"rules that tie", "tables:\n  \"local.db.f*\": {layout: none}\n  \"local.db.f?\": {layout: \"sort(id)\"}\n",
			`:2) and "local.db.f?" (`, "both match it equally well"},
		{"warning above critical", "default:\n  health: {delete_ratio: {warning: 0.9, critical: 0.5}}\n",
			":2: default.health.delete_ratio.warning: health.delete_ratio.warning 0.9 is above health.delete_ratio.critical 0.5", "0.9 is above health.delete_ratio.critical 0.5"},
		{"ratio above one", "default:\n  triggers: {small_file_ratio: 30}\n", ":2: default.triggers.small_file_ratio: 30: want at most 1", "triggers.small_file_ratio: 30: want at most 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "policies.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tc.policies), 0o644))
			_, errOut, code := run(t, dir, "policy", "validate", file)
			require.Equal(t, exitUsage, code, errOut)
			require.Contains(t, errOut, file+tc.want)

			// The same policies in floe.yaml: every verb refuses them.
			broken := policyWarehouse(t, "policies:\n"+indent(tc.policies))
			_, errOut, code = run(t, broken, "tables")
			require.Equal(t, exitUsage, code, errOut)
			require.Contains(t, errOut, tc.msg)
			_, errOut2, code := run(t, broken, "policy", "validate")
			require.Equal(t, exitUsage, code)
			require.Equal(t, errOut, errOut2, "validate says what the verbs say")
		})
	}

	// Forced small targets and real schedules validate.
	ok := filepath.Join(t.TempDir(), "policies.yaml")
	require.NoError(t, os.WriteFile(ok, []byte("default:\n  mode: scheduled\n  schedule: \"0 0 29 2 *\"\ntables:\n  local.db.flat: {target_file_size: 1MiB, allow_small_target_file_size: true}\n"), 0o644))
	out, errOut, code := run(t, dir, "policy", "validate", ok)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "policies are valid")
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestPolicyValidateChecksNamedTablesLayouts: a table rule that names a
// table and gives it a layout on a column the table lacks used to validate
// and then fail every run of that table; validate now checks the layout
// against the table as the run does (rewriter.CheckLayout) and refuses it
// with the rule's file:line, while the run says the same. A table that
// does not exist yet is a note; --offline checks the file alone.
func TestPolicyValidateChecksNamedTablesLayouts(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "")
	file := filepath.Join(t.TempDir(), "policies.yaml")
	require.NoError(t, os.WriteFile(file, []byte("tables:\n  local.db.flat: {layout: \"sort(nosuch)\", approval: {layout: auto}}\n  local.db.later: {layout: \"sort(id)\"}\n"), 0o644))

	_, errOut, code := run(t, dir, "policy", "validate", file)
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, file+`:2: layout of local.db.flat: layout sort(nosuch): no column "nosuch" (the table has id, tenant)`)

	out, errOut, code := run(t, dir, "policy", "validate", file, "--offline")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "policies are valid")

	// The run refuses the same layout with the same words.
	broken := policyWarehouse(t, "policies:\n  tables:\n    local.db.flat: {layout: \"sort(nosuch)\", approval: {layout: auto}}\n")
	_, errOut, code = run(t, broken, "optimize", "db.flat")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, `layout sort(nosuch): no column "nosuch" (the table has id, tenant)`)
	_, errOut, code = run(t, broken, "policy", "validate")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, `floe.yaml:`+policyLine(t, broken, 3)+`: layout of local.db.flat: layout sort(nosuch)`)

	// A layout the table takes validates; a table not there yet is a note.
	require.NoError(t, os.WriteFile(file, []byte("tables:\n  local.db.flat: {layout: \"sort(tenant, id)\"}\n  local.db.later: {layout: \"sort(id)\"}\n"), 0o644))
	out, errOut, code = run(t, dir, "policy", "validate", file)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "policies are valid")
	require.Contains(t, errOut, "note: "+file+":3: local.db.later does not exist (yet): its layout sort(id) is checked once it does")
	out, _, code = run(t, dir, "policy", "validate", file, "-o", "json")
	require.Equal(t, exitOK, code)
	var v struct {
		Notes []string `json:"notes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Len(t, v.Notes, 1)

	// A catalog that cannot be read: no verdict on the layout, exit 1.
	unreachable := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(unreachable, "floe.yaml"), []byte("data_dir: "+filepath.Join(unreachable, "data")+
		"\ncatalogs:\n  prod: {type: rest, uri: 'http://127.0.0.1:1', floe.timeout: 2s}\npolicies:\n  tables:\n    prod.db.t: {layout: 'sort(a)'}\n"), 0o644))
	_, errOut, code = run(t, unreachable, "policy", "validate")
	require.Equal(t, exitError, code, errOut)
	require.Contains(t, errOut, "floe.yaml:6: layout of prod.db.t not checked against the table: ")
	require.Contains(t, errOut, "(--offline checks the file without reading the tables)")
	_, errOut, code = run(t, unreachable, "policy", "validate", "--offline")
	require.Equal(t, exitOK, code, errOut)
}
