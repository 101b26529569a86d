package control

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// Rank classes, in the order a pass starts them.
const (
	// RankApproved: a person approved the table's plan; it runs first,
	// whatever the budget.
	RankApproved = "approved"
	// RankOverdue: the table's compaction backlog waited longer than
	// max_deferral or its freshness SLA; it runs next, while any budget is
	// left.
	RankOverdue = "overdue"
	// RankGain: every other due table, by gain per cost, within the
	// budget.
	RankGain = "gain"
)

// Rank is where a pass queued a due table, and what it ranked it by.
type Rank struct {
	// Position is the table's place in the pass's queue, from 1.
	Position int `json:"position"`
	// Class is RankApproved, RankOverdue or RankGain.
	Class string `json:"class"`
	// GainPerCost is [Estimate.GainPerCost]; null when the due steps cost
	// no budget (JSON has no infinity).
	GainPerCost *float64 `json:"gain_per_cost"`
	Estimate
}

// BudgetUse is one budget's account in a pass: its bounds, what the
// recorded runs spent in its window before the pass, what the runs the
// pass started are estimated to spend, and the tables it deferred.
type BudgetUse struct {
	// Scope is "lake" or the namespace the budget bounds.
	Scope         string  `json:"scope"`
	Where         string  `json:"where"`
	WindowSeconds int64   `json:"window_seconds"`
	LimitBytes    int64   `json:"limit_bytes,omitempty"`
	LimitVCPUH    float64 `json:"limit_vcpu_hours,omitempty"`
	// SpentBytes and SpentVCPUH are what the rewrites recorded in the
	// trailing window spent before the pass ([store.Store.Spend]).
	SpentBytes int64   `json:"spent_bytes"`
	SpentVCPUH float64 `json:"spent_vcpu_hours"`
	// BoughtBytes and BoughtVCPUH are the estimates of the rewrites the
	// pass started against it; Bought the tables.
	BoughtBytes int64    `json:"bought_bytes"`
	BoughtVCPUH float64  `json:"bought_vcpu_hours"`
	Bought      []string `json:"bought"`
	// Deferred are the tables whose rewrites it held back.
	Deferred []string `json:"deferred"`

	budget policy.Budget
}

// leftBytes and leftVCPUH are what is left of the budget (unbounded:
// +Inf).
func (u *BudgetUse) leftBytes() float64 {
	if u.LimitBytes <= 0 {
		return math.Inf(1)
	}
	return float64(u.LimitBytes - u.SpentBytes - u.BoughtBytes)
}

func (u *BudgetUse) leftVCPUH() float64 {
	if u.LimitVCPUH <= 0 {
		return math.Inf(1)
	}
	return u.LimitVCPUH - u.SpentVCPUH - u.BoughtVCPUH
}

// short says why the budget cannot pay for e, or "" when it can.
func (u *BudgetUse) short(e Estimate) string {
	switch {
	case float64(e.RewriteBytes) > u.leftBytes():
		return fmt.Sprintf("%s: %s spent, %s left; needs %s", u.budget, policy.FormatSize(u.SpentBytes+u.BoughtBytes),
			policy.FormatSize(max(int64(u.leftBytes()), 0)), policy.FormatSize(e.RewriteBytes))
	case e.RewriteVCPUHours > u.leftVCPUH():
		return fmt.Sprintf("%s: %.2f vCPU-h spent, %.2f left; needs %.2f", u.budget, u.SpentVCPUH+u.BoughtVCPUH, max(u.leftVCPUH(), 0), e.RewriteVCPUHours)
	}
	return ""
}

// spent says whether nothing is left of the budget.
func (u *BudgetUse) spent() bool { return u.leftBytes() <= 0 || u.leftVCPUH() <= 0 }

// ledger keeps a pass's budgets: each the first time a table spends from
// it, with what the window's recorded runs spent.
type ledger struct {
	st    *store.Store
	now   time.Time
	uses  map[string]*BudgetUse
	order []string
	// spend are the recorded spends by window.
	spend map[time.Duration][]store.TableSpend
}

// use is budget b's account, opened with the window's spend.
func (l *ledger) use(ctx context.Context, b policy.Budget) (*BudgetUse, error) {
	key := strings.ToLower(b.Scope)
	if u := l.uses[key]; u != nil {
		return u, nil
	}
	spend, ok := l.spend[b.Window]
	if !ok {
		var err error
		if spend, err = l.st.Spend(ctx, l.now.Add(-b.Window)); err != nil {
			return nil, err
		}
		l.spend[b.Window] = spend
	}
	u := &BudgetUse{Scope: b.Scope, Where: b.Where, WindowSeconds: int64(b.Window / time.Second), LimitBytes: b.Bytes, LimitVCPUH: b.CPUHours,
		Bought: []string{}, Deferred: []string{}, budget: b}
	for _, s := range spend {
		if b.Scope == policy.ScopeLake || strings.EqualFold(namespaceOf(s.Table), b.Scope) {
			u.SpentBytes += s.RewrittenBytes
			u.SpentVCPUH += float64(s.RewriteCPUMillis) / 3600 / 1000
		}
	}
	l.uses[key] = u
	l.order = append(l.order, key)
	return u, nil
}

