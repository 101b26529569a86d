package rewriter

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// ordering is l's text without its target size: a file is in a layout
// whatever target it was written at; the target decides which files are
// small or oversized, not how their rows are ordered. A plan writes
// "sort(a) target 65536", and the policy's "sort(a)" at the same 64 KiB
// must not rewrite it again.
func ordering(l layout.Layout) string {
	l.TargetFileSizeBytes = 0
	return l.String()
}

// tagOf is the [LayoutTag] of the files written in l, for a tree layout
// routed by tree: then the tag hashes the tree's fingerprint too, so that
// the files of two trees learned on the same columns are told apart.
func tagOf(l layout.Layout, tree *layout.Tree) string {
	if l.Strategy != layout.StrategyTree || tree == nil {
		return LayoutTag(l)
	}
	h := fnv.New32a()
	h.Write([]byte(l.String()))
	h.Write([]byte(" tree "))
	h.Write([]byte(tree.Fingerprint()))
	return fmt.Sprintf("floe-%08x", h.Sum32())
}

// membership returns a function that reports whether a file of st is known
// to be in layout l (routed by tree, for a tree layout), and whether
// anything about its layout is known at all (see [PlanCompaction]); target
// is the size the compaction writes, whose tag the files may carry.
func membership(st *lake.State, l layout.Layout, tree *layout.Tree, target int64) func(lake.File) (in, known bool) {
	summaries := map[int64]map[string]string{}
	for _, s := range st.Snapshots {
		summaries[s.ID] = s.Summary
	}
	wanted := ordering(l)
	treeID := ""
	if l.Strategy == layout.StrategyTree && tree != nil {
		treeID = tree.Fingerprint()
	}
	sortID := -1
	if l.Strategy == layout.StrategySort {
		if id, ok := matchingSortOrder(st, l); ok {
			sortID = id
		}
	}
	// The names floe gives a layout's files: the layout as written, with
	// no target, or with this compaction's.
	var tags []string
	for _, t := range []int64{l.TargetFileSizeBytes, 0, target} {
		lt := l
		lt.TargetFileSizeBytes = t
		tags = append(tags, "-"+tagOf(lt, tree)+".parquet")
	}
	return func(f lake.File) (in, known bool) {
		if sum, ok := summaries[f.SnapshotID]; ok {
			got, err := layout.Parse(sum[PropLayout])
			in := err == nil && ordering(got) == wanted
			if in && l.Strategy == layout.StrategyTree {
				in = treeID != "" && sum[PropLayoutTreeID] == treeID
			}
			return in, true
		}
		if slices.ContainsFunc(tags, func(tag string) bool { return strings.HasSuffix(f.Path, tag) }) {
			return true, true
		}
		if sortID >= 0 && f.SortOrderID != nil {
			return *f.SortOrderID == sortID, true
		}
		return false, false
	}
}

// RecordedTree loads the learned tree that the table of md records
// ([PropLayoutTree]) for layout l, bound to the table's current schema, so
// that a compaction with no plan (a policy's or a scheduled one, 'floe
// compact T' into the layout the table declares) routes new rows into the
// same leaves. It returns nil and no error when l is not a tree layout, or
// when the table records no tree for l (it declares another layout, or
// was rewritten into l by a floe that did not record trees): the
// compaction then needs a plan. It returns an error wrapping
// [ErrStaleTree], naming the column, when the recorded tree no longer fits
// the schema: a column it cuts or sorts on was dropped, renamed or retyped.
func RecordedTree(md table.Metadata, l layout.Layout) (*layout.Tree, error) {
	if l.Strategy != layout.StrategyTree || md == nil {
		return nil, nil
	}
	props := md.Properties()
	data := props.Get(PropLayoutTree, "")
	if data == "" {
		return nil, nil
	}
	declared, err := layout.Parse(props.Get(PropLayout, ""))
	if err != nil || ordering(declared) != ordering(l) {
		return nil, nil
	}
	schema, err := table.SchemaToArrowSchema(md.CurrentSchema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("recorded tree of %s: arrow schema: %w", declared, err)
	}
	t, err := layout.UnmarshalTree([]byte(data), schema)
	if err != nil {
		return nil, fmt.Errorf("%w: the tree of %s recorded in %s: %w; plan the table again to learn a tree on its columns as they are (floe plan)",
			ErrStaleTree, declared, PropLayoutTree, err)
	}
	return t, nil
}

// Drift is how much of a table's live data is not in a layout: the files a
// compaction into it would re-cluster (appended since the last rewrite,
// written by another writer, or in an earlier tree of a tree layout).
type Drift struct {
	// Files, Rows and Bytes count the live data files not known to be in
	// the layout, and their records and bytes.
	Files int
	Rows  int64
	Bytes int64
	// DataFiles, TotalRows and TotalBytes count every live data file.
	DataFiles  int
	TotalRows  int64
	TotalBytes int64
}

// LayoutDrift measures how far the live data files of st have drifted from
// layout l (routed by tree, for a tree layout), by the rules
// [PlanCompaction] knows a file to be in a layout with: metadata only.
func LayoutDrift(st *lake.State, l layout.Layout, tree *layout.Tree) Drift {
	return DriftOf(st, InLayout(st, l, tree))
}

// DriftOf counts the live data files of st that in says are not in a
// layout ([InLayout]), for a caller that keeps in for more.
func DriftOf(st *lake.State, in func(lake.File) bool) Drift {
	var d Drift
	for _, f := range st.DataFiles {
		d.DataFiles++
		d.TotalRows += f.Records
		d.TotalBytes += f.SizeBytes
		if !in(f) {
			d.Files++
			d.Rows += f.Records
			d.Bytes += f.SizeBytes
		}
	}
	return d
}

// InLayout reports whether a live data file of st is in layout l (routed
// by tree, for a tree layout), by the rules [PlanCompaction] knows a file
// to be in a layout with: metadata only. Health uses it to leave a tree's
// own small files out of its small-file count (lake.HealthOptions.InTree).
func InLayout(st *lake.State, l layout.Layout, tree *layout.Tree) func(lake.File) bool {
	in := membership(st, l, tree, st.TargetFileSizeBytes(512<<20))
	return func(f lake.File) bool {
		ok, _ := in(f)
		return ok
	}
}
