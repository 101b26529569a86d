package lake

import (
	"fmt"
	"path/filepath"
)

// LocalCatalogProps are the iceberg-go properties of the embedded default
// catalog rooted at dir: a SQL catalog on SQLite (dir/catalog.db, pure Go,
// WAL with a busy timeout so concurrent committers wait instead of failing)
// and a file:// warehouse in dir/warehouse. dir must be absolute.
func LocalCatalogProps(dir string) map[string]string {
	return map[string]string{
		"type":        "sql",
		"sql.driver":  "sqlite",
		"sql.dialect": "sqlite",
		"uri":         fmt.Sprintf("file:%s?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)", filepath.Join(dir, "catalog.db")),
		"warehouse":   "file://" + filepath.Join(dir, "warehouse"),
	}
}
