package lake

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/metrics"
	"github.com/apache/iceberg-go/table"
)

// PropCatalogTimeout is floe's catalog property for the time one catalog
// call may take (a Go duration such as "30s"; "0" disables it). It is read
// by [OpenCatalog] and not passed to iceberg-go.
const PropCatalogTimeout = "floe.timeout"

// DefaultCatalogTimeout bounds each catalog call when the catalog sets no
// [PropCatalogTimeout]: a REST catalog that accepts connections and never
// answers must not hang floe for minutes.
const DefaultCatalogTimeout = 30 * time.Second

// ErrCatalogTimeout is wrapped by every catalog call that ran out of its
// time (see [WithCallTimeout]); test with errors.Is.
var ErrCatalogTimeout = errors.New("catalog did not answer in time")

// WithCallTimeout returns cat with every call bounded by d (d <= 0: cat
// itself). A call that runs out of time returns an error wrapping
// [ErrCatalogTimeout] and context.DeadlineExceeded that names the catalog,
// the call and the timeout. Tables it loads commit through cat itself, so a
// commit is never cut off half-way by the timeout.
func WithCallTimeout(cat catalog.Catalog, name string, d time.Duration) catalog.Catalog {
	if d <= 0 {
		return cat
	}
	return &timeoutCatalog{inner: cat, name: name, d: d}
}

// timeoutCatalog bounds each call but a commit by d (d <= 0: unbounded)
// and, when io is not nil, each object-store request of the catalog and of
// the tables it loads by io's timeout.
type timeoutCatalog struct {
	inner catalog.Catalog
	name  string
	d     time.Duration
	io    *storeBounds
	// ioLocation is where the catalog's own reads and writes (metadata
	// files) go, as far as its properties say: the warehouse, or "s3://"
	// when only s3.* properties tell.
	ioLocation string
	// locations lists a SQL catalog's tables with their metadata
	// locations; nil for other catalogs.
	locations *sqlLocations
}

// ListLocations implements [LocationLister] for a SQL catalog (bounded by
// d as every call), and forwards it to an inner catalog that lists
// locations; for any other it returns an error wrapping
// errors.ErrUnsupported.
func (c *timeoutCatalog) ListLocations(ctx context.Context) (out []TableLocation, err error) {
	var ll LocationLister
	switch inner, ok := c.inner.(LocationLister); {
	case c.locations != nil:
		ll = c.locations
	case ok:
		ll = inner
	default:
		return nil, fmt.Errorf("catalog %s lists no metadata locations: %w", c.name, errors.ErrUnsupported)
	}
	err = c.call(ctx, "list table locations", func(ctx context.Context) error {
		out, err = ll.ListLocations(ctx)
		return err
	})
	return out, err
}

func (c *timeoutCatalog) call(ctx context.Context, what string, fn func(context.Context) error) error {
	ctx, err := c.io.bind(ctx, c.ioLocation)
	if err != nil {
		return err
	}
	if c.d <= 0 {
		return fn(ctx)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.d, ErrCatalogTimeout)
	defer cancel()
	err = fn(ctx)
	if err != nil && errors.Is(context.Cause(ctx), ErrCatalogTimeout) {
		return fmt.Errorf("catalog %s: %s: no answer within %s (set %s to change it): %w: %w", c.name, what, c.d, PropCatalogTimeout, ErrCatalogTimeout, err)
	}
	return err
}

func (c *timeoutCatalog) CatalogType() catalog.Type { return c.inner.CatalogType() }

func (c *timeoutCatalog) CreateTable(ctx context.Context, id table.Identifier, schema *iceberg.Schema, opts ...catalog.CreateTableOpt) (out *table.Table, err error) {
	err = c.call(ctx, "create table", func(ctx context.Context) error {
		out, err = c.inner.CreateTable(ctx, id, schema, opts...)
		return err
	})
	return c.bounded(out), err
}

func (c *timeoutCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, updates []table.Update) (md table.Metadata, loc string, err error) {
	// Not bounded by d: a commit cut off half-way leaves its outcome
	// unknown. Its object-store requests (the new metadata file, written
	// before the catalog swaps to it) are bounded.
	ctx, err = c.io.bind(ctx, c.ioLocation)
	if err != nil {
		return nil, "", err
	}
	return c.inner.CommitTable(ctx, id, reqs, updates)
}

func (c *timeoutCatalog) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	return func(yield func(table.Identifier, error) bool) {
		if c.d <= 0 {
			for id, err := range c.inner.ListTables(ctx, ns) {
				if !yield(id, err) {
					return
				}
			}
			return
		}
		ctx, cancel := context.WithTimeoutCause(ctx, c.d, ErrCatalogTimeout)
		defer cancel()
		for id, err := range c.inner.ListTables(ctx, ns) {
			if err != nil && errors.Is(context.Cause(ctx), ErrCatalogTimeout) {
				err = fmt.Errorf("catalog %s: list tables: no answer within %s (set %s to change it): %w: %w", c.name, c.d, PropCatalogTimeout, ErrCatalogTimeout, err)
			}
			if !yield(id, err) {
				return
			}
		}
	}
}

