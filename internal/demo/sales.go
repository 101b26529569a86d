package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/pingcap/go-tpc/tpch/dbgen"
)

// OrdersSchema is the schema of sales.orders (TPC-H ORDERS; money as double
// so that every layout, Iceberg's z-order included, can use it).
func OrdersSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "o_orderkey", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "o_custkey", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "o_orderstatus", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "o_totalprice", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "o_orderdate", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 6, Name: "o_orderpriority", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "o_clerk", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 8, Name: "o_shippriority", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 9, Name: "o_comment", Type: iceberg.PrimitiveTypes.String},
	)
}

// LineitemSchema is the schema of sales.lineitem (TPC-H LINEITEM).
func LineitemSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "l_orderkey", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "l_partkey", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "l_suppkey", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "l_linenumber", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 5, Name: "l_quantity", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 6, Name: "l_extendedprice", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 7, Name: "l_discount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 8, Name: "l_tax", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 9, Name: "l_returnflag", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 10, Name: "l_linestatus", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 11, Name: "l_shipdate", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 12, Name: "l_commitdate", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 13, Name: "l_receiptdate", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 14, Name: "l_shipinstruct", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 15, Name: "l_shipmode", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 16, Name: "l_comment", Type: iceberg.PrimitiveTypes.String},
	)
}

var errEnough = errors.New("floe demo: enough orders")

// tpchLoader receives dbgen's orders and buffers them as Arrow rows.
type tpchLoader struct {
	limit       int
	n           int
	orders      *array.RecordBuilder
	lines       *array.RecordBuilder
	onBatchFull func() error
	batchOrders int
	// stopped returns an error once the build is cancelled.
	stopped func() error
}

func (l *tpchLoader) Load(item any) error {
	if l.n >= l.limit {
		return errEnough
	}
	if err := l.stopped(); err != nil {
		return err
	}
	o, ok := item.(*dbgen.Order)
	if !ok {
		return fmt.Errorf("unexpected dbgen item %T", item)
	}
	l.n++
	ob := l.orders
	ob.Field(0).(*array.Int64Builder).Append(int64(o.OKey))
	ob.Field(1).(*array.Int64Builder).Append(int64(o.CustKey))
	ob.Field(2).(*array.StringBuilder).Append(string(o.Status))
	ob.Field(3).(*array.Float64Builder).Append(float64(o.TotalPrice) / 100)
	ob.Field(4).(*array.Date32Builder).Append(date32(o.Date))
	ob.Field(5).(*array.StringBuilder).Append(o.OrderPriority)
	ob.Field(6).(*array.StringBuilder).Append(o.Clerk)
	ob.Field(7).(*array.Int32Builder).Append(int32(o.ShipPriority))
	ob.Field(8).(*array.StringBuilder).Append(o.Comment)
	lb := l.lines
	for _, li := range o.Lines {
		lb.Field(0).(*array.Int64Builder).Append(int64(li.OKey))
		lb.Field(1).(*array.Int64Builder).Append(int64(li.PartKey))
		lb.Field(2).(*array.Int64Builder).Append(int64(li.SuppKey))
		lb.Field(3).(*array.Int32Builder).Append(int32(li.LCnt))
		lb.Field(4).(*array.Float64Builder).Append(float64(li.Quantity))
		lb.Field(5).(*array.Float64Builder).Append(float64(li.EPrice) / 100)
		lb.Field(6).(*array.Float64Builder).Append(float64(li.Discount) / 100)
		lb.Field(7).(*array.Float64Builder).Append(float64(li.Tax) / 100)
		lb.Field(8).(*array.StringBuilder).Append(string(li.RFlag))
		lb.Field(9).(*array.StringBuilder).Append(string(li.LStatus))
		lb.Field(10).(*array.Date32Builder).Append(date32(li.SDate))
		lb.Field(11).(*array.Date32Builder).Append(date32(li.CDate))
		lb.Field(12).(*array.Date32Builder).Append(date32(li.RDate))
		lb.Field(13).(*array.StringBuilder).Append(li.ShipInstruct)
		lb.Field(14).(*array.StringBuilder).Append(li.ShipMode)
		lb.Field(15).(*array.StringBuilder).Append(li.Comment)
	}
	if l.n%l.batchOrders == 0 {
		return l.onBatchFull()
	}
	return nil
}

func (l *tpchLoader) Flush() error { return nil }

func date32(s string) arrow.Date32 {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0
	}
	return arrow.Date32FromTime(t)
}

