package control

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/scalelake"
	"github.com/floe-project/floe/internal/testlake"
)

// The service measures the tables of a lake with one manifest reader: the
// manifests of tables of one partition type share their Avro schema, which
// is parsed once for the lake, not once per table or manifest.
func TestServiceParsesALakesManifestSchemaOnce(t *testing.T) {
	w := testlake.New(t)
	opts := scalelake.Options{Tables: 12, Appends: 3}
	ids, err := scalelake.Generate(t.Context(), w.Catalog, w.Name, opts)
	require.NoError(t, err)
	s, err := NewService(Deps{Config: &config.Config{}, StateCacheFiles: -1,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})
	require.NoError(t, err)
	manifests := 0
	for _, id := range ids {
		st, err := s.measuredState(t.Context(), w.Catalog, id, "")
		require.NoError(t, err)
		manifests += len(st.Manifests)
	}
	require.Equal(t, 2*3+10, manifests, "tables 0 and 10 have three appends, the others one")
	require.Equal(t, 1, s.manifests.Parsed())
	require.Zero(t, s.manifests.Delegated())
}
