package simulator

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/floe-project/floe/layout"
)

// RecordedTree is the tree a table records with its tree layout (the rewriter writes it
// in the table's properties; rewriter.RecordedTree reads it back against the current
// schema). Given in [ProjectOptions.Recorded], every tree layout's projection also
// projects this tree, on the same sample and workload, so that a tree re-learned from
// today's workload is judged beside the one the table's files follow (the old and the
// new, as the report shows them).
type RecordedTree struct {
	// Layout is the tree layout the table declares (floe.layout), to name the tree.
	Layout layout.Layout
	Tree   *layout.Tree
}

// RecordedProjection is the recorded tree's projection beside a re-learned one
// ([Projection.RecordedTree]): what the table would skip if its rows were re-clustered
// into the tree it records, for today's workload, at the same target file size.
type RecordedProjection struct {
	// Layout is the layout the table declares, as it records it.
	Layout layout.Layout `json:"layout"`
	// TreeID is the recorded tree's fingerprint ([layout.Tree.Fingerprint]), as
	// snapshot summaries name it (floe.layout.tree-id).
	TreeID string `json:"tree_id"`
	// SameAsLearned is set when today's workload learns the very tree the table
	// records: re-clustering into it is all a rewrite would do.
	SameAsLearned bool `json:"same_as_learned"`
	// SkippedPct, ErrorPP, MeanFilesRead, BoundRatio and FilesAfter are the recorded
	// tree's, as [Projection] defines them.
	SkippedPct    float64 `json:"skipped_pct"`
	ErrorPP       float64 `json:"error_pp"`
	MeanFilesRead float64 `json:"mean_files_read"`
	BoundRatio    float64 `json:"bound_ratio"`
	FilesAfter    int     `json:"files_after"`
	// TreeExplanation explains the recorded tree on today's sample and workload.
	TreeExplanation *layout.TreeExplanation `json:"tree_explanation,omitempty"`
}

// projectRecorded projects opts.Recorded's tree as a tree layout is projected, beside
// learned, the tree the layout learned; nil when the table records no tree.
func (s *Sample) projectRecorded(learned *layout.Tree, queries []Query, target int64, opts ProjectOptions) (*RecordedProjection, error) {
	r := opts.Recorded
	if r == nil || r.Tree == nil {
		return nil, nil
	}
	ro := opts
	ro.Recorded, ro.fixedTree = nil, r.Tree
	l := r.Layout
	l.TargetFileSizeBytes = target
	p, err := ProjectSample(s, l, queries, target, ro)
	if err != nil {
		return nil, fmt.Errorf("the recorded tree of %s: %w", r.Layout, err)
	}
	rp := &RecordedProjection{Layout: r.Layout, TreeID: r.Tree.Fingerprint(), SkippedPct: p.SkippedPct, ErrorPP: p.ErrorPP,
		MeanFilesRead: p.MeanFilesRead, BoundRatio: p.BoundRatio, FilesAfter: p.FilesAfter, TreeExplanation: p.TreeExplanation}
	rp.SameAsLearned = learned != nil && sameRouting(learned.Root(), r.Tree.Root())
	return rp, nil
}

// sameRouting reports whether two trees route every row to the same leaf, sorted the
// same way: the same cuts and leaf orders, whatever rows each counted as it was learned
// (which the fingerprint covers).
func sameRouting(a, b *layout.TreeNode) bool {
	if (a.Cut == nil) != (b.Cut == nil) {
		return false
	}
	if a.Cut == nil {
		return strings.EqualFold(a.SortColumn, b.SortColumn) && a.Descending == b.Descending
	}
	return strings.EqualFold(a.Cut.Column, b.Cut.Column) && bytes.Equal(a.Cut.Value, b.Cut.Value) && a.Cut.Inclusive == b.Cut.Inclusive &&
		slices.EqualFunc(a.Cut.Set, b.Cut.Set, bytes.Equal) && sameRouting(a.Left, b.Left) && sameRouting(a.Right, b.Right)
}

// Compare says, in one sentence a person can check, how the recorded tree stands beside
// the re-learned one projected at learnedSkippedPct: the words simulate, plan show and the
// report print under a tree candidate.
func (r RecordedProjection) Compare(learnedSkippedPct float64) string {
	if r.SameAsLearned {
		return fmt.Sprintf("the table records this tree (tree id %s): today's workload learns it again, so a rewrite keeps its leaves", r.TreeID)
	}
	leaves, bound := "", ""
	if r.TreeExplanation != nil {
		leaves = fmt.Sprintf(", %d leaves", r.TreeExplanation.Leaves)
	}
	if r.BoundRatio > 0 {
		bound = fmt.Sprintf(", %.2fx the bound", r.BoundRatio)
	}
	return fmt.Sprintf("the table records another tree (tree id %s%s): re-clustered into it, the table would skip %.1f%% ± %.1f pp of files%s, against %.1f%% for the tree learned from today's workload (%+.1f pp)",
		r.TreeID, leaves, r.SkippedPct, r.ErrorPP, bound, learnedSkippedPct, learnedSkippedPct-r.SkippedPct)
}
