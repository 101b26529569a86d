package report

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/layout"
)

// The wording both Markdown and HTML print, so that the two say the same.

// FormatBytes prints a size in binary units (KiB, MiB…).
func FormatBytes(n int64) string { return config.FormatSize(n) }

func pct(v float64) string { return fmt.Sprintf("%.1f%%", v) }

// BoundText explains a candidate's read/bound figure, under the table of
// candidates.
const BoundText = "Read/bound: the files a query reads under the layout ÷ the fewest any layout with as many files could make it read " +
	"(each query alone, its matching rows packed into the fewest files); 1.00x is the best possible, reached only when one layout suits every query. " +
	"A workload that filters on several columns that do not narrow one another keeps every layout several times above it. " +
	"Read/box: the files a query reads ÷ what the best grid of as many files reads for the whole workload (the box model, docs/layouts.md); near 1.00x no layout does much better."

// RatioText is a read/bound or read/box ratio as the candidate tables print
// it: "-" when no query matched a row, so nothing bounds it, or the box model
// was not computed.
func RatioText(r float64) string {
	if r <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

// FormatPP prints a signed difference in percentage points.
func FormatPP(v float64) string { return fmt.Sprintf("%+.1f pp", v) }

// FormatDays prints a number of days, in minutes or hours below a day,
// to a tenth.
func FormatDays(d float64) string {
	unit := func(v float64, one, many string) string {
		t := strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
		if t == "1" {
			return "1 " + one
		}
		return t + " " + many
	}
	switch {
	case d < 1.0/24:
		return unit(math.Round(d*24*60), "minute", "minutes")
	case d < 1:
		return unit(d*24, "hour", "hours")
	}
	return unit(d, "day", "days")
}

// paybackText prints a payback time, "never" when nothing is saved.
func paybackText(c Candidate) string {
	switch {
	case c.Layout.Strategy == layout.StrategyCurrent:
		return "-"
	case c.PaybackDays == nil:
		return "never"
	}
	return FormatDays(*c.PaybackDays)
}

// savedText prints the scan bytes saved per day.
func savedText(c Candidate) string {
	if c.Layout.Strategy == layout.StrategyCurrent {
		return "-"
	}
	return FormatBytes(int64(math.Round(c.SavedBytesPerDay))) + "/day"
}

// opMixText prints the three most frequent operators, most frequent first.
func opMixText(m map[string]float64) string {
	ops := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(ops, func(a, b string) int {
		switch {
		case m[a] > m[b]:
			return -1
		case m[a] < m[b]:
			return 1
		}
		return 0
	})
	parts := make([]string, 0, 3)
	for _, op := range ops[:min(3, len(ops))] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", op, 100*m[op]))
	}
	return strings.Join(parts, ", ")
}

// current is the table's current-layout candidate, if projected.
func (t Table) current() (Candidate, bool) {
	for _, c := range t.Candidates {
		if c.Layout.Strategy == layout.StrategyCurrent {
			return c, true
		}
	}
	return Candidate{}, false
}

// recommended is the recommended candidate, if any.
func (t Table) recommended() (Candidate, bool) {
	for _, c := range t.Candidates {
		if c.Recommended {
			return c, true
		}
	}
	return Candidate{}, false
}

// CostLine is the cost/benefit line of candidate c of t: what the rewrite
// costs once against what its queries save a day at the recorded query
// rate, in bytes of scan (files opened counted at the cost model's file
// cost), in money when the policy prices scans, and the payback time.
func CostLine(t Table, c Candidate) string {
	cur, _ := t.current()
	saved := fmt.Sprintf("saves %s of scan a day (bytes read %s → %s of %s, files opened %.1f → %.1f a query at %s each, × %.1f queries/day over %s)",
		FormatBytes(int64(math.Round(c.SavedBytesPerDay))), pct(cur.BytesReadPct), pct(c.BytesReadPct), FormatBytes(t.DataBytes),
		cur.MeanFilesRead, c.MeanFilesRead, FormatBytes(t.Cost.FileOpenBytes), t.QueriesPerDay, FormatDays(t.WindowDays))
	if c.SavedUSDPerDay != nil && c.RewriteUSD != nil {
		saved += fmt.Sprintf(", $%.2f a day against $%.2f once", *c.SavedUSDPerDay, *c.RewriteUSD)
	}
	payback := "never pays back"
	if c.PaybackDays != nil {
		payback = "pays back in " + FormatDays(*c.PaybackDays)
	}
	cpu := "under 0.01 vCPU-hours"
	if c.RewriteVCPUHours >= 0.01 {
		cpu = fmt.Sprintf("about %.2f vCPU-hours", c.RewriteVCPUHours)
	}
	return fmt.Sprintf("rewrites %s once (reads and writes %s, %s); %s; %s (max_payback %s)",
		FormatBytes(c.RewriteBytes), FormatBytes(c.RewriteIOBytes), cpu, saved, payback, FormatDays(t.MaxPaybackDays))
}

