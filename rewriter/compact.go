package rewriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/internal/sample"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// DefaultMinInputFiles is the least number of files a bin-pack group
// needs when [CompactOptions.MinInputFiles] is unset: 5, as Iceberg's
// rewrite_data_files.
const DefaultMinInputFiles = 5

// CompactOptions tune [PlanCompaction] and [Compact]. The zero value
// bin-packs every partition that needs it, with the table's target size,
// unbounded memory and no budget.
type CompactOptions struct {
	// Layout is the target layout; the zero value and "binpack" bin-pack.
	Layout layout.Layout
	// ZOrderMode is the z-order key: Iceberg-exact (zero value, the same
	// bytes Spark's rewrite_data_files writes) or rank-normalized.
	ZOrderMode layout.ZOrderMode
	// Quantiles, when set, are the bucket boundaries of a rank z-order or
	// Hilbert layout (a projection's, see simulator.Projection.Quantiles): the
	// rewrite then cuts the cells that were projected instead of fitting its own
	// on a fresh sample. They must cover every layout column.
	Quantiles *layout.Quantiles
	// Tree is the learned tree of a tree layout (a projection's, see
	// simulator.Projection.Tree): required for tree, whose leaves a rewrite
	// cannot learn on its own (it has no workload). Its columns must be
	// ones the layout names.
	Tree *layout.Tree
	// Partitions, when set, restricts compaction to these partition keys
	// (as lake.File.PartitionKey prints them).
	Partitions []string
	// TargetFileSizeBytes of the files written. Default: the table's
	// write.target-file-size-bytes, else 512 MiB. A Layout written with
	// its own target ("sort(a) target 64MiB") wins over it: whoever wrote
	// the layout that way (a person, a plan, a policy's layout key) meant
	// that size, and a policy's target_file_size must not silently
	// replace it.
	TargetFileSizeBytes int64
	// MinInputFiles is the least number of files a bin-pack group needs
	// (delete files or oversized files make a group regardless). Default:
	// [DefaultMinInputFiles].
	MinInputFiles int
	// MaxBytes bounds the input bytes of one run; partitions past it are
	// deferred to the next run (oldest data first). Zero: no bound.
	MaxBytes int64
	// MaxFilesFraction bounds the input files of one run as a fraction of
	// the table's data files. Zero: no bound.
	MaxFilesFraction float64
	// Priority lists partition keys that go first: control.Optimize passes
	// those whose groups were skipped (lost commit races, or inputs changed)
	// in the table's previous compaction.
	Priority []string
	// Group tunes each group's rewrite; its TargetFileSizeBytes and Keyer
	// are set by Compact.
	Group GroupOptions
	// Commit tunes the commit loop; its Layout is set by Compact.
	Commit CommitOptions
	// Lease tunes the run's lease (TTL, renewal interval, clock); its
	// RunID, Table and Operation are set by Compact.
	Lease LeaseOptions
	// GroupsPerBatch is how many groups are rewritten before they are
	// committed (partial progress: a failure keeps every committed batch).
	// Default: 1.
	GroupsPerBatch int
	// Progress, when set, is called once before any work with zero done,
	// then as each group's rows are read and written (see
	// [GroupOptions.Progress]) and after each group: done of total groups
	// are rewritten (or skipped), and bytesDone of bytesTotal, the
	// plan's input bytes, stand for the work done so far, the running
	// group's share included. A table of one partition thus still shows
	// progress. Calls never overlap.
	Progress func(done, total int, bytesDone, bytesTotal int64)
	// Pause, when set, is called at the points where a crash leaves the
	// table in a state of its own: before each batch's commit, its groups
	// written and not committed ([PauseBeforeCommit]), and once every
	// batch is committed, the lease and the spill directory still held
	// ([PauseCommitted]). The compaction waits for it to return. The crash
	// tests of cmd/floe stop a real process there (FLOE_TEST_PAUSE_AT), to
	// kill or interrupt it at a known point; nothing else sets it.
	Pause func(ctx context.Context, point string)
	// Logger receives one line per batch. Default: discard.
	Logger *slog.Logger
}

// TreeAppendFilesPerLeaf is how many target-size files' worth of rows per
// leaf of its tree a partition's files not in the tree must hold for
// [PlanCompaction] to rewrite them alone, routed into the leaves beside the
// files already there. Routed alone, a leaf's new rows are written into
// files of their own, beside its old files and sorted apart from them: the
// leaf's files no longer span its range once each, and a query that read
// one of them reads one of the new ones too; the fewer the new rows a leaf,
// the more that extra file costs against the files the query skips. With
// fewer rows than this the partition is rewritten whole instead, as a
// sort's is. Measured on TestTreeKeptThroughAppends' table (29 files in a
// tree of 5 leaves, each leaf's files its own), the files skipped lost,
// routed alone, against the tree before the append: 0.7 files a leaf 4.7
// pp, 1.4 3.5 pp, 2.1 2.1 pp, 2.8 1.3 pp, 3.5 0.8 pp, 5.5 0.2 pp, 8.3 none
// (the more files, the more of them a query skips); the partition rewritten
// whole lost none. When the writer cut files at the target size, not at
// leaves, 2.5 files a leaf routed alone lost 3.2 pp and 5 files 0.3 pp,
// and this was 4.
const TreeAppendFilesPerLeaf = 3