// LakeBudget is the lake's maintenance budget (the default policy rule's
// budget.*) with what the rewrites recorded in its trailing window spent,
// read with one store query ([store.Store.Spend]); nil when no budget
// bounds the lake. Bought and Deferred are empty: no pass is judged.
func (s *Service) LakeBudget(ctx context.Context) (*BudgetUse, error) {
	b, err := s.cfg.Policies.LakeBudget()
	if err != nil || b.IsZero() {
		return nil, err
	}
	l := &ledger{st: s.store, now: s.now(), uses: map[string]*BudgetUse{}, spend: map[time.Duration][]store.TableSpend{}}
	return l.use(ctx, b)
}

// Text says the budget's account in a line: "lake budget 2TiB per 1d:
// 1.9TiB spent, 100GiB left".
func (u *BudgetUse) Text() string {
	var spent, left []string
	if u.LimitBytes > 0 {
		spent = append(spent, policy.FormatSize(u.SpentBytes+u.BoughtBytes))
		left = append(left, policy.FormatSize(max(int64(u.leftBytes()), 0)))
	}
	if u.LimitVCPUH > 0 {
		spent = append(spent, fmt.Sprintf("%.2f vCPU-h", u.SpentVCPUH+u.BoughtVCPUH))
		left = append(left, fmt.Sprintf("%.2f vCPU-h", max(u.leftVCPUH(), 0)))
	}
	return fmt.Sprintf("%s: %s spent, %s left", u.budget, strings.Join(spent, ", "), strings.Join(left, ", "))
}

// namespaceOf is catalog.namespace of a table's name as runs record it.
func namespaceOf(table string) string {
	parts, err := lake.SplitParts(table)
	if err != nil || len(parts) < 2 {
		return ""
	}
	return lake.JoinParts(parts[:len(parts)-1]...)
}

// passJob is one due table of a pass: what the run loop starts.
type passJob struct {
	id  lake.Ident
	cat catalog.Catalog
	eff policy.Effective
	d   TableDecision
	// skip and skipWhy are the steps a budget deferred (compact,
	// deletes), and why: the run does the cheap steps only.
	skip    map[string]bool
	skipWhy map[string]string
}

// ranked is a due job with its estimate, for [rankJobs].
type ranked struct {
	job      passJob
	est      Estimate
	class    string
	estError error
}

// rankJobs orders a pass's due jobs: approved plans first, then the
// overdue (the longest backlog first), then the rest by gain per cost,
// files merged per byte, and name. Jobs whose estimate failed go last.
func rankJobs(rs []ranked) {
	classOrder := map[string]int{RankApproved: 0, RankOverdue: 1, RankGain: 2}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch aErr, bErr := a.estError != nil, b.estError != nil; {
		case aErr && !bErr:
			return 1
		case bErr && !aErr:
			return -1
		case aErr:
			return strings.Compare(a.job.d.Table, b.job.d.Table)
		}
		if c := cmp.Compare(classOrder[a.class], classOrder[b.class]); c != 0 {
			return c
		}
		if a.class == RankOverdue {
			if c := cmp.Compare(b.est.BacklogAge, a.est.BacklogAge); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(b.est.GainPerCost(), a.est.GainPerCost()); c != 0 {
			return c
		}
		if c := cmp.Compare(b.est.FilesPerByte(), a.est.FilesPerByte()); c != 0 {
			return c
		}
		return strings.Compare(a.job.d.Table, b.job.d.Table)
	})
}

// classOf is the rank class of a due table: approved when a person
// approved its plan, overdue when its backlog waited too long, else gain.
func classOf(approved bool, e Estimate) string {
	switch {
	case approved:
		return RankApproved
	case e.Overdue():
		return RankOverdue
	}
	return RankGain
}

// admit says whether a job of class c with estimate e may start against
// the budgets uses, and if not why ("" when it may): an approved plan
// always; an overdue table while every budget has something left; any
// other while every budget can pay for its estimate. A job whose due
// steps rewrite nothing costs no budget.
func admit(c string, e Estimate, uses []*BudgetUse) string {
	if !e.Budgeted() || c == RankApproved {
		return ""
	}
	for _, u := range uses {
		if c == RankOverdue {
			if u.spent() {
				return fmt.Sprintf("%s: spent (overdue tables start while any is left)", u.budget)
			}
			continue
		}
		if why := u.short(e); why != "" {
			return why
		}
	}
	return ""
}