// CostModelText is the paragraph that explains the cost model a report's
// paybacks are reckoned with.
func CostModelText(t Table) string {
	money := "No prices are set (cost.usd_per_tb_scanned, cost.usd_per_vcpu_hour), so paybacks are stated in bytes."
	if t.Cost.USDPerTBScanned > 0 {
		money = fmt.Sprintf("Scans are priced at $%.2f per TB and a vCPU-hour at $%.2f, so paybacks are stated in money: the rewrite's bytes priced as a scan plus its CPU, against the money its queries save.",
			t.Cost.USDPerTBScanned, t.Cost.USDPerVCPUHour)
	}
	return fmt.Sprintf("Cost model: a query costs the bytes it reads plus %s for every data file it opens (open, footer and planning: cost.file_open_bytes, by default the 4 MiB Iceberg and Spark count per file), so many small files cost more than their bytes. "+
		"A layout saves the difference from today's layout per query, times the table's %.1f queries a day (%d queries over %s, the telemetry collected, no longer than the report's window). "+
		"A rewrite costs the bytes it reads and writes once, and its CPU, estimated at %s a vCPU-second. Payback is the rewrite's cost divided by the saving a day. %s",
		FormatBytes(t.Cost.FileOpenBytes), t.QueriesPerDay, t.Queries, FormatDays(t.WindowDays), FormatBytes(t.Cost.RewriteBytesPerVCPUSecond), money)
}

// healthLine is the metrics line under a table's health.
func healthLine(h Health) string {
	last := "never compacted"
	if h.LastCompactionAgeSec >= 0 {
		last = "last compacted " + FormatDays(float64(h.LastCompactionAgeSec)/86400) + " ago"
	}
	return fmt.Sprintf("%d data files (%d small, %.0f%%), average %s; %d snapshots; %d manifests; %d delete files; %d partitions; %s",
		h.DataFiles, h.SmallFiles, 100*h.SmallFileRatio, FormatBytes(h.AvgFileSizeBytes), h.Snapshots, h.Manifests,
		h.DeleteFiles, h.Partitions, last)
}

// stepText is a step's before → after health in a few words.
func stepText(s Step) string {
	if s.Before == nil || s.After == nil {
		return s.Step + " " + s.Status
	}
	b, a := s.Before, s.After
	return fmt.Sprintf("%s %s: %d → %d files, small %.0f%% → %.0f%%, %d → %d snapshots, %s → %s",
		s.Step, s.Status, b.DataFiles, a.DataFiles, 100*b.SmallFileRatio, 100*a.SmallFileRatio, b.Snapshots, a.Snapshots, b.Status, a.Status)
}

// runText is a run's status (with its error) and each step's before →
// after health in a few words.
func runText(r Run) (status string, steps []string) {
	status = r.Status
	if r.Error != "" {
		status += ": " + r.Error
	}
	steps = make([]string, 0, len(r.Steps))
	for _, s := range r.Steps {
		steps = append(steps, stepText(s))
	}
	if c := r.Projection; c != nil {
		steps = append(steps, "projected vs measured: "+c.Summary)
	}
	return status, steps
}

// NewHistogram buckets two series of values (bytes or counts) into the same
// power-of-two buckets: [0, 1), [1, 2), [2, 4), [4, 8)…, from the smallest
// bucket either series reaches to the largest. Bytes are labelled in
// binary units.
func NewHistogram(unit, now, then string, nowValues, thenValues []int64) Histogram {
	h := Histogram{Unit: unit, Now: now, Then: then, Buckets: []Bucket{}}
	if len(nowValues) == 0 && len(thenValues) == 0 {
		return h
	}
	idx := func(v int64) int {
		if v <= 0 {
			return 0
		}
		return bits.Len64(uint64(v)) // v in [2^(i-1), 2^i)
	}
	lo, hi := math.MaxInt, 0
	for _, v := range slices.Concat(nowValues, thenValues) {
		lo, hi = min(lo, idx(v)), max(hi, idx(v))
	}
	for i := lo; i <= hi; i++ {
		b := Bucket{}
		if i > 0 {
			b.Lo, b.Hi = int64(1)<<(i-1), int64(1)<<i
		} else {
			b.Hi = 1
		}
		b.Label = bucketLabel(unit, b)
		h.Buckets = append(h.Buckets, b)
	}
	for _, v := range nowValues {
		h.Buckets[idx(v)-lo].Now++
	}
	for _, v := range thenValues {
		h.Buckets[idx(v)-lo].Then++
	}
	return h
}

