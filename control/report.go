package control

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// DefaultMaxPayback is the longest payback a recommended rewrite may have
// when the table's policy sets no max_payback: a rewrite is paid once and
// must earn its bytes back in scan bytes saved within a month.
const DefaultMaxPayback = 30 * 24 * time.Hour

// DefaultReportRuns is how many of a table's last runs a report lists.
const DefaultReportRuns = 5

// maxHealthHistory bounds the runs a report's health history reads.
const maxHealthHistory = 50

// ReportOptions configure [Report]. The zero value reads every collected
// query and uses the defaults.
type ReportOptions struct {
	// Since keeps the queries that started within this long before Now;
	// zero keeps them all (the query rate is then over the span from the
	// first collected query to Now).
	Since time.Duration
	// Now is the clock; the report's generated-at time. Default: time.Now.
	Now func() time.Time
	// Lake says the report covers every table: it then starts with the
	// tables ranked by expected gain.
	Lake bool
	// HealthTargetFileSizeBytes is the target health measures small files
	// against for tables without write.target-file-size-bytes.
	HealthTargetFileSizeBytes int64
	// TargetFileSizeBytes, when positive, is the file size every candidate
	// rewrites to ([ProjectOptions.TargetFileSizeBytes]). Zero: the table's
	// own target.
	TargetFileSizeBytes int64
	// ZOrderMode is the z-order key. Default: Iceberg-exact.
	ZOrderMode layout.ZOrderMode
	// Seed seeds the projections' sample.
	Seed uint64
	// MinGainPP is the least gain over the current layout a recommended
	// candidate needs, in percentage points of files skipped
	// ([ChooseOptions.MinGainPP]); any positive gain when zero.
	MinGainPP float64
	// Policy gives each table's effective policy: its max_payback (the
	// longest payback a recommended rewrite may have), the health
	// thresholds, freshness SLA and target file size. Nil: the built-in
	// policy ([policy.Default]).
	Policy func(lake.Ident) (policy.Policy, error)
	// Runs is how many of each table's last runs are listed. Default:
	// [DefaultReportRuns].
	Runs int
	// Workload, when set, gives a table's [ReportWorkload], the costly part
	// of its report, in place of computing it: compute does the work, and
	// Workload may call it or answer what an earlier call returned for the
	// same table and queries (the daemon passes a cache). Workload must
	// not change what it returns: reports share it. Nil: compute is
	// called.
	Workload func(ctx context.Context, state *lake.State, compute func(context.Context) (ReportWorkload, error)) (ReportWorkload, error)
	// Top is how many of a lake-wide report's tables get a full section:
	// the first Top of the ranking; the others get their ranking row
	// only. 0: every table.
	Top int
	// Budgets gives the maintenance budgets a table spends from (the
	// lake's and its namespace's, [policy.Set.Budgets]) for a lake-wide
	// report's queue. Nil: the queue lists no budget.
	Budgets func(lake.Ident) (lakeBudget, namespace policy.Budget, err error)
}

// ReportWorkload is the costly part of a table's report: reading every
// collected query of the table, ranking its predicate columns and
// projecting its candidate layouts. It depends on the table's snapshot,
// its collected queries, the clock (queries' weights decay with age) and
// [ReportOptions]' projection settings, nothing else.
type ReportWorkload struct {
	// Analysis is the table's column ranking and candidate layouts; its
	// Queries is 0 when no collected query could be replayed.
	Analysis Analysis
	// Projections are the candidates' projections, current first; none
	// without queries.
	Projections []simulator.Projection
}