// buildSales loads TPC-H orders and line items in four batch loads each.
func buildSales(ctx context.Context, cat catalog.Catalog, opts Options) error {
	props := iceberg.Properties{"format-version": "2"}
	orders, err := cat.CreateTable(ctx, ident("sales.orders"), OrdersSchema(), catalog.WithProperties(props))
	if err != nil {
		return err
	}
	lines, err := cat.CreateTable(ctx, ident("sales.lineitem"), LineitemSchema(), catalog.WithProperties(props))
	if err != nil {
		return err
	}
	osc, err := table.SchemaToArrowSchema(orders.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	lsc, err := table.SchemaToArrowSchema(lines.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	const batches = 4
	l := &tpchLoader{
		limit:       opts.Orders,
		orders:      array.NewRecordBuilder(memory.DefaultAllocator, osc),
		lines:       array.NewRecordBuilder(memory.DefaultAllocator, lsc),
		batchOrders: max(1, (opts.Orders+batches-1)/batches),
	}
	defer l.orders.Release()
	defer l.lines.Release()
	done := 0
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if l.orders.Field(0).Len() == 0 {
			return nil
		}
		var err error
		if orders, err = appendRecord(ctx, orders, l.orders.NewRecordBatch()); err != nil {
			return fmt.Errorf("append orders: %w", err)
		}
		if lines, err = appendRecord(ctx, lines, l.lines.NewRecordBatch()); err != nil {
			return fmt.Errorf("append line items: %w", err)
		}
		done++
		opts.Progress("sales", done, batches)
		return nil
	}
	l.onBatchFull = flush
	l.stopped = ctx.Err
	// dbgen takes no context and its set-up runs for seconds: it runs on
	// a goroutine of its own so that Ctrl-C returns at once. The loader
	// stops the generation at the next order; the set-up, which cannot be
	// stopped, is left to finish on its own (it touches nothing of ours).
	genErr, initDone := make(chan error, 1), make(chan struct{})
	go func() {
		dbgen.InitDbGen(1)
		close(initDone)
		// DbGen prints "generating …" to os.Stdout itself, in the middle of
		// floe's own output: it prints to nothing instead. floe writes
		// through the streams it took at start, which this does not touch.
		if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			stdout := os.Stdout
			os.Stdout = null
			defer func() { os.Stdout = stdout; _ = null.Close() }()
		}
		genErr <- dbgen.DbGen(map[dbgen.Table]dbgen.Loader{dbgen.TOrderLine: l}, []dbgen.Table{dbgen.TOrderLine})
	}()
	select {
	case err = <-genErr:
	case <-ctx.Done():
		select {
		case <-initDone:
			// Generating: the loader stops at the next order, and must be
			// done with the builders before they are released.
			<-genErr
		default:
			// Still setting up: any later Load returns at once, touching
			// no builder.
		}
		return ctx.Err()
	}
	// dbgen wraps the loader's error with %v: match the text, not the value.
	if err != nil && !strings.Contains(err.Error(), errEnough.Error()) {
		return fmt.Errorf("generate tpc-h rows: %w", err)
	}
	return flush()
}

// buildAccounts writes a small merge-on-read table and deletes rows from it,
// leaving position delete files.
func buildAccounts(ctx context.Context, cat catalog.Catalog, opts Options) error {
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "account_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "country", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "plan", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "signup_date", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 6, Name: "mrr", Type: iceberg.PrimitiveTypes.Float64},
	)
	tbl, err := cat.CreateTable(ctx, ident("crm.accounts"), schema, catalog.WithProperties(iceberg.Properties{
		"format-version": "2", "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
	}))
	if err != nil {
		return err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(opts.Seed, 29))
	plans := []string{"free", "free", "starter", "pro", "enterprise", "churned"}
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var id int64
	for batch := range 6 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range 2000 {
			id++
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("account-%06d", id))
			b.Field(2).(*array.StringBuilder).Append(countries[r.IntN(len(countries))])
			b.Field(3).(*array.StringBuilder).Append(plans[r.IntN(len(plans))])
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(base.AddDate(0, 0, r.IntN(2000))))
			b.Field(5).(*array.Float64Builder).Append(float64(r.IntN(500000)) / 100)
		}
		rec := b.NewRecordBatch()
		b.Release()
		if tbl, err = appendRecord(ctx, tbl, rec); err != nil {
			return err
		}
		opts.Progress("crm.accounts", batch+1, 8)
	}
	for i, pred := range []iceberg.BooleanExpression{
		iceberg.EqualTo(iceberg.Reference("plan"), "churned"),
		iceberg.LessThan(iceberg.Reference("mrr"), 10.0),
	} {
		if tbl, err = tbl.Delete(ctx, pred, iceberg.Properties{"floe.demo": "true"}); err != nil {
			return fmt.Errorf("delete rows: %w", err)
		}
		opts.Progress("crm.accounts", 7+i, 8)
	}
	return nil
}
