package report

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// Report is the whole report: one [Table] per table, and for a lake-wide
// report (no table named) a ranking of every table by expected gain first.
type Report struct {
	// GeneratedAt is when the report was made (the caller's clock).
	GeneratedAt time.Time `json:"generated_at"`
	// SinceSeconds is the query window the workload was read from, in
	// seconds; 0 means every collected query.
	SinceSeconds int64 `json:"since_seconds"`
	// Lake says the report covers every table: it starts with Ranking.
	Lake bool `json:"lake"`
	// Ranking is every table, most scan bytes saved per day by its
	// recommendation first; empty unless Lake.
	Ranking []Rank `json:"ranking"`
	// Tables are the tables' full sections: every named table, or, in a
	// lake-wide report, the top Totals.Top of the ranking (all when 0) in
	// its order.
	Tables []Table `json:"tables"`
	// Totals sum every table of a lake-wide report, those without a
	// section too; nil (left out) otherwise.
	Totals *Totals `json:"totals,omitempty"`
	// Queue is the maintenance queue of a lake-wide report: the budgets
	// and what they deferred; nil (left out) otherwise.
	Queue *Queue `json:"queue,omitempty"`
}

// Totals are a lake-wide report's sums over every table.
type Totals struct {
	// Tables counts every table read; Detailed those with a full section
	// (the top Top by expected gain; Top 0 shows them all).
	Tables   int `json:"tables"`
	Detailed int `json:"detailed"`
	Top      int `json:"top"`
	// DataFiles and DataBytes are the tables' live data.
	DataFiles int   `json:"data_files"`
	DataBytes int64 `json:"data_bytes"`
	// SmallFiles is the small-file backlog: the data files below their
	// table's small-file threshold, summed.
	SmallFiles int `json:"small_files"`
	// Recommended counts the tables with a recommended layout, and
	// SavedBytesPerDay sums their expected gain in scan bytes a day. Its
	// key is recommended_tables: "recommended" is a layout everywhere
	// else in floe's JSON (docs/json.md).
	Recommended      int     `json:"recommended_tables"`
	SavedBytesPerDay float64 `json:"saved_bytes_per_day"`
	// Runs counts the runs started in the report's window; NoOpRuns those
	// of them that ran and changed nothing (control.NoOpRun), and
	// DeferredRuns those whose rewrites a budget held back.
	Runs         int `json:"runs"`
	NoOpRuns     int `json:"noop_runs"`
	DeferredRuns int `json:"deferred_runs"`
}

// Queue is the maintenance queue: each budget's spend and what is left of
// it, and the tables whose rewrites a budget deferred in the window.
type Queue struct {
	Budgets  []Budget   `json:"budgets"`
	Deferred []Deferral `json:"deferred"`
}

// Budget is one maintenance budget's account over its trailing window:
// the limits its policy rule sets (0: that side unbounded), what the
// recorded rewrites spent, and what is left (null when unbounded).
type Budget struct {
	// Scope is "lake" or the namespace the budget bounds.
	Scope         string   `json:"scope"`
	Where         string   `json:"where"`
	WindowSeconds int64    `json:"window_seconds"`
	LimitBytes    int64    `json:"limit_bytes"`
	LimitVCPUH    float64  `json:"limit_vcpu_hours"`
	SpentBytes    int64    `json:"spent_bytes"`
	SpentVCPUH    float64  `json:"spent_vcpu_hours"`
	LeftBytes     *int64   `json:"left_bytes"`
	LeftVCPUH     *float64 `json:"left_vcpu_hours"`
}