// PauseBeforeCommit is the [CompactOptions.Pause] point before the
// commit of batch n (from 1): batches before it are committed, its groups
// are written and not.
func PauseBeforeCommit(n int) string { return fmt.Sprintf("before-commit-%d", n) }

// PauseCommitted is the [CompactOptions.Pause] point after the last
// commit, before the compaction releases its lease and removes its spill
// directory.
const PauseCommitted = "committed"

// PlannedGroup is one partition's files to rewrite together.
type PlannedGroup struct {
	Partition string `json:"partition"`
	Files     int    `json:"files"`
	Bytes     int64  `json:"bytes"`
	Records   int64  `json:"records"`
	// Deletes counts the partition's deletes: delete files, and deletion
	// vectors one each.
	Deletes int      `json:"delete_files"`
	Reasons []string `json:"reasons"`
	// Paths are the data files of the group.
	Paths []string `json:"-"`
	// oldest is the smallest data sequence number, for budget order.
	oldest int64
}

// CompactPlan is what a compaction would do, computed from metadata only.
type CompactPlan struct {
	Table string `json:"table"`
	// Layout is the layout the compaction writes (binpack when none was given).
	Layout layout.Layout `json:"layout"`
	// SnapshotID is the snapshot the plan was made against.
	SnapshotID          int64          `json:"snapshot_id"`
	TargetFileSizeBytes int64          `json:"target_file_size_bytes"`
	Groups              []PlannedGroup `json:"groups"`
	// Deferred are groups over this run's budget, for a later run.
	Deferred []PlannedGroup `json:"deferred"`
	// HeldBack are data files left out of every group because a delete
	// that readers do not apply names them (see lake.DeleteIssue): their
	// rows must stay in the files that delete names.
	HeldBack   []HeldFile `json:"held_back"`
	InputFiles int        `json:"input_files"`
	InputBytes int64      `json:"input_bytes"`
}

// HeldFile is a data file a plan leaves alone, and why.
type HeldFile struct {
	Path      string `json:"path"`
	Partition string `json:"partition"`
	Reason    string `json:"reason"`
}

func (o CompactOptions) withDefaults(st *lake.State) CompactOptions {
	if o.Layout.Strategy == "" {
		o.Layout.Strategy = layout.StrategyBinpack
	}
	if o.Layout.TargetFileSizeBytes > 0 {
		o.TargetFileSizeBytes = o.Layout.TargetFileSizeBytes
	}
	if o.TargetFileSizeBytes <= 0 {
		o.TargetFileSizeBytes = st.TargetFileSizeBytes(512 << 20)
	}
	if o.MinInputFiles <= 0 {
		o.MinInputFiles = DefaultMinInputFiles
	}
	if o.GroupsPerBatch <= 0 {
		o.GroupsPerBatch = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Validate reports every problem at once.
func (o CompactOptions) Validate() error {
	var errs []error
	switch o.Layout.Strategy {
	case "", layout.StrategyBinpack, layout.StrategySort, layout.StrategyZOrder, layout.StrategyHilbert:
	case layout.StrategyTree:
		// A missing tree is the table's to supply (see [RecordedTree]):
		// [CheckCompaction] and [Compact] refuse it, not Validate, so that a
		// typed tree layout passes flag checks before the table is read.
		if o.Tree != nil {
			if data, err := o.Tree.MarshalJSON(); err != nil {
				errs = append(errs, fmt.Errorf("layout %s: marshal its tree: %w", o.Layout, err))
			} else if len(data) > MaxTreePropertyBytes {
				errs = append(errs, fmt.Errorf("layout %s: its learned tree (%d leaves) is %d bytes of JSON, more than the %d a table can record in %s: learn a coarser tree (a larger target file size makes fewer leaves)",
					o.Layout, o.Tree.Leaves(), len(data), MaxTreePropertyBytes, PropLayoutTree))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("layout %s cannot be compacted into: want binpack, sort, zorder, hilbert or tree", o.Layout))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, errors.New("max bytes must be >= 0"))
	}
	if o.MaxFilesFraction < 0 || o.MaxFilesFraction > 1 {
		errs = append(errs, errors.New("max files fraction must be in [0, 1]"))
	}
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("target file size must be >= 0, got %d", o.TargetFileSizeBytes))
	}
	if o.MinInputFiles < 0 {
		errs = append(errs, fmt.Errorf("min input files must be >= 0, got %d", o.MinInputFiles))
	}
	if o.GroupsPerBatch < 0 {
		errs = append(errs, fmt.Errorf("groups per batch must be >= 0, got %d", o.GroupsPerBatch))
	}
	// The group's bounds (memory above all) are checked here too, so that a
	// plan — a dry run — refuses what the rewrite would.
	if err := o.Group.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return MarkInvalidOptions(errors.Join(errs...))
}

