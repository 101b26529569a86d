package control

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// DistributedReport is a distributed engine's report of one step with
// floe's own check of what the engine committed. It is the step's report
// in the run record.
type DistributedReport struct {
	*rewriter.EngineReport
	// Choice is the engine chosen and why.
	Choice   EngineChoice `json:"choice"`
	Verified Verification `json:"verified"`
}

// Verification is what floe found when it reloaded a table after a
// distributed engine reported success: the snapshots committed since the
// step began, the data files replaced and added, and the table's live rows
// before and after.
type Verification struct {
	SnapshotBefore int64 `json:"snapshot_before"`
	SnapshotAfter  int64 `json:"snapshot_after"`
	// NothingToDo is set when the engine committed nothing.
	NothingToDo bool `json:"nothing_to_do"`
	// Snapshots are the snapshots committed since, oldest first, with
	// their operations: replaces are the engine's, appends other writers'
	// (their rows are allowed for). A delete or overwrite during the step
	// fails the check, since metadata cannot tell whose it is.
	Snapshots     []VerifiedSnapshot `json:"snapshots"`
	FilesReplaced int                `json:"files_replaced"`
	FilesAdded    int                `json:"files_added"`
	// RowsBefore and RowsAfter are the live rows of the table (data file
	// records less position deletes); RowsChecked is false, with Note
	// saying why, when equality deletes make them unknowable from
	// metadata.
	RowsBefore  int64  `json:"rows_before"`
	RowsAfter   int64  `json:"rows_after"`
	RowsChecked bool   `json:"rows_checked"`
	Note        string `json:"note,omitempty"`
	// FilesChecked counts the files of the current snapshot found on
	// storage after an orphan removal.
	FilesChecked int `json:"files_checked,omitempty"`
}

// VerifiedSnapshot is one snapshot committed during a step.
type VerifiedSnapshot struct {
	ID        int64  `json:"id"`
	Operation string `json:"operation"`
}

// errEngineVerify wraps rewriter.ErrInvariant: what a distributed engine
// committed is not what the step may do.
var errEngineVerify = fmt.Errorf("%w: the engine's commit failed floe's check", rewriter.ErrInvariant)

// liveRows is the table's live row count from metadata, and false when
// equality deletes make it unknowable.
func liveRows(st *lake.State) (int64, bool) {
	var n int64
	for _, f := range st.DataFiles {
		n += f.Records
	}
	for _, f := range st.DeleteFiles {
		if f.DeleteKind == lake.EqualityDeletes {
			return n, false
		}
		n -= f.Records
	}
	return n, true
}

