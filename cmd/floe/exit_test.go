package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// exitCase is one row of README.md's exit-code table: floe run with args
// (and env) exits with code, and its error line contains each of want and
// none of bad.
type exitCase struct {
	name string
	args []string
	env  []string
	// file replaces floe.yaml's text when set.
	file string
	// noConfig runs without --config (for FLOE_CONFIG cases).
	noConfig bool
	code     int
	want     []string
}

// badWordings never appear in an error line: internal chains and
// wordings the CLI does not use.
var badWordings = []string{"load table", "table does not exist", "move plan", "use force", "context canceled", "invalid configuration: invalid"}

func runCase(t *testing.T, dir string, tc exitCase) (string, string, int) {
	t.Helper()
	cfgPath := filepath.Join(dir, "floe.yaml")
	if tc.file != "" {
		cfgPath = filepath.Join(t.TempDir(), "floe.yaml")
		require.NoError(t, os.WriteFile(cfgPath, []byte(tc.file), 0o644))
	}
	for _, kv := range tc.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	io, out, errOut := testIO()
	f := newFactory(io)
	root := newRootCmd(f)
	args := tc.args
	if !tc.noConfig {
		args = append([]string{"--config", cfgPath}, args...)
	}
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(context.Background())
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	code := exitCode(io, err) // before reading errOut: it prints there
	return out.String(), errOut.String(), code
}

func checkExit(t *testing.T, dir string, cases []exitCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCase(t, dir, tc)
			require.Equal(t, tc.code, code, "floe %s: %s", strings.Join(tc.args, " "), errOut)
			for _, w := range tc.want {
				require.Contains(t, errOut, w)
			}
			for _, b := range badWordings {
				require.NotContains(t, errOut, b)
			}
		})
	}
}

const restConfig = "catalogs:\n  prod:\n    type: rest\n    uri: http://127.0.0.1:1\n"

