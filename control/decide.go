package control

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
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
// order (expire, orphans, compact, manifests). A step runs when the
// policy enables it, needs no approval for it, and its trigger fired:
//
//   - expire: snapshots ≥ triggers.snapshots, or the oldest snapshot is
//     older than snapshots.older_than (5d when unset);
//   - orphans: every time (orphan files are found only by listing);
//   - compact: small_file_ratio ≥ triggers.small_file_ratio,
//     delete_ratio ≥ triggers.delete_ratio, or the mean clustering depth on
//     a sort column ≥ triggers.clustering_depth;
//   - manifests: manifests per 1,000 data files ≥
//     triggers.manifests_per_1k_files (with at least two manifests).
//
// The layout a compaction writes, and a layout change waiting for
// approval, are decided apart from this ([OptimizeByPolicy]).
func Decide(h lake.Health, p policy.Policy) []StepDecision {
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
		key := map[string]string{StepExpire: "expire", StepOrphans: "orphans", StepCompact: "compact", StepManifests: "manifests"}[step]
		switch {
		case !enabled:
			return skip(step, fmt.Sprintf("turned off by the policy (enabled.%s: false)", key))
		case approval == policy.ApprovalRequired:
			akey := key
			if step == StepCompact {
				akey = "binpack"
			}
			return skip(step, fmt.Sprintf("needs approval (approval.%s: required): run it by hand with 'floe %s'", akey, map[string]string{
				StepExpire: "expire", StepOrphans: "orphans", StepCompact: "compact", StepManifests: "rewrite-manifests"}[step]))
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
			switch {
			case t.Snapshots > 0 && m.Snapshots >= t.Snapshots:
				return due(StepExpire, true, fmt.Sprintf("%d snapshots ≥ triggers.snapshots %d", m.Snapshots, t.Snapshots), "")
			case m.Snapshots > 1 && oldest > age:
				return due(StepExpire, true, fmt.Sprintf("oldest snapshot %.0f h old, older than the %.0f h expiry age", oldest, age), "")
			}
			return due(StepExpire, false, "", fmt.Sprintf("%d snapshots, the oldest %.0f h old: nothing older than the %.0f h expiry age", m.Snapshots, oldest, age))
		}),
		gate(StepOrphans, p.Enabled.Orphans, p.Approval.Orphans, func() StepDecision {
			return due(StepOrphans, true, "orphan files are found only by listing the table's location", "")
		}),
		gate(StepCompact, p.Enabled.Compact, p.Approval.Binpack, func() StepDecision {
			switch {
			case t.SmallFileRatio > 0 && m.DataFiles > 1 && m.SmallFileRatio >= t.SmallFileRatio:
				return due(StepCompact, true, fmt.Sprintf("small-file ratio %.2f ≥ triggers.small_file_ratio %.2f", m.SmallFileRatio, t.SmallFileRatio), "")
			case t.DeleteRatio > 0 && m.DeleteFiles > 0 && m.DeleteToDataRatio >= t.DeleteRatio:
				return due(StepCompact, true, fmt.Sprintf("delete ratio %.2f ≥ triggers.delete_ratio %.2f", m.DeleteToDataRatio, t.DeleteRatio), "")
			case t.ClusteringDepth > 0 && depth >= t.ClusteringDepth:
				return due(StepCompact, true, fmt.Sprintf("clustering depth %.1f on %s ≥ triggers.clustering_depth %.1f", depth, depthCol, t.ClusteringDepth), "")
			}
			return due(StepCompact, false, "", fmt.Sprintf("small-file ratio %.2f, delete ratio %.2f, clustering depth %.1f: below every trigger", m.SmallFileRatio, m.DeleteToDataRatio, depth))
		}),
		gate(StepManifests, p.Enabled.Manifests, p.Approval.Manifests, func() StepDecision {
			if t.ManifestsPer1kFiles > 0 && m.Manifests > 1 && per1k >= t.ManifestsPer1kFiles {
				return due(StepManifests, true, fmt.Sprintf("%.0f manifests per 1,000 data files ≥ triggers.manifests_per_1k_files %.0f", per1k, t.ManifestsPer1kFiles), "")
			}
			return due(StepManifests, false, "", fmt.Sprintf("%d manifests for %d data files: below triggers.manifests_per_1k_files %.0f", m.Manifests, m.DataFiles, t.ManifestsPer1kFiles))
		}),
	}
}

func decisionOf(ds []StepDecision, step string) (StepDecision, bool) {
	for _, d := range ds {
		if d.Step == step {
			return d, true
		}
	}
	return StepDecision{}, false
}

// DecideTable measures table id under its policy and [Decide]s its steps,
// changing and storing nothing (optimize --dry-run without flags).
func DecideTable(ctx context.Context, cat catalog.Catalog, id lake.Ident, p policy.Policy, ho HealthOptions) ([]StepDecision, error) {
	state, err := loadState(ctx, cat, id)
	if err != nil {
		return nil, fmt.Errorf("optimize %s: %w", id, err)
	}
	h, err := Health(state, ho)
	if err != nil {
		return nil, fmt.Errorf("optimize %s: %w", id, err)
	}
	return Decide(h, p), nil
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
		{StepCompact, "compact", p.Enabled.Compact}, {StepManifests, "manifests", p.Enabled.Manifests}} {
		if !s.on {
			out = append(out, StepDecision{Step: s.step, Status: StatusSkipped, Reason: fmt.Sprintf("turned off by the policy (enabled.%s: false)", s.key)})
		}
	}
	return out
}
