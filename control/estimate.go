package control

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// Compactable is what a compaction of a table would rewrite now, by its
// planner ([rewriter.PlanCompaction], from metadata alone), in the layout
// the policy keeps the table in without a plan ([keptLayout]): for
// bin-pack the partitions with enough small files
// (rewriter.CompactOptions.MinInputFiles, 5), an oversized file or a
// delete file; for a sort, curve or tree also those with files not in it;
// within max_bytes_per_run.
type Compactable struct {
	// Layout is the layout planned in; empty for bin-pack.
	Layout string `json:"layout,omitempty"`
	// Partitions counts the groups the plan rewrites.
	Partitions int `json:"partitions"`
	// Files and Deletes are the data files and the deletes they read;
	// Bytes the data bytes.
	Files   int   `json:"files"`
	Deletes int   `json:"deletes"`
	Bytes   int64 `json:"bytes"`
	// FilesAfter is the data files they become: each group's bytes over
	// the target file size, rounded up.
	FilesAfter int `json:"files_after"`
}

// Merged is how many files fewer the table has after the compaction: data
// files merged and deletes applied.
func (c Compactable) Merged() int { return max(c.Files+c.Deletes-c.FilesAfter, 0) }

// CompactableNow is what a compaction by policy p would rewrite in the
// table in state, in the layout the policy keeps it in (bin-pack for
// layout: none; for auto, or a fixed layout, the one the table declares
// already, [keptLayout]): nil when the table has no metadata or the
// planner refuses it (the run then says why).
func CompactableNow(state *lake.State, p policy.Policy) *Compactable {
	if state == nil || state.Metadata == nil {
		return nil
	}
	o := CompactDefaults(p, rewriter.CompactOptions{})
	if p.Layout != policy.LayoutNone && p.Layout != "" && p.Enabled.Compact {
		if l, tree, err := keptLayout(state); err == nil && l.Strategy != layout.StrategyBinpack && keeps(p, l) {
			o.Layout, o.Tree = l, tree
		}
	}
	plan, err := rewriter.PlanCompaction(state, o)
	if err != nil {
		return nil
	}
	c := &Compactable{Partitions: len(plan.Groups)}
	if o.Layout.Strategy != layout.StrategyBinpack && o.Layout.Strategy != "" {
		c.Layout = o.Layout.String()
	}
	target := max(plan.TargetFileSizeBytes, 1)
	for _, g := range plan.Groups {
		c.Files += g.Files
		c.Deletes += g.Deletes
		c.Bytes += g.Bytes
		c.FilesAfter += int((g.Bytes + target - 1) / target)
	}
	return c
}

// Estimate is what the scheduler ranks and budgets a due table by
// ([Service.Estimate]): the steps due, what the rewriting ones (compact,
// deletes: the steps a budget counts) would cost, and what they would
// gain. Expire, orphans and manifests cost no budget.
type Estimate struct {
	Table string `json:"table"`
	// Steps are the steps the table's triggers call for (run or not).
	Steps []StepDecision `json:"-"`
	// RewriteBytes are the bytes the due rewriting steps would read
	// (within max_bytes_per_run); RewriteVCPUHours their CPU, reckoned
	// from the bytes read and written at [RewriteBytesPerVCPUSecond].
	RewriteBytes     int64   `json:"rewrite_bytes"`
	RewriteVCPUHours float64 `json:"rewrite_vcpu_hours"`
	// FilesMerged is how many files fewer the table would have: data
	// files merged, delete files applied or merged.
	FilesMerged int `json:"files_merged"`
	// QueriesPerDay is the rate of the collected queries that read the
	// table ([QueryWindowDays]).
	QueriesPerDay float64 `json:"queries_per_day"`
	// SavedBytesPerDay is what the queries would save a day, in bytes of
	// scan: every file fewer is one the table's queries open less, at the
	// cost model's file cost (cost.file_open_bytes).
	SavedBytesPerDay float64 `json:"saved_bytes_per_day"`
	// BacklogAge is how long the table's compaction backlog has waited
	// (lake.Metrics.BacklogAgeSec); MaxWait the longest it may wait before
	// the table runs ahead of the ranking: max_deferral, or the freshness
	// SLA when shorter.
	BacklogAge time.Duration `json:"backlog_age_ns"`
	MaxWait    time.Duration `json:"max_wait_ns"`
}