// TestExitCodesWithoutTables runs the cases of README.md's exit-code table
// that need no warehouse: usage and configuration errors (2) and unknown
// plans (4).
func TestExitCodesWithoutTables(t *testing.T) {
	dir := writeConfig(t)
	missingDir := filepath.Join(t.TempDir(), "nope")
	checkExit(t, dir, []exitCase{
		// 2: verbs, flags and arguments
		{name: "unknown verb", args: []string{"nosuchverb"}, code: exitUsage, want: []string{`unknown command "nosuchverb"`, "floe --help"}},
		{name: "misspelt verb", args: []string{"helth"}, code: exitUsage, want: []string{"did you mean health?"}},
		{name: "misspelt subcommand", args: []string{"config", "veiw"}, code: exitUsage, want: []string{`unknown command "veiw" for "floe config"; did you mean view?`}},
		{name: "unknown policy subcommand", args: []string{"policy", "check"}, code: exitUsage, want: []string{`unknown command "check" for "floe policy"`}},
		{name: "unknown flag", args: []string{"tables", "--nosuch"}, code: exitUsage, want: []string{"--nosuch"}},
		{name: "bad output", args: []string{"tables", "--output", "yaml"}, code: exitUsage, want: []string{"yaml"}},
		{name: "bad fail-on", args: []string{"health", "--fail-on", "sometimes"}, code: exitUsage, want: []string{"--fail-on"}},
		{name: "bad duration", args: []string{"queries", "--since", "soon"}, code: exitUsage, want: []string{"--since"}},
		{name: "table without namespace", args: []string{"health", "nodots"}, code: exitUsage, want: []string{"nodots"}},
		{name: "too many arguments", args: []string{"runs", "a.b", "c.d"}, code: exitUsage},
		// 2: configuration
		{name: "unknown key", file: restConfig + "helth:\n  target_file_size: 1GiB\n", args: []string{"tables"}, code: exitUsage, want: []string{"floe.yaml:5", "helth"}},
		{name: "yaml syntax", file: "catalogs: [\n", args: []string{"tables"}, code: exitUsage, want: []string{"floe.yaml:"}},
		{name: "missing --config file", args: []string{"--config", filepath.Join(missingDir, "floe.yaml"), "tables"}, code: exitUsage, want: []string{"does not exist"}},
		{name: "missing FLOE_CONFIG file", noConfig: true, env: []string{"FLOE_CONFIG=" + filepath.Join(missingDir, "floe.yaml")}, args: []string{"tables"},
			code: exitUsage, want: []string{"(from FLOE_CONFIG) does not exist"}},
		{name: "misspelt type", file: "catalogs:\n  local:\n    type: sqll\n    uri: x\n", args: []string{"tables"}, code: exitUsage, want: []string{"floe.yaml:3", `"sqll" is not a catalog type`}},
		{name: "misspelt property", file: restConfig + "    warehous: x\n", args: []string{"tables"}, code: exitUsage, want: []string{"catalogs.prod.warehous", "did you mean warehouse?"}},
		{name: "log level", env: []string{"FLOE_LOG_LEVEL=verbose"}, args: []string{"tables"}, code: exitUsage, want: []string{"FLOE_LOG_LEVEL", "verbose"}},
		{name: "log format", env: []string{"FLOE_LOG_FORMAT=xml"}, args: []string{"tables"}, code: exitUsage, want: []string{"FLOE_LOG_FORMAT", "xml"}},
		{name: "catalog only in the environment", env: []string{"FLOE_CATALOG__NOPE__TYPE=rest"}, args: []string{"tables"}, code: exitUsage,
			want: []string{"FLOE_CATALOG__NOPE__TYPE", `no catalog "nope"`}},
		{name: "unknown variable", env: []string{"FLOE_STATEPATH=x"}, args: []string{"tables"}, code: exitUsage, want: []string{"FLOE_STATEPATH", "FLOE_STATE_PATH"}},
		{name: "state path in a missing directory", env: []string{"FLOE_STATE_PATH=" + filepath.Join(missingDir, "state.db")}, args: []string{"queries"}, code: exitUsage,
			want: []string{"FLOE_STATE_PATH", "does not exist"}},
		{name: "init over an existing file", args: []string{"init", "--catalog", "glue", "--region", "eu-west-1"}, code: exitUsage,
			want: []string{"floe.yaml exists: pass --force to overwrite it"}},
		{name: "init without its flags off a terminal", noConfig: true, args: []string{"--config", filepath.Join(t.TempDir(), "floe.yaml"), "init", "--catalog", "rest"},
			code: exitUsage, want: []string{"floe: init needs --uri; usage: floe init"}},
		{name: "config view of a bad file", file: "plan: 5\n", args: []string{"config", "view"}, code: exitUsage,
			want: []string{"floe.yaml:1: plan: want a mapping of keys (min_gain_pp), not the number 5"}},
		// 4: plans and runs that do not exist
		{name: "unknown plan", args: []string{"plan", "show", "0123456789ab"}, code: exitNotFound, want: []string{"floe: plan 0123456789ab does not exist\n"}},
		{name: "approve unknown plan", args: []string{"plan", "approve", "0123456789ab"}, code: exitNotFound, want: []string{"floe: plan 0123456789ab does not exist\n"}},
		{name: "reject unknown plan", args: []string{"plan", "reject", "0123456789ab"}, code: exitNotFound, want: []string{"floe: plan 0123456789ab does not exist\n"}},
		{name: "run unknown plan", args: []string{"optimize", "--plan", "0123456789ab"}, code: exitNotFound, want: []string{"plan 0123456789ab does not exist"}},
		// 1: a check that fails
		{name: "doctor with a catalog that refuses connections", file: "data_dir: " + t.TempDir() + "\n" + restConfig, args: []string{"doctor", "--timeout", "2s"},
			code: exitError, want: []string{"floe: 1 of 2 checks failed, 1 not checked\n"}},
		{name: "init whose checks fail", noConfig: true, args: []string{"--config", filepath.Join(t.TempDir(), "floe.yaml"), "init", "--catalog", "rest",
			"--uri", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--timeout", "2s"}, code: exitError, want: []string{"1 of 2 checks failed, 1 not checked", "then run floe doctor"}},
		// 0
		{name: "no verb prints help", code: exitOK},
		{name: "version", args: []string{"version"}, code: exitOK},
	})
	_, err := os.Stat(missingDir)
	require.ErrorIs(t, err, os.ErrNotExist, "a refused state path must not be created")
}

// TestExitCodesOnTables runs the table cases of README.md's exit-code
// table on a small demo warehouse: unknown tables exit 4 in every verb
// that takes one, a missing column 2.
func TestExitCodesOnTables(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "3", "--orders", "20", "--queries", "20")...)
	require.Equal(t, 0, code, errOut)

	const nosuch = "floe: no such table: local.nosuch.table\n"
	var cases []exitCase
	for _, args := range [][]string{
		{"health", "nosuch.table"},
		{"analyze", "nosuch.table"},
		{"simulate", "nosuch.table", "--layout", "current"},
		{"measure", "nosuch.table"},
		{"plan", "nosuch.table", "--layout", "sort(tenant_id)"},
		{"compact", "nosuch.table", "--dry-run"},
		{"expire", "nosuch.table", "--dry-run"},
		{"orphans", "nosuch.table"},
		{"rewrite-manifests", "nosuch.table"},
		{"rewrite-deletes", "nosuch.table"},
		{"runs", "nosuch.table"},
		{"queries", "--table", "nosuch.table"},
		{"queries", "--table", "nosuch.table", "--events", "-o", "json"},
		{"plans", "nosuch.table"},
	} {
		cases = append(cases, exitCase{name: "unknown table/" + strings.Join(args, " "), args: args, code: exitNotFound, want: []string{nosuch}})
	}
	cases = append(cases,
		exitCase{name: "unknown table in a known namespace", args: []string{"health", "web.nosuch"}, code: exitNotFound, want: []string{"floe: no such table: local.web.nosuch\n"}},
		exitCase{name: "unknown catalog", args: []string{"tables", "--catalog", "nope"}, code: exitNotFound, want: []string{`catalog "nope" is not configured`}},
		exitCase{name: "missing column/health", args: []string{"health", "web.events", "--column", "nosuchcol"}, code: exitUsage, want: []string{"nosuchcol"}},
		exitCase{name: "missing column/simulate", args: []string{"simulate", "web.events", "--layout", "sort(nosuchcol)"}, code: exitUsage, want: []string{"nosuchcol"}},
		exitCase{name: "missing column/plan", args: []string{"plan", "web.events", "--layout", "sort(nosuchcol)"}, code: exitUsage, want: []string{"nosuchcol"}},
		exitCase{name: "orphan age below the floor", args: []string{"orphans", "web.events", "--older-than", "1h"}, code: exitUsage, want: []string{"--force"}},
		exitCase{name: "no queries/simulate", args: []string{"simulate", "crm.accounts", "--since", "1s", "--layout", "current"}, code: exitError,
			want: []string{"floe: no queries of local.crm.accounts collected in the last 1s; run 'floe collect PATH…' first, or pass --workload FILE"}},
		exitCase{name: "no queries/plan", args: []string{"plan", "crm.accounts", "--since", "1s"}, code: exitError, want: []string{"floe collect", "--workload"}},
		exitCase{name: "fail-on", args: []string{"health", "--fail-on", "warning"}, code: exitUnhealth, want: []string{"local.web.events"}},
		exitCase{name: "runs of a table without runs", args: []string{"runs", "web.events"}, code: exitOK},
		exitCase{name: "queries of a table without queries", args: []string{"queries", "--table", "crm.accounts", "--since", "1s"}, code: exitOK},
	)
	checkExit(t, dir, cases)
}

