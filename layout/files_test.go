package layout_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

func TestFilesFor(t *testing.T) {
	for _, tc := range []struct {
		data, room float64
		want       int
	}{
		{0, 100, 1},
		{50, 100, 1},
		{100, 100, 1},
		{102, 100, 1}, // a 2% tail goes into the file before it
		{110, 100, 1},
		{111, 100, 2},
		{198, 100, 2},
		{205, 100, 2},
		{215, 100, 3},
		{1000, 100, 10},
		{1009, 100, 10},
		{5, 0, 1},
	} {
		require.Equal(t, tc.want, layout.FilesFor(tc.data, tc.room), "%v / %v", tc.data, tc.room)
	}
}

func TestLeafFilesFor(t *testing.T) {
	for _, tc := range []struct {
		data, room float64
		want       int
	}{
		{0, 100, 1},
		{50, 100, 1},
		{100, 100, 1},
		{130, 100, 1},   // one file 30% over beats two 35% under
		{134, 100, 2},   // two of 67 are nearer than one of 134
		{230, 100, 2},   // 2 of 115, not 2 full and a tiny one
		{239, 100, 2},   // 119.5 vs 79.7
		{241, 100, 3},   // 120.5 vs 80.3
		{260, 100, 3},   // 3 of 86.7
		{1000, 100, 10}, // exact
		{1047, 100, 10}, // 104.7 vs 95.2: the switch is at 10.48 files
		{1051, 100, 11}, // 95.5 is nearer than 105.1
		{500, 0, 1},
	} {
		require.Equal(t, tc.want, layout.LeafFilesFor(tc.data, tc.room), "%v / %v", tc.data, tc.room)
	}
}