// Deferral is a table whose rewrites a budget held back in the window:
// how many of its runs, how many passes that ran nothing of it, and the
// newest deferral's reason (RunID is the run that recorded it, "" when a
// pass without a run deferred it last).
type Deferral struct {
	Table string `json:"table"`
	Runs  int    `json:"runs"`
	// Passes counts the passes that deferred the table without a run,
	// since a budget last bought its rewrites.
	Passes int       `json:"passes"`
	RunID  string    `json:"run_id"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Rank is one row of the lake-wide ranking.
type Rank struct {
	Table  string `json:"table"`
	Health string `json:"health"`
	// Recommended is the recommended layout; nil (left out of the JSON)
	// when none is.
	Recommended *layout.Layout `json:"recommended,omitempty"`
	// GainPP is the recommended layout's files skipped less today's, in
	// percentage points (0 without a recommendation).
	GainPP float64 `json:"gain_pp"`
	// SavedBytesPerDay is the recommendation's scan bytes saved per day.
	SavedBytesPerDay float64 `json:"saved_bytes_per_day"`
	// PaybackDays is the recommendation's payback time in days; null
	// without a recommendation.
	PaybackDays *float64 `json:"payback_days"`
	Queries     int      `json:"queries"`
	// DataFiles, DataBytes and SmallFiles are the table's live data and
	// its small-file backlog.
	DataFiles  int   `json:"data_files"`
	DataBytes  int64 `json:"data_bytes"`
	SmallFiles int   `json:"small_files"`
	// Runs counts the table's runs started in the report's window, and
	// NoOpRuns those of them that changed nothing.
	Runs     int `json:"runs"`
	NoOpRuns int `json:"noop_runs"`
	// Detailed says the table has a full section in the report (it is in
	// the top N).
	Detailed bool `json:"detailed"`
}

// Table is one table's section of the report.
type Table struct {
	Table string `json:"table"`
	// SnapshotID is the current snapshot the report read (0: none).
	SnapshotID int64 `json:"snapshot_id,string"`
	// Queries is the workload replayed: the collected queries of the window
	// as the analyzer selects them.
	Queries int `json:"queries"`
	// QueriesPerDay is Queries over the window's days: the recorded query
	// rate the cost/benefit line uses.
	QueriesPerDay float64 `json:"queries_per_day"`
	// WindowDays is the window QueriesPerDay divides by, in days: from the
	// table's first collected query to now (at least a day), no longer
	// than the report's since.
	WindowDays float64 `json:"window_days"`
	// DataBytes and DataFiles are the table's live data today.
	DataBytes           int64 `json:"data_bytes"`
	DataFiles           int   `json:"data_files"`
	TargetFileSizeBytes int64 `json:"target_file_size_bytes"`
	// MaxPaybackDays is the longest payback a recommended candidate may
	// have, in days (the policy's max_payback).
	MaxPaybackDays float64 `json:"max_payback_days"`
	// MinGainPP is the least gain in files skipped a recommended candidate
	// needs over today's layout, in percentage points.
	MinGainPP float64 `json:"min_gain_pp"`
	// Cost is the cost model the paybacks are reckoned with.
	Cost CostModel `json:"cost"`

	Health     Health      `json:"health"`
	Columns    []Column    `json:"columns"`
	Candidates []Candidate `json:"candidates"`
	// Recommendation is the candidate recommended, or why none is.
	Recommendation Recommendation `json:"recommendation"`
	// Plans are the table's pending plans (proposed, approved, running),
	// newest first.
	Plans []Plan `json:"plans"`
	// Runs are the table's last runs, newest first.
	Runs []Run `json:"runs"`

	// FileSizes is the data files by size: today against the
	// recommendation (or the best candidate) projected.
	FileSizes Histogram `json:"file_sizes"`
	// FilesRead is the queries by files each reads: today against the
	// recommendation (or the best candidate).
	FilesRead Histogram `json:"files_read"`
	// HealthHistory is the table's health before and after each recorded
	// run, oldest first.
	HealthHistory []HealthPoint `json:"health_history"`
	// Notes say what the report could not show and why (no queries
	// collected, for one).
	Notes []string `json:"notes"`
}

// CostModel is what a report's paybacks count (control.CostBasis): a
// query pays the bytes it reads plus FileOpenBytes for each data file it
// opens; a rewrite pays the bytes it reads and writes, and its CPU at
// RewriteBytesPerVCPUSecond. Prices are 0 when the policy sets none.
type CostModel struct {
	FileOpenBytes             int64   `json:"file_open_bytes"`
	USDPerTBScanned           float64 `json:"usd_per_tb_scanned"`
	USDPerVCPUHour            float64 `json:"usd_per_vcpu_hour"`
	RewriteBytesPerVCPUSecond int64   `json:"rewrite_bytes_per_vcpu_second"`
}

// Health is the table's health today.
type Health struct {
	Status               string   `json:"status"`
	Reasons              []string `json:"reasons"`
	DataFiles            int      `json:"data_files"`
	SmallFiles           int      `json:"small_files"`
	SmallFileRatio       float64  `json:"small_file_ratio"`
	AvgFileSizeBytes     int64    `json:"avg_file_size_bytes"`
	Snapshots            int      `json:"snapshots"`
	Manifests            int      `json:"manifests"`
	DeleteFiles          int      `json:"delete_files"`
	Partitions           int      `json:"partitions"`
	LastCompactionAgeSec int64    `json:"last_compaction_age_seconds"`
}

// Column is one ranked predicate column.
type Column struct {
	Column string  `json:"column"`
	Score  float64 `json:"score"`
	// Share is the column's share of the workload's weight, 0 to 1.
	Share float64 `json:"share"`
	// Queries is how many queries filter on it.
	Queries int `json:"queries"`
	// OpMix is the share of its predicates by operator, 0 to 1.
	OpMix  map[string]float64 `json:"op_mix"`
	Reason string             `json:"reason"`
}

// Candidate is one candidate layout's projection and its cost/benefit.
type Candidate struct {
	// Layout is the candidate layout; current is the table as it is, the
	// baseline.
	Layout layout.Layout `json:"layout"`
	Why    string        `json:"why"`
	// SkippedPct and BytesReadPct are the workload's weighted mean files
	// skipped and bytes read, in percent; ErrorPP bounds SkippedPct's
	// sampling error in percentage points.
	SkippedPct   float64 `json:"skipped_pct"`
	BytesReadPct float64 `json:"bytes_read_pct"`
	ErrorPP      float64 `json:"error_pp"`
	// BoundRatio is the files a query reads ÷ the fewest any layout with
	// FilesAfter files could make it read (simulator.Projection.BoundRatio):
	// 1 is the best possible; 0 when the workload matched no rows.
	BoundRatio float64 `json:"bound_ratio"`
	// BoxRatio is the files a query reads ÷ what the best grid of FilesAfter
	// files reads for the whole workload (simulator.Projection.BoxRatio):
	// near 1 no layout does much better; 0 when not computed.
	BoxRatio   float64 `json:"box_ratio"`
	FilesAfter int     `json:"files_after"`
	// RewriteBytes is what the rewrite reads once.
	RewriteBytes int64 `json:"rewrite_bytes"`
	// RewriteIOBytes is what the rewrite reads and writes once, and
	// RewriteVCPUHours its CPU estimated from them.
	RewriteIOBytes   int64   `json:"rewrite_io_bytes"`
	RewriteVCPUHours float64 `json:"rewrite_vcpu_hours"`
	// GainPP is SkippedPct less current's, in percentage points.
	GainPP float64 `json:"gain_pp"`
	// MeanFilesRead is the data files a query opens, on the workload's
	// weighted mean; FilesSavedPerQuery is current's less this one's.
	MeanFilesRead      float64 `json:"mean_files_read"`
	FilesSavedPerQuery float64 `json:"files_saved_per_query"`
	// SavedBytesPerDay is what the layout saves a day at the recorded
	// query rate, in bytes of scan: ((current's BytesReadPct −
	// BytesReadPct) / 100 × DataBytes + FilesSavedPerQuery ×
	// Cost.FileOpenBytes) × QueriesPerDay.
	SavedBytesPerDay float64 `json:"saved_bytes_per_day"`
	// PaybackDays is RewriteIOBytes / SavedBytesPerDay in days (in money,
	// RewriteUSD / SavedUSDPerDay, when scans are priced); null when the
	// layout saves nothing (it never pays back) and for current.
	PaybackDays *float64 `json:"payback_days"`
	// SavedUSDPerDay and RewriteUSD are the same in money; null unless
	// the policy prices scans (cost.usd_per_tb_scanned).
	SavedUSDPerDay *float64 `json:"saved_usd_per_day"`
	RewriteUSD     *float64 `json:"rewrite_usd"`
	// Recommended marks the recommended candidate.
	Recommended bool `json:"recommended"`
	// Verdict says why the candidate is or is not recommended.
	Verdict string `json:"verdict"`
	// TreeExplanation explains a tree candidate's learned tree
	// (simulator.Projection.TreeExplanation); left out for other layouts.
	TreeExplanation *layout.TreeExplanation `json:"tree_explanation,omitempty"`
	// RecordedTree is the tree the table records, projected beside a tree
	// candidate's re-learned one (simulator.Projection.RecordedTree): the
	// old and the new; left out when the table records no tree.
	RecordedTree *simulator.RecordedProjection `json:"recorded_tree,omitempty"`
}

// Recommendation is what the report recommends for the table.
type Recommendation struct {
	// Layout is the recommended layout; nil (left out of the JSON) when
	// none is.
	Layout *layout.Layout `json:"layout,omitempty"`
	// Why says why it is recommended, or why nothing is.
	Why string `json:"why"`
	// PlanID is a pending plan for the recommended layout, if one is
	// stored; "" otherwise.
	PlanID string `json:"plan_id"`
	// Next is the command to run next.
	Next string `json:"next"`
}

// Plan is a stored pending plan.
type Plan struct {
	ID                string        `json:"id"`
	Layout            layout.Layout `json:"layout"`
	State             string        `json:"state"`
	SkippedPct        float64       `json:"skipped_pct"`
	CurrentSkippedPct *float64      `json:"current_skipped_pct"`
	RewriteBytes      int64         `json:"rewrite_bytes"`
	// TreeExplanation explains a tree plan's tree; left out for other
	// layouts.
	TreeExplanation *layout.TreeExplanation `json:"tree_explanation,omitempty"`
	CreatedBy       string                  `json:"created_by"`
	CreatedAt       time.Time               `json:"created_at"`
}

// Run is one recorded run with its steps' before/after health.
type Run struct {
	ID        string    `json:"id"`
	PlanID    string    `json:"plan_id"`
	Status    string    `json:"status"`
	Error     string    `json:"error"`
	StartedAt time.Time `json:"started_at"`
	// EndedAt is zero while the run is going.
	EndedAt time.Time `json:"ended_at"`
	Steps   []Step    `json:"steps"`
	// Projection is, for a run of a layout plan, the plan's projection
	// beside what the rewritten table measured; null otherwise.
	Projection *ProjectionCheck `json:"projection_check"`
}

// ProjectionCheck is a layout rewrite's projection beside what its
// queries skip on the rewritten table (control.LayoutCheck): floe keeping
// its word, run by run.
type ProjectionCheck struct {
	Layout              layout.Layout `json:"layout"`
	ProjectedSkippedPct float64       `json:"projected_skipped_pct"`
	ErrorPP             float64       `json:"error_pp"`
	MeasuredSkippedPct  float64       `json:"measured_skipped_pct"`
	DeltaPP             float64       `json:"delta_pp"`
	WithinError         bool          `json:"within_error"`
	// Summary says it in one line, or why it could not be measured.
	Summary string `json:"summary"`
}

// Step is one step of a run.
type Step struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	// Before and After are null for a step that did not get that far.
	Before *StepHealth `json:"before"`
	After  *StepHealth `json:"after"`
}

// StepHealth is a table's health around a step: the metrics the report
// compares before and after.
type StepHealth struct {
	Status           string  `json:"status"`
	DataFiles        int     `json:"data_files"`
	SmallFileRatio   float64 `json:"small_file_ratio"`
	AvgFileSizeBytes int64   `json:"avg_file_size_bytes"`
	Snapshots        int     `json:"snapshots"`
	Manifests        int     `json:"manifests"`
}

// HealthPoint is the table's health at one moment of a recorded run.
type HealthPoint struct {
	At    time.Time `json:"at"`
	RunID string    `json:"run_id"`
	// When is "before" (the run's first step's before) or "after" (its
	// last step's after).
	When string `json:"when"`
	StepHealth
}

// Histogram compares two distributions over the same buckets.
type Histogram struct {
	// Unit names what a bucket's bounds count ("bytes", "files").
	Unit string `json:"unit"`
	// Now and Then name the two series ("today", "sort(a)").
	Now  string `json:"now"`
	Then string `json:"then"`
	// Note says how the second series was made.
	Note    string   `json:"note"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is [Lo, Hi) of a histogram with each series' count.
type Bucket struct {
	Lo    int64  `json:"lo"`
	Hi    int64  `json:"hi"`
	Label string `json:"label"`
	Now   int    `json:"now"`
	Then  int    `json:"then"`
}

// Empty says the histogram has nothing to draw.
func (h Histogram) Empty() bool {
	for _, b := range h.Buckets {
		if b.Now > 0 || b.Then > 0 {
			return false
		}
	}
	return true
}

// JSON writes r as indented JSON with stable keys, every nil list as [].
func JSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r.normalized())
}

