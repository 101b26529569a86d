package control

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// state builds a table state from data files (path → records), position
// delete records, and the snapshot history (id, operation, summary), the
// last one current.
func state(files map[string]int64, posDeletes int64, eq bool, snaps ...lake.Snapshot) *lake.State {
	st := &lake.State{Snapshots: snaps}
	for p, n := range files {
		st.DataFiles = append(st.DataFiles, lake.File{Path: p, Records: n})
	}
	if posDeletes > 0 {
		st.DeleteFiles = append(st.DeleteFiles, lake.File{Path: "d", Records: posDeletes, DeleteKind: lake.PositionDeletes})
	}
	if eq {
		st.DeleteFiles = append(st.DeleteFiles, lake.File{Path: "e", Records: 1, DeleteKind: lake.EqualityDeletes})
	}
	if len(snaps) > 0 {
		st.Current = &table.Snapshot{SnapshotID: snaps[len(snaps)-1].ID}
	}
	return st
}

func snap(id int64, parent int64, op string, summary map[string]string) lake.Snapshot {
	s := lake.Snapshot{ID: id, Operation: op, Summary: summary}
	if parent != 0 {
		s.ParentID = &parent
	}
	return s
}

func TestVerifyStep(t *testing.T) {
	s1 := snap(1, 0, "append", nil)
	before := state(map[string]int64{"a": 10, "b": 20}, 0, false, s1)
	for _, tc := range []struct {
		name    string
		before  *lake.State
		after   *lake.State
		kind    verifyKind
		wantErr string
		check   func(t *testing.T, v Verification)
	}{
		{"nothing committed", before, before, verifyCompact, "", func(t *testing.T, v Verification) {
			require.True(t, v.NothingToDo)
		}},
		{"a rewrite that keeps the rows", before, state(map[string]int64{"c": 30}, 0, false, s1, snap(2, 1, "replace", nil)), verifyCompact, "", func(t *testing.T, v Verification) {
			require.False(t, v.NothingToDo)
			require.Equal(t, 2, v.FilesReplaced)
			require.Equal(t, 1, v.FilesAdded)
			require.Equal(t, int64(30), v.RowsAfter)
		}},
		{"a rewrite that loses rows", before, state(map[string]int64{"c": 29}, 0, false, s1, snap(2, 1, "replace", nil)), verifyCompact, "rows were lost or added", nil},
		{"a rewrite plus another writer's append", before,
			state(map[string]int64{"c": 30, "n": 5}, 0, false, s1, snap(2, 1, "replace", nil), snap(3, 2, "append", map[string]string{"added-records": "5"})), verifyCompact, "", nil},
		{"a delete during the step cannot be attributed", before,
			state(map[string]int64{"a": 10}, 0, false, s1, snap(2, 1, "delete", map[string]string{"deleted-records": "20"})), verifyCompact, "floe cannot tell", nil},
		{"a rewrite that applies position deletes", state(map[string]int64{"a": 10, "b": 20}, 3, false, s1),
			state(map[string]int64{"c": 27}, 0, false, s1, snap(2, 1, "replace", nil)), verifyCompact, "", nil},
		{"equality deletes: rows not checked", state(map[string]int64{"a": 10}, 0, true, s1),
			state(map[string]int64{"c": 3}, 0, true, s1, snap(2, 1, "replace", nil)), verifyCompact, "", func(t *testing.T, v Verification) {
				require.False(t, v.RowsChecked)
				require.Contains(t, v.Note, "equality deletes")
			}},
		{"a manifest rewrite must keep data files", before,
			state(map[string]int64{"c": 30}, 0, false, s1, snap(2, 1, "replace", nil)), verifyManifests, "changed the data files", nil},
		{"a manifest rewrite", before, state(map[string]int64{"a": 10, "b": 20}, 0, false, s1, snap(2, 1, "replace", nil)), verifyManifests, "", nil},
		{"history rewritten under the step", before, state(map[string]int64{"a": 10, "b": 20}, 0, false, snap(7, 0, "append", nil)), verifyMaintenance, "not an ancestor", nil},
		{"an expiry that lost a data file", before, state(map[string]int64{"a": 10}, 0, false, s1), verifyMaintenance, "gone from it", nil},
		{"an expiry", before, before, verifyMaintenance, "", func(t *testing.T, v Verification) {
			require.False(t, v.NothingToDo)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := verifyStep(tc.before, tc.after, tc.kind)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, errEngineVerify)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.check != nil {
				tc.check(t, v)
			}
		})
	}
}
