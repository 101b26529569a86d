package rewriter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// Delete maintenance ([PlanDeleteRewrite], [RewriteDeletes]) keeps a
// table's deletes few and applied, without changing its live rows or its
// format version. Its actions, per partition:
//
//   - drop: a delete that applies to no live data file (dangling: its data
//     files were rewritten or removed, or every row it names is in a file
//     no longer live) is removed;
//   - merge (format 1 and 2): a partition's position delete files, when it
//     has at least [DeleteRewriteOptions.MinPositionDeleteFiles], are
//     merged into one, without the rows that name no live data file;
//   - convert (format 3): position delete files are converted into
//     deletion vectors, one per data file, merged with the data file's
//     existing vector;
//   - apply: a partition whose equality deletes delete at least
//     [DeleteRewriteOptions.EqualityDeleteRatio] of its rows (deleted
//     records over data records, as Spark's delete-ratio-threshold) is
//     compacted ([Compact], bin-pack): its data files are rewritten with
//     the deletes applied, and the deletes that then apply to nothing go.
//
// Before a commit, every changed delete is checked by reading the live rows
// of each data file it touches twice, with the deletes it had and with the
// deletes it will have, through iceberg-go's reader: the digests (rows and
// row lineage, see [DigestTasks]) must be equal, else nothing is committed
// ([ErrContentMismatch]). A compaction checks its content as always.
//
// A delete with a [lake.DeleteIssue] (misfiled, or shadowed by a deletion
// vector) is never touched, nor is the delete of a data file such a delete
// names. floe never writes equality deletes, and never changes a table's
// format version.

// Delete maintenance action kinds, the values of [DeleteAction.Kind].
const (
	DeleteActionDrop    = "drop"
	DeleteActionMerge   = "merge"
	DeleteActionConvert = "convert"
	DeleteActionApply   = "apply"
)

// Defaults of [DeleteRewriteOptions].
const (
	DefaultMinPositionDeleteFiles = 2
	DefaultEqualityDeleteRatio    = 0.3
)

// DeleteRewriteOptions tune delete maintenance. The zero value uses the
// defaults.
type DeleteRewriteOptions struct {
	// MinPositionDeleteFiles is how many position delete files a partition
	// of a format 1 or 2 table must have to be merged. Default:
	// [DefaultMinPositionDeleteFiles].
	MinPositionDeleteFiles int
	// EqualityDeleteRatio is the share of a partition's data records its
	// equality deletes must reach for the partition to be rewritten with
	// them applied. Default: [DefaultEqualityDeleteRatio].
	EqualityDeleteRatio float64
	// Partitions, when set, limits the step to these partition keys.
	Partitions []string
	// Compact tunes the rewrite of the apply action (its layout is
	// bin-pack).
	Compact CompactOptions
}