// Report gathers the recommendation report for the tables in states: per
// table its health, the ranked predicate columns, every candidate layout's
// projection with its cost/benefit, the recommendation and why, its pending
// plans and last runs; with opts.Lake, a ranking of all of them by expected
// gain first, and the tables in its order (see [ReportLake], which a
// lake-wide report streams through). It reads only: nothing is proposed or
// stored. A table with no collected query gets a report without
// projections that says so.
//
// The cost/benefit of a candidate: scan bytes saved per day = (current's
// bytes read % − the candidate's) / 100 × the table's data bytes × queries
// per day (the workload's queries over the window's days); payback = bytes
// rewritten once / bytes saved per day, in days. A candidate whose payback
// exceeds the table's max payback (or that saves nothing) is shown but not
// recommended; among the others [ChoosePlan] picks, with opts.MinGainPP and
// the table's [FileLimit].
func Report(ctx context.Context, st *store.Store, states []*lake.State, opts ReportOptions) (report.Report, error) {
	if opts.Lake {
		ids := make([]lake.Ident, len(states))
		for i, s := range states {
			ids[i] = s.Ident
		}
		next := 0
		return ReportLake(ctx, st, ids, func(context.Context, lake.Ident) (*lake.State, error) {
			// ReportLake loads the tables once each, in order.
			next++
			return states[next-1], nil
		}, opts)
	}
	now := nowFunc(opts.Now)()
	opts.Now = func() time.Time { return now }
	if opts.Runs <= 0 {
		opts.Runs = DefaultReportRuns
	}
	r := report.Report{GeneratedAt: now.UTC(), SinceSeconds: int64(opts.Since / time.Second),
		Ranking: []report.Rank{}, Tables: make([]report.Table, 0, len(states))}
	for _, state := range states {
		t, err := reportTable(ctx, st, state, opts, now)
		if err != nil {
			return r, err
		}
		r.Tables = append(r.Tables, t)
	}
	return r, nil
}

func reportTable(ctx context.Context, st *store.Store, state *lake.State, opts ReportOptions, now time.Time) (report.Table, error) {
	id := state.Ident
	p := policy.Default()
	if opts.Policy != nil {
		var err error
		if p, err = opts.Policy(id); err != nil {
			return report.Table{}, fmt.Errorf("report %s: %w", id, err)
		}
	}
	maxPayback := p.MaxPayback
	if maxPayback <= 0 {
		maxPayback = DefaultMaxPayback
	}
	if opts.TargetFileSizeBytes == 0 {
		opts.TargetFileSizeBytes = p.TargetFileSizeBytes
	}
	ho := HealthOptions{TargetFileSizeBytes: opts.HealthTargetFileSizeBytes, Thresholds: &p.Health, Now: opts.Now, AllowSmallTarget: p.AllowSmallTargetFileSize,
		Expire: ExpireDefaults(p, rewriter.ExpireOptions{})}
	if p.TargetFileSizeBytes > 0 {
		ho.TargetFileSizeBytes, ho.TargetOverride = p.TargetFileSizeBytes, true
	}
	last, err := LastCompaction(ctx, st, id.String())
	if err != nil {
		return report.Table{}, fmt.Errorf("report %s: %w", id, err)
	}
	ho.LastCompaction = last
	h, err := Health(state, ho)
	if err != nil {
		return report.Table{}, fmt.Errorf("report %s: %w", id, err)
	}
	t := report.Table{
		Table: id.String(), DataFiles: len(state.DataFiles), TargetFileSizeBytes: h.Metrics.TargetFileSizeBytes,
		MaxPaybackDays: maxPayback.Hours() / 24, MinGainPP: max(opts.MinGainPP, 0), Health: reportHealth(h),
		Columns: []report.Column{}, Candidates: []report.Candidate{}, Plans: []report.Plan{}, Runs: []report.Run{},
		HealthHistory: []report.HealthPoint{}, Notes: []string{},
	}
	if state.Current != nil {
		t.SnapshotID = state.Current.SnapshotID
	}
	for _, f := range state.DataFiles {
		t.DataBytes += f.SizeBytes
	}
	sizes := make([]int64, len(state.DataFiles))
	for i, f := range state.DataFiles {
		sizes[i] = f.SizeBytes
	}

	compute := func(ctx context.Context) (ReportWorkload, error) { return reportWorkload(ctx, st, state, opts) }
	var w ReportWorkload
	if opts.Workload != nil {
		w, err = opts.Workload(ctx, state, compute)
	} else {
		w, err = compute(ctx)
	}
	if err != nil {
		return t, fmt.Errorf("report %s: %w", id, err)
	}
	a := w.Analysis
	pr := Projections{Projections: w.Projections}
	t.Queries = a.Queries
	for _, c := range a.Columns {
		t.Columns = append(t.Columns, report.Column{Column: c.Column, Score: c.Score, Share: c.Share, Queries: c.Queries, OpMix: c.OpMix, Reason: c.Reason})
	}
	basis, err := NewCostBasis(ctx, st, state, p, t.Queries, opts.Since, now)
	if err != nil {
		return t, fmt.Errorf("report %s: %w", id, err)
	}
	basis.MaxPayback = maxPayback
	t.WindowDays, t.QueriesPerDay = basis.WindowDays, basis.QueriesPerDay
	t.Cost = report.CostModel{FileOpenBytes: int64(basis.Model.fileOpenBytes()), USDPerTBScanned: basis.Model.USDPerTBScanned,
		USDPerVCPUHour: basis.Model.USDPerVCPUHour, RewriteBytesPerVCPUSecond: RewriteBytesPerVCPUSecond}
	if t.Queries == 0 {
		note := (&NoQueriesError{Table: id, Since: opts.Since}).Error()
		t.Notes = append(t.Notes, note+": nothing is projected")
		t.Recommendation.Why = "no queries to judge a layout by"
		t.FileSizes = report.NewHistogram("bytes", "today", "", sizes, nil)
		t.FilesRead = report.NewHistogram("files", "today", "", nil, nil)
	} else {
		shown := recommend(&t, state, pr, a, basis)
		t.FileSizes = fileSizes(t, sizes, shown)
		t.FilesRead = filesRead(pr.Projections, shown)
	}

	if err := reportRecords(ctx, st, &t, opts.Runs, opts.Since); err != nil {
		return t, fmt.Errorf("report %s: %w", id, err)
	}
	return t, nil
}