// newSnapshots are the snapshots of after committed since before's
// current snapshot, oldest first: the ancestry of after's current snapshot
// back to before's.
func newSnapshots(before, after *lake.State) ([]lake.Snapshot, error) {
	var stop int64 = -1
	if before.Current != nil {
		stop = before.Current.SnapshotID
	}
	if after.Current == nil {
		if stop == -1 {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: the table had snapshot %d and now has none", errEngineVerify, stop)
	}
	byID := make(map[int64]lake.Snapshot, len(after.Snapshots))
	for _, s := range after.Snapshots {
		byID[s.ID] = s
	}
	var out []lake.Snapshot
	for id := after.Current.SnapshotID; id != stop; {
		s, ok := byID[id]
		if !ok {
			if stop == -1 {
				break
			}
			return nil, fmt.Errorf("%w: snapshot %d, current before the step, is not an ancestor of the current snapshot %d", errEngineVerify, stop, after.Current.SnapshotID)
		}
		out = append(out, s)
		if s.ParentID == nil {
			if stop != -1 {
				return nil, fmt.Errorf("%w: snapshot %d, current before the step, is not an ancestor of the current snapshot %d", errEngineVerify, stop, after.Current.SnapshotID)
			}
			break
		}
		id = *s.ParentID
	}
	slices.Reverse(out)
	return out, nil
}

// What a verified step may commit.
type verifyKind int

const (
	verifyCompact     verifyKind = iota // replace snapshots; rows kept
	verifyManifests                     // replace snapshots; data files and rows kept
	verifyMaintenance                   // no snapshot of its own; rows and data files kept
)

// verifyStep checks what a distributed engine committed in one step: every
// snapshot since the step began descends from the one current before it; a
// compaction's and a manifest rewrite's own snapshots are replace
// operations (a manifest rewrite's keep every data file); and the live rows
// are unchanged but for what other writers' snapshots (any that is not a
// replace) added or removed. An expiry or orphan removal commits no
// snapshot: every new one is another writer's, and no data file may go
// away but through one of those.
func verifyStep(before, after *lake.State, kind verifyKind) (Verification, error) {
	v := Verification{Snapshots: []VerifiedSnapshot{}}
	if before.Current != nil {
		v.SnapshotBefore = before.Current.SnapshotID
	}
	if after.Current != nil {
		v.SnapshotAfter = after.Current.SnapshotID
	}
	snaps, err := newSnapshots(before, after)
	if err != nil {
		return v, err
	}
	var concurrent int64
	replaces := 0
	for _, s := range snaps {
		v.Snapshots = append(v.Snapshots, VerifiedSnapshot{ID: s.ID, Operation: s.Operation})
		switch s.Operation {
		case "replace":
			replaces++
		case "append":
			// Another writer's: appends only add rows.
			concurrent += summaryInt(s, "added-records")
		default:
			// A delete or overwrite may be another writer's, or the engine
			// removing rows it should have kept: metadata cannot tell which,
			// so the step is not taken as verified.
			return v, fmt.Errorf("%w: snapshot %d (%s, %s records deleted) was committed during the step; floe cannot tell whether the engine or another writer removed those rows: check the table's history",
				errEngineVerify, s.ID, s.Operation, cmp.Or(s.Summary["deleted-records"], "?"))
		}
	}
	if kind != verifyMaintenance {
		v.NothingToDo = replaces == 0
	}
	paths := func(st *lake.State) map[string]bool {
		m := make(map[string]bool, len(st.DataFiles))
		for _, f := range st.DataFiles {
			m[f.Path] = true
		}
		return m
	}
	was, is := paths(before), paths(after)
	for p := range was {
		if !is[p] {
			v.FilesReplaced++
		}
	}
	for p := range is {
		if !was[p] {
			v.FilesAdded++
		}
	}
	var okBefore, okAfter bool
	v.RowsBefore, okBefore = liveRows(before)
	v.RowsAfter, okAfter = liveRows(after)
	v.RowsChecked = okBefore && okAfter
	switch {
	case kind == verifyManifests && replaces == len(snaps) && v.FilesReplaced+v.FilesAdded > 0:
		return v, fmt.Errorf("%w: a manifest rewrite changed the data files: %d replaced, %d added", errEngineVerify, v.FilesReplaced, v.FilesAdded)
	case kind == verifyMaintenance && len(snaps) == 0 && v.FilesReplaced > 0:
		return v, fmt.Errorf("%w: %d data files of the current snapshot are gone from it, with no snapshot committed", errEngineVerify, v.FilesReplaced)
	case !v.RowsChecked:
		v.Note = "rows not checked: the table has equality deletes, whose effect metadata does not tell"
	case v.RowsAfter != v.RowsBefore+concurrent:
		return v, fmt.Errorf("%w: the table has %d live rows after the step, %d before (%+d appended by other writers; snapshots %s): rows were lost or added",
			errEngineVerify, v.RowsAfter, v.RowsBefore, concurrent, operations(v.Snapshots))
	}
	return v, nil
}

// verifyFiles adds to v the check that every data file, delete file and
// manifest of after's current snapshot is still on storage (after an
// orphan removal).
func verifyFiles(ctx context.Context, after *lake.State, v *Verification) error {
	n, err := checkFilesExist(ctx, after)
	v.FilesChecked = n
	return err
}

// checkFilesExist opens every data file, delete file and manifest of st's
// current snapshot, and its manifest list, 16 at a time.
func checkFilesExist(ctx context.Context, st *lake.State) (int, error) {
	fio, err := st.Table.FS(ctx)
	if err != nil {
		return 0, fmt.Errorf("check files: %w", err)
	}
	var paths []string
	for _, f := range st.DataFiles {
		paths = append(paths, f.Path)
	}
	for _, f := range st.DeleteFiles {
		paths = append(paths, f.Path)
	}
	for _, m := range st.Manifests {
		paths = append(paths, m.Path)
	}
	if st.Current != nil && st.Current.ManifestList != "" {
		paths = append(paths, st.Current.ManifestList)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, p := range paths {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := fio.Open(p)
			if err != nil {
				return fmt.Errorf("%w: %s, referenced by the current snapshot, cannot be opened after orphan removal: %v", errEngineVerify, p, err)
			}
			return f.Close()
		})
	}
	return len(paths), g.Wait()
}

func operations(snaps []VerifiedSnapshot) string {
	ops := make([]string, len(snaps))
	for i, s := range snaps {
		ops[i] = s.Operation
	}
	return fmt.Sprint(ops)
}
