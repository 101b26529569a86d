package rewriter

import (
	"encoding/json"
	"strconv"
	"time"
)

// The JSON forms of the plans and results, as floe's verbs print them and
// the state store keeps them in a run's step report. They are a stable
// interface (docs/json.md): snake_case keys, [] rather than null for an
// empty list, and snapshot ids as strings, since they exceed 2^53 and
// JavaScript and jq would round them as numbers.

func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func snapshotIDs(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

// MarshalJSON writes the plan with snake_case keys.
func (p ExpirePlan) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MetadataLocation string    `json:"metadata_location"`
		Snapshots        []string  `json:"snapshot_ids"`
		RemoveRefs       []string  `json:"remove_refs"`
		Retained         int       `json:"retained"`
		Files            []string  `json:"files"`
		Bytes            int64     `json:"bytes"`
		Cutoff           time.Time `json:"cutoff"`
		Siblings         []string  `json:"siblings"`
		Shared           int       `json:"shared"`
		KeepFiles        bool      `json:"keep_files"`
	}{p.MetadataLocation, snapshotIDs(p.Snapshots), list(p.RemoveRefs), p.Retained, list(p.Files), p.Bytes, p.Cutoff,
		list(p.Siblings), p.Shared, p.KeepFiles})
}

// MarshalJSON writes the result with snake_case keys.
func (r ExpireResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Expired      []string `json:"expired_snapshot_ids"`
		Kept         []string `json:"kept_snapshot_ids"`
		Retained     int      `json:"retained"`
		RemovedRefs  []string `json:"removed_refs"`
		SnapshotID   int64    `json:"snapshot_id,string"`
		Deleted      []string `json:"deleted"`
		DeletedBytes int64    `json:"deleted_bytes"`
		Siblings     []string `json:"siblings"`
		Shared       []string `json:"shared"`
		KeepFiles    bool     `json:"keep_files"`
	}{snapshotIDs(r.Expired), snapshotIDs(r.Kept), r.Retained, list(r.RemovedRefs), r.SnapshotID, list(r.Deleted), r.DeletedBytes,
		list(r.Siblings), list(r.Shared), r.KeepFiles})
}

// MarshalJSON writes the file with snake_case keys.
func (f OrphanFile) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Path    string    `json:"path"`
		Size    int64     `json:"size_bytes"`
		ModTime time.Time `json:"modified_at"`
		RunID   string    `json:"run_id,omitempty"`
	}{f.Path, f.Size, f.ModTime, f.RunID})
}

// MarshalJSON writes the plan with snake_case keys.
func (p OrphanPlan) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Files      []OrphanFile  `json:"files"`
		Bytes      int64         `json:"bytes"`
		Scanned    int           `json:"scanned"`
		Young      int           `json:"young"`
		Excluded   int           `json:"excluded"`
		Mismatched []string      `json:"mismatched"`
		InFlight   int           `json:"in_flight"`
		Leases     []LeaseRecord `json:"leases"`
		Siblings   []string      `json:"siblings"`
		Shared     int           `json:"shared"`
		Evidence   int           `json:"evidence"`
		Cutoff     time.Time     `json:"cutoff"`
	}{list(p.Files), p.Bytes, p.Scanned, p.Young, p.Excluded, list(p.Mismatched), p.InFlight, list(p.Leases), list(p.Siblings), p.Shared, p.Evidence, p.Cutoff})
}

// MarshalJSON writes the result with snake_case keys.
func (r OrphanResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Deleted    []string `json:"deleted"`
		Bytes      int64    `json:"bytes"`
		Referenced []string `json:"referenced"`
		InFlight   []string `json:"in_flight"`
		Shared     []string `json:"shared"`
		Evidence   []string `json:"evidence"`
	}{list(r.Deleted), r.Bytes, list(r.Referenced), list(r.InFlight), list(r.Shared), list(r.Evidence)})
}

// MarshalJSON writes the result with snake_case keys.
func (r ManifestResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		NoOp       bool  `json:"no_op"`
		SnapshotID int64 `json:"snapshot_id,string"`
		Rewritten  int   `json:"rewritten"`
		Added      int   `json:"added"`
		Attempts   int   `json:"attempts"`
	}{r.NoOp, r.SnapshotID, r.Rewritten, r.Added, r.Attempts})
}

// MarshalJSON writes the commit with snake_case keys.
func (c Commit) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		SnapshotID     int64         `json:"snapshot_id,string"`
		Groups         []string      `json:"groups"`
		FilesIn        int           `json:"files_in"`
		FilesOut       int           `json:"files_out"`
		DeletesRemoved int           `json:"deletes_removed"`
		BytesIn        int64         `json:"bytes_in"`
		BytesOut       int64         `json:"bytes_out"`
		Attempts       int           `json:"attempts"`
		Duration       time.Duration `json:"duration_ns"`
	}{c.SnapshotID, list(c.Groups), c.FilesIn, c.FilesOut, c.DeletesRemoved, c.BytesIn, c.BytesOut, c.Attempts, c.Duration})
}

// MarshalJSON writes the group with snake_case keys and its error as text.
func (g SkippedGroup) MarshalJSON() ([]byte, error) {
	errText := ""
	if g.Err != nil {
		errText = g.Err.Error()
	}
	return json.Marshal(struct {
		Name    string   `json:"name"`
		Error   string   `json:"error"`
		Orphans []string `json:"orphans"`
	}{g.Name, errText, list(g.Orphans)})
}

// MarshalJSON writes the plan with [] for empty lists and the snapshot id
// as a string.
func (p CompactPlan) MarshalJSON() ([]byte, error) {
	type plain CompactPlan
	q := plain(p)
	q.Groups, q.Deferred = list(q.Groups), list(q.Deferred)
	return json.Marshal(struct {
		plain
		SnapshotID int64 `json:"snapshot_id,string"`
	}{q, p.SnapshotID})
}

// MarshalJSON writes the result with [] for empty lists.
func (r CompactResult) MarshalJSON() ([]byte, error) {
	type plain CompactResult
	q := plain(r)
	q.Commits, q.Skipped, q.SweptSpill = list(q.Commits), list(q.Skipped), list(q.SweptSpill)
	return json.Marshal(q)
}

// MarshalJSON writes the group with [] for empty lists.
func (g PlannedGroup) MarshalJSON() ([]byte, error) {
	type plain PlannedGroup
	q := plain(g)
	q.Reasons = list(q.Reasons)
	return json.Marshal(q)
}