// reportWorkload analyzes the table's collected queries and projects its
// candidate layouts. Queries that cannot be replayed (a [*NoQueriesError])
// make a workload of no queries, not an error. The projections keep only
// what a report reads: not the table's state nor its workload, which a
// cache would otherwise hold on to.
func reportWorkload(ctx context.Context, st *store.Store, state *lake.State, opts ReportOptions) (ReportWorkload, error) {
	a, err := Analyze(ctx, st, state, AnalyzeOptions{Since: opts.Since, Now: opts.Now})
	if err != nil {
		return ReportWorkload{}, err
	}
	w := ReportWorkload{Analysis: a}
	if a.Queries == 0 {
		return w, nil
	}
	pr, err := projectCandidates(ctx, st, state, a, opts)
	var nq *NoQueriesError
	switch {
	case errors.As(err, &nq):
		w.Analysis.Queries = 0
	case err != nil:
		return ReportWorkload{}, err
	default:
		w.Projections = pr.Projections
	}
	return w, nil
}

// projectCandidates projects the analysis' candidate layouts with current
// first.
func projectCandidates(ctx context.Context, st *store.Store, state *lake.State, a Analysis, opts ReportOptions) (Projections, error) {
	layouts := make([]layout.Layout, len(a.Candidates))
	for i, c := range a.Candidates {
		layouts[i] = c.Layout
	}
	return Project(ctx, st, state, ProjectOptions{
		Layouts: layouts, WithCurrent: true, ZOrderMode: opts.ZOrderMode, Seed: opts.Seed, TargetFileSizeBytes: opts.TargetFileSizeBytes,
		Workload: WorkloadOptions{Since: opts.Since, Now: opts.Now},
	})
}