// Validate reports every problem of the options at once, wrapping
// [ErrInvalidOptions].
func (o DeleteRewriteOptions) Validate() error {
	var errs []error
	if o.MinPositionDeleteFiles < 0 {
		errs = append(errs, fmt.Errorf("min position delete files %d is negative", o.MinPositionDeleteFiles))
	}
	if o.EqualityDeleteRatio < 0 || o.EqualityDeleteRatio > 1 {
		errs = append(errs, fmt.Errorf("equality delete ratio %g is not within 0..1", o.EqualityDeleteRatio))
	}
	if err := o.Compact.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

func (o DeleteRewriteOptions) withDefaults() DeleteRewriteOptions {
	if o.MinPositionDeleteFiles == 0 {
		o.MinPositionDeleteFiles = DefaultMinPositionDeleteFiles
	}
	if o.EqualityDeleteRatio == 0 {
		o.EqualityDeleteRatio = DefaultEqualityDeleteRatio
	}
	o.Compact.Layout = layout.Layout{Strategy: layout.StrategyBinpack}
	return o
}

// DeleteAction is one action of a [DeleteRewritePlan].
type DeleteAction struct {
	// Kind is [DeleteActionDrop], [DeleteActionMerge],
	// [DeleteActionConvert] or [DeleteActionApply].
	Kind      string `json:"kind"`
	Partition string `json:"partition"`
	// Deletes are the deletes the action removes (for apply: those the
	// rewrite leaves applying to nothing).
	Deletes []lake.DeleteKey `json:"deletes"`
	// DataFiles are the live data files whose rows the action's deletes
	// apply to: checked before the commit, or (apply) rewritten.
	DataFiles []string `json:"data_files"`
	// Writes is what the action writes: position delete files, deletion
	// vectors (apply: data files, as many as the rewrite needs).
	Writes int    `json:"writes"`
	Reason string `json:"reason"`

	// positions are the rows the merge or convert action deletes, per data
	// file, read at planning.
	positions map[string][]int64
	dataSeq   map[string]int64
}

// DeleteRewritePlan is what delete maintenance would do.
type DeleteRewritePlan struct {
	Table         string         `json:"table"`
	SnapshotID    int64          `json:"snapshot_id,string"`
	FormatVersion int            `json:"format_version"`
	Actions       []DeleteAction `json:"actions"`
	// DeletesBefore counts the table's deletes (files, and vectors one by
	// one); DeletesRemoved those the plan removes and DeletesWritten the
	// delete files and vectors it writes.
	DeletesBefore  int `json:"deletes_before"`
	DeletesRemoved int `json:"deletes_removed"`
	DeletesWritten int `json:"deletes_written"`
	// Kept are the deletes readers do not apply, left alone (see
	// [lake.DeleteIssue]).
	Kept []lake.DeleteIssue `json:"kept"`
}

// DeleteRewriteResult is what [RewriteDeletes] did.
type DeleteRewriteResult struct {
	Plan DeleteRewritePlan `json:"plan"`
	// SnapshotID is the snapshot of the delete-file commit; 0 when there
	// was none.
	SnapshotID int64 `json:"snapshot_id,string"`
	// DeletesRemoved and DeletesWritten count what was committed, the
	// apply action's compaction included.
	DeletesRemoved int `json:"deletes_removed"`
	DeletesWritten int `json:"deletes_written"`
	// Compact is the apply action's compaction; nil without one.
	Compact *CompactResult `json:"compact,omitempty"`
	// Skipped are the actions a concurrent change made stale.
	Skipped []string `json:"skipped"`
	// Table is the table after the last commit.
	Table *table.Table `json:"-"`
}

// PlanDeleteRewrite plans the delete maintenance of st (see the actions
// above). It reads the position delete files of the table (small, and the
// only record of which rows they name); it changes nothing.
func PlanDeleteRewrite(ctx context.Context, st *lake.State, opts DeleteRewriteOptions) (DeleteRewritePlan, error) {
	if err := opts.Validate(); err != nil {
		return DeleteRewritePlan{}, fmt.Errorf("plan delete rewrite of %s: %w", st.Ident, err)
	}
	opts = opts.withDefaults()
	plan := DeleteRewritePlan{Table: st.Ident.String(), SnapshotID: snapshotID(st), FormatVersion: st.Metadata.Version(),
		Actions: []DeleteAction{}, DeletesBefore: len(st.DeleteFiles), Kept: slices.Clone(st.DeleteIssues)}
	if plan.Kept == nil {
		plan.Kept = []lake.DeleteIssue{}
	}
	if len(st.DeleteFiles) == 0 {
		return plan, nil
	}
	only := map[string]bool{}
	for _, p := range opts.Partitions {
		only[p] = true
	}
	in := func(key string) bool { return len(only) == 0 || only[key] }
	held := st.HeldBack()
	data := map[string]*lake.File{}
	byPart := map[string][]string{}
	records := map[string]int64{}
	for i := range st.DataFiles {
		f := &st.DataFiles[i]
		data[f.Path] = f
		byPart[f.PartitionKey] = append(byPart[f.PartitionKey], f.Path)
		records[f.PartitionKey] += f.Records
	}
	// touchable: a delete floe may change. Not one with an issue, nor one
	// of a data file an issue's delete names.
	touchable := func(d *lake.File) bool {
		if st.DeleteIssue(d.DeleteKey()) != nil {
			return false
		}
		return d.ReferencedDataFile == "" || held[d.ReferencedDataFile] == nil
	}

	// Apply: partitions whose equality deletes cross the ratio.
	eqRecords := map[string]int64{}
	var eqOrder []string
	for i := range st.DeleteFiles {
		d := &st.DeleteFiles[i]
		if d.DeleteKind != lake.EqualityDeletes || !in(d.PartitionKey) || !touchable(d) {
			continue
		}
		if _, ok := eqRecords[d.PartitionKey]; !ok {
			eqOrder = append(eqOrder, d.PartitionKey)
		}
		eqRecords[d.PartitionKey] += d.Records
	}
	applied := map[string]bool{}
	for _, key := range eqOrder {
		files := slices.DeleteFunc(slices.Clone(byPart[key]), func(p string) bool { return held[p] != nil })
		if len(files) == 0 || records[key] == 0 {
			continue
		}
		ratio := float64(eqRecords[key]) / float64(records[key])
		if ratio < opts.EqualityDeleteRatio {
			continue
		}
		applied[key] = true
		rewritten := map[string]bool{}
		for _, p := range files {
			rewritten[p] = true
		}
		act := DeleteAction{Kind: DeleteActionApply, Partition: key, DataFiles: files, Writes: 1,
			Reason: fmt.Sprintf("equality deletes delete %.2f of the partition's records ≥ the ratio %.2f: its %d data files are rewritten with them applied", ratio, opts.EqualityDeleteRatio, len(files))}
		for _, d := range DeadDeletes(st, rewritten) {
			if d.PartitionKey == key || unpartitionedSpec(st, d.SpecID) {
				act.Deletes = append(act.Deletes, d.DeleteKey())
			}
		}
		plan.Actions = append(plan.Actions, act)
	}

	// Drop: deletes dead already, by metadata, then by content.
	fio, err := st.Table.FS(ctx)
	if err != nil {
		return DeleteRewritePlan{}, fmt.Errorf("plan delete rewrite of %s: open table io: %w", st.Ident, err)
	}
	dropped := map[lake.DeleteKey]bool{}
	drops := map[string]*DeleteAction{}
	var dropOrder []string
	drop := func(d *lake.File, why string) {
		a := drops[d.PartitionKey]
		if a == nil {
			a = &DeleteAction{Kind: DeleteActionDrop, Partition: d.PartitionKey, DataFiles: []string{}}
			drops[d.PartitionKey] = a
			dropOrder = append(dropOrder, d.PartitionKey)
		}
		a.Deletes = append(a.Deletes, d.DeleteKey())
		a.Reason = why
		dropped[d.DeleteKey()] = true
	}
	for _, d := range DeadDeletes(st, map[string]bool{}) {
		if in(d.PartitionKey) && !applied[d.PartitionKey] && touchable(&d) {
			drop(&d, "applies to no live data file")
		}
	}
	// Position delete files: read each once, for drop, merge and convert.
	type posFile struct {
		d    *lake.File
		rows map[string][]int64 // live rows only
	}
	posByPart := map[string][]posFile{}
	var posOrder []string
	for i := range st.DeleteFiles {
		d := &st.DeleteFiles[i]
		if d.DeleteKind != lake.PositionDeletes || !in(d.PartitionKey) || applied[d.PartitionKey] || dropped[d.DeleteKey()] || !touchable(d) {
			continue
		}
		named, err := lake.ReadPositionDeletes(ctx, fio, d.Path)
		if err != nil {
			return DeleteRewritePlan{}, fmt.Errorf("plan delete rewrite of %s: read position deletes %s: %w", st.Ident, d.Path, err)
		}
		live := map[string][]int64{}
		for p, pos := range named {
			// A row applies only to a live data file no newer than the
			// delete (spec: data sequence number ≤ the delete's).
			if f := data[p]; f != nil && f.SequenceNumber <= d.SequenceNumber {
				if held[p] != nil {
					live = nil // names a held-back file: leave it be
					break
				}
				live[p] = pos
			}
		}
		if live == nil {
			continue
		}
		if len(live) == 0 {
			drop(d, "names no row of a live data file")
			continue
		}
		if _, ok := posByPart[d.PartitionKey]; !ok {
			posOrder = append(posOrder, d.PartitionKey)
		}
		posByPart[d.PartitionKey] = append(posByPart[d.PartitionKey], posFile{d: d, rows: live})
	}
	for _, key := range dropOrder {
		a := drops[key]
		a.Reason = fmt.Sprintf("%d deletes apply to no live data file", len(a.Deletes))
		plan.Actions = append(plan.Actions, *a)
	}

	// Merge (v1, v2) or convert (v3).
	vectors := map[string]*lake.File{}
	for i := range st.DeleteFiles {
		if d := &st.DeleteFiles[i]; d.DeleteKind == lake.DeletionVector && d.ReferencedDataFile != "" {
			vectors[d.ReferencedDataFile] = d
		}
	}
	v3 := st.Metadata.Version() >= 3
	for _, key := range posOrder {
		files := posByPart[key]
		if !v3 && len(files) < opts.MinPositionDeleteFiles {
			continue
		}
		act := DeleteAction{Kind: DeleteActionMerge, Partition: key, positions: map[string][]int64{}, dataSeq: map[string]int64{}}
		for _, pf := range files {
			act.Deletes = append(act.Deletes, pf.d.DeleteKey())
			for p, pos := range pf.rows {
				act.positions[p] = append(act.positions[p], pos...)
			}
		}
		for p := range act.positions {
			act.DataFiles = append(act.DataFiles, p)
			act.dataSeq[p] = data[p].SequenceNumber
		}
		sort.Strings(act.DataFiles)
		if v3 {
			act.Kind = DeleteActionConvert
			act.Writes = len(act.DataFiles)
			merged := 0
			for _, p := range act.DataFiles {
				if v := vectors[p]; v != nil {
					if !touchable(v) {
						continue
					}
					act.Deletes = append(act.Deletes, v.DeleteKey())
					merged++
				}
			}
			act.Reason = fmt.Sprintf("%d position delete files of a format-3 table become %d deletion vectors (%d merged with the data file's vector)", len(files), act.Writes, merged)
		} else {
			act.Writes = 1
			act.Reason = fmt.Sprintf("%d position delete files ≥ %d are merged into one", len(files), opts.MinPositionDeleteFiles)
		}
		plan.Actions = append(plan.Actions, act)
	}
	for _, a := range plan.Actions {
		plan.DeletesRemoved += len(a.Deletes)
		if a.Kind != DeleteActionApply {
			plan.DeletesWritten += a.Writes
		}
	}
	return plan, nil
}

// RewriteDeletes carries out plan, made by [PlanDeleteRewrite] on st: the
// apply actions by one compaction, then every other action in one commit,
// each checked first by reading the live rows of its data files with the
// old deletes and with the new ones. An action whose deletes or data files
// a concurrent commit changed is skipped (listed in Skipped), never
// committed over: the next run plans it again.
func RewriteDeletes(ctx context.Context, st *lake.State, plan DeleteRewritePlan, opts DeleteRewriteOptions) (res DeleteRewriteResult, err error) {
	if err := opts.Validate(); err != nil {
		return DeleteRewriteResult{}, fmt.Errorf("rewrite deletes of %s: %w", st.Ident, err)
	}
	opts = opts.withDefaults()
	res = DeleteRewriteResult{Plan: plan, Table: st.Table, Skipped: []string{}}
	if st.Metadata.Version() != plan.FormatVersion {
		return res, fmt.Errorf("rewrite deletes of %s: planned on format version %d, the table is at %d: %w", st.Ident, plan.FormatVersion, st.Metadata.Version(), ErrStaleGroup)
	}
	var cp CompactPlan
	var rest []DeleteAction
	for _, a := range plan.Actions {
		if a.Kind != DeleteActionApply {
			rest = append(rest, a)
			continue
		}
		g := PlannedGroup{Partition: a.Partition, Reasons: []string{a.Reason}, Paths: a.DataFiles}
		for _, p := range a.DataFiles {
			for _, f := range st.DataFiles {
				if f.Path == p {
					g.Files++
					g.Bytes += f.SizeBytes
					g.Records += f.Records
				}
			}
		}
		cp.Groups = append(cp.Groups, g)
		cp.InputFiles += g.Files
		cp.InputBytes += g.Bytes
	}
	if len(cp.Groups) > 0 {
		cp.Table, cp.Layout, cp.SnapshotID = plan.Table, opts.Compact.Layout, plan.SnapshotID
		cp.Deferred, cp.HeldBack = []PlannedGroup{}, []HeldFile{}
		cr, err := Compact(ctx, st, cp, opts.Compact)
		res.Compact = &cr
		if cr.Table != nil {
			res.Table = cr.Table
		}
		for _, c := range cr.Commits {
			res.DeletesRemoved += c.DeletesRemoved
		}
		for _, sk := range cr.Skipped {
			res.Skipped = append(res.Skipped, DeleteActionApply+" "+sk.Name)
		}
		if err != nil {
			return res, fmt.Errorf("rewrite deletes of %s: apply equality deletes: %w", st.Ident, err)
		}
	}
	if len(rest) == 0 {
		return res, nil
	}
	head, err := lake.LoadState(ctx, st.Ident, res.Table, lake.LoadOptions{})
	if err != nil {
		return res, fmt.Errorf("rewrite deletes of %s: reload: %w", st.Ident, err)
	}
	known := map[lake.DeleteKey]bool{}
	for _, d := range st.DeleteFiles {
		known[d.DeleteKey()] = true
	}
	live := map[lake.DeleteKey]lake.File{}
	for _, d := range head.DeleteFiles {
		live[d.DeleteKey()] = d
	}
	headData := map[string]lake.File{}
	for _, f := range head.DataFiles {
		headData[f.Path] = f
	}
	fio, err := head.Table.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("rewrite deletes of %s: open table io: %w", st.Ident, err)
	}
	wfs, ok := fio.(iceio.WriteFileIO)
	if !ok {
		return res, fmt.Errorf("rewrite deletes of %s: the table's storage cannot be written", st.Ident)
	}
	type staged struct {
		act     DeleteAction
		removed []lake.File
		added   []iceberg.DataFile
	}
	var ready []staged
	var written []string
	defer func() {
		if err != nil || res.SnapshotID == 0 {
			for _, p := range written {
				_ = wfs.Remove(p) // never committed
			}
		}
	}()
	for _, a := range rest {
		if why := staleAction(head, known, live, headData, a); why != "" {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s %s: %s", a.Kind, a.Partition, why))
			continue
		}
		s := staged{act: a}
		for _, k := range a.Deletes {
			s.removed = append(s.removed, live[k])
		}
		switch a.Kind {
		case DeleteActionMerge:
			spec, part := specOf(head, s.removed[0])
			df, err := writePositionDeletes(ctx, wfs, head, spec, part, a.positions)
			if err != nil {
				return res, fmt.Errorf("rewrite deletes of %s: merge %s: %w", st.Ident, a.Partition, err)
			}
			written = append(written, df.FilePath())
			s.added = []iceberg.DataFile{df}
		case DeleteActionConvert:
			dfs, err := writeVectors(ctx, wfs, head, a, headData, live)
			if err != nil {
				return res, fmt.Errorf("rewrite deletes of %s: convert %s: %w", st.Ident, a.Partition, err)
			}
			if len(dfs) > 0 {
				written = append(written, dfs[0].FilePath())
			}
			s.added = dfs
		}
		if err := verifyDeleteChange(ctx, head, a, s.removed, s.added, opts.Compact.Group); err != nil {
			return res, fmt.Errorf("rewrite deletes of %s: %s %s: %w", st.Ident, a.Kind, a.Partition, err)
		}
		ready = append(ready, s)
	}
	if len(ready) == 0 {
		return res, nil
	}
	props := iceberg.Properties{}
	if opts.Compact.Commit.RunID != "" {
		props[PropRunID] = opts.Compact.Commit.RunID
	}
	tx := head.Table.NewTransaction()
	rw := tx.NewRewrite(props)
	var removed, added int
	for _, s := range ready {
		for _, d := range s.removed {
			rw.DeleteFile(d.DataFile)
			removed++
		}
		for _, df := range s.added {
			rw.AddDeleteFile(df)
			added++
		}
	}
	if err := rw.Commit(ctx); err != nil {
		return res, fmt.Errorf("rewrite deletes of %s: stage: %w", st.Ident, err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		return res, fmt.Errorf("rewrite deletes of %s: commit: %w", st.Ident, err)
	}
	res.Table = tbl
	if s := tbl.CurrentSnapshot(); s != nil {
		res.SnapshotID = s.SnapshotID
	}
	res.DeletesRemoved += removed
	res.DeletesWritten += added
	return res, nil
}

// staleAction says why action a, planned on a state whose deletes were
// known, cannot be committed on head: a delete it removes is gone, a data
// file it checks is gone, or a delete unknown at planning applies to one of
// its data files. "" when it can.
func staleAction(head *lake.State, known map[lake.DeleteKey]bool, live map[lake.DeleteKey]lake.File, headData map[string]lake.File, a DeleteAction) string {
	for _, k := range a.Deletes {
		if _, ok := live[k]; !ok {
			return fmt.Sprintf("delete %s is no longer live", k)
		}
	}
	g := CommitGroup{Name: a.Partition}
	for _, p := range a.DataFiles {
		f, ok := headData[p]
		if !ok {
			return fmt.Sprintf("data file %s is no longer live", p)
		}
		g.Inputs = append(g.Inputs, f)
	}
	return staleReason(head, known, &g)
}

// specOf is the partition spec and values of delete d.
func specOf(st *lake.State, d lake.File) (iceberg.PartitionSpec, map[int]any) {
	if s := st.Metadata.PartitionSpecByID(int(d.SpecID)); s != nil {
		return *s, d.Partition
	}
	return *iceberg.UnpartitionedSpec, nil
}

// writePositionDeletes writes the rows positions (data file path to
// positions) into one position delete file of spec and partition, sorted
// by path and position as the spec asks.
func writePositionDeletes(ctx context.Context, fs iceio.WriteFileIO, st *lake.State, spec iceberg.PartitionSpec, part map[int]any, positions map[string][]int64) (iceberg.DataFile, error) {
	paths := make([]string, 0, len(positions))
	for p := range positions {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2147483546"})},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2147483545"})},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	var n int64
	for _, p := range paths {
		pos := slices.Clone(positions[p])
		slices.Sort(pos)
		pos = slices.Compact(pos)
		for _, x := range pos {
			b.Field(0).(*array.StringBuilder).Append(p)
			b.Field(1).(*array.Int64Builder).Append(x)
			n++
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	dir := st.Table.Location() + "/data"
	if !spec.IsUnpartitioned() {
		dir += "/" + spec.PartitionToPath(partitionRecord(spec, part), st.Metadata.CurrentSchema())
	}
	loc := dir + "/floe-deletes-" + uuid.NewString() + ".parquet"
	out, err := fs.Create(loc)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", loc, err)
	}
	w, err := pqarrow.NewFileWriter(sch, out, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)), pqarrow.DefaultWriterProps())
	if err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("write %s: %w", loc, err)
	}
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("write %s: %w", loc, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", loc, err)
	}
	size, err := fileSize(fs, loc)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", loc, err)
	}
	bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentPosDeletes, loc, iceberg.ParquetFile, part, nil, nil, n, size)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", loc, err)
	}
	if len(paths) == 1 {
		bld.ReferencedDataFile(paths[0])
	}
	return bld.Build(), nil
}