// Budgeted reports whether a due step counts against a budget.
func (e Estimate) Budgeted() bool { return e.RewriteBytes > 0 || e.RewriteVCPUHours > 0 }

// GainPerCost is the bytes of scan saved per day for each byte the rewrite
// reads and writes: the figure the ranking orders by. 0 when nothing is
// saved; +Inf for a table whose due steps cost no budget.
func (e Estimate) GainPerCost() float64 {
	if !e.Budgeted() {
		return math.Inf(1)
	}
	return e.SavedBytesPerDay / float64(rewriteIOBytes(e.RewriteBytes))
}

// FilesPerByte is the files merged per byte read: the tie-break of tables
// that gain alike (as those nobody queries do).
func (e Estimate) FilesPerByte() float64 {
	if e.RewriteBytes <= 0 {
		return 0
	}
	return float64(e.FilesMerged) / float64(e.RewriteBytes)
}

// Overdue reports whether the table's backlog waited longer than it may.
func (e Estimate) Overdue() bool { return e.MaxWait > 0 && e.BacklogAge >= e.MaxWait }

// rewriteIOBytes is what a rewrite of read bytes reads and writes: as
// much written as read, as a bin-pack does.
func rewriteIOBytes(read int64) int64 { return 2 * read }

// vcpuHours is the CPU of a rewrite that reads and writes io bytes.
func vcpuHours(io int64) float64 { return float64(io) / RewriteBytesPerVCPUSecond / 3600 }

// Estimate is what table id's due steps would cost and gain, for the
// scheduler's ranking and budget. Like [Service.Triggers] it reads the
// table's manifests only when its metadata location moved, and its
// metadata file not at all when known is where the pass found it (the
// decision's MetadataLocation; "" when unknown).
//
// A compaction's cost is what its bin-pack planner would read
// ([CompactableNow]; the whole table when a delete ratio or clustering
// depth fired it, as a rewrite then may); a delete rewrite's the delete
// files and, with equality deletes, the data files of their partitions.
// The gain counts files: each file fewer is one every query of the table
// opens less, at the cost model's file cost, at the table's query rate.
// A layout's projected scan savings are left out: projecting costs seconds
// a table on a large workload, and a layout change waits for its plan's
// approval anyway (approved plans run first).
func (s *Service) Estimate(ctx context.Context, id lake.Ident, known string) (Estimate, error) {
	t, err := s.measured(ctx, id, HealthRequest{MetadataLocation: known})
	if err != nil {
		return Estimate{}, err
	}
	p := t.Policy.Policy
	e := Estimate{Table: id.String(), BacklogAge: time.Duration(t.Health.Metrics.BacklogAgeSec) * time.Second, MaxWait: p.MaxDeferral}
	if p.FreshnessSLA > 0 && (e.MaxWait <= 0 || p.FreshnessSLA < e.MaxWait) {
		e.MaxWait = p.FreshnessSLA
	}
	hist := s.history(t, ExpireDefaults(p, rewriter.ExpireOptions{}))
	e.Steps = Decide(t.Health, p, hist)
	m := t.Health.Metrics
	if d, ok := decisionOf(e.Steps, StepCompact); ok && d.Run {
		c := hist.Compactable
		if c == nil {
			c = &Compactable{}
		}
		read := c.Bytes
		if !strings.HasPrefix(d.Reason, "small-file ratio") {
			read = max(read, m.DataBytes)
			if p.MaxBytesPerRun > 0 {
				read = min(read, p.MaxBytesPerRun)
			}
		}
		e.RewriteBytes += read
		e.FilesMerged += c.Merged()
	}
	if d, ok := decisionOf(e.Steps, StepDeletes); ok && d.Run {
		read, merged := deleteRewriteCost(t.State)
		e.RewriteBytes += read
		e.FilesMerged += merged
	}
	e.RewriteVCPUHours = vcpuHours(rewriteIOBytes(e.RewriteBytes))
	if e.Budgeted() && s.store != nil {
		stats, err := s.store.TableStats(ctx, store.QueryFilter{Table: id.String()}, 0)
		if err != nil {
			return e, fmt.Errorf("estimate %s: %w", id, err)
		}
		queries := 0
		for _, st := range stats {
			queries += st.Queries
		}
		if queries > 0 {
			days, err := QueryWindowDays(ctx, s.store, id, 0, s.now())
			if err != nil {
				return e, fmt.Errorf("estimate %s: %w", id, err)
			}
			e.QueriesPerDay = float64(queries) / days
		}
		e.SavedBytesPerDay = float64(e.FilesMerged) * CostModelOf(p).fileOpenBytes() * e.QueriesPerDay
	}
	return e, nil
}