func bucketLabel(unit string, b Bucket) string {
	if unit == "bytes" {
		return FormatBytes(b.Lo) + "–" + FormatBytes(b.Hi)
	}
	switch {
	case b.Hi-b.Lo <= 1:
		return fmt.Sprint(b.Lo)
	}
	return fmt.Sprintf("%d–%d", b.Lo, b.Hi-1)
}

// TotalsText is a lake-wide report's totals in one paragraph.
func TotalsText(t Totals) string {
	gain := "no table has a recommended layout"
	if t.Recommended > 0 {
		gain = fmt.Sprintf("%d %s a recommended layout, expected to save %s of scan a day in all", t.Recommended, plural(t.Recommended, "table has", "tables have"),
			FormatBytes(int64(math.Round(t.SavedBytesPerDay))))
	}
	return fmt.Sprintf("%d %s: %d data files, %s; small-file backlog %d files; %s; %d %s in the window, %d of them no-op (ran and changed nothing), %d deferred by a budget",
		t.Tables, plural(t.Tables, "table", "tables"), t.DataFiles, FormatBytes(t.DataBytes), t.SmallFiles, gain,
		t.Runs, plural(t.Runs, "run", "runs"), t.NoOpRuns, t.DeferredRuns)
}

// DetailText says which tables a lake-wide report details, or "" when it
// details them all.
func DetailText(t Totals) string {
	if t.Detailed >= t.Tables {
		return ""
	}
	return fmt.Sprintf("Full sections follow for the first %d of the %d tables (--top %d); the others have their ranking row only.", t.Detailed, t.Tables, t.Top)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// NoBudgetText is what the queue says when no budget bounds the lake.
const NoBudgetText = "No budget bounds the lake's maintenance (policies' budget.bytes and budget.cpu_hours): every due table runs, ranked by gain per cost."

// NoDeferralText is what the queue says when no budget deferred a table.
const NoDeferralText = "No table's rewrites were deferred by a budget in the window."

// budgetCells are a budget's row: scope, window, limit, spent, left and
// the rule that set it.
func budgetCells(b Budget) []string {
	var limit, spent, left []string
	if b.LimitBytes > 0 {
		limit = append(limit, FormatBytes(b.LimitBytes))
	}
	if b.LimitVCPUH > 0 {
		limit = append(limit, fmt.Sprintf("%.2f vCPU-h", b.LimitVCPUH))
	}
	spent = append(spent, FormatBytes(b.SpentBytes), fmt.Sprintf("%.2f vCPU-h", b.SpentVCPUH))
	if b.LeftBytes != nil {
		left = append(left, FormatBytes(*b.LeftBytes))
	}
	if b.LeftVCPUH != nil {
		left = append(left, fmt.Sprintf("%.2f vCPU-h", *b.LeftVCPUH))
	}
	return []string{b.Scope, FormatDays(float64(b.WindowSeconds) / 86400), strings.Join(limit, ", "), strings.Join(spent, ", "),
		strings.Join(left, ", "), b.Where}
}

// budgetHead are the budget table's columns.
var budgetHead = []string{"Budget", "Window", "Limit", "Spent", "Left", "Set at"}

// deferralHead are the deferred tables' columns.
var deferralHead = []string{"Table", "Runs deferred", "Passes without a run", "Last", "Why"}

func deferralCells(d Deferral) []string {
	last := d.At.UTC().Format(time.RFC3339)
	if d.RunID != "" {
		last += " (" + d.RunID + ")"
	}
	return []string{d.Table, fmt.Sprint(d.Runs), fmt.Sprint(d.Passes), last, d.Reason}
}

// rankCells are a ranking row's cells after its position and table: the
// recommendation, gain, scan saved, payback, queries, and runs with the
// no-op ones.
func rankCells(k Rank) []string {
	rec, gain, saved, payback := "none", "-", "-", "-"
	if k.Recommended != nil {
		rec, gain = k.Recommended.String(), FormatPP(k.GainPP)
		saved = savedText(Candidate{SavedBytesPerDay: k.SavedBytesPerDay})
		payback = paybackText(Candidate{PaybackDays: k.PaybackDays})
	}
	return []string{rec, gain, saved, payback, fmt.Sprint(k.Queries), fmt.Sprintf("%d (%d no-op)", k.Runs, k.NoOpRuns)}
}

// rankHead are the ranking's columns.
var rankHead = []string{"#", "Table", "Health", "Recommended", "Gain", "Scan saved", "Payback", "Queries", "Runs"}