// PlanCompaction chooses the partitions to rewrite, from metadata only:
//
//   - bin-pack: a partition's small files (below 75% of the target) and
//     oversized files (above 180%) and the files its delete files touch,
//     when there are at least MinInputFiles of them or any delete file;
//   - sort, z-order, Hilbert: every file of a partition, when the
//     partition has delete files, two or more small files, an oversized
//     file, or a file not known to be in this layout. A file is known to be
//     in the layout when the snapshot that added it was a floe rewrite into
//     this layout (summary floe.layout), when its name carries the layout's
//     [LayoutTag] (floe names the files of a layout rewrite so, which keeps
//     them known after their adding snapshot is expired), or, for a sort,
//     when its sort_order_id is the table's sort order for the layout.
//     Anything else — a file another writer added, or one whose adding
//     snapshot was expired and that says nothing of its order — is not in
//     the layout: leaving such a file alone would leave its partition
//     unsorted for good. The plan's reasons tell the two cases apart.
//   - tree: a file is in the layout as for z-order, and only when it was
//     routed by the same learned tree ([CompactOptions.Tree]: the snapshot
//     summary's floe.layout.tree-id, or the tag, which for a tree hashes the
//     tree too); files of a tree learned before are not. Files in the tree
//     stay where they are: only the files not in it (appended since, or
//     written by an older tree), the small files when a partition has two
//     or more and the oversized ones are rewritten, their rows routed into
//     the same leaves — unless the files not in the tree hold fewer than
//     [TreeAppendFilesPerLeaf] files' worth of rows a leaf, or the
//     partition has deletes: then it is rewritten whole.
//
// Deletes count one by one: each deletion vector of a Puffin file, each
// position and equality delete file. A data file that a delete readers do
// not apply names (lake.State.HeldBack: a misfiled delete, or position
// deletes a deletion vector lacks) is in no group: it is listed in HeldBack.
//
// A partition of an older partition spec is planned like any other, under
// its own key ("spec=0/…"); its files are rewritten into the current spec
// (see [RewriteGroup]).
//
// Groups are then ordered — Priority partitions first, then oldest data
// first — and cut at the budget; the rest are Deferred.
func PlanCompaction(st *lake.State, opts CompactOptions) (CompactPlan, error) {
	if err := CheckCompaction(st, opts); err != nil {
		return CompactPlan{}, fmt.Errorf("plan compaction of %s: %w", st.Ident, err)
	}
	opts = opts.withDefaults(st)
	plan := CompactPlan{Table: st.Ident.String(), Layout: opts.Layout, TargetFileSizeBytes: opts.TargetFileSizeBytes,
		Groups: []PlannedGroup{}, Deferred: []PlannedGroup{}, HeldBack: []HeldFile{}}
	if st.Current != nil {
		plan.SnapshotID = st.Current.SnapshotID
	}
	wanted := ordering(opts.Layout)
	if opts.Layout.Strategy == layout.StrategyTree && opts.Tree != nil {
		wanted += " (learned tree " + opts.Tree.Fingerprint() + ")"
	}
	inLayout := membership(st, opts.Layout, opts.Tree, opts.TargetFileSizeBytes)
	only := map[string]bool{}
	for _, p := range opts.Partitions {
		only[p] = true
	}
	small, large := lake.SizeCutoffs(opts.TargetFileSizeBytes)
	held := st.HeldBack()
	byPart := map[string][]lake.File{}
	var order []string
	for _, f := range st.DataFiles {
		if len(only) > 0 && !only[f.PartitionKey] {
			continue
		}
		if is := held[f.Path]; is != nil {
			plan.HeldBack = append(plan.HeldBack, HeldFile{Path: f.Path, Partition: f.PartitionKey,
				Reason: fmt.Sprintf("a %s delete readers do not apply names it: %s", is.Kind, is.Reason)})
			continue
		}
		if _, ok := byPart[f.PartitionKey]; !ok {
			order = append(order, f.PartitionKey)
		}
		byPart[f.PartitionKey] = append(byPart[f.PartitionKey], f)
	}
	deletes := map[string][]lake.File{}
	for _, d := range st.DeleteFiles {
		deletes[d.PartitionKey] = append(deletes[d.PartitionKey], d)
	}
	var groups []PlannedGroup
	for _, key := range order {
		files := byPart[key]
		nDel := len(deletes[key])
		var smallN, largeN, drift, unknown int
		for _, f := range files {
			switch {
			case f.SizeBytes < small:
				smallN++
			case f.SizeBytes > large:
				largeN++
			}
			if opts.Layout.Strategy != layout.StrategyBinpack {
				switch in, known := inLayout(f); {
				case !known:
					unknown++
				case !in:
					drift++
				}
			}
		}
		var reasons []string
		var pick []lake.File
		kept := 0 // tree: files left alone, in the tree already
		switch {
		case opts.Layout.Strategy == layout.StrategyTree && nDel == 0:
			// New rows are routed into the leaves the table's files are
			// in already: only files not in the tree are rewritten, with
			// the oversized, so a table appended to is re-clustered at the
			// cost of its appends, not of the whole partition. A small
			// file in the tree is the tree's own shape (a leaf's slice
			// below a file, the end of a run of packed leaves): rewritten,
			// its rows would land in the same small file again, on every
			// run.
			var rows, bytes, picked int64
			for _, f := range files {
				rows += f.Records
				bytes += f.SizeBytes
				in, _ := inLayout(f)
				if !in || f.SizeBytes > large {
					pick = append(pick, f)
					picked += f.Records
				} else {
					kept++
				}
			}
			if len(pick) == 0 {
				continue
			}
			// Unless they are too few: rows that fill less than
			// [TreeAppendFilesPerLeaf] files per leaf would add a small
			// file of their own to each leaf, which every query that reads
			// the leaf reads too. The partition is then rewritten whole,
			// as a sort's is, each leaf into files of its own.
			if perFile := float64(opts.TargetFileSizeBytes) * float64(rows) / float64(max(bytes, 1)); kept > 0 && (drift > 0 || unknown > 0) &&
				float64(picked) < TreeAppendFilesPerLeaf*float64(opts.Tree.Leaves())*perFile {
				reasons = append(reasons, fmt.Sprintf("%d rows to route into the tree's %d leaves, fewer than %d files' worth a leaf (~%.0f rows a file): rewritten with the partition's files in the tree, not spread thin across leaves",
					picked, opts.Tree.Leaves(), TreeAppendFilesPerLeaf, perFile))
				pick, kept = files, 0
			}
		case opts.Layout.Strategy == layout.StrategyBinpack:
			touched := touchedByDeletes(deletes[key])
			for _, f := range files {
				if f.SizeBytes < small || f.SizeBytes > large || touched[f.Path] || (nDel > 0 && len(touched) == 0) {
					pick = append(pick, f)
				}
			}
			if len(pick) < opts.MinInputFiles && nDel == 0 && largeN == 0 {
				continue
			}
			if len(pick) < 2 && nDel == 0 && largeN == 0 {
				continue
			}
		default:
			if nDel == 0 && smallN < 2 && largeN == 0 && drift == 0 && unknown == 0 {
				continue
			}
			pick = files
		}
		if smallN > 0 {
			reasons = append(reasons, fmt.Sprintf("%d small files", smallN))
		}
		if largeN > 0 {
			reasons = append(reasons, fmt.Sprintf("%d oversized files", largeN))
		}
		if nDel > 0 {
			reasons = append(reasons, deleteReason(deletes[key]))
		}
		if spec := int32(st.Metadata.DefaultPartitionSpec()); files[0].SpecID != spec {
			reasons = append(reasons, fmt.Sprintf("partition spec %d, rewritten into the current spec %d", files[0].SpecID, spec))
		}
		if drift > 0 {
			reasons = append(reasons, fmt.Sprintf("%d files not in %s", drift, wanted))
		}
		if unknown > 0 {
			reasons = append(reasons, fmt.Sprintf("%d files of unknown layout (no record that they are in %s: their adding snapshot is expired or another writer added them)", unknown, wanted))
		}
		if kept > 0 {
			reasons = append(reasons, fmt.Sprintf("%d files in the tree already, kept", kept))
		}
		g := PlannedGroup{Partition: key, Deletes: nDel, Reasons: reasons, oldest: pick[0].SequenceNumber}
		for _, f := range pick {
			g.Files++
			g.Bytes += f.SizeBytes
			g.Records += f.Records
			g.Paths = append(g.Paths, f.Path)
			g.oldest = min(g.oldest, f.SequenceNumber)
		}
		groups = append(groups, g)
	}
	prio := map[string]int{}
	for i, p := range opts.Priority {
		prio[p] = len(opts.Priority) - i
	}
	slices.SortStableFunc(groups, func(a, b PlannedGroup) int {
		if c := cmp.Compare(prio[b.Partition], prio[a.Partition]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.oldest, b.oldest); c != 0 {
			return c
		}
		return strings.Compare(a.Partition, b.Partition)
	})
	maxFiles := 0
	if opts.MaxFilesFraction > 0 {
		maxFiles = max(1, int(opts.MaxFilesFraction*float64(len(st.DataFiles))))
	}
	for _, g := range groups {
		over := (opts.MaxBytes > 0 && plan.InputBytes+g.Bytes > opts.MaxBytes) ||
			(maxFiles > 0 && plan.InputFiles+g.Files > maxFiles)
		// The first group always runs, so that a budget smaller than one
		// partition still makes progress.
		if over && len(plan.Groups) > 0 {
			plan.Deferred = append(plan.Deferred, g)
			continue
		}
		plan.Groups = append(plan.Groups, g)
		plan.InputFiles += g.Files
		plan.InputBytes += g.Bytes
	}
	return plan, nil
}

