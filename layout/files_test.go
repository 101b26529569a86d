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
