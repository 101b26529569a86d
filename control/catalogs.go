package control

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
)

// OpenCatalog opens the floe catalog called name with its configured
// properties ([lake.OpenCatalog]), first creating the directories of a
// local SQLite catalog and a file:// warehouse ([EnsureLocalDirs]), so that
// the embedded default works on a fresh machine.
func OpenCatalog(ctx context.Context, name string, props config.Props) (catalog.Catalog, error) {
	if err := EnsureLocalDirs(props); err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", name, err)
	}
	return lake.OpenCatalog(ctx, name, props)
}

// EnsureLocalDirs creates the directory of a local SQLite catalog and a
// file:// warehouse. Other catalogs and warehouses are left alone.
func EnsureLocalDirs(props config.Props) error {
	if props["type"] == "sql" && strings.EqualFold(props["sql.driver"], "sqlite") {
		path, _, _ := strings.Cut(strings.TrimPrefix(props["uri"], "file:"), "?")
		if i := strings.LastIndex(path, "/"); i > 0 {
			if err := os.MkdirAll(path[:i], 0o755); err != nil {
				return fmt.Errorf("create catalog directory: %w", err)
			}
		}
	}
	if wh, ok := strings.CutPrefix(props["warehouse"], "file://"); ok {
		if err := os.MkdirAll(wh, 0o755); err != nil {
			return fmt.Errorf("create warehouse directory: %w", err)
		}
	}
	return nil
}