func (c *timeoutCatalog) LoadTable(ctx context.Context, id table.Identifier) (out *table.Table, err error) {
	err = c.call(ctx, "load table", func(ctx context.Context) error {
		out, err = c.inner.LoadTable(ctx, id)
		return err
	})
	return c.bounded(out), err
}

// bounded is tbl with its object-store requests bounded (see
// [storeBounds]) and its refreshes and commits going through c. iceberg-go's
// IO keeps the context it is opened with for every request, so the bound
// goes in there: tbl is rebuilt on an IO opener that binds it to each
// context the table opens its IO with. Commits keep the opener.
func (c *timeoutCatalog) bounded(tbl *table.Table) *table.Table {
	if tbl == nil || c.io == nil || !isBounded(tbl.Metadata().Location()) {
		return tbl
	}
	loc := tbl.Metadata().Location()
	open := tbl.FS
	var opts []table.Option
	if rep := tbl.MetricsReporter(); !metrics.IsNop(rep) {
		opts = append(opts, table.WithMetricsReporter(rep))
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (iceio.IO, error) {
		ctx, err := c.io.bind(ctx, loc)
		if err != nil {
			return nil, err
		}
		return open(ctx)
	}, c, opts...)
}

func (c *timeoutCatalog) DropTable(ctx context.Context, id table.Identifier) error {
	return c.call(ctx, "drop table", func(ctx context.Context) error { return c.inner.DropTable(ctx, id) })
}

// PurgeTable purges through the inner catalog, or returns an error wrapping
// errors.ErrUnsupported when it cannot purge.
func (c *timeoutCatalog) PurgeTable(ctx context.Context, id table.Identifier) error {
	p, ok := c.inner.(catalog.PurgeableTable)
	if !ok {
		return fmt.Errorf("catalog %s cannot purge tables: %w", c.name, errors.ErrUnsupported)
	}
	return c.call(ctx, "purge table", func(ctx context.Context) error { return p.PurgeTable(ctx, id) })
}

// Close closes the inner catalog when it holds resources, and the pool
// of the SQL catalog's location listing.
func (c *timeoutCatalog) Close() error {
	var errs []error
	if c.locations != nil {
		errs = append(errs, c.locations.Close())
	}
	if cl, ok := c.inner.(catalog.Closer); ok {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}

func (c *timeoutCatalog) RenameTable(ctx context.Context, from, to table.Identifier) (out *table.Table, err error) {
	err = c.call(ctx, "rename table", func(ctx context.Context) error {
		out, err = c.inner.RenameTable(ctx, from, to)
		return err
	})
	return c.bounded(out), err
}

func (c *timeoutCatalog) CheckTableExists(ctx context.Context, id table.Identifier) (ok bool, err error) {
	err = c.call(ctx, "check table", func(ctx context.Context) error {
		ok, err = c.inner.CheckTableExists(ctx, id)
		return err
	})
	return ok, err
}

func (c *timeoutCatalog) ListNamespaces(ctx context.Context, parent table.Identifier) (out []table.Identifier, err error) {
	err = c.call(ctx, "list namespaces", func(ctx context.Context) error {
		out, err = c.inner.ListNamespaces(ctx, parent)
		return err
	})
	return out, err
}

func (c *timeoutCatalog) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	return c.call(ctx, "create namespace", func(ctx context.Context) error { return c.inner.CreateNamespace(ctx, ns, props) })
}

func (c *timeoutCatalog) DropNamespace(ctx context.Context, ns table.Identifier) error {
	return c.call(ctx, "drop namespace", func(ctx context.Context) error { return c.inner.DropNamespace(ctx, ns) })
}

func (c *timeoutCatalog) CheckNamespaceExists(ctx context.Context, ns table.Identifier) (ok bool, err error) {
	err = c.call(ctx, "check namespace", func(ctx context.Context) error {
		ok, err = c.inner.CheckNamespaceExists(ctx, ns)
		return err
	})
	return ok, err
}

func (c *timeoutCatalog) LoadNamespaceProperties(ctx context.Context, ns table.Identifier) (out iceberg.Properties, err error) {
	err = c.call(ctx, "load namespace properties", func(ctx context.Context) error {
		out, err = c.inner.LoadNamespaceProperties(ctx, ns)
		return err
	})
	return out, err
}

func (c *timeoutCatalog) UpdateNamespaceProperties(ctx context.Context, ns table.Identifier, removals []string, updates iceberg.Properties) (out catalog.PropertiesUpdateSummary, err error) {
	err = c.call(ctx, "update namespace properties", func(ctx context.Context) error {
		out, err = c.inner.UpdateNamespaceProperties(ctx, ns, removals, updates)
		return err
	})
	return out, err
}
