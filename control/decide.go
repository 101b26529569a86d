package control

import (
	"fmt"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// StepDecision says whether one maintenance step runs, and why.
type StepDecision struct {
	Step string `json:"step"`
	Run  bool   `json:"run"`
	// Status is what a step that does not run is recorded as: not_due
	// (its triggers did not fire) or skipped (the policy turns it off, or
	// it waits for approval).
	Status RunStatus `json:"status,omitempty"`
	Reason string    `json:"reason"`
}

// Decide says which steps the table's policy and health call for, in run
// order (expire, orphans, compact, deletes, manifests). A step runs when the
// policy enables it, needs no approval for it, and its trigger fired:
//
//   - expire: snapshots ≥ triggers.snapshots, or the oldest snapshot is
//     older than snapshots.older_than (5d when unset);
//   - orphans: every time (orphan files are found only by listing);
//   - compact: small_file_ratio ≥ triggers.small_file_ratio,
//     delete_ratio ≥ triggers.delete_ratio, or the mean clustering depth on
//     a sort column ≥ triggers.clustering_depth;
//   - deletes: position and equality delete files ≥
//     triggers.delete_files (deletion vectors are one per data file at
//     most, as few as they get, and not counted); what the step then does
//     per partition is its planner's, by triggers.position_delete_files
//     and triggers.equality_delete_ratio ([rewriter.PlanDeleteRewrite]);
//   - manifests: manifests per 1,000 data files ≥
//     triggers.manifests_per_1k_files (with at least two manifests).
//
// No run that does nothing: a step whose trigger fired but which would
// change nothing is not due, with the reason, so that a trigger no step
// can clear does not make a no-op run — and list the table's location for
// orphans — at every poll.
//
//   - expire: when hist.Expirable says the expiry would remove no snapshot
//     and no ref now (every snapshot younger than the expiry age, among
//     the newest snapshots.retain_last, or held by a branch or tag), expire
//     is not due until one can expire. The expiry's own selection decides
//     ([rewriter.SelectExpired]), so time passing lifts it as it should.
//   - compact, deletes and manifests: a trigger that floe's last run of
//     the step could not satisfy does not fire again for the same files:
//     when hist says the step's newest run changed nothing and the table is
//     still at the snapshot that run left it at, the step is not due until
//     the table changes (any commit moves its snapshot). Partitions with
//     too few small files to bin-pack, delete files spread one per
//     partition with none dangling, a delete manifest beside one data
//     manifest (a manifest rewrite merges data manifests only) fire a
//     trigger and leave the step nothing to do.
//   - compact, below its floor: when only the small-file ratio fired, the
//     policy's layout is none or auto (a fixed layout rewrites partitions
//     a bin-pack leaves), and hist.Compactable says the bin-pack planner
//     would rewrite no partition (none has min input files — 5 — small
//     files, an oversized file or a delete file), compact is not due: it
//     would merge no file. Commits that add small files lift it.
//
// The layout a compaction writes, and a layout change waiting for
// approval, are decided apart from this ([Service.Decide]).
func Decide(h lake.Health, p policy.Policy, hist History) []StepDecision {
	m := h.Metrics
	t := p.Triggers
	skip := func(step, reason string) StepDecision {
		return StepDecision{Step: step, Status: StatusSkipped, Reason: reason}
	}
	due := func(step string, run bool, yes, no string) StepDecision {
		if run {
			return StepDecision{Step: step, Run: true, Reason: yes}
		}
		return StepDecision{Step: step, Status: StatusNotDue, Reason: no}
	}
	gate := func(step string, enabled bool, approval string, d func() StepDecision) StepDecision {
		key := map[string]string{StepExpire: "expire", StepOrphans: "orphans", StepCompact: "compact", StepDeletes: "deletes", StepManifests: "manifests"}[step]
		switch {
		case !enabled:
			return skip(step, fmt.Sprintf("turned off by the policy (enabled.%s: false)", key))
		case approval == policy.ApprovalRequired:
			akey := key
			if step == StepCompact {
				akey = "binpack"
			}
			return skip(step, fmt.Sprintf("needs approval (approval.%s: required): run it by hand with 'floe %s'", akey, map[string]string{
				StepExpire: "expire", StepOrphans: "orphans", StepCompact: "compact", StepDeletes: "rewrite-deletes", StepManifests: "rewrite-manifests"}[step]))
		}
		return d()
	}
	oldest := float64(m.OldestSnapshotAgeSec) / 3600
	age := 5 * 24.0
	if p.Snapshots.OlderThan != nil {
		age = p.Snapshots.OlderThan.Hours()
	}
	var depth float64
	var depthCol string
	for _, c := range m.Clustering {
		if c.AverageDepth > depth {
			depth, depthCol = c.AverageDepth, c.Column
		}
	}
	per1k := 0.0
	if m.DataFiles > 0 {
		per1k = float64(m.Manifests) * 1000 / float64(m.DataFiles)
	}
	return []StepDecision{
		gate(StepExpire, p.Enabled.Expire, p.Approval.Expire, func() StepDecision {
			var fired string
			switch {
			case t.Snapshots > 0 && m.Snapshots >= t.Snapshots:
				fired = fmt.Sprintf("%d snapshots ≥ triggers.snapshots %d", m.Snapshots, t.Snapshots)
			case m.Snapshots > 1 && oldest > age:
				fired = fmt.Sprintf("oldest snapshot %.0f h old, older than the %.0f h expiry age", oldest, age)
			default:
				return due(StepExpire, false, "", fmt.Sprintf("%d snapshots, the oldest %.0f h old: nothing older than the %.0f h expiry age", m.Snapshots, oldest, age))
			}
			if x := hist.Expirable; x != nil && x.Snapshots == 0 && x.Refs == 0 {
				return due(StepExpire, false, "", fmt.Sprintf("%s, but no snapshot can expire now: each is younger than the expiry age, among the newest kept (snapshots.retain_last, history.expire.min-snapshots-to-keep) or held by a branch or tag; not due until one can", fired))
			}
			return due(StepExpire, true, fired, "")
		}),
		gate(StepOrphans, p.Enabled.Orphans, p.Approval.Orphans, func() StepDecision {
			return due(StepOrphans, true, "orphan files are found only by listing the table's location", "")
		}),
		gate(StepCompact, p.Enabled.Compact, p.Approval.Binpack, func() StepDecision {
			var fired string
			smallOnly := false
			switch {
			case t.SmallFileRatio > 0 && m.DataFiles > 1 && m.SmallFileRatio >= t.SmallFileRatio:
				fired = fmt.Sprintf("small-file ratio %.2f ≥ triggers.small_file_ratio %.2f", m.SmallFileRatio, t.SmallFileRatio)
				smallOnly = !(t.DeleteRatio > 0 && m.DeleteFiles > 0 && m.DeleteToDataRatio >= t.DeleteRatio) && !(t.ClusteringDepth > 0 && depth >= t.ClusteringDepth)
			case t.DeleteRatio > 0 && m.DeleteFiles > 0 && m.DeleteToDataRatio >= t.DeleteRatio:
				fired = fmt.Sprintf("delete ratio %.2f ≥ triggers.delete_ratio %.2f", m.DeleteToDataRatio, t.DeleteRatio)
			case t.ClusteringDepth > 0 && depth >= t.ClusteringDepth:
				fired = fmt.Sprintf("clustering depth %.1f on %s ≥ triggers.clustering_depth %.1f", depth, depthCol, t.ClusteringDepth)
			default:
				return due(StepCompact, false, "", fmt.Sprintf("small-file ratio %.2f, delete ratio %.2f, clustering depth %.1f: below every trigger", m.SmallFileRatio, m.DeleteToDataRatio, depth))
			}
			if u := hist.Unchanged; u != nil && h.SnapshotID != 0 && u.SnapshotID == h.SnapshotID {
				return due(StepCompact, false, "", fmt.Sprintf("%s, but compaction run %s changed nothing at this snapshot (%d): not again until the table changes", fired, u.RunID, u.SnapshotID))
			}
			if c := hist.Compactable; c != nil && c.Partitions == 0 && smallOnly && (p.Layout == policy.LayoutNone || p.Layout == policy.LayoutAuto) {
				if c.Layout != "" {
					return due(StepCompact, false, "", fmt.Sprintf("%s, but a compaction into %s, the layout the table declares, would rewrite no file: each partition's files are in it already, with nothing to merge, split or apply; not due until one has", fired, c.Layout))
				}
				return due(StepCompact, false, "", fmt.Sprintf("%s, but a compaction would merge no file: no partition has %d small files, an oversized file or a delete file to rewrite; not due until one has", fired, rewriter.DefaultMinInputFiles))
			}
			return due(StepCompact, true, fired, "")
		}),
		gate(StepDeletes, p.Enabled.Deletes, p.Approval.Deletes, func() StepDecision {
			n := m.PositionDeleteFiles + m.EqualityDeleteFiles
			counted := fmt.Sprintf("%d position and %d equality delete files", m.PositionDeleteFiles, m.EqualityDeleteFiles)
			if t.DeleteFiles <= 0 || n < t.DeleteFiles {
				return due(StepDeletes, false, "", fmt.Sprintf("%s: below triggers.delete_files %d", counted, t.DeleteFiles))
			}
			fired := fmt.Sprintf("%s ≥ triggers.delete_files %d", counted, t.DeleteFiles)
			if u := hist.UnchangedDeletes; u != nil && h.SnapshotID != 0 && u.SnapshotID == h.SnapshotID {
				return due(StepDeletes, false, "", fmt.Sprintf("%s, but delete maintenance run %s changed nothing at this snapshot (%d): not again until the table changes", fired, u.RunID, u.SnapshotID))
			}
			return due(StepDeletes, true, fired, "")
		}),
		gate(StepManifests, p.Enabled.Manifests, p.Approval.Manifests, func() StepDecision {
			if !(t.ManifestsPer1kFiles > 0 && m.Manifests > 1 && per1k >= t.ManifestsPer1kFiles) {
				return due(StepManifests, false, "", fmt.Sprintf("%d manifests for %d data files: below triggers.manifests_per_1k_files %.0f", m.Manifests, m.DataFiles, t.ManifestsPer1kFiles))
			}
			fired := fmt.Sprintf("%.0f manifests per 1,000 data files ≥ triggers.manifests_per_1k_files %.0f", per1k, t.ManifestsPer1kFiles)
			if u := hist.UnchangedManifests; u != nil && h.SnapshotID != 0 && u.SnapshotID == h.SnapshotID {
				return due(StepManifests, false, "", fmt.Sprintf("%s, but manifest rewrite run %s changed nothing at this snapshot (%d): not again until the table changes", fired, u.RunID, u.SnapshotID))
			}
			return due(StepManifests, true, fired, "")
		}),
	}
}

// History is what [Decide] knows of a table besides its health: what
// floe's run records say of it that its metadata cannot ([HistoryOf] reads
// it), and what its snapshot expiry would remove now (Expirable). The zero
// value knows nothing.
type History struct {
	// Unchanged is the newest compaction floe ran on the table, when it
	// changed nothing; nil when that compaction changed the table, or
	// there was none.
	Unchanged *NoOpCompaction `json:"unchanged,omitempty"`
	// UnchangedDeletes is the newest delete-maintenance step floe ran on
	// the table, when it changed nothing; nil otherwise.
	UnchangedDeletes *NoOpCompaction `json:"unchanged_deletes,omitempty"`
	// UnchangedManifests is the newest manifest rewrite floe ran on the
	// table, when it changed nothing; nil otherwise.
	UnchangedManifests *NoOpCompaction `json:"unchanged_manifests,omitempty"`
	// Expirable is what the snapshot expiry would remove now, by the
	// options the run would use ([ExpirableNow]); nil when unknown (the
	// caller did not measure it, or the expiry refuses the table, which
	// the run then reports).
	Expirable *Expirable `json:"expirable,omitempty"`
	// Compactable is what a bin-pack compaction would rewrite now
	// ([CompactableNow]); nil when unknown (the caller did not measure
	// it).
	Compactable *Compactable `json:"compactable,omitempty"`
}

// Expirable counts what the snapshot expiry would remove from a table now
// ([rewriter.SelectExpired]).
type Expirable struct {
	Snapshots int `json:"snapshots"`
	Refs      int `json:"refs"`
}

// ExpirableNow is what an expiry with opts would remove from the table in
// state at now: the snapshots and refs [rewriter.SelectExpired] selects
// from its metadata alone. It is nil when the table has no metadata or
// the expiry refuses it (gc.enabled=false): the expire step's trigger then
// decides alone, and a run says why the expiry cannot run.
func ExpirableNow(state *lake.State, opts rewriter.ExpireOptions, now time.Time) *Expirable {
	if state == nil || state.Metadata == nil {
		return nil
	}
	snaps, refs, err := rewriter.SelectExpired(state.Metadata, opts, now)
	if err != nil {
		return nil
	}
	return &Expirable{Snapshots: len(snaps), Refs: len(refs)}
}

// NoOpCompaction is a compaction (or delete-maintenance, or manifest
// rewrite) step that ran to the end and left the table's files as it found
// them (nothing to rewrite, or nothing committed).
type NoOpCompaction struct {
	RunID string `json:"run_id"`
	// SnapshotID is the snapshot the table was at when that run ended: the
	// files the compaction could not improve, as the run's later steps
	// left the metadata (a manifest rewrite commits a snapshot of the same
	// files). The table has changed since when its snapshot is another.
	SnapshotID int64     `json:"snapshot_id,string"`
	At         time.Time `json:"at"`
}

// HistoryOf reads a table's [History] from its runs, newest first (as
// [ListRuns] returns them). The newest compaction step that ran to the
// end (done: a failed, skipped or not-due one says nothing of what a
// rewrite can do) changed nothing when the table's snapshot before it is
// the one after it; so for the newest delete-maintenance step and the
// newest manifest rewrite. Records without snapshot ids (written before
// floe recorded them) count as changes.
func HistoryOf(runs []Run) History {
	return History{Unchanged: noOpStep(runs, StepCompact), UnchangedDeletes: noOpStep(runs, StepDeletes),
		UnchangedManifests: noOpStep(runs, StepManifests)}
}

// noOpStep is the newest done step called name among runs, when it
// changed nothing; nil otherwise.
func noOpStep(runs []Run, name string) *NoOpCompaction {
	for _, r := range runs {
		if r.DryRun {
			continue
		}
		for i, s := range r.Steps {
			if s.Name != name || s.Status != StatusDone {
				continue
			}
			if s.Before == nil || s.After == nil || s.Before.SnapshotID == 0 || s.Before.SnapshotID != s.After.SnapshotID {
				return nil
			}
			end := s.After.SnapshotID
			for _, later := range r.Steps[i+1:] {
				if later.After != nil && later.After.SnapshotID != 0 {
					end = later.After.SnapshotID
				}
			}
			return &NoOpCompaction{RunID: r.ID, SnapshotID: end, At: s.EndedAt}
		}
	}
	return nil
}

func decisionOf(ds []StepDecision, step string) (StepDecision, bool) {
	for _, d := range ds {
		if d.Step == step {
			return d, true
		}
	}
	return StepDecision{}, false
}

// Disabled are the decisions against the steps the policy turns off
// (enabled.<step>: false), for a run whose steps and layout the caller
// chose (optimize --layout, --plan): the policy's other triggers do not
// apply there, its switches do.
func Disabled(p policy.Policy) []StepDecision {
	var out []StepDecision
	for _, s := range []struct {
		step, key string
		on        bool
	}{{StepExpire, "expire", p.Enabled.Expire}, {StepOrphans, "orphans", p.Enabled.Orphans},
		{StepCompact, "compact", p.Enabled.Compact}, {StepDeletes, "deletes", p.Enabled.Deletes},
		{StepManifests, "manifests", p.Enabled.Manifests}} {
		if !s.on {
			out = append(out, StepDecision{Step: s.step, Status: StatusSkipped, Reason: fmt.Sprintf("turned off by the policy (enabled.%s: false)", s.key)})
		}
	}
	return out
}

// DeferredPrefix starts the reason of a rewriting step (compact, deletes) a
// maintenance budget held back: the scheduler records it as skipped with
// "deferred: " and the budget that was short.
const DeferredPrefix = "deferred: "

// NoOpRun reports whether run r ran to the end (done) and none of its steps
// changed the table: every step was skipped or not due, or ran and left
// the table's snapshot as it found it, expired no snapshot and deleted no
// file. These are the runs the lake report counts: work the scheduler
// started that bought nothing. A step recorded without snapshot ids (a
// record older than them) counts as a change, as [HistoryOf] counts it.
func NoOpRun(r Run) bool {
	if r.DryRun || r.Status != StatusDone {
		return false
	}
	for _, s := range r.Steps {
		if s.Status == StatusDone && stepChanged(s) {
			return false
		}
	}
	return true
}

// stepChanged reports whether done step s changed the table or its files.
func stepChanged(s Step) bool {
	if s.Before == nil || s.After == nil || s.Before.SnapshotID == 0 || s.Before.SnapshotID != s.After.SnapshotID {
		return true
	}
	if s.Before.Metrics.Snapshots != s.After.Metrics.Snapshots {
		return true
	}
	rep := s.Report
	switch {
	case rep.Expire != nil && (len(rep.Expire.Expired) > 0 || len(rep.Expire.RemovedRefs) > 0 || len(rep.Expire.Deleted) > 0):
		return true
	case rep.Orphans != nil && len(rep.Orphans.Deleted) > 0:
		return true
	case rep.Engine != nil && !rep.Engine.Verified.NothingToDo:
		return true
	}
	return false
}

// DeferredReason is why budget held back a step of run r (the reason of
// its first step skipped with [DeferredPrefix]), or "" when none was.
func DeferredReason(r Run) string {
	for _, s := range r.Steps {
		if s.Status == StatusSkipped && strings.HasPrefix(s.Reason, DeferredPrefix) {
			return s.Reason
		}
	}
	return ""
}
