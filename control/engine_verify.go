package control

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/internal/rowsum"
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
	// Content is floe's read-back of a compaction's rows (see
	// [ContentVerification]); nil for the other steps.
	Content *ContentVerification `json:"content,omitempty"`
}

// ContentVerification is floe's check of the rows a distributed engine's
// compaction committed: the live rows of the data files its replace
// snapshots removed, read as they were before the step (deletes applied),
// against the rows of the files they added, read back after it, compared
// by an order-independent digest of every column (internal/rowsum). The
// engine commits itself, so the check comes after the commit: a mismatch
// fails the step with [rewriter.ErrInvariant], which stops the table's
// automatic runs and alerts, and names the snapshot to roll back to.
//
// Reading back costs floe a read of what the engine rewrote, which on a
// table large enough to send to a cluster may be more than floe should
// read: up to [EngineSelect.VerifyBytes] of replaced input the whole
// rewrite is checked; above it, whole partitions drawn at random (seeded by
// the snapshot, so a run checks the same ones again) until the budget is
// spent, and the report says how much was covered.
type ContentVerification struct {
	// Checked is false, with Note saying why, when nothing could be
	// compared (the engine wrote files in partitions none of its inputs
	// had, with more input than the budget).
	Checked bool `json:"checked"`
	// Partitions is the number of partitions the engine rewrote;
	// PartitionsChecked how many of them were read back.
	Partitions        int `json:"partitions"`
	PartitionsChecked int `json:"partitions_checked"`
	// BytesReplaced is the size of the data files replaced; BytesChecked
	// the part of it read back.
	BytesReplaced int64      `json:"bytes_replaced"`
	BytesChecked  int64      `json:"bytes_checked"`
	Read          rowsum.Sum `json:"read"`
	Written       rowsum.Sum `json:"written"`
	Note          string     `json:"note,omitempty"`
}

// DefaultVerifyBytes is [EngineSelect.VerifyBytes] when it is zero.
const DefaultVerifyBytes = 4 << 30

// verifyContent reads back what a distributed engine's compaction
// replaced and added between before and after (see [ContentVerification]);
// v must already hold verifyStep's findings. budget bounds the bytes of
// replaced input read.
func verifyContent(ctx context.Context, before, after *lake.State, v *Verification, budget int64) error {
	cv := &ContentVerification{}
	v.Content = cv
	replaces := map[int64]bool{}
	for _, s := range v.Snapshots {
		if s.Operation == "replace" {
			replaces[s.ID] = true
		}
	}
	if len(replaces) == 0 {
		cv.Note = "the engine committed nothing"
		return nil
	}
	inAfter := make(map[string]bool, len(after.DataFiles))
	for _, f := range after.DataFiles {
		inAfter[f.Path] = true
	}
	inBefore := make(map[string]bool, len(before.DataFiles))
	removed, added := map[string][]string{}, map[string][]string{}
	bytes := map[string]int64{}
	for _, f := range before.DataFiles {
		inBefore[f.Path] = true
		if !inAfter[f.Path] {
			removed[f.PartitionKey] = append(removed[f.PartitionKey], f.Path)
			bytes[f.PartitionKey] += f.SizeBytes
			cv.BytesReplaced += f.SizeBytes
		}
	}
	for _, f := range after.DataFiles {
		if !inBefore[f.Path] && replaces[f.SnapshotID] {
			added[f.PartitionKey] = append(added[f.PartitionKey], f.Path)
		}
	}
	keys := slices.Sorted(maps.Keys(removed))
	cv.Partitions = len(keys)
	paired := true
	for k := range added {
		if _, ok := removed[k]; !ok {
			paired = false
		}
	}
	chosen := keys
	if cv.BytesReplaced > budget {
		if !paired {
			cv.Note = fmt.Sprintf("not checked: the engine wrote files into partitions its inputs were not in (a changed partition spec), and its %d bytes of input are over the %d-byte budget of a read-back", cv.BytesReplaced, budget)
			return nil
		}
		// Whole partitions, drawn at random but the same for the same
		// snapshot, while the budget lasts.
		rng := rand.New(rand.NewPCG(uint64(v.SnapshotAfter), uint64(v.SnapshotBefore)))
		order := slices.Clone(keys)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		chosen = nil
		var spent int64
		for _, k := range order {
			if spent+bytes[k] <= budget {
				chosen = append(chosen, k)
				spent += bytes[k]
			}
		}
		if len(chosen) == 0 {
			cv.Note = fmt.Sprintf("not checked: every partition the engine rewrote is larger than the %d-byte budget of a read-back", budget)
			return nil
		}
		slices.Sort(chosen)
		cv.Note = fmt.Sprintf("%d of %d partitions read back (%d of %d bytes): the rewrite is larger than the %d-byte budget of a read-back",
			len(chosen), len(keys), spent, cv.BytesReplaced, budget)
	}
	sampled := len(chosen) < len(keys)
	var readPaths, writtenPaths []string
	for _, k := range chosen {
		readPaths = append(readPaths, removed[k]...)
		cv.BytesChecked += bytes[k]
		if sampled {
			writtenPaths = append(writtenPaths, added[k]...)
		}
	}
	if !sampled {
		for _, k := range slices.Sorted(maps.Keys(added)) {
			writtenPaths = append(writtenPaths, added[k]...)
		}
	}
	cv.PartitionsChecked = len(chosen)
	var err error
	if cv.Read, err = digestFiles(ctx, before, readPaths); err != nil {
		return fmt.Errorf("read back the %d data files the engine replaced, as of snapshot %d: %w", len(readPaths), v.SnapshotBefore, err)
	}
	if cv.Written, err = digestFiles(ctx, after, writtenPaths); err != nil {
		return fmt.Errorf("read back the %d data files the engine added, as of snapshot %d: %w", len(writtenPaths), v.SnapshotAfter, err)
	}
	cv.Checked = true
	if diff := rowsum.Diff(cv.Read, cv.Written); diff != "" {
		return fmt.Errorf("%w: the rows of the %d files the engine wrote (snapshot %d) are not the rows of the %d files it replaced (snapshot %d): %s; read %s, wrote %s; the table's previous snapshot is %d",
			errEngineVerify, len(writtenPaths), v.SnapshotAfter, len(readPaths), v.SnapshotBefore, diff, cv.Read, cv.Written, v.SnapshotBefore)
	}
	return nil
}

// digestFiles digests the live rows of the data files paths of st's current
// snapshot, their deletes applied.
func digestFiles(ctx context.Context, st *lake.State, paths []string) (rowsum.Sum, error) {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	scan := st.Table.Scan()
	tasks, err := scan.PlanFiles(ctx)
	scan.Close()
	if err != nil {
		return rowsum.Sum{}, err
	}
	var keep []table.FileScanTask
	for _, t := range rewriter.CollapseTasks(tasks) {
		if want[t.File.FilePath()] {
			keep = append(keep, t)
		}
	}
	if len(keep) != len(want) {
		return rowsum.Sum{}, fmt.Errorf("%d of the %d files are not live in the snapshot", len(want)-len(keep), len(want))
	}
	return rewriter.DigestTasks(ctx, st.Table, keep, runtime.GOMAXPROCS(0), 0)
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
