// Package scalelake generates lakes of many small, real Iceberg tables in
// a catalog — the embedded SQL catalog, usually — for the tests and
// benchmarks of floe at scale: the dashboard at a few hundred or 10,000
// tables, the daemon's pass over a large lake.
//
// Every table is real: created through the catalog with a schema, then
// given one small append (a real Parquet file, a real snapshot). Every
// tenth table is given [Options.Appends] appends instead, so that it has
// the many small files of a streaming writer and its health differs.
// Tables are spread over [Options.Namespaces] namespaces and named after a
// few domains ("events_00042", "orders_00043"), so that searching by name
// narrows the lake. The same options give the same lake.
package scalelake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// Domains name the generated tables: table i is Domains[i%len]_i.
var Domains = []string{"events", "orders", "clicks", "users", "payments", "sessions", "invoices", "metrics"}

// Options shape a generated lake. The zero value of a field means its
// default.
type Options struct {
	// Tables is how many tables to create. Required: at least 1.
	Tables int
	// Namespaces spreads the tables over ns00, ns01, …: table i is in
	// namespace i%Namespaces. Default: 10.
	Namespaces int
	// Workers create that many tables at once. Default: 4.
	Workers int
	// Appends is how many appends every tenth table gets (the others get
	// one). Default: 12.
	Appends int
	// Rows is how many rows each append writes. Default: 20.
	Rows int
}

// Validate reports every bad option at once.
func (o Options) Validate() error {
	var errs []error
	if o.Tables < 1 {
		errs = append(errs, fmt.Errorf("tables %d: want at least 1", o.Tables))
	}
	for name, v := range map[string]int{"namespaces": o.Namespaces, "workers": o.Workers, "appends": o.Appends, "rows": o.Rows} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s %d: want 0 (the default) or more", name, v))
		}
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.Namespaces == 0 {
		o.Namespaces = 10
	}
	if o.Workers == 0 {
		o.Workers = 4
	}
	if o.Appends == 0 {
		o.Appends = 12
	}
	if o.Rows == 0 {
		o.Rows = 20
	}
	return o
}

// Ident is table i of a lake with opts in catalog cat.
func Ident(cat string, i int, opts Options) lake.Ident {
	o := opts.withDefaults()
	return lake.Ident{Catalog: cat, Namespace: []string{fmt.Sprintf("ns%02d", i%o.Namespaces)}, Name: fmt.Sprintf("%s_%05d", Domains[i%len(Domains)], i)}
}

var schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})

// Generate creates the lake opts describes in cat (named catName in floe's
// configuration) and returns its tables' identifiers, in order. It stops at
// the first error, or when ctx ends.
func Generate(ctx context.Context, cat catalog.Catalog, catName string, opts Options) ([]lake.Ident, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("generate lake: %w", err)
	}
	o := opts.withDefaults()
	for n := range min(o.Namespaces, o.Tables) {
		ns := table.Identifier{fmt.Sprintf("ns%02d", n)}
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("generate lake: create namespace %s: %w", ns[0], err)
		}
	}
	ids := make([]lake.Ident, o.Tables)
	for i := range ids {
		ids[i] = Ident(catName, i, o)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan int)
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for i := range work {
				if err := create(ctx, cat, ids[i], i, o); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range ids {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("generate lake: %w", err)
	}
	return ids, nil
}

// create creates table i and appends to it.
func create(ctx context.Context, cat catalog.Catalog, id lake.Ident, i int, o Options) error {
	var tbl *table.Table
	err := retryBusy(ctx, func() (err error) {
		tbl, err = cat.CreateTable(ctx, table.Identifier{id.Namespace[0], id.Name}, schema)
		return err
	})
	if err != nil {
		return fmt.Errorf("create table %s: %w", id, err)
	}
	appends := 1
	if i%10 == 0 {
		appends = o.Appends
	}
	for a := range appends {
		err := retryBusy(ctx, func() error {
			next, err := appendRows(ctx, tbl, int64(i), int64(a), o.Rows)
			if err == nil {
				tbl = next
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("append to %s: %w", id, err)
		}
	}
	return nil
}

// busy says err is SQLite's "database is locked" (SQLITE_BUSY and its
// extended codes, such as BUSY_SNAPSHOT, 517), as the catalog passes it on.
func busy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// retryBusy calls fn again while it fails because SQLite's database is
// locked by another worker's write: the SQL catalog begins its write
// transactions deferred, and a deferred transaction that must upgrade to
// write fails at once rather than waiting out busy_timeout. A failed
// append's files are left as orphans, which a generated lake may have.
func retryBusy(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == 100 || !busy(err) {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt) * 2 * time.Millisecond):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}

// appendRows commits one append of rows rows to tbl.
func appendRows(ctx context.Context, tbl *table.Table, i, a int64, rows int) (*table.Table, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for r := range int64(rows) {
		b.Field(0).(*array.Int64Builder).Append(a*int64(rows) + r)
		b.Field(1).(*array.Int64Builder).Append(i)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	return tbl.Append(ctx, rdr, nil)
}
