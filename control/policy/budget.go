package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/floe-project/floe/lake"
)

// Budget bounds the maintenance that rewrites data — compaction and delete
// rewrites — in a trailing window: the lake's (budget.* under default:) or
// one namespace's (budget.* under namespaces:, each namespace its rule
// matches bounded apart). A namespace's budget counts within the lake's: a
// rewrite spends from both. The cheap steps (expire, orphans, manifests)
// are never bounded.
type Budget struct {
	// Bytes bounds the bytes rewritten (the rewrites' input) in Window;
	// 0: unbounded.
	Bytes int64
	// CPUHours bounds the rewrites' engine CPU in Window, in vCPU-hours;
	// 0: unbounded.
	CPUHours float64
	// Window is the trailing window spend is counted over. Default: 24h.
	Window time.Duration
	// Scope is "lake" for the default rule's budget, else the namespace
	// it bounds (catalog.namespace).
	Scope string
	// Where is the file:line of the rule that set it.
	Where string
}

// ScopeLake is the [Budget.Scope] of the lake's budget.
const ScopeLake = "lake"

// IsZero reports whether the budget bounds nothing.
func (b Budget) IsZero() bool { return b.Bytes == 0 && b.CPUHours == 0 }

// String names the budget as the scheduler's reasons quote it: "lake
// budget 2TiB, 40 vCPU-h per 24h".
func (b Budget) String() string {
	what := ""
	if b.Bytes > 0 {
		what = FormatSize(b.Bytes)
	}
	if b.CPUHours > 0 {
		if what != "" {
			what += ", "
		}
		what += number(b.CPUHours) + " vCPU-h"
	}
	scope := "lake"
	if b.Scope != ScopeLake {
		scope = "namespace " + b.Scope
	}
	return fmt.Sprintf("%s budget %s per %s", scope, what, FormatDuration(b.Window))
}

// DefaultBudgetWindow is the window of a budget that sets none.
const DefaultBudgetWindow = 24 * time.Hour

// budgetKeys are the keys of a budget. They are read from the default rule
// and the namespace rules only, and are not part of a table's effective
// [Policy]: a table spends from the lake's budget and its namespace's at
// once ([Set.Budgets]).
var budgetKeys = []keySpec{
	{name: "budget.bytes", kind: kindSize, min: mib, max: 1 << 60, doc: "bytes compaction and delete rewrites may rewrite per budget.window, 1MiB to 1EiB (unset: unbounded)"},
	{name: "budget.cpu_hours", kind: kindFloat, min: 0.01, max: 10_000_000, doc: "engine vCPU-hours compaction and delete rewrites may spend per budget.window, 0.01 to 10,000,000 (unset: unbounded)"},
	{name: "budget.window", kind: kindDuration, min: hour, max: 365 * day, def: "24h", doc: "the trailing window a budget counts spend over, 1h to 365d"},
}

// BudgetKeys lists the budget keys' dotted names.
func BudgetKeys() []string {
	out := make([]string, len(budgetKeys))
	for i, k := range budgetKeys {
		out[i] = k.name
	}
	return out
}

func budgetSpec(name string) (keySpec, bool) {
	i := slices.IndexFunc(budgetKeys, func(k keySpec) bool { return k.name == name })
	if i < 0 {
		return keySpec{}, false
	}
	return budgetKeys[i], true
}

// Budgets are the budgets table id spends from: the lake's (the default
// rule's budget.* keys) and its namespace's (those of the namespace rule
// that governs it, as for every other key: its best match), each zero when
// its rule bounds nothing. Rules two of which tie for the table are an error,
// as [Set.Resolve] reports them.
func (s *Set) Budgets(id lake.Ident) (lakeBudget, namespace Budget, err error) {
	if s == nil {
		return Budget{}, Budget{}, nil
	}
	if s.Default != nil {
		if lakeBudget, err = budgetOf(*s.Default, ScopeLake); err != nil {
			return Budget{}, Budget{}, err
		}
	}
	ns := id.NamespaceString()
	if id.Catalog != "" {
		ns = lake.JoinParts(append([]string{id.Catalog}, id.Namespace...)...)
	}
	r, err := best(s.Namespaces, ns)
	if err != nil {
		return Budget{}, Budget{}, Invalid(fmt.Errorf("budget of %s: %w", id, err))
	}
	if r != nil {
		if namespace, err = budgetOf(*r, ns); err != nil {
			return Budget{}, Budget{}, err
		}
	}
	return lakeBudget, namespace, nil
}

// LakeBudget is the lake's budget: the default rule's budget.* keys; zero
// when it bounds nothing.
func (s *Set) LakeBudget() (Budget, error) {
	if s == nil || s.Default == nil {
		return Budget{}, nil
	}
	return budgetOf(*s.Default, ScopeLake)
}

// budgetOf reads rule r's budget keys.
func budgetOf(r Rule, scope string) (Budget, error) {
	b := Budget{Window: DefaultBudgetWindow, Scope: scope, Where: r.Where}
	var errs []error
	for _, k := range budgetKeys {
		v, ok := r.Values[k.name]
		if !ok {
			continue
		}
		x, err := k.parse(v.Raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", orBuiltin(v.Where), r.keyPath(k.name), err))
			continue
		}
		switch k.name {
		case "budget.bytes":
			b.Bytes = x.(int64)
		case "budget.cpu_hours":
			b.CPUHours = x.(float64)
		case "budget.window":
			b.Window = x.(time.Duration)
		}
	}
	if b.IsZero() {
		return Budget{}, Invalid(errs...)
	}
	return b, Invalid(errs...)
}

// checkBudget says what is wrong with rule r's budget as a whole: a window
// with nothing to bound in it.
func checkBudget(r Rule) error {
	v, ok := r.Values["budget.window"]
	if !ok {
		return nil
	}
	_, bytes := r.Values["budget.bytes"]
	_, cpu := r.Values["budget.cpu_hours"]
	if bytes || cpu {
		return nil
	}
	return fmt.Errorf("%s: %s: a budget window bounds nothing without budget.bytes or budget.cpu_hours", orBuiltin(v.Where), r.keyPath("budget.window"))
}
