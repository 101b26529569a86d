package main

import (
	"context"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// Loading tables through the factory's catalogs: shared by the verbs.

// tableIdents resolves the named tables, or lists all tables when none.
func tableIdents(ctx context.Context, f *factory, names []string) ([]lake.Ident, error) {
	if len(names) > 0 {
		ids := make([]lake.Ident, 0, len(names))
		for _, n := range names {
			id, err := f.ResolveTable(n)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	var ids []lake.Ident
	for _, name := range cfg.CatalogNames() {
		cat, err := f.Catalog(ctx, name)
		if err != nil {
			return nil, err
		}
		got, err := lake.ListTables(ctx, name, cat)
		if err != nil {
			return nil, err
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

// openTable resolves a table name and loads the table from its catalog.
func openTable(ctx context.Context, f *factory, name string) (lake.Ident, catalog.Catalog, *table.Table, error) {
	id, err := f.ResolveTable(name)
	if err != nil {
		return lake.Ident{}, nil, nil, err
	}
	cat, err := f.Catalog(ctx, id.Catalog)
	if err != nil {
		return id, nil, nil, err
	}
	tbl, err := lake.LoadTable(ctx, cat, id)
	return id, cat, tbl, err
}

// loadState loads one table's state through the factory's catalogs.
func loadState(ctx context.Context, f *factory, id lake.Ident) (*lake.State, error) {
	cat, err := f.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	return lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
}
