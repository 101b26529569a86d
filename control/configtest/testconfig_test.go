package configtest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/configtest"
	"github.com/floe-project/floe/internal/testlake"
)

func TestLoad(t *testing.T) {
	w := testlake.NewLocal(t)
	cfg := configtest.Load(t, w, "policies:\n  default:\n    layout: none\n    poll_interval: 7m\n")
	require.Equal(t, "local", cfg.DefaultCatalog)
	require.Equal(t, []string{"local"}, cfg.CatalogNames())
	for k, v := range w.Props {
		require.Equal(t, v, cfg.Catalogs["local"][k], k)
	}
	require.NotNil(t, cfg.Policies)
}