// writeVectors writes one Puffin file with a deletion vector per data file
// of a convert action: its positions, and those of the data file's vector
// when the action replaces one.
func writeVectors(ctx context.Context, fs iceio.WriteFileIO, st *lake.State, a DeleteAction, data map[string]lake.File, live map[lake.DeleteKey]lake.File) ([]iceberg.DataFile, error) {
	md := st.Metadata
	w := dv.NewDVWriter(fs, func(id int32) *iceberg.PartitionSpec { return md.PartitionSpecByID(int(id)) })
	for _, k := range a.Deletes {
		d := live[k]
		if d.DeleteKind != lake.DeletionVector {
			continue
		}
		bm, err := dv.ReadDV(fs, d.DataFile)
		if err != nil {
			return nil, fmt.Errorf("read the vector of %s: %w", d.ReferencedDataFile, err)
		}
		f := data[d.ReferencedDataFile]
		w.Load(f.Path, bm, f.SpecID, f.Partition)
	}
	for _, p := range a.DataFiles {
		f := data[p]
		if err := w.Add(p, a.positions[p], f.SpecID, f.Partition); err != nil {
			return nil, fmt.Errorf("vector of %s: %w", p, err)
		}
	}
	return w.Flush(ctx, st.Table.Location()+"/data/floe-dv-"+uuid.NewString()+".puffin")
}