// LayoutTag is the short, stable name of layout l that floe puts at the end
// of the names of the files a layout rewrite writes ("floe-" and eight hex
// digits of a hash of l's canonical text), so that [PlanCompaction] still
// knows those files are in l once the snapshot that added them, whose
// floe.layout summary said so, has been expired. A sort also records the
// table's sort order id on each file; z-order and Hilbert have no Iceberg
// sort order to record, so without the tag every expiry would make their
// files look unsorted and the next run would rewrite them again.
func LayoutTag(l layout.Layout) string {
	h := fnv.New32a()
	h.Write([]byte(l.String()))
	return fmt.Sprintf("floe-%08x", h.Sum32())
}

// deleteReason says what deletes a partition has: "24 deletion vectors",
// "1 position delete file, 2 equality delete files".
func deleteReason(ds []lake.File) string {
	n := map[lake.DeleteKind]int{}
	for _, d := range ds {
		n[d.DeleteKind]++
	}
	var parts []string
	for _, k := range []struct {
		kind       lake.DeleteKind
		one, other string
	}{
		{lake.DeletionVector, "deletion vector", "deletion vectors"},
		{lake.PositionDeletes, "position delete file", "position delete files"},
		{lake.EqualityDeletes, "equality delete file", "equality delete files"},
	} {
		switch c := n[k.kind]; c {
		case 0:
		case 1:
			parts = append(parts, "1 "+k.one)
		default:
			parts = append(parts, fmt.Sprintf("%d %s", c, k.other))
		}
	}
	return strings.Join(parts, ", ")
}

