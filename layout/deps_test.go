package layout_test

import (
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportsNoFloePackage keeps the layout vocabulary a leaf: every stage
// imports it, so it may import none of them (nor lake).
func TestImportsNoFloePackage(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, p := range pkg.Imports {
		require.False(t, strings.HasPrefix(p, "github.com/floe-project/floe/"), "layout imports %s", p)
	}
}
