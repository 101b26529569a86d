package rewriter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/floe-project/floe/internal/jsonenc"
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

func parseSnapshotIDs(ids []string) ([]int64, error) {
	out := make([]int64, len(ids))
	for i, s := range ids {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("snapshot id %q: %w", s, err)
		}
		out[i] = id
	}
	return out, nil
}

// Each value has a JSON form (xJSON below) that MarshalJSON writes and
// UnmarshalJSON reads, so that a step report the state store keeps reads
// back as the value that was written.

type expirePlanJSON struct {
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
}

// MarshalJSON writes the plan with snake_case keys.
func (p ExpirePlan) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(expirePlanJSON{p.MetadataLocation, snapshotIDs(p.Snapshots), list(p.RemoveRefs), p.Retained, list(p.Files), p.Bytes, p.Cutoff,
		list(p.Siblings), p.Shared, p.KeepFiles})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ExpirePlan) UnmarshalJSON(b []byte) error {
	var j expirePlanJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	ids, err := parseSnapshotIDs(j.Snapshots)
	if err != nil {
		return err
	}
	*p = ExpirePlan{MetadataLocation: j.MetadataLocation, Snapshots: ids, RemoveRefs: j.RemoveRefs, Retained: j.Retained, Files: j.Files,
		Bytes: j.Bytes, Cutoff: j.Cutoff, Siblings: j.Siblings, Shared: j.Shared, KeepFiles: j.KeepFiles}
	return nil
}

type expireResultJSON struct {
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
}

// MarshalJSON writes the result with snake_case keys.
func (r ExpireResult) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(expireResultJSON{snapshotIDs(r.Expired), snapshotIDs(r.Kept), r.Retained, list(r.RemovedRefs), r.SnapshotID, list(r.Deleted), r.DeletedBytes,
		list(r.Siblings), list(r.Shared), r.KeepFiles})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *ExpireResult) UnmarshalJSON(b []byte) error {
	var j expireResultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	expired, err := parseSnapshotIDs(j.Expired)
	if err != nil {
		return err
	}
	kept, err := parseSnapshotIDs(j.Kept)
	if err != nil {
		return err
	}
	*r = ExpireResult{Expired: expired, Kept: kept, Retained: j.Retained, RemovedRefs: j.RemovedRefs, SnapshotID: j.SnapshotID,
		Deleted: j.Deleted, DeletedBytes: j.DeletedBytes, Siblings: j.Siblings, Shared: j.Shared, KeepFiles: j.KeepFiles}
	return nil
}

type orphanFileJSON struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size_bytes"`
	ModTime time.Time `json:"modified_at"`
	RunID   string    `json:"run_id,omitempty"`
}

// MarshalJSON writes the file with snake_case keys.
func (f OrphanFile) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(orphanFileJSON{f.Path, f.Size, f.ModTime, f.RunID})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *OrphanFile) UnmarshalJSON(b []byte) error {
	var j orphanFileJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = OrphanFile{Path: j.Path, Size: j.Size, ModTime: j.ModTime, RunID: j.RunID}
	return nil
}

type orphanPlanJSON struct {
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
}

// MarshalJSON writes the plan with snake_case keys.
func (p OrphanPlan) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(orphanPlanJSON{list(p.Files), p.Bytes, p.Scanned, p.Young, p.Excluded, list(p.Mismatched), p.InFlight, list(p.Leases),
		list(p.Siblings), p.Shared, p.Evidence, p.Cutoff})
}

// UnmarshalJSON reads what MarshalJSON writes; the plan read cannot be
// given to [DeleteOrphans] (it lost its equivalences and siblings).
func (p *OrphanPlan) UnmarshalJSON(b []byte) error {
	var j orphanPlanJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = OrphanPlan{Files: j.Files, Bytes: j.Bytes, Scanned: j.Scanned, Young: j.Young, Excluded: j.Excluded, Mismatched: j.Mismatched,
		InFlight: j.InFlight, Leases: j.Leases, Siblings: j.Siblings, Shared: j.Shared, Evidence: j.Evidence, Cutoff: j.Cutoff}
	return nil
}

type orphanResultJSON struct {
	Deleted    []string   `json:"deleted"`
	Bytes      int64      `json:"bytes"`
	Referenced []string   `json:"referenced"`
	InFlight   []string   `json:"in_flight"`
	Shared     []string   `json:"shared"`
	Evidence   []string   `json:"evidence"`
	Plan       OrphanPlan `json:"plan"`
}