// touchedByDeletes returns the data files that file-scoped position
// deletes and deletion vectors name; partition-scoped deletes name none.
func touchedByDeletes(ds []lake.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range ds {
		if d.ReferencedDataFile != "" {
			out[d.ReferencedDataFile] = true
		}
	}
	return out
}

// matchingSortOrder returns the id of the table sort order that orders by
// the layout's columns with its directions and null orders.
func matchingSortOrder(st *lake.State, l layout.Layout) (int, bool) {
	want, err := icebergSortOrder(st.Metadata.CurrentSchema(), l, 1)
	if err != nil {
		return 0, false
	}
	for _, so := range st.Metadata.SortOrders() {
		if sameFields(so, want) {
			return so.OrderID(), true
		}
	}
	return 0, false
}

func sameFields(a, b table.SortOrder) bool {
	var fa, fb []table.SortField
	for _, f := range a.Fields() {
		fa = append(fa, f)
	}
	for _, f := range b.Fields() {
		fb = append(fb, f)
	}
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if !slices.Equal(fa[i].SourceIDs, fb[i].SourceIDs) || fa[i].Direction != fb[i].Direction ||
			fa[i].NullOrder != fb[i].NullOrder || fa[i].Transform.String() != fb[i].Transform.String() {
			return false
		}
	}
	return true
}

// icebergSortOrder expresses a sort layout as an Iceberg sort order.
func icebergSortOrder(schema *iceberg.Schema, l layout.Layout, id int) (table.SortOrder, error) {
	fields := make([]table.SortField, 0, len(l.Columns))
	for _, c := range l.Columns {
		f, ok := schema.FindFieldByNameCaseInsensitive(c.Name)
		if !ok {
			return table.SortOrder{}, fmt.Errorf("sort order: no column %q", c.Name)
		}
		sf := table.SortField{SourceIDs: []int{f.ID}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}
		if c.Desc {
			sf.Direction = table.SortDESC
		}
		if c.NullsLast {
			sf.NullOrder = table.NullsLast
		} else {
			sf.NullOrder = table.NullsFirst
		}
		fields = append(fields, sf)
	}
	return table.NewSortOrder(id, fields)
}

// CompactResult is what [Compact] did.
type CompactResult struct {
	Plan      CompactPlan    `json:"plan"`
	Commits   []Commit       `json:"commits"`
	Skipped   []SkippedGroup `json:"skipped"`
	FilesIn   int            `json:"files_in"`
	FilesOut  int            `json:"files_out"`
	BytesIn   int64          `json:"bytes_in"`
	BytesOut  int64          `json:"bytes_out"`
	Rows      int64          `json:"rows"`
	PeakArrow int64          `json:"peak_arrow_bytes"`
	Duration  time.Duration  `json:"duration_ns"`
	// RemovedOutputs counts files the run wrote and removed again because
	// no commit took them (skipped groups, a failed or interrupted batch).
	RemovedOutputs int `json:"removed_outputs"`
	// LeftOutputs are files the run wrote, no commit took and it could not
	// remove: orphans, which 'floe orphans' reports as left by the run (see
	// [RunOfFile]).
	LeftOutputs []string `json:"left_outputs,omitempty"`
	// SweptSpill are spill directories of dead runs removed at the start.
	SweptSpill []SweptDir `json:"swept_spill"`
	// Table is the table after the last commit.
	Table *table.Table `json:"-"`
}

// Compact executes plan on the table of st: it rewrites each group with the
// native engine — deletes applied, rows ordered by the layout key with
// bounded memory — and commits every GroupsPerBatch groups as one replace
// snapshot through [CommitGroups], which re-validates inputs on conflicts and
// skips groups whose inputs changed. Each of those commits also declares the
// layout on the table (a sort becomes the table's default sort order; every
// layout but bin-pack the table property floe.layout, since Iceberg sort
// orders cannot express z-order or Hilbert), so the table never declares a
// layout its files are not in, and a run that fails before its first commit
// leaves the table's metadata as it was. Committed batches stay committed
// when a later one fails.
func Compact(ctx context.Context, st *lake.State, plan CompactPlan, opts CompactOptions) (res CompactResult, err error) {
	if err := opts.Validate(); err != nil {
		return CompactResult{}, fmt.Errorf("compact %s: %w", st.Ident, err)
	}
	if err := needTree(opts); err != nil {
		return CompactResult{}, fmt.Errorf("compact %s: %w", st.Ident, err)
	}
	opts = opts.withDefaults(st)
	res = CompactResult{Plan: plan, Table: st.Table, Commits: []Commit{}, Skipped: []SkippedGroup{}}
	if len(plan.Groups) == 0 {
		return res, nil
	}
	// The lease comes before any file is written, so orphan removal in any
	// floe process sees the run before it sees its files.
	leaseOpts := opts.Lease
	leaseOpts.RunID, leaseOpts.Table, leaseOpts.Operation = opts.Commit.RunID, st.Ident.String(), "compact"
	lease, err := AcquireLease(ctx, st.Table, leaseOpts)
	if err != nil {
		return res, fmt.Errorf("compact %s: %w", st.Ident, err)
	}
	defer func() { err = errors.Join(err, lease.Release()) }()
	if opts.Commit.RunID == "" {
		opts.Commit.RunID = lease.RunID()
	}
	swept, err := SweepRunDirs(opts.Group.TempDir)
	res.SweptSpill = swept
	if err != nil {
		opts.Logger.Warn("spill directories of dead runs left in place", "table", st.Ident.String(), "err", err)
	}
	rd, err := NewRunDir(opts.Group.TempDir, lease.RunID())
	if err != nil {
		return res, fmt.Errorf("compact %s: %w", st.Ident, err)
	}
	defer func() { err = errors.Join(err, rd.Remove()) }()
	opts.Group.TempDir = rd.Path
	opts.Commit.Lease = lease
	res, err = compact(ctx, st, plan, opts, res)
	if err != nil && ctx.Err() != nil {
		err = interrupted(ctx, st.Ident, plan, res, lease.RunID(), err)
	}
	return res, err
}

