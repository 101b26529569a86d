package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

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

// MissingLocalCatalog reports whether props name a local SQLite catalog
// whose database file does not exist yet, and its path: opening it would
// create it, which a verb that only reads must not do.
func MissingLocalCatalog(props config.Props) (string, bool) {
	if props["type"] != "sql" || !strings.EqualFold(props["sql.driver"], "sqlite") {
		return "", false
	}
	path, _, _ := strings.Cut(strings.TrimPrefix(props["uri"], "file:"), "?")
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "//") {
		return "", false
	}
	_, err := os.Stat(path)
	return path, errors.Is(err, fs.ErrNotExist)
}

// CatalogError is a catalog whose tables could not be listed, and why.
type CatalogError struct {
	Catalog string `json:"catalog"`
	Error   string `json:"error"`
}

// maxCatalogLists bounds the catalogs [ListTables] lists at once.
const maxCatalogLists = 4

// ListTables lists the tables of every catalog in names, opening each with
// open. A catalog that cannot be opened or listed does not hide the
// others: it is reported in a [CatalogError], beside the tables of the
// catalogs that could be listed. The catalogs are listed concurrently (at
// most four at a time), so a catalog that does not answer delays the list
// by its floe.timeout once, not once per catalog. The tables keep names'
// order, each catalog's sorted ([lake.ListTables]); so do the errors.
func ListTables(ctx context.Context, names []string, open func(ctx context.Context, name string) (catalog.Catalog, error)) ([]lake.Ident, []CatalogError) {
	type listed struct {
		ids []lake.Ident
		err error
	}
	out := make([]listed, len(names))
	sem := make(chan struct{}, maxCatalogLists)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cat, err := open(ctx, name)
			if err != nil {
				out[i].err = err
				return
			}
			out[i].ids, out[i].err = lake.ListTables(ctx, name, cat)
		}()
	}
	wg.Wait()
	var (
		ids  []lake.Ident
		errs []CatalogError
	)
	for i, l := range out {
		if l.err != nil {
			errs = append(errs, CatalogError{Catalog: names[i], Error: l.err.Error()})
			continue
		}
		ids = append(ids, l.ids...)
	}
	return ids, errs
}
