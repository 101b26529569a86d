package control

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/lake/polaris/polaristest"
)

// TestPassResolvesEachPolicyOnce: with policies read from Polaris, a pass
// asks Polaris once per table, however many of its uses (decision,
// triggers, alerts, gauges) ask for the policy; a refusal is kept for the
// pass too, and the next pass asks again.
func TestPassResolvesEachPolicyOnce(t *testing.T) {
	ctx := t.Context()
	s := polaristest.New(t, polaristest.Options{})
	s.CreateNamespace("web")
	s.CreateTable([]string{"web"}, "events")
	s.CreateTable([]string{"web"}, "users")
	require.NoError(t, s.CreatePolicy(ctx, []string{"web"}, "compaction", "system.data-compaction", `{"enable":false}`))
	require.NoError(t, s.Attach(ctx, []string{"web"}, "compaction", "namespace", "web"))
	var b strings.Builder
	b.WriteString("catalogs:\n  lake:\n")
	for k, v := range s.Props() {
		fmt.Fprintf(&b, "    %s: %q\n", k, v)
	}
	b.WriteString("policies:\n  from_catalog: true\n")
	dir := t.TempDir()
	path := filepath.Join(dir, "floe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	cfg, err := config.Load(config.Options{Path: path, WorkDir: dir, Environ: func() []string { return nil }})
	require.NoError(t, err)
	applicable := func() int {
		n := 0
		for _, r := range s.Requests() {
			if strings.Contains(r, "/applicable-policies") {
				n++
			}
		}
		return n
	}

	events := lake.Ident{Catalog: "lake", Namespace: []string{"web"}, Name: "events"}
	users := lake.Ident{Catalog: "lake", Namespace: []string{"web"}, Name: "users"}
	pass, err := readPassRecords(ctx, cfg, nil)
	require.NoError(t, err)
	for range 3 {
		for _, id := range []lake.Ident{events, users, {Catalog: "lake", Namespace: []string{"WEB"}, Name: "EVENTS"}} {
			eff, err := pass.policy(ctx, id)
			require.NoError(t, err)
			require.False(t, eff.Policy.Enabled.Compact, "Polaris's policy applies")
		}
	}
	asked := applicable()
	require.Positive(t, asked)
	direct, err := ResolvePolicy(ctx, cfg, events)
	require.NoError(t, err)
	perTable := applicable() - asked
	require.Equal(t, 2*perTable, asked, "one resolution a table in the pass, whatever the uses and the case of its name")
	memo, err := pass.policy(ctx, events)
	require.NoError(t, err)
	require.Equal(t, direct, memo, "the pass's policy is the one resolved now")

	// A refusal is the pass's answer for that table; the next pass asks again.
	cfg.Catalogs["lake"]["credential"] = "floe:wrong-secret"
	pass, err = readPassRecords(ctx, cfg, nil)
	require.NoError(t, err)
	before := len(s.Requests())
	_, err = pass.policy(ctx, events)
	require.ErrorContains(t, err, "catalog lake")
	refused := len(s.Requests()) - before
	_, err = pass.policy(ctx, events)
	require.ErrorContains(t, err, "catalog lake")
	require.Equal(t, before+refused, len(s.Requests()), "asked once")
	next, err := readPassRecords(ctx, cfg, nil)
	require.NoError(t, err)
	_, err = next.policy(ctx, events)
	require.Error(t, err)
	require.Greater(t, len(s.Requests()), before+refused, "the next pass asks again")
}
