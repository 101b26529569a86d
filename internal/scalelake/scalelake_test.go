package scalelake_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/scalelake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// Generate makes real tables the catalog lists, each with its snapshot and
// data files; every tenth has the many appends of a streaming writer.
func TestGenerate(t *testing.T) {
	w := testlake.NewLocal(t)
	ctx := t.Context()
	opts := scalelake.Options{Tables: 23, Namespaces: 3, Appends: 4}
	ids, err := scalelake.Generate(ctx, w.Catalog, "local", opts)
	require.NoError(t, err)
	require.Len(t, ids, 23)
	listed, err := lake.ListTables(ctx, "local", w.Catalog)
	require.NoError(t, err)
	require.ElementsMatch(t, ids, listed)
	for _, i := range []int{0, 1, 22} {
		tbl, err := lake.LoadTable(ctx, w.Catalog, ids[i])
		require.NoError(t, err)
		st, err := lake.LoadState(ctx, ids[i], tbl, lake.LoadOptions{})
		require.NoError(t, err)
		want := 1
		if i%10 == 0 {
			want = 4
		}
		require.Len(t, st.DataFiles, want, "%s", ids[i])
	}
	require.Equal(t, "ns01.orders_00001", lake.JoinParts(append(ids[1].Namespace, ids[1].Name)...))

	_, err = scalelake.Generate(ctx, w.Catalog, "local", scalelake.Options{Tables: 0, Workers: -1})
	require.ErrorContains(t, err, "tables 0: want at least 1")
	require.ErrorContains(t, err, "workers -1")
}
