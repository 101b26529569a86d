package rewriter

import (
	"fmt"

	"github.com/floe-project/floe/lake"
)

// DeadDeletes returns the live delete files of st that apply to no live data
// file once the data files in rewritten are replaced, so that they can be
// removed in the same commit. The rules, all conservative (a delete file that
// might still apply is kept, which is always safe):
//
//   - a deletion vector, or a position delete scoped to one data file
//     (referenced_data_file), is dead when that file is rewritten;
//   - any other position delete is dead when no data file that survives the
//     rewrite has its partition (spec and values) and a data sequence number
//     not above the delete's;
//   - an equality delete is dead when no surviving data file it could apply
//     to (same partition, or any partition for a delete of an unpartitioned
//     spec) has a data sequence number below the delete's.
//
// Replacement files written by the rewrite get a new sequence number above
// every existing delete's, so no existing delete applies to them.
func DeadDeletes(st *lake.State, rewritten map[string]bool) []lake.File {
	if len(st.DeleteFiles) == 0 || len(rewritten) == 0 {
		return nil
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
		switch d.DeleteKind {
		case lake.DeletionVector, lake.PositionDeletes:
			if d.ReferencedDataFile != "" {
				if rewritten[d.ReferencedDataFile] {
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
// must still be live, and no delete file unknown at the base (knownDeletes)
// may apply to an input. It returns "" when the group can be committed on
// head. Unknown delete files are matched conservatively: by referenced data
// file when they name one, otherwise by partition, and equality deletes of an
// unpartitioned spec match everything.
func staleReason(head *lake.State, knownDeletes map[string]bool, g *CommitGroup) string {
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
		if knownDeletes[d.Path] {
			continue
		}
		switch {
		case d.ReferencedDataFile != "":
			if inputs[d.ReferencedDataFile] {
				return fmt.Sprintf("new %s delete %s applies to input %s", d.DeleteKind, d.Path, d.ReferencedDataFile)
			}
		case d.DeleteKind == lake.EqualityDeletes && unpartitionedSpec(head, d.SpecID):
			return fmt.Sprintf("new global equality delete %s may apply to the inputs", d.Path)
		case parts[d.PartitionKey]:
			return fmt.Sprintf("new %s delete %s in partition %q may apply to the inputs", d.DeleteKind, d.Path, d.PartitionKey)
		}
	}
	return ""
}