// TestErrorMessagesStandAlone checks that an error which is a whole
// sentence is printed without the chain that wrapped it.
func TestErrorMessagesStandAlone(t *testing.T) {
	t.Parallel()
	id := lake.Ident{Catalog: "local", Namespace: []string{"nosuch"}, Name: "table"}
	for _, tc := range []struct {
		name string
		err  error
		code int
		want string
	}{
		{"no such table", fmt.Errorf("compact local.nosuch.table: load table: %w", &lake.NoSuchTableError{Table: id, Cause: errors.New("table does not exist: [nosuch table]")}),
			exitNotFound, "floe: no such table: local.nosuch.table\n"},
		{"no such plan", fmt.Errorf("approve plan p1: move plan p1 from proposed to approved: %w", &store.NotFoundError{Kind: "plan", ID: "p1"}),
			exitNotFound, "floe: plan p1 does not exist\n"},
		{"plan state", fmt.Errorf("run: %w", &control.PlanStateError{ID: "p1", Action: "run", State: control.PlanProposed}),
			exitError, "floe: plan p1 is proposed, approve it first: floe plan approve p1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			io, _, errOut := testIO()
			require.Equal(t, tc.code, exitCode(io, tc.err))
			require.Equal(t, tc.want, errOut.String())
		})
	}
}

