package rewriter

import (
	"fmt"

	"github.com/floe-project/floe/lake"
)

// DeadDeletes returns the live deletes of st (delete files, and deletion
// vectors one by one: a Puffin file holds the vectors of many data files)
// that apply to no live data file once the data files in rewritten are
// replaced, so that they can be removed in the same commit. A Puffin file
// itself goes only once none of its vectors is live: removing a vector
// removes its manifest entry, and expiry and orphan removal delete the file
// when no snapshot references it. The rules, all conservative (a delete that
// might still apply is kept, which is always safe):
//
//   - a deletion vector, or a position delete scoped to one data file
//     (referenced_data_file), is dead when that file is rewritten or is
//     not live at all;
//   - any other position delete is dead when no data file that survives the
//     rewrite has its partition (spec and values) and a data sequence number
//     not above the delete's;
//   - an equality delete is dead when no surviving data file it could apply
//     to (same partition, or any partition for a delete of an unpartitioned
//     spec) has a data sequence number below the delete's.
//
// A delete with a [lake.DeleteIssue] (misfiled, or shadowed by a deletion
// vector) is never dead: readers do not apply it, and it is the only record
// of rows someone meant to delete.
//
// Replacement files written by the rewrite get a new sequence number above
// every existing delete's, so no existing delete applies to them. With an
// empty, non-nil rewritten it returns the deletes that are dead already
// (dangling, see [PlanDeleteRewrite]); with nil, none.
func DeadDeletes(st *lake.State, rewritten map[string]bool) []lake.File {
	if len(st.DeleteFiles) == 0 || rewritten == nil {
		return nil
	}
	live := make(map[string]bool, len(st.DataFiles))
	for _, f := range st.DataFiles {
		live[f.Path] = true
	}
	// Lowest data sequence number of the surviving data files, per
	// partition key and over the whole table.
	type minSeq struct {
		seq int64
		ok  bool
	}
	byPart := map[string]minSeq{}
	var global minSeq
	for _, f := range st.DataFiles {
		if rewritten[f.Path] {
			continue
		}
		if m := byPart[f.PartitionKey]; !m.ok || f.SequenceNumber < m.seq {
			byPart[f.PartitionKey] = minSeq{f.SequenceNumber, true}
		}
		if !global.ok || f.SequenceNumber < global.seq {
			global = minSeq{f.SequenceNumber, true}
		}
	}
	var dead []lake.File
	for _, d := range st.DeleteFiles {
		if st.DeleteIssue(d.DeleteKey()) != nil {
			continue
		}
		switch d.DeleteKind {
		case lake.DeletionVector, lake.PositionDeletes:
			if d.ReferencedDataFile != "" {
				if rewritten[d.ReferencedDataFile] || !live[d.ReferencedDataFile] {
					dead = append(dead, d)
				}
				continue
			}
			if d.DeleteKind == lake.DeletionVector {
				continue // a vector without its data file is not understood: keep it
			}
			if m := byPart[d.PartitionKey]; !m.ok || m.seq > d.SequenceNumber {
				dead = append(dead, d)
			}
		case lake.EqualityDeletes:
			m := byPart[d.PartitionKey]
			if unpartitionedSpec(st, d.SpecID) {
				m = global
			}
			if !m.ok || m.seq >= d.SequenceNumber {
				dead = append(dead, d)
			}
		}
	}
	return dead
}

func unpartitionedSpec(st *lake.State, specID int32) bool {
	spec := st.Metadata.PartitionSpecByID(int(specID))
	return spec == nil || spec.IsUnpartitioned()
}

// staleReason checks one group against the head of the table: every input
// must still be live, and no delete unknown at the base (knownDeletes, by
// [lake.DeleteKey]: every vector of a Puffin file on its own) may apply to
// an input. It returns "" when the group can be committed on head. Unknown
// deletes are matched conservatively: by referenced data file when they name
// one, otherwise by partition; equality deletes of an unpartitioned spec
// match everything, and so does a delete with a [lake.DeleteIssue], whose
// partition says nothing of the files it was meant for.
func staleReason(head *lake.State, knownDeletes map[lake.DeleteKey]bool, g *CommitGroup) string {
	live := make(map[string]bool, len(head.DataFiles))
	for _, f := range head.DataFiles {
		live[f.Path] = true
	}
	inputs := make(map[string]bool, len(g.Inputs))
	parts := map[string]bool{}
	for _, in := range g.Inputs {
		if !live[in.Path] {
			return fmt.Sprintf("input %s is no longer live", in.Path)
		}
		inputs[in.Path] = true
		parts[in.PartitionKey] = true
	}
	for _, d := range head.DeleteFiles {
		k := d.DeleteKey()
		if knownDeletes[k] {
			continue
		}
		switch {
		case head.DeleteIssue(k) != nil:
			return fmt.Sprintf("new %s delete %s may apply to the inputs: %s", head.DeleteIssue(k).Kind, k, head.DeleteIssue(k).Reason)
		case d.ReferencedDataFile != "":
			if inputs[d.ReferencedDataFile] {
				return fmt.Sprintf("new %s delete %s applies to input %s", d.DeleteKind, k, d.ReferencedDataFile)
			}
		case d.DeleteKind == lake.EqualityDeletes && unpartitionedSpec(head, d.SpecID):
			return fmt.Sprintf("new global equality delete %s may apply to the inputs", d.Path)
		case parts[d.PartitionKey]:
			return fmt.Sprintf("new %s delete %s in partition %q may apply to the inputs", d.DeleteKind, d.Path, d.PartitionKey)
		}
	}
	return ""
}
