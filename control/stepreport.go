package control

import (
	"encoding/json"
	"fmt"

	"github.com/floe-project/floe/internal/jsonenc"
	"github.com/floe-project/floe/rewriter"
)

// StepReport is what one step of a run did, typed: exactly one field is set
// — the step's plan when it found nothing to do, the native engine's
// result, or a distributed engine's report with floe's check of it — or
// none, for a step that did not get as far as a report. In JSON it is that
// one value as the rewriter writes it (what floe has always stored and
// printed); [Step]'s decoding tells the kinds apart by the step's name and
// the value's keys.
type StepReport struct {
	ExpirePlan   *rewriter.ExpirePlan
	Expire       *rewriter.ExpireResult
	OrphanPlan   *rewriter.OrphanPlan
	Orphans      *rewriter.OrphanResult
	CompactPlan  *rewriter.CompactPlan
	Compact      *rewriter.CompactResult
	DeletePlan   *rewriter.DeleteRewritePlan
	Deletes      *rewriter.DeleteRewriteResult
	ManifestPlan *rewriter.ManifestPlan
	Manifests    *rewriter.ManifestResult
	Engine       *DistributedReport
}

// value is the one value set, nil when none is.
func (r StepReport) value() any {
	switch {
	case r.ExpirePlan != nil:
		return r.ExpirePlan
	case r.Expire != nil:
		return r.Expire
	case r.OrphanPlan != nil:
		return r.OrphanPlan
	case r.Orphans != nil:
		return r.Orphans
	case r.CompactPlan != nil:
		return r.CompactPlan
	case r.Compact != nil:
		return r.Compact
	case r.DeletePlan != nil:
		return r.DeletePlan
	case r.Deletes != nil:
		return r.Deletes
	case r.ManifestPlan != nil:
		return r.ManifestPlan
	case r.Manifests != nil:
		return r.Manifests
	case r.Engine != nil:
		return r.Engine
	}
	return nil
}

// IsZero reports whether no value is set.
func (r StepReport) IsZero() bool { return r.value() == nil }

// MarshalJSON writes the value set (null when none is).
func (r StepReport) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(r.value())
}

// engineReport is the step report of a distributed engine's step.
func engineReport(r *DistributedReport) StepReport { return StepReport{Engine: r} }

// decodeStepReport reads the report of step name from raw, as
// [StepReport.MarshalJSON] wrote it.
func decodeStepReport(name string, raw json.RawMessage) (StepReport, error) {
	var r StepReport
	if len(raw) == 0 || string(raw) == "null" {
		return r, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return r, fmt.Errorf("decode %s report: %w", name, err)
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	var v any
	switch {
	case has("choice") && has("verified"):
		r.Engine = &DistributedReport{}
		v = r.Engine
	case name == StepExpire && has("expired_snapshot_ids"):
		r.Expire = &rewriter.ExpireResult{}
		v = r.Expire
	case name == StepExpire:
		r.ExpirePlan = &rewriter.ExpirePlan{}
		v = r.ExpirePlan
	case name == StepOrphans && has("referenced"):
		r.Orphans = &rewriter.OrphanResult{}
		v = r.Orphans
	case name == StepOrphans:
		r.OrphanPlan = &rewriter.OrphanPlan{}
		v = r.OrphanPlan
	case name == StepCompact && has("commits"):
		r.Compact = &rewriter.CompactResult{}
		v = r.Compact
	case name == StepCompact:
		r.CompactPlan = &rewriter.CompactPlan{}
		v = r.CompactPlan
	case name == StepDeletes && has("plan"):
		r.Deletes = &rewriter.DeleteRewriteResult{}
		v = r.Deletes
	case name == StepDeletes:
		r.DeletePlan = &rewriter.DeleteRewritePlan{}
		v = r.DeletePlan
	case name == StepManifests && has("no_op"):
		r.Manifests = &rewriter.ManifestResult{}
		v = r.Manifests
	case name == StepManifests:
		r.ManifestPlan = &rewriter.ManifestPlan{}
		v = r.ManifestPlan
	default:
		return r, fmt.Errorf("decode report of unknown step %q", name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return StepReport{}, fmt.Errorf("decode %s report: %w", name, err)
	}
	return r, nil
}