// compact is [Compact] inside the run's lease and spill directory. Output
// files that end up in no commit — of a group that failed, went stale or
// was in a batch whose commit failed — are removed before it returns, unless
// the table references them (a commit whose answer was lost).
func compact(ctx context.Context, st *lake.State, plan CompactPlan, opts CompactOptions, init CompactResult) (res CompactResult, err error) {
	res = init
	start := time.Now()
	var uncommitted []string
	defer func() {
		if len(uncommitted) == 0 {
			return
		}
		removed, cerr := removeUncommitted(context.WithoutCancel(ctx), res.Table, uncommitted)
		res.RemovedOutputs += len(removed)
		if cerr != nil {
			res.LeftOutputs = append(res.LeftOutputs, without(uncommitted, removed)...)
			err = errors.Join(err, fmt.Errorf("compact %s: remove uncommitted outputs: %w", st.Ident, cerr))
		}
	}()
	tbl := st.Table
	decl, err := declaration(tbl, opts.Layout, opts.Tree, plan.TargetFileSizeBytes)
	if err != nil {
		return res, fmt.Errorf("compact %s: %w", st.Ident, err)
	}
	var sortOrderID *int
	if decl != nil && decl.SortOrder != nil {
		sortOrderID = &decl.SortOrderID
	}
	keyer, err := buildKeyer(ctx, st, opts)
	if err != nil {
		return res, fmt.Errorf("compact %s: %w", st.Ident, err)
	}
	gopts := opts.Group
	gopts.TargetFileSizeBytes = plan.TargetFileSizeBytes
	gopts.Keyer = keyer
	gopts.SortOrderID = sortOrderID
	if opts.Layout.Strategy != layout.StrategyBinpack {
		gopts.NameTag = tagOf(opts.Layout, opts.Tree)
	}
	copts := opts.Commit
	copts.Layout = opts.Layout.String()
	if opts.Layout.Strategy == layout.StrategyTree && opts.Tree != nil {
		// Each snapshot names the tree its files were routed by, so that
		// the next compaction keeps them only while the table records that
		// tree (see [PlanCompaction]).
		copts.SnapshotProps = maps.Clone(copts.SnapshotProps)
		if copts.SnapshotProps == nil {
			copts.SnapshotProps = iceberg.Properties{}
		}
		copts.SnapshotProps[PropLayoutTreeID] = opts.Tree.Fingerprint()
	}
	gopts.RunID = copts.RunID
	if gopts.Allocator == nil && gopts.Pages == nil {
		// One pool for the whole compaction, so that a group's buffers
		// pass to the next, as in RewriteGroups. A buffer never released
		// keeps its mapping; the rewrite stands, and the log says so.
		gopts.Pages = NewPagePool()
		defer func() {
			if cerr := gopts.Pages.Close(); cerr != nil {
				opts.Logger.Warn("compaction left Arrow memory mapped", "table", st.Ident.String(), "err", cerr)
			}
		}()
	}
	copts.Declare = decl
	if copts.Logger == nil {
		copts.Logger = opts.Logger
	}
	// groupsDone and bytesDone count the groups finished (committed or
	// skipped) and their input bytes, for opts.Progress.
	var groupsDone int
	var bytesDone int64
	progress := func(running int64) {
		if opts.Progress != nil {
			opts.Progress(groupsDone, len(plan.Groups), bytesDone+running, plan.InputBytes)
		}
	}
	progress(0)
	batches := 0 // batches that reached their commit
	for start := 0; start < len(plan.Groups); start += opts.GroupsPerBatch {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("compact %s: %w", st.Ident, err)
		}
		batch := plan.Groups[start:min(start+opts.GroupsPerBatch, len(plan.Groups))]
		// Each batch is planned on the table as it is now: the previous
		// batch's commit moved it.
		base, err := lake.LoadState(ctx, st.Ident, tbl, lake.LoadOptions{SkipBounds: true})
		if err != nil {
			return res, fmt.Errorf("compact %s: %w", st.Ident, err)
		}
		tasks, err := planTasks(ctx, base)
		if err != nil {
			return res, fmt.Errorf("compact %s: %w", st.Ident, err)
		}
		var groups []CommitGroup
		for _, pg := range batch {
			var gt []table.FileScanTask
			for _, p := range pg.Paths {
				gt = append(gt, tasks[p]...)
			}
			if len(gt) == 0 {
				// Every input is gone since planning: nothing to do.
				res.Skipped = append(res.Skipped, SkippedGroup{Name: pg.Partition, Err: fmt.Errorf("%w: no input file is live any more", ErrStaleGroup)})
				groupsDone++
				bytesDone += pg.Bytes
				progress(0)
				continue
			}
			if opts.Progress != nil {
				// The group's own measure of its bytes is scaled to the
				// plan's, so that the run's bytes add up to plan.InputBytes.
				var groupBytes int64
				for _, t := range CollapseTasks(gt) {
					groupBytes += t.File.FileSizeBytes()
				}
				gopts.Progress = func(b int64) {
					if groupBytes > 0 {
						progress(min(pg.Bytes, int64(float64(b)/float64(groupBytes)*float64(pg.Bytes))))
					}
				}
			}
			files, stats, err := RewriteGroup(ctx, tbl, gt, gopts)
			if err != nil {
				return res, fmt.Errorf("compact %s: partition %q: %w", st.Ident, pg.Partition, err)
			}
			res.Rows += stats.Rows
			res.PeakArrow = max(res.PeakArrow, stats.PeakArrowBytes)
			cg, err := NewCommitGroup(base, pg.Partition, gt, files, stats.Content)
			for _, f := range files {
				uncommitted = append(uncommitted, f.FilePath())
			}
			groupsDone++
			bytesDone += pg.Bytes
			progress(0)
			if err != nil {
				if errors.Is(err, ErrStaleGroup) {
					s := SkippedGroup{Name: pg.Partition, Err: err}
					for _, f := range files {
						s.Orphans = append(s.Orphans, f.FilePath())
					}
					res.Skipped = append(res.Skipped, s)
					continue
				}
				return res, fmt.Errorf("compact %s: %w", st.Ident, err)
			}
			groups = append(groups, cg)
		}
		if len(groups) == 0 {
			continue
		}
		copts.GroupsPerCommit = len(groups)
		batches++
		if opts.Pause != nil {
			opts.Pause(ctx, PauseBeforeCommit(batches))
		}
		rep, err := CommitGroups(ctx, base, groups, copts)
		res.Commits = append(res.Commits, rep.Commits...)
		res.Skipped = append(res.Skipped, rep.Skipped...)
		if rep.Table != nil {
			tbl = rep.Table
			res.Table = tbl
		}
		if err != nil {
			return res, fmt.Errorf("compact %s: %w", st.Ident, err)
		}
		// Committed: what is left of the batch are skipped groups' files.
		uncommitted = uncommitted[:0]
		for _, s := range rep.Skipped {
			uncommitted = append(uncommitted, s.Orphans...)
		}
		if len(uncommitted) > 0 {
			removed, err := removeUncommitted(context.WithoutCancel(ctx), tbl, uncommitted)
			res.RemovedOutputs += len(removed)
			if err != nil {
				res.LeftOutputs = append(res.LeftOutputs, without(uncommitted, removed)...)
				uncommitted = uncommitted[:0]
				return res, fmt.Errorf("compact %s: remove outputs of skipped groups: %w", st.Ident, err)
			}
			uncommitted = uncommitted[:0]
		}
		opts.Logger.Info("compaction batch committed", "table", st.Ident.String(), "groups", len(groups), "commits", len(rep.Commits))
	}
	if opts.Pause != nil && batches > 0 {
		opts.Pause(ctx, PauseCommitted)
	}
	for _, c := range res.Commits {
		res.FilesIn += c.FilesIn
		res.FilesOut += c.FilesOut
		res.BytesIn += c.BytesIn
		res.BytesOut += c.BytesOut
	}
	res.Duration = time.Since(start)
	if len(res.Commits) == 0 && len(res.Skipped) > 0 {
		// A compaction that had work and committed none of it did not
		// compact: reported as done, it would read as fresh while the
		// table's backlog grows. Next time its partitions go first.
		var names []string
		for _, g := range res.Skipped {
			names = append(names, cmp.Or(g.Name, "(unpartitioned)"))
		}
		return res, fmt.Errorf("compact %s: nothing committed: all %d groups were skipped (%s), the first because %v: %w",
			st.Ident, len(res.Skipped), strings.Join(names, ", "), res.Skipped[0].Err, ErrNothingCommitted)
	}
	return res, nil
}