// TestInterruptedSaysWhat checks the exit-130 line names the verb and what
// was kept, never a bare "context canceled".
func TestInterruptedSaysWhat(t *testing.T) {
	t.Parallel()
	root := &cobra.Command{Use: "floe"}
	compact := &cobra.Command{Use: "compact"}
	health := &cobra.Command{Use: "health"}
	plan := &cobra.Command{Use: "plan"}
	list := &cobra.Command{Use: "list"}
	plan.AddCommand(list)
	root.AddCommand(compact, health, plan)
	for _, tc := range []struct {
		name string
		cmd  *cobra.Command
		err  error
		want []string
	}{
		{"bare", health, context.Canceled, []string{"floe health was interrupted; nothing was changed"}},
		{"with where", compact, fmt.Errorf("compact local.web.events: group 3: %w", context.Canceled),
			[]string{"floe compact was interrupted (compact local.web.events: group 3)", "commits made before it are kept", "floe orphans"}},
		{"sub-verb", list, context.Canceled, []string{"floe plan list was interrupted; nothing was changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			io, _, errOut := testIO()
			require.Equal(t, exitCancel, exitCode(io, interruptedError{cmd: tc.cmd, err: tc.err}))
			for _, w := range tc.want {
				require.Contains(t, errOut.String(), w)
			}
			require.NotContains(t, errOut.String(), "context canceled")
		})
	}
}

// TestConfigAcceptsLakeProperties: config keeps its own copy of floe's
// catalog property names (it does not import lake); they must agree.
func TestConfigAcceptsLakeProperties(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "floe.yaml")
	file := "data_dir: " + dir + "\ncatalogs:\n  a:\n    type: rest\n    uri: http://x\n    " + lake.PropCatalogTimeout + ": 1s\n"
	require.NoError(t, os.WriteFile(path, []byte(file), 0o644))
	_, err := config.Load(config.Options{Path: path, WorkDir: dir, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	require.NoError(t, err)
}

// TestExitCodesOfTheBinary runs a few of the table's cases through the real
// binary, so that Main (not only exitCode) is covered.
func TestExitCodesOfTheBinary(t *testing.T) {
	t.Parallel()
	bin := buildFloe(t)
	dir := writeConfig(t)
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{[]string{"nosuchverb"}, nil, exitUsage, `floe: unknown command "nosuchverb"`},
		{[]string{"tables"}, []string{"FLOE_LOG_LEVEL=verbose"}, exitUsage, "FLOE_LOG_LEVEL"},
		// No warehouse was ever built here: a read-only verb says so and creates none.
		{[]string{"health", "nosuch.table"}, nil, exitNotFound, `floe: catalog "local" has no warehouse yet`},
		{[]string{"plan", "show", "0123456789ab"}, nil, exitNotFound, "floe: plan 0123456789ab does not exist\n"},
		{[]string{"version"}, nil, exitOK, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"--config", filepath.Join(dir, "floe.yaml")}, tc.args...)...)
			cmd.Env = append(os.Environ(), tc.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.code, code, stderr.String())
			require.Contains(t, stderr.String(), tc.want)
		})
	}
}