// MarshalJSON writes the result with snake_case keys.
func (r OrphanResult) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(orphanResultJSON{list(r.Deleted), r.Bytes, list(r.Referenced), list(r.InFlight), list(r.Shared), list(r.Evidence), r.Plan})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *OrphanResult) UnmarshalJSON(b []byte) error {
	var j orphanResultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = OrphanResult{Deleted: j.Deleted, Bytes: j.Bytes, Referenced: j.Referenced, InFlight: j.InFlight, Shared: j.Shared, Evidence: j.Evidence, Plan: j.Plan}
	return nil
}

type manifestResultJSON struct {
	NoOp       bool  `json:"no_op"`
	SnapshotID int64 `json:"snapshot_id,string"`
	Rewritten  int   `json:"rewritten"`
	Added      int   `json:"added"`
	Attempts   int   `json:"attempts"`
}

// MarshalJSON writes the result with snake_case keys.
func (r ManifestResult) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(manifestResultJSON{r.NoOp, r.SnapshotID, r.Rewritten, r.Added, r.Attempts})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *ManifestResult) UnmarshalJSON(b []byte) error {
	var j manifestResultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = ManifestResult{NoOp: j.NoOp, SnapshotID: j.SnapshotID, Rewritten: j.Rewritten, Added: j.Added, Attempts: j.Attempts}
	return nil
}

type commitJSON struct {
	SnapshotID     int64         `json:"snapshot_id,string"`
	Groups         []string      `json:"groups"`
	FilesIn        int           `json:"files_in"`
	FilesOut       int           `json:"files_out"`
	DeletesRemoved int           `json:"deletes_removed"`
	BytesIn        int64         `json:"bytes_in"`
	BytesOut       int64         `json:"bytes_out"`
	Attempts       int           `json:"attempts"`
	Duration       time.Duration `json:"duration_ns"`
	Content        ContentCheck  `json:"content"`
}

// MarshalJSON writes the commit with snake_case keys.
func (c Commit) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(commitJSON{c.SnapshotID, list(c.Groups), c.FilesIn, c.FilesOut, c.DeletesRemoved, c.BytesIn, c.BytesOut, c.Attempts, c.Duration, c.Content})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Commit) UnmarshalJSON(b []byte) error {
	var j commitJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Commit{SnapshotID: j.SnapshotID, Groups: j.Groups, FilesIn: j.FilesIn, FilesOut: j.FilesOut, DeletesRemoved: j.DeletesRemoved,
		BytesIn: j.BytesIn, BytesOut: j.BytesOut, Attempts: j.Attempts, Duration: j.Duration, Content: j.Content}
	return nil
}

type skippedGroupJSON struct {
	Name    string   `json:"name"`
	Error   string   `json:"error"`
	Orphans []string `json:"orphans"`
}

// MarshalJSON writes the group with snake_case keys and its error as text.
func (g SkippedGroup) MarshalJSON() ([]byte, error) {
	errText := ""
	if g.Err != nil {
		errText = g.Err.Error()
	}
	return jsonenc.Marshal(skippedGroupJSON{g.Name, errText, list(g.Orphans)})
}

// UnmarshalJSON reads what MarshalJSON writes; the error comes back as its
// text only.
func (g *SkippedGroup) UnmarshalJSON(b []byte) error {
	var j skippedGroupJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*g = SkippedGroup{Name: j.Name, Orphans: j.Orphans}
	if j.Error != "" {
		g.Err = errors.New(j.Error)
	}
	return nil
}

// MarshalJSON writes the plan with [] for empty lists and the snapshot id
// as a string.
func (p CompactPlan) MarshalJSON() ([]byte, error) {
	type plain CompactPlan
	q := plain(p)
	q.Groups, q.Deferred = list(q.Groups), list(q.Deferred)
	return jsonenc.Marshal(struct {
		plain
		SnapshotID int64 `json:"snapshot_id,string"`
	}{q, p.SnapshotID})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *CompactPlan) UnmarshalJSON(b []byte) error {
	type plain CompactPlan
	var j struct {
		plain
		SnapshotID int64 `json:"snapshot_id,string"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = CompactPlan(j.plain)
	p.SnapshotID = j.SnapshotID
	return nil
}

// MarshalJSON writes the result with [] for empty lists.
func (r CompactResult) MarshalJSON() ([]byte, error) {
	type plain CompactResult
	q := plain(r)
	q.Commits, q.Skipped, q.SweptSpill = list(q.Commits), list(q.Skipped), list(q.SweptSpill)
	return jsonenc.Marshal(q)
}

// MarshalJSON writes the group with [] for empty lists.
func (g PlannedGroup) MarshalJSON() ([]byte, error) {
	type plain PlannedGroup
	q := plain(g)
	q.Reasons = list(q.Reasons)
	return jsonenc.Marshal(q)
}