// removeUncommitted deletes output files that no commit took. It reloads
// the table first: if any of them is live, a commit whose answer was lost
// took them, and none is removed (the caller's error says the rest).
func removeUncommitted(ctx context.Context, tbl *table.Table, paths []string) ([]string, error) {
	fresh := *tbl
	if err := fresh.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("reload table: %w", err)
	}
	head, err := lake.LoadState(ctx, lake.Ident{}, &fresh, lake.LoadOptions{SkipBounds: true})
	if err != nil {
		return nil, fmt.Errorf("load head: %w", err)
	}
	live := make(map[string]bool, len(head.DataFiles))
	for _, f := range head.DataFiles {
		live[f.Path] = true
	}
	for _, p := range paths {
		if live[p] {
			return nil, fmt.Errorf("output %s is live in snapshot %d: the commit may have landed, nothing removed", p, snapshotID(head))
		}
	}
	fio, err := fresh.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table io: %w", err)
	}
	files := fileSet{}
	for _, p := range paths {
		files[p] = 0
	}
	removed, _, err := deleteFiles(ctx, fio, files, 8)
	return removed, err
}

// without is paths less those in drop.
func without(paths, drop []string) []string {
	gone := make(map[string]bool, len(drop))
	for _, p := range drop {
		gone[p] = true
	}
	var out []string
	for _, p := range paths {
		if !gone[p] {
			out = append(out, p)
		}
	}
	return out
}

