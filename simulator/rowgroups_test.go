package simulator_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// TestRowGroupsAsTheWriterCutsThem: the error bar counts the footers of as
// many row groups a file as the rewriter's writer cuts.
func TestRowGroupsAsTheWriterCutsThem(t *testing.T) {
	require.Equal(t, rewriter.DefaultRowGroupsPerFile, simulator.RowGroupsPerFile)
}