// deleteRewriteCost is what the delete maintenance of the table in state
// would read — its delete files, and the data files of the partitions
// with equality deletes, which it rewrites with them applied — and the
// delete files it would leave fewer (one position delete file per
// partition at most after a merge).
func deleteRewriteCost(state *lake.State) (read int64, merged int) {
	if state == nil {
		return 0, 0
	}
	eqParts := map[string]bool{}
	posParts := map[string]bool{}
	seen := map[string]bool{}
	for _, d := range state.DeleteFiles {
		switch d.DeleteKind {
		case lake.EqualityDeletes:
			eqParts[d.PartitionKey] = true
			merged++
		case lake.PositionDeletes:
			posParts[d.PartitionKey] = true
			merged++
		default:
			continue // deletion vectors are one per data file: nothing to merge
		}
		if !seen[d.Path] {
			seen[d.Path] = true
			read += d.SizeBytes
		}
	}
	merged -= len(posParts)
	for _, f := range state.DataFiles {
		if eqParts[f.PartitionKey] {
			read += f.SizeBytes
		}
	}
	return read, max(merged, 0)
}

// spend is what the step that reported r spent against a budget: the
// bytes it read to rewrite them (a compaction's input, a delete rewrite's
// compaction's; a distributed engine's rewritten_bytes_count), and its CPU
// in vCPU-milliseconds, reckoned from what it read and wrote at
// [RewriteBytesPerVCPUSecond] (no engine reports its CPU to floe). Plans,
// expiries, orphan removals and manifest rewrites spend nothing.
func (r StepReport) spend() (bytes, cpuMillis int64) {
	var in, out int64
	switch {
	case r.Compact != nil:
		in, out = r.Compact.BytesIn, r.Compact.BytesOut
	case r.Deletes != nil && r.Deletes.Compact != nil:
		in, out = r.Deletes.Compact.BytesIn, r.Deletes.Compact.BytesOut
	case r.Engine != nil && r.Engine.EngineReport != nil:
		in = r.Engine.Metrics["rewritten_bytes_count"]
		out = in
	}
	if in <= 0 {
		return 0, 0
	}
	return in, int64(math.Round(vcpuHours(in+max(out, 0)) * 3600 * 1000))
}

// keeps reports whether policy p compacts a table that declares l into l
// with no plan: layout: auto does (it keeps what the table declares), a
// fixed layout when it is l.
func keeps(p policy.Policy, l layout.Layout) bool {
	if p.Layout == policy.LayoutAuto {
		return true
	}
	fixed, err := layout.Parse(p.Layout)
	return err == nil && strings.EqualFold(fixed.String(), l.String())
}
