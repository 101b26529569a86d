package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Options tune [Build]. Zero values mean the defaults.
type Options struct {
	// Reset drops the demo tables first. Without it, Build fails if any
	// demo table exists.
	Reset bool
	// EventCommits is the number of micro-batch commits to web.events.
	// Default: 320.
	EventCommits int
	// EventsPerCommit. Default: 500.
	EventsPerCommit int
	// Orders is the number of TPC-H orders (about 4 line items each).
	// Default: 25,000.
	Orders int
	// Seed makes the rows reproducible. Default: 1.
	Seed uint64
	// Now is the end of the event time range. Default: time.Now.
	Now time.Time
	// Progress, when set, is called after each commit.
	Progress func(table string, done, total int)
}

func (o *Options) defaults() {
	if o.EventCommits <= 0 {
		o.EventCommits = 320
	}
	if o.EventsPerCommit <= 0 {
		o.EventsPerCommit = 500
	}
	if o.Orders <= 0 {
		o.Orders = 25000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Progress == nil {
		o.Progress = func(string, int, int) {}
	}
}

// Tables lists the demo tables as namespace.name.
var Tables = []string{"web.events", "sales.orders", "sales.lineitem", "crm.accounts"}

// ErrExists is returned when a demo table exists and Reset is false.
var ErrExists = errors.New("demo tables already exist (use --reset to rebuild them)")

// Build creates the demo tables in cat.
func Build(ctx context.Context, cat catalog.Catalog, opts Options) error {
	opts.defaults()
	for _, name := range Tables {
		id := ident(name)
		exists, err := cat.CheckTableExists(ctx, id)
		if err != nil {
			// A namespace that does not exist yet is "no table".
			exists = false
		}
		if exists && !opts.Reset {
			return fmt.Errorf("demo: %s: %w", name, ErrExists)
		}
		if exists {
			if err := dropTable(ctx, cat, id); err != nil {
				return fmt.Errorf("demo: reset %s: %w", name, err)
			}
		}
	}
	for _, ns := range []string{"web", "sales", "crm"} {
		ok, err := cat.CheckNamespaceExists(ctx, table.Identifier{ns})
		if err != nil {
			return fmt.Errorf("demo: namespace %s: %w", ns, err)
		}
		if !ok {
			if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
				return fmt.Errorf("demo: create namespace %s: %w", ns, err)
			}
		}
	}
	if err := buildEvents(ctx, cat, opts); err != nil {
		return fmt.Errorf("demo: web.events: %w", err)
	}
	if err := buildSales(ctx, cat, opts); err != nil {
		return fmt.Errorf("demo: sales: %w", err)
	}
	if err := buildAccounts(ctx, cat, opts); err != nil {
		return fmt.Errorf("demo: crm.accounts: %w", err)
	}
	return nil
}

func ident(name string) table.Identifier {
	for i := range len(name) {
		if name[i] == '.' {
			return table.Identifier{name[:i], name[i+1:]}
		}
	}
	return table.Identifier{name}
}

func dropTable(ctx context.Context, cat catalog.Catalog, id table.Identifier) error {
	if p, ok := cat.(catalog.PurgeableTable); ok {
		err := p.PurgeTable(ctx, id)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return cat.DropTable(ctx, id)
}

// EventsSchema is the schema of web.events.
func EventsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "event_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 3, Name: "tenant_id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 4, Name: "user_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 5, Name: "event_type", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "country", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "device", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 8, Name: "url", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 9, Name: "latency_ms", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 10, Name: "revenue", Type: iceberg.PrimitiveTypes.Float64},
	)
}

var (
	eventTypes = []string{"page_view", "page_view", "page_view", "click", "click", "search", "add_to_cart", "purchase", "login", "error"}
	countries  = []string{"US", "US", "US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "SE"}
	devices    = []string{"desktop", "mobile", "mobile", "tablet", "app-ios", "app-android"}
	paths      = []string{"/", "/search", "/cart", "/checkout", "/product/%d", "/category/%d", "/account", "/help/%d"}
)

// zipf draws tenant ids 1..n with a Zipf skew: a few tenants dominate, as in
// every multi-tenant product.
type zipf struct{ z *rand.Zipf }

func newZipf(r *rand.Rand, n uint64) zipf { return zipf{rand.NewZipf(r, 1.3, 1, n-1)} }
func (z zipf) next() int32                { return int32(z.z.Uint64() + 1) }

func buildEvents(ctx context.Context, cat catalog.Catalog, opts Options) error {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl, err := cat.CreateTable(ctx, ident("web.events"), EventsSchema(),
		catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{"format-version": "2", "write.target-file-size-bytes": fmt.Sprint(128 << 20)}))
	if err != nil {
		return err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(opts.Seed, 11))
	tenants := newZipf(r, 500)
	// Seven days of events ending at Now, one micro-batch per interval.
	start := opts.Now.Add(-7 * 24 * time.Hour).Truncate(time.Hour)
	step := opts.Now.Sub(start) / time.Duration(opts.EventCommits)
	var eventID int64
	for c := range opts.EventCommits {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		t0 := start.Add(time.Duration(c) * step)
		for range opts.EventsPerCommit {
			eventID++
			ts := t0.Add(time.Duration(r.Int64N(int64(step))))
			tenant := tenants.next()
			et := eventTypes[r.IntN(len(eventTypes))]
			b.Field(0).(*array.Int64Builder).Append(eventID)
			tsv, _ := arrow.TimestampFromTime(ts, arrow.Microsecond)
			b.Field(1).(*array.TimestampBuilder).Append(tsv)
			b.Field(2).(*array.Int32Builder).Append(tenant)
			b.Field(3).(*array.Int64Builder).Append(int64(tenant)*100000 + r.Int64N(5000))
			b.Field(4).(*array.StringBuilder).Append(et)
			b.Field(5).(*array.StringBuilder).Append(countries[r.IntN(len(countries))])
			b.Field(6).(*array.StringBuilder).Append(devices[r.IntN(len(devices))])
			p := paths[r.IntN(len(paths))]
			if len(p) > 2 && p[len(p)-2:] == "%d" {
				p = fmt.Sprintf(p, r.IntN(2000))
			}
			b.Field(7).(*array.StringBuilder).Append("https://shop.example.com" + p)
			lat := int32(math.Exp(r.NormFloat64()*0.8 + 4.5))
			b.Field(8).(*array.Int32Builder).Append(lat)
			if et == "purchase" {
				b.Field(9).(*array.Float64Builder).Append(math.Round(r.ExpFloat64()*4000) / 100)
			} else {
				b.Field(9).(*array.Float64Builder).AppendNull()
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		if tbl, err = appendRecord(ctx, tbl, rec); err != nil {
			return err
		}
		opts.Progress("web.events", c+1, opts.EventCommits)
	}
	return nil
}

func appendRecord(ctx context.Context, tbl *table.Table, rec arrow.RecordBatch) (*table.Table, error) {
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	return tbl.Append(ctx, rdr, iceberg.Properties{"floe.demo": "true"})
}
