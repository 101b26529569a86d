package policy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
)

// TestBudgetKeysRefused: a budget set where no budget can be, a value out
// of bounds and a window that bounds nothing are each refused with
// file:line and key — all at once.
func TestBudgetKeysRefused(t *testing.T) {
	yaml := `default:
  budget: {bytes: 500, window: 30m}
catalogs:
  local: {budget: {bytes: 1TiB}}
namespaces:
  local.raw_*: {budget: {window: 7d}}
  local.web: {budget: {cpu_hours: -1}}
tables:
  local.web.events: {budget.cpu_hours: 4, max_deferral: 10m}
`
	set, err := policy.ParseFile("f.yaml", []byte(yaml))
	require.ErrorIs(t, err, policy.ErrInvalid)
	err = errorsJoin(err, set.Validate(now))
	for _, want := range []string{
		`f.yaml:2: default.budget.bytes: 500B: want at least 1MiB`,
		`f.yaml:2: default.budget.window: 30m: want at least 1h`,
		`f.yaml:4: catalogs.local.budget.bytes: a budget bounds the lake (set it under default:) or each namespace (under namespaces:), not a catalog`,
		`f.yaml:6: namespaces.local.raw_*.budget.window: a budget window bounds nothing without budget.bytes or budget.cpu_hours`,
		`f.yaml:7: namespaces.local.web.budget.cpu_hours: -1: want at least 0.01`,
		`f.yaml:9: tables.local.web.events.budget.cpu_hours: a budget bounds the lake (set it under default:) or each namespace (under namespaces:), not a table`,
		`f.yaml:9: tables.local.web.events.max_deferral: 10m: want at least 1h`,
	} {
		require.ErrorContains(t, err, want)
	}
}

func errorsJoin(a, b error) error {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return policy.Invalid(append(policy.Problems(a), policy.Problems(b)...)...)
}

// TestBudgetsOfATable: a table spends from the lake's budget (default:) and
// from its namespace's — that of the namespace rule that governs it, per
// namespace — and the budget keys are not part of its effective policy.
func TestBudgetsOfATable(t *testing.T) {
	set, err := policy.ParseFile("f.yaml", []byte(`default:
  budget: {bytes: 2TiB, cpu_hours: 40}
  max_deferral: 2d
namespaces:
  local.raw_*: {budget: {bytes: 100GiB, window: 7d}}
  local.raw_eu: {poll_interval: 1m}
`))
	require.NoError(t, err)
	require.NoError(t, set.Validate(now))
	ident := func(ns, name string) lake.Ident {
		return lake.Ident{Catalog: "local", Namespace: []string{ns}, Name: name}
	}
	lakeBudget := policy.Budget{Bytes: 2 << 40, CPUHours: 40, Window: 24 * time.Hour, Scope: policy.ScopeLake, Where: "f.yaml:1"}
	for _, tc := range []struct {
		name string
		id   lake.Ident
		ns   policy.Budget
	}{
		{"a namespace the rule matches", ident("raw_us", "t"), policy.Budget{Bytes: 100 << 30, Window: 7 * 24 * time.Hour, Scope: "local.raw_us", Where: "f.yaml:5"}},
		{"another namespace, a budget of its own", ident("raw_ap", "t"), policy.Budget{Bytes: 100 << 30, Window: 7 * 24 * time.Hour, Scope: "local.raw_ap", Where: "f.yaml:5"}},
		{"a better rule that sets none", ident("raw_eu", "t"), policy.Budget{}},
		{"no namespace rule", ident("web", "t"), policy.Budget{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ns, err := set.Budgets(tc.id)
			require.NoError(t, err)
			require.Equal(t, lakeBudget, l)
			require.Equal(t, tc.ns, ns)
			eff, err := set.Resolve(tc.id)
			require.NoError(t, err)
			require.Equal(t, 48*time.Hour, eff.Policy.MaxDeferral)
			_, ok := eff.Setting("budget.bytes")
			require.False(t, ok, "a budget is not a table's setting")
		})
	}
	require.Equal(t, "lake budget 2TiB, 40 vCPU-h per 1d", lakeBudget.String())
	require.Equal(t, 72*time.Hour, policy.Default().MaxDeferral)
}