// planTasks lists the scan tasks of the state's table once and indexes them
// by data file path; the planner attaches the delete files each task needs
// (see lake.State.ScanTasks, which spares a table without deletes a second
// read of every manifest).
func planTasks(ctx context.Context, st *lake.State) (map[string][]table.FileScanTask, error) {
	scan := st.Table.Scan()
	tasks, err := st.ScanTasks(ctx, scan)
	if err != nil {
		return nil, fmt.Errorf("plan scan: %w", err)
	}
	out := map[string][]table.FileScanTask{}
	for _, t := range tasks {
		out[t.File.FilePath()] = append(out[t.File.FilePath()], t)
	}
	return out, nil
}

// declaration is what the table will declare once files in layout l are
// committed (see [Declaration]): always the target size the files are
// written for (lake.PropRewriteTargetFileSize); floe.layout for sort,
// z-order, Hilbert and tree; for a tree also the learned tree
// ([PropLayoutTree]); for a sort also the Iceberg sort order, with the id
// it has or will get in tbl, to stamp on the new files. Nothing is committed
// here: the declaration goes into the commits of the rewritten files.
func declaration(tbl *table.Table, l layout.Layout, tree *layout.Tree, target int64) (*Declaration, error) {
	d := &Declaration{Layout: l.String(), TargetFileSizeBytes: target}
	switch l.Strategy {
	case layout.StrategyTree:
		if tree == nil {
			return nil, fmt.Errorf("layout %s needs its learned tree", l)
		}
		data, err := tree.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("layout %s: marshal its tree: %w", l, err)
		}
		d.Tree = data
	case layout.StrategySort:
		so, err := icebergSortOrder(tbl.Schema(), l, 1)
		if err != nil {
			return nil, err
		}
		d.SortOrder = &so
		d.SortOrderID = sortOrderIDIn(tbl.Metadata(), so)
	case layout.StrategyZOrder, layout.StrategyHilbert:
	default:
		d.Layout = "" // bin-pack declares no layout, only the target size
	}
	return d, nil
}

// buildKeyer returns the layout's row key: nil for bin-pack; for rank
// z-order and Hilbert, quantiles are fitted on a seeded sample of the
// table's rows, read by internal/sample as the simulator reads its
// projection sample (1,000 rows per file the rewrite writes, at least 0.1%
// of the rows, capped at sample.Options.MaxRows): a fixed 10,000-row sample
// made the cell boundaries, so the files, vary by ±2 pp of skip from one
// rewrite of the same table to the next.
func buildKeyer(ctx context.Context, st *lake.State, opts CompactOptions) (Keyer, error) {
	l := opts.Layout
	if l.Strategy == layout.StrategyBinpack || l.Strategy == layout.StrategyCurrent {
		return nil, nil
	}
	schema, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema: %w", err)
	}
	eo := layout.EncoderOptions{ZOrderMode: opts.ZOrderMode, Tree: opts.Tree}
	ranked := l.Strategy == layout.StrategyHilbert || (l.Strategy == layout.StrategyZOrder && opts.ZOrderMode == layout.ZOrderRank)
	if ranked && opts.Quantiles != nil {
		for _, c := range l.Columns {
			if _, ok := opts.Quantiles.Buckets(c.Name); !ok {
				return nil, fmt.Errorf("quantiles given for %v do not cover layout column %s", opts.Quantiles.Columns(), c.Name)
			}
		}
		eo.Quantiles = opts.Quantiles
	} else if ranked {
		cols := make([]string, len(l.Columns))
		for i, c := range l.Columns {
			cols[i] = c.Name
		}
		var bytes int64
		for _, f := range st.DataFiles {
			bytes += f.SizeBytes
		}
		files := int((bytes + opts.TargetFileSizeBytes - 1) / max(opts.TargetFileSizeBytes, 1))
		var recs []arrow.RecordBatch
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		_, err := sample.Read(ctx, st, cols, sample.Options{ProjectedFiles: max(files, 1)}, func(_ *lake.File, rec arrow.RecordBatch) {
			recs = append(recs, rec)
		})
		if err != nil {
			return nil, fmt.Errorf("sample for quantiles: %w", err)
		}
		q, err := layout.FitQuantiles(recs, cols, 0)
		if err != nil {
			return nil, fmt.Errorf("fit quantiles: %w", err)
		}
		eo.Quantiles = q
	}
	enc, err := layout.NewEncoder(l, schema, eo)
	if err != nil {
		return nil, err
	}
	return enc, nil
}