// normalized returns r with every nil list and map empty, so JSON never
// holds null for a list.
func (r Report) normalized() Report {
	r.Ranking = orEmpty(r.Ranking)
	if r.Queue != nil {
		q := *r.Queue
		q.Budgets, q.Deferred = orEmpty(q.Budgets), orEmpty(q.Deferred)
		r.Queue = &q
	}
	r.Tables = orEmpty(slices.Clone(r.Tables))
	for i := range r.Tables {
		t := &r.Tables[i]
		t.Health.Reasons = orEmpty(t.Health.Reasons)
		t.Columns = orEmpty(t.Columns)
		for j := range t.Columns {
			if t.Columns[j].OpMix == nil {
				t.Columns[j].OpMix = map[string]float64{}
			}
		}
		t.Candidates = orEmpty(slices.Clone(t.Candidates))
		for j, c := range t.Candidates {
			if e := c.TreeExplanation; e != nil && e.Cuts == nil {
				e2 := *e
				e2.Cuts = []layout.TreeCutExplanation{}
				t.Candidates[j].TreeExplanation = &e2
			}
			if r := c.RecordedTree; r != nil && r.TreeExplanation != nil && r.TreeExplanation.Cuts == nil {
				r2, e2 := *r, *r.TreeExplanation
				e2.Cuts = []layout.TreeCutExplanation{}
				r2.TreeExplanation = &e2
				t.Candidates[j].RecordedTree = &r2
			}
		}
		t.Plans = orEmpty(t.Plans)
		t.Runs = orEmpty(t.Runs)
		for j := range t.Runs {
			t.Runs[j].Steps = orEmpty(t.Runs[j].Steps)
		}
		t.FileSizes.Buckets = orEmpty(t.FileSizes.Buckets)
		t.FilesRead.Buckets = orEmpty(t.FilesRead.Buckets)
		t.HealthHistory = orEmpty(t.HealthHistory)
		t.Notes = orEmpty(t.Notes)
	}
	return r
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