// prioritize ranks a pass's due jobs ([rankJobs]) and spends the budgets
// on them in that order ([admit]). A job a budget defers keeps its cheap
// steps (expire, manifests, orphans when their listing is stale): it runs
// with compact and deletes skipped, the reason recorded with them; a job
// left nothing to run is dropped. Each due table's decision in pass gets
// its rank and, when deferred, the reason; pass.Budgets the accounts.
func (s *Scheduler) prioritize(ctx context.Context, rec *passRecords, jobs []passJob, now time.Time, pass *Pass) []passJob {
	if len(jobs) == 0 {
		return jobs
	}
	rs := make([]ranked, 0, len(jobs))
	for _, j := range jobs {
		r := ranked{job: j}
		r.est, r.estError = s.opts.Service.Estimate(ctx, j.id, j.d.MetadataLocation)
		if r.estError != nil {
			s.opts.Logger.Warn("no estimate of a due table; it runs after the ranked ones, its cost unbudgeted", "table", j.d.Table, "err", r.estError)
		}
		r.class = classOf(len(rec.approvedPlans(j.id)) > 0, r.est)
		rs = append(rs, r)
	}
	rankJobs(rs)
	set := s.opts.Config.Policies
	l := &ledger{st: s.opts.Store, now: now, uses: map[string]*BudgetUse{}, spend: map[time.Duration][]store.TableSpend{}}
	out := make([]passJob, 0, len(rs))
	// admitted are the tables whose rewrites the budgets let run; unrun
	// those deferred with nothing else to run, with the reason.
	var admitted []string
	unrun := map[string]string{}
	decisions := map[string]*TableDecision{}
	for i := range pass.Decisions {
		decisions[pass.Decisions[i].Table] = &pass.Decisions[i]
	}
	for i, r := range rs {
		j := r.job
		d := decisions[j.d.Table]
		rank := &Rank{Position: i + 1, Class: r.class, Estimate: r.est}
		if g := r.est.GainPerCost(); !math.IsInf(g, 0) && r.estError == nil {
			rank.GainPerCost = &g
		}
		if d != nil {
			d.Rank = rank
		}
		if r.estError != nil {
			out = append(out, j)
			continue
		}
		var uses []*BudgetUse
		lakeBudget, nsBudget, err := set.Budgets(j.id)
		for _, b := range []policy.Budget{lakeBudget, nsBudget} {
			if err != nil || b.IsZero() {
				continue
			}
			var u *BudgetUse
			if u, err = l.use(ctx, b); err == nil {
				uses = append(uses, u)
			}
		}
		if err != nil {
			// No budget can be judged: the rewrites wait rather than
			// overspend.
			pass.Errors = append(pass.Errors, fmt.Sprintf("%s: budget: %v", j.id, err))
			uses = []*BudgetUse{{budget: policy.Budget{Scope: policy.ScopeLake}, LimitBytes: 1, SpentBytes: 1}}
		}
		why := admit(r.class, r.est, uses)
		if why == "" {
			admitted = append(admitted, j.d.Table)
			for _, u := range uses {
				if r.est.Budgeted() {
					u.BoughtBytes += r.est.RewriteBytes
					u.BoughtVCPUH += r.est.RewriteVCPUHours
					u.Bought = append(u.Bought, j.d.Table)
				}
			}
			out = append(out, j)
			continue
		}
		why = DeferredPrefix + why
		for _, u := range uses {
			if u.short(r.est) != "" || r.class == RankOverdue {
				u.Deferred = append(u.Deferred, j.d.Table)
			}
		}
		if d != nil {
			d.Deferred = why
		}
		s.opts.Logger.Info("rewrites deferred by the budget", "table", j.d.Table, "reason", why, "rank", i+1)
		cheap, err := s.cheapSteps(ctx, j.id, r.est.Steps, now)
		if err != nil {
			pass.Errors = append(pass.Errors, fmt.Sprintf("%s: %v", j.id, err))
			continue
		}
		if !cheap {
			unrun[j.d.Table] = why
			continue
		}
		j.skip = map[string]bool{StepCompact: true, StepDeletes: true}
		j.skipWhy = map[string]string{StepCompact: why, StepDeletes: why}
		out = append(out, j)
	}
	for _, k := range l.order {
		pass.Budgets = append(pass.Budgets, *l.uses[k])
	}
	// No run will say why these waited: the store does, for the report.
	if err := s.opts.Store.NoteDeferrals(ctx, unrun, now); err != nil {
		pass.Errors = append(pass.Errors, err.Error())
	}
	if err := s.opts.Store.EndDeferrals(ctx, admitted); err != nil {
		pass.Errors = append(pass.Errors, err.Error())
	}
	return out
}

// cheapSteps reports whether any step a budget never bounds is due among
// steps: expire, manifests, or orphans when the last listing is stale
// ([OrphanInterval]).
func (s *Scheduler) cheapSteps(ctx context.Context, id lake.Ident, steps []StepDecision, now time.Time) (bool, error) {
	for _, st := range steps {
		if !st.Run {
			continue
		}
		switch st.Step {
		case StepExpire, StepManifests:
			return true, nil
		case StepOrphans:
			runs, err := ListRuns(ctx, s.opts.Store, id.String(), 20)
			if err != nil {
				return false, err
			}
			if orphansStale(runs, now) {
				return true, nil
			}
		}
	}
	return false, nil
}