// verifyDeleteChange reads the live rows of a's data files with the deletes
// head applies to them, then with removed taken out and added put in, and
// returns [ErrContentMismatch] when the two differ.
func verifyDeleteChange(ctx context.Context, head *lake.State, a DeleteAction, removed []lake.File, added []iceberg.DataFile, opts GroupOptions) error {
	if len(a.DataFiles) == 0 {
		return nil
	}
	scan := head.Table.Scan()
	tasks, err := head.ScanTasks(ctx, scan)
	scan.Close()
	if err != nil {
		return fmt.Errorf("plan the read of %s: %w", head.Ident, err)
	}
	want := map[string]bool{}
	for _, p := range a.DataFiles {
		want[p] = true
	}
	gone := map[lake.DeleteKey]bool{}
	for _, d := range removed {
		gone[d.DeleteKey()] = true
	}
	keyOf := func(df iceberg.DataFile) lake.DeleteKey {
		f := lake.NewFile(df, 0, 0, head.Metadata, head.Metadata.CurrentSchema(), true)
		return f.DeleteKey()
	}
	keep := func(dfs []iceberg.DataFile) []iceberg.DataFile {
		return slices.DeleteFunc(slices.Clone(dfs), func(df iceberg.DataFile) bool { return gone[keyOf(df)] })
	}
	var before, after []table.FileScanTask
	for _, t := range tasks {
		p := t.File.FilePath()
		if !want[p] {
			continue
		}
		before = append(before, t)
		n := t
		n.DeleteFiles, n.EqualityDeleteFiles, n.DeletionVectorFiles = keep(t.DeleteFiles), keep(t.EqualityDeleteFiles), keep(t.DeletionVectorFiles)
		for _, df := range added {
			switch {
			case df.FileFormat() == iceberg.PuffinFile:
				if r := df.ReferencedDataFile(); r != nil && *r == p {
					n.DeletionVectorFiles = append(n.DeletionVectorFiles, df)
				}
			default:
				if _, ok := a.positions[p]; ok {
					n.DeleteFiles = append(n.DeleteFiles, df)
				}
			}
		}
		after = append(after, n)
	}
	if len(before) != len(a.DataFiles) {
		return fmt.Errorf("%d of the %d data files to check are in the scan: %w", len(before), len(a.DataFiles), ErrStaleGroup)
	}
	was, err := DigestTasks(ctx, head.Table, before, 0, opts.ScanBatchRows)
	if err != nil {
		return fmt.Errorf("read the live rows: %w", err)
	}
	is, err := DigestTasks(ctx, head.Table, after, 0, opts.ScanBatchRows)
	if err != nil {
		return fmt.Errorf("read the live rows with the new deletes: %w", err)
	}
	if !was.Equal(is) {
		return fmt.Errorf("live rows of %s: %s with the old deletes, %s with the new: %w", strings.Join(a.DataFiles, ", "), was, is, ErrContentMismatch)
	}
	return nil
}