// recommend fills t's candidates, their cost/benefit and verdicts, and the
// recommendation, and returns the projection the charts compare with
// today: the recommended one, else the best candidate (nil when only
// current was projected).
func recommend(t *report.Table, state *lake.State, pr Projections, a Analysis, basis CostBasis) *simulator.Projection {
	why := map[string]string{}
	for _, c := range a.Candidates {
		why[c.Layout.String()] = c.Why
	}
	var cur simulator.Projection
	for _, p := range pr.Projections {
		if p.Layout.Strategy == layout.StrategyCurrent {
			cur = p
		}
	}
	maxDays := basis.maxPaybackDays()
	eligible := []simulator.Projection{}
	for _, p := range pr.Projections {
		c := report.Candidate{
			Layout: p.Layout, Why: why[untargeted(p.Layout)], SkippedPct: p.SkippedPct, BytesReadPct: p.BytesReadPct, ErrorPP: p.ErrorPP, BoundRatio: p.BoundRatio, BoxRatio: p.BoxRatio,
			FilesAfter: p.FilesAfter, RewriteBytes: p.RewriteBytes, GainPP: p.SkippedPct - cur.SkippedPct, MeanFilesRead: p.MeanFilesRead,
			TreeExplanation: p.TreeExplanation, RecordedTree: p.RecordedTree,
		}
		if p.Layout.Strategy == layout.StrategyCurrent {
			c.Why, c.Verdict = "the table as it is", "baseline"
			eligible = append(eligible, p)
			t.Candidates = append(t.Candidates, c)
			continue
		}
		k := basis.Of(cur, p)
		c.FilesSavedPerQuery, c.SavedBytesPerDay, c.RewriteIOBytes, c.RewriteVCPUHours = k.FilesSavedPerQuery, k.SavedBytesPerDay, k.RewriteIOBytes, k.RewriteVCPUHours
		c.PaybackDays, c.SavedUSDPerDay, c.RewriteUSD = k.PaybackDays, k.SavedUSDPerDay, k.RewriteUSD
		switch {
		case c.GainPP < 0 && -c.GainPP > p.ErrorPP:
			c.Verdict = fmt.Sprintf("rejected: skips fewer files than today (%.1f%% vs %.1f%%, beyond its error of ±%.1f pp), so a rewrite into it would make the table worse",
				p.SkippedPct, cur.SkippedPct, p.ErrorPP)
		case c.PaybackDays == nil:
			c.Verdict = "not recommended: its queries would read no fewer bytes and open no fewer files than today's, so its rewrite never pays back"
		case *c.PaybackDays > maxDays:
			c.Verdict = fmt.Sprintf("not recommended: pays back in %s, beyond max_payback %s", report.FormatDays(*c.PaybackDays), report.FormatDays(maxDays))
		default:
			eligible = append(eligible, p)
		}
		t.Candidates = append(t.Candidates, c)
	}

	// The baseline first, then the candidates in the analyzer's order.
	slices.SortStableFunc(t.Candidates, func(a, b report.Candidate) int {
		return cmp.Compare(b2i(a.Layout.Strategy != layout.StrategyCurrent), b2i(b.Layout.Strategy != layout.StrategyCurrent))
	})
	var best *simulator.Projection
	for i, p := range pr.Projections {
		if p.Layout.Strategy != layout.StrategyCurrent && (best == nil || p.SkippedPct > best.SkippedPct) {
			best = &pr.Projections[i]
		}
	}
	choice, err := ChoosePlan(eligible, ChooseOptions{MinGainPP: t.MinGainPP, State: state, Cost: &basis})
	if err != nil {
		// Only current is eligible.
		switch {
		case best == nil:
			t.Recommendation.Why = "no candidate layout to compare with today's"
		case best.SkippedPct <= cur.SkippedPct:
			t.Recommendation.Why = fmt.Sprintf("no candidate is projected to skip more files than today's layout (%.1f%%; the best, %s, %.1f%%)",
				cur.SkippedPct, best.Layout, best.SkippedPct)
		default:
			t.Recommendation.Why = fmt.Sprintf("no candidate pays back its rewrite within max_payback %s (the one skipping most files, %s, %s)",
				report.FormatDays(maxDays), best.Layout, paybackOf(t, best.Layout))
		}
		return best
	}
	for i := range t.Candidates {
		c := &t.Candidates[i]
		if c.Verdict != "" {
			continue
		}
		switch {
		case choice.Gain && sameLayout(c.Layout, choice.Best.Layout):
			c.Recommended = true
			c.Verdict = "recommended"
		case sameLayout(c.Layout, choice.Best.Layout) && choice.FileLimit > 0 && c.FilesAfter > choice.FileLimit:
			c.Verdict = fmt.Sprintf("not recommended: would write %d files, more than the limit of %d", c.FilesAfter, choice.FileLimit)
		case sameLayout(c.Layout, choice.Best.Layout):
			c.Verdict = fmt.Sprintf("not recommended: %s over today, below the minimum of %.1f pp", report.FormatPP(c.GainPP), t.MinGainPP)
		case choice.FileLimit > 0 && c.FilesAfter > FileLimit(state, c.Layout.TargetFileSizeBytes):
			c.Verdict = fmt.Sprintf("not recommended: would write %d files, more than the limit of %d", c.FilesAfter, FileLimit(state, c.Layout.TargetFileSizeBytes))
		default:
			c.Verdict = "not recommended: skips fewer files than " + choice.Best.Layout.String()
		}
	}
	if !choice.Gain {
		t.Recommendation.Why = strings.TrimSuffix(strings.TrimPrefix(choice.Reason(t.Table), "no plan proposed for "+t.Table+": "), "; --force proposes it anyway")
		return best
	}
	b := choice.Best
	t.Recommendation.Layout = &b.Layout
	if choice.ByCost {
		t.Recommendation.Why = fmt.Sprintf("each query is projected to open %.1f files instead of %.1f (files skipped %.1f%% vs %.1f%% today), which at %s a file saves more than the bytes it may read more; it %s, within max_payback %s",
			b.MeanFilesRead, choice.Current.MeanFilesRead, b.SkippedPct, choice.Current.SkippedPct, report.FormatBytes(t.Cost.FileOpenBytes),
			paybackOf(t, b.Layout), report.FormatDays(maxDays))
		return &b
	}
	t.Recommendation.Why = fmt.Sprintf("the workload is projected to skip %.1f%% of files (± %.1f pp), up from %.1f%% today (%s, at least %.1f pp asked), reading %.1f%% of the bytes instead of %.1f%%; it %s, within max_payback %s",
		b.SkippedPct, b.ErrorPP, choice.Current.SkippedPct, report.FormatPP(choice.GainPP), t.MinGainPP, b.BytesReadPct, choice.Current.BytesReadPct,
		paybackOf(t, b.Layout), report.FormatDays(maxDays))
	return &b
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// untargeted is a layout's spec without its " target N" suffix, as the
// analyzer named the candidate.
func untargeted(l layout.Layout) string {
	l.TargetFileSizeBytes = 0
	return l.String()
}

// sameLayout reports whether a and b are the same layout: the same spec.
func sameLayout(a, b layout.Layout) bool { return a.String() == b.String() }

func paybackOf(t *report.Table, l layout.Layout) string {
	for _, c := range t.Candidates {
		if sameLayout(c.Layout, l) {
			if c.PaybackDays == nil {
				return "never pays back"
			}
			return "pays back in " + report.FormatDays(*c.PaybackDays)
		}
	}
	return ""
}

// fileSizes is the file-size histogram: today's data files against the
// projected rewrite's. A projection gives the file count and the bytes
// written, not each file's size: a rewrite writes files of about its target
// size, so the projected files are drawn as FilesAfter files of the bytes
// written divided evenly.
func fileSizes(t report.Table, sizes []int64, p *simulator.Projection) report.Histogram {
	if p == nil || p.FilesAfter <= 0 {
		return report.NewHistogram("bytes", "today", "", sizes, nil)
	}
	written := float64(t.DataBytes) * p.SizeRatio
	each := int64(math.Round(written / float64(p.FilesAfter)))
	then := make([]int64, p.FilesAfter)
	for i := range then {
		then[i] = each
	}
	h := report.NewHistogram("bytes", "today", p.Layout.String(), sizes, then)
	h.Note = fmt.Sprintf("projected: %d files of about %s each — a rewrite writes files of about its target size, so the projection's file count (%d) and bytes written (%.2f × today's) are drawn as files of equal size",
		p.FilesAfter, report.FormatBytes(each), p.FilesAfter, p.SizeRatio)
	return h
}

// filesRead is the distribution of files read per query, today against p,
// from the replay's per-query results.
func filesRead(projs []simulator.Projection, p *simulator.Projection) report.Histogram {
	var now, then []int64
	for _, q := range projs {
		if q.Layout.Strategy == layout.StrategyCurrent {
			for _, r := range q.PerQuery {
				now = append(now, int64(r.FilesRead))
			}
		}
	}
	name := ""
	if p != nil {
		name = p.Layout.String()
		for _, r := range p.PerQuery {
			then = append(then, int64(r.FilesRead))
		}
	}
	h := report.NewHistogram("files", "today", name, now, then)
	h.Note = "each query of the workload replayed against today's file bounds and against the projected files"
	return h
}

// reportRecords adds the table's pending plans, last runs and health
// history from the state store, and the next command to run (with the
// report's --since when it is not [DefaultQueryWindow], so that the plan
// replays the queries the report did).
func reportRecords(ctx context.Context, st *store.Store, t *report.Table, nRuns int, since time.Duration) error {
	plans, err := ListPlans(ctx, st, PlanFilter{Table: t.Table})
	if err != nil {
		return err
	}
	for _, p := range plans {
		if p.State != PlanProposed && p.State != PlanApproved && p.State != PlanRunning {
			continue
		}
		t.Plans = append(t.Plans, report.Plan{
			ID: p.ID, Layout: p.Layout, State: string(p.State), SkippedPct: p.Projection.SkippedPct,
			CurrentSkippedPct: p.Projection.CurrentSkippedPct, RewriteBytes: p.Projection.RewriteBytes, TreeExplanation: p.Projection.TreeExplanation,
			CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt.UTC(),
		})
		if t.Recommendation.PlanID == "" && t.Recommendation.Layout != nil && strings.EqualFold(p.Layout.String(), t.Recommendation.Layout.String()) {
			t.Recommendation.PlanID = p.ID
			switch p.State {
			case PlanProposed:
				t.Recommendation.Next = "floe plan approve " + p.ID
			case PlanApproved:
				t.Recommendation.Next = "floe optimize --plan " + p.ID
			}
		}
	}
	if t.Recommendation.Layout != nil && t.Recommendation.PlanID == "" {
		t.Recommendation.Next = fmt.Sprintf("floe plan %s --layout %s", ShellArg(t.Table), ShellArg(t.Recommendation.Layout.String()))
		if since > 0 && since != DefaultQueryWindow {
			// The plan replays the queries the report did.
			t.Recommendation.Next += " --since " + policy.FormatDuration(since)
		}
	}
	runs, err := ListRuns(ctx, st, t.Table, maxHealthHistory)
	if err != nil {
		return err
	}
	for i, r := range runs {
		rr := report.Run{ID: r.ID, PlanID: r.PlanID, Status: string(r.Status), Error: r.Error, StartedAt: r.StartedAt.UTC(), EndedAt: r.EndedAt.UTC(), Steps: []report.Step{}}
		for _, s := range r.Steps {
			rr.Steps = append(rr.Steps, report.Step{Step: s.Name, Status: string(s.Status), Before: reportStepHealth(s.Before), After: reportStepHealth(s.After)})
			if c := s.Layout; c != nil {
				rr.Projection = &report.ProjectionCheck{Layout: c.Layout, ProjectedSkippedPct: c.ProjectedSkippedPct, ErrorPP: c.ErrorPP,
					MeasuredSkippedPct: c.MeasuredSkippedPct, DeltaPP: c.DeltaPP, WithinError: c.WithinError, Summary: c.Summary()}
			}
		}
		if i < nRuns {
			t.Runs = append(t.Runs, rr)
		}
	}
	// Oldest first: before the first step that has one, after the last.
	for _, r := range slices.Backward(runs) {
		for _, s := range r.Steps {
			if s.Before != nil {
				t.HealthHistory = append(t.HealthHistory, report.HealthPoint{At: s.StartedAt.UTC(), RunID: r.ID, When: "before", StepHealth: *reportStepHealth(s.Before)})
				break
			}
		}
		for _, s := range slices.Backward(r.Steps) {
			if s.After != nil {
				t.HealthHistory = append(t.HealthHistory, report.HealthPoint{At: cmp.Or(s.EndedAt, s.StartedAt).UTC(), RunID: r.ID, When: "after", StepHealth: *reportStepHealth(s.After)})
				break
			}
		}
	}
	return nil
}

func reportHealth(h lake.Health) report.Health {
	m := h.Metrics
	return report.Health{
		Status: string(h.Status), Reasons: slices.Clone(h.Reasons), DataFiles: m.DataFiles, SmallFiles: m.SmallFiles, SmallFileRatio: m.SmallFileRatio,
		AvgFileSizeBytes: m.AvgFileSizeBytes, Snapshots: m.Snapshots, Manifests: m.Manifests, DeleteFiles: m.DeleteFiles,
		Partitions: m.Partitions, LastCompactionAgeSec: m.LastCompactionAgeSec,
	}
}

func reportStepHealth(h *StepHealth) *report.StepHealth {
	if h == nil {
		return nil
	}
	m := h.Metrics
	return &report.StepHealth{Status: string(h.Status), DataFiles: m.DataFiles, SmallFileRatio: m.SmallFileRatio,
		AvgFileSizeBytes: m.AvgFileSizeBytes, Snapshots: m.Snapshots, Manifests: m.Manifests}
}
