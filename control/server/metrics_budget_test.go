package server_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/server"
)

// TestMetricsCountDeferrals: every pass adds the tables its budgets
// deferred to floe_runs_deferred_total, and sets what each byte budget has
// left after what the pass bought.
func TestMetricsCountDeferrals(t *testing.T) {
	m := server.NewMetrics()
	pass := control.Pass{
		Decisions: []control.TableDecision{{Table: "local.db.a", Due: true}, {Table: "local.db.b", Due: true, Deferred: "deferred: lake budget …"},
			{Table: "local.db.c", Due: true, Deferred: "deferred: lake budget …"}, {Table: "local.db.d"}},
		Budgets: []control.BudgetUse{{Scope: "lake", LimitBytes: 100, SpentBytes: 30, BoughtBytes: 50}, {Scope: "local.raw", LimitVCPUH: 2}},
	}
	m.PassEnded(pass, nil)
	m.PassEnded(pass, nil)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var got []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "floe_runs_deferred_total") || strings.HasPrefix(line, "floe_budget_remaining_bytes") {
			got = append(got, line)
		}
	}
	require.Equal(t, []string{`floe_budget_remaining_bytes{scope="lake"} 20`, "floe_runs_deferred_total 4"}, got)
}
