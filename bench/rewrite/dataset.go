package rewrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// datasetVersion changes whenever the generator's output changes, so a cached
// dataset of an older generator is rebuilt instead of reused.
const datasetVersion = 1

// PartitionField is the partition field of a partitioned dataset: the day
// of l_receiptdate, the day a streaming writer would have landed the row.
const PartitionField = "l_receiptdate_day"

// Names of the benchmark table in its warehouse.
const (
	// Namespace is the namespace of the generated table.
	Namespace = "bench"
	// TableName is the name of the generated table.
	TableName = "lineitem"
	// CatalogName is the name the warehouse's catalog is opened under.
	CatalogName = "bench"
)

// QuantileColumns are the columns whose quantiles [PrepareDataset] fits for
// rank z-order and Hilbert keys.
var QuantileColumns = []string{"l_orderkey", "l_partkey", "l_suppkey", "l_quantity", "l_shipdate", "l_receiptdate"}

// Schema is the generated table's schema: the columns of TPC-H lineitem.
func Schema() *iceberg.Schema {
	req := func(id int, name string, t iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
	}
	return iceberg.NewSchema(0,
		req(1, "l_orderkey", iceberg.PrimitiveTypes.Int64),
		req(2, "l_partkey", iceberg.PrimitiveTypes.Int64),
		req(3, "l_suppkey", iceberg.PrimitiveTypes.Int64),
		req(4, "l_linenumber", iceberg.PrimitiveTypes.Int32),
		req(5, "l_quantity", iceberg.PrimitiveTypes.Int32),
		req(6, "l_extendedprice", iceberg.PrimitiveTypes.Float64),
		req(7, "l_discount", iceberg.PrimitiveTypes.Float64),
		req(8, "l_tax", iceberg.PrimitiveTypes.Float64),
		req(9, "l_returnflag", iceberg.PrimitiveTypes.String),
		req(10, "l_linestatus", iceberg.PrimitiveTypes.String),
		req(11, "l_shipdate", iceberg.PrimitiveTypes.Date),
		req(12, "l_commitdate", iceberg.PrimitiveTypes.Date),
		req(13, "l_receiptdate", iceberg.PrimitiveTypes.Date),
		req(14, "l_shipinstruct", iceberg.PrimitiveTypes.String),
		req(15, "l_shipmode", iceberg.PrimitiveTypes.String),
		req(16, "l_comment", iceberg.PrimitiveTypes.String),
	)
}

// DatasetOptions says which dataset to build or reuse.
type DatasetOptions struct {
	// Dir is the parent directory of cached datasets; each dataset lives in
	// a sub-directory named after its rows, files and seed. Required.
	Dir string
	// Rows is the number of rows. Required (> 0).
	Rows int64
	// Files is the number of appends, one data file each. Required (> 0,
	// at most Rows).
	Files int
	// Seed seeds the generator; the same seed gives the same rows.
	Seed uint64
	// Partitions, when positive, partitions the table by day(l_receiptdate)
	// into that many consecutive days, in the streaming shape: append f
	// lands in day f*Partitions/Files, and its rows were received that day
	// (shipped 1 to 30 days before). Zero: unpartitioned, and rows of every
	// file spread over all of TPC-H's dates. At most Files.
	Partitions int
}

// Validate reports every invalid field at once.
func (o DatasetOptions) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("dataset dir is required"))
	}
	if o.Rows <= 0 {
		errs = append(errs, fmt.Errorf("rows must be > 0, got %d", o.Rows))
	}
	if o.Files <= 0 || int64(o.Files) > o.Rows {
		errs = append(errs, fmt.Errorf("files must be in [1, rows], got %d", o.Files))
	}
	if o.Partitions < 0 || o.Partitions > max(o.Files, 0) {
		errs = append(errs, fmt.Errorf("partitions must be in [0, files], got %d", o.Partitions))
	}
	return errors.Join(errs...)
}

// Dataset is a generated table on disk. It is written to dataset.json in
// Dir once complete, which marks the directory reusable.
type Dataset struct {
	// Version is the generator version that wrote it.
	Version int `json:"version"`
	// Dir is the warehouse directory (catalog.db and warehouse/).
	Dir string `json:"dir"`
	// Rows, Files and Seed are the options it was built with.
	Rows       int64  `json:"rows"`
	Files      int    `json:"files"`
	Seed       uint64 `json:"seed"`
	Partitions int    `json:"partitions,omitempty"`
	// InputBytes is the total size of the data files.
	InputBytes int64 `json:"input_bytes"`
	// Paths are the data files' local paths, in append order.
	Paths []string `json:"paths"`
	// QuantilesFile holds the quantiles of [QuantileColumns] fitted on a
	// sample of the rows (layout.Quantiles JSON).
	QuantilesFile string `json:"quantiles_file"`
}

// PrepareDataset returns the dataset for opts under opts.Dir, generating it
// when no complete dataset of the same generator version, rows, files and
// seed is there. Generation is deterministic for a seed.
func PrepareDataset(ctx context.Context, opts DatasetOptions) (*Dataset, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("prepare dataset: %w", err)
	}
	name := fmt.Sprintf("lineitem-r%d-f%d-s%d", opts.Rows, opts.Files, opts.Seed)
	if opts.Partitions > 0 {
		name += fmt.Sprintf("-p%d", opts.Partitions)
	}
	dir, err := filepath.Abs(filepath.Join(opts.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("prepare dataset: %w", err)
	}
	marker := filepath.Join(dir, "dataset.json")
	if b, err := os.ReadFile(marker); err == nil {
		var ds Dataset
		if err := json.Unmarshal(b, &ds); err == nil && ds.Version == datasetVersion && ds.Dir == dir &&
			ds.Rows == opts.Rows && ds.Files == opts.Files && ds.Seed == opts.Seed && ds.Partitions == opts.Partitions && ds.present() {
			return &ds, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("prepare dataset %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("prepare dataset %s: %w", dir, err)
	}
	ds, err := generate(ctx, dir, opts)
	if err != nil {
		return nil, fmt.Errorf("generate dataset %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("prepare dataset %s: %w", dir, err)
	}
	if err := os.WriteFile(marker, b, 0o644); err != nil {
		return nil, fmt.Errorf("prepare dataset %s: %w", dir, err)
	}
	return ds, nil
}

// present reports whether every data file of the dataset is still on disk.
func (d *Dataset) present() bool {
	for _, p := range append([]string{d.QuantilesFile}, d.Paths...) {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// LoadTable opens the dataset's catalog and loads its table.
func (d *Dataset) LoadTable(ctx context.Context) (*table.Table, error) {
	return loadTable(ctx, d.Dir)
}

// Quantiles loads the dataset's fitted quantiles, bound to schema.
func (d *Dataset) Quantiles(schema *arrow.Schema) (*layout.Quantiles, error) {
	return loadQuantiles(d.QuantilesFile, schema)
}

func loadTable(ctx context.Context, dir string) (*table.Table, error) {
	cat, err := lake.OpenCatalog(ctx, CatalogName, lake.LocalCatalogProps(dir))
	if err != nil {
		return nil, err
	}
	return lake.LoadTable(ctx, cat, lake.Ident{Catalog: CatalogName, Namespace: []string{Namespace}, Name: TableName})
}

func loadQuantiles(path string, schema *arrow.Schema) (*layout.Quantiles, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load quantiles: %w", err)
	}
	return layout.UnmarshalQuantiles(b, schema)
}

// ArrowSchema is the Arrow form of [Schema], with Iceberg field ids, as
// iceberg-go's scan produces it.
func ArrowSchema() (*arrow.Schema, error) {
	s, err := table.SchemaToArrowSchema(Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", TableName, err)
	}
	return s, nil
}

func generate(ctx context.Context, dir string, opts DatasetOptions) (*Dataset, error) {
	cat, err := lake.OpenCatalog(ctx, CatalogName, lake.LocalCatalogProps(dir))
	if err != nil {
		return nil, err
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{Namespace}, nil); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	create := []catalog.CreateTableOpt{catalog.WithProperties(iceberg.Properties{"format-version": "2", table.ParquetCompressionKey: "zstd"})}
	if opts.Partitions > 0 {
		receipt, _ := Schema().FindFieldByName("l_receiptdate")
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{
			SourceIDs: []int{receipt.ID}, FieldID: 1000, Name: PartitionField, Transform: iceberg.DayTransform{},
		})
		create = append(create, catalog.WithPartitionSpec(&spec))
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{Namespace, TableName}, Schema(), create...)
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	sch, err := ArrowSchema()
	if err != nil {
		return nil, err
	}
	gen := newGenerator(opts.Rows)
	var samples []arrow.RecordBatch
	defer func() {
		for _, s := range samples {
			s.Release()
		}
	}()
	sampleEvery := max(opts.Files/20, 1)
	for f := range opts.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := opts.Rows / int64(opts.Files)
		if int64(f) < opts.Rows%int64(opts.Files) {
			n++
		}
		day := int32(-1)
		if opts.Partitions > 0 {
			day = partitionStartDay + int32(f*opts.Partitions/opts.Files)
		}
		rec := gen.batch(sch, rand.New(rand.NewPCG(opts.Seed, uint64(f))), int(n), day)
		rdr, err := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
		if err != nil {
			rec.Release()
			return nil, fmt.Errorf("append file %d: %w", f, err)
		}
		tbl, err = tbl.Append(ctx, rdr, nil)
		rdr.Release()
		if err != nil {
			rec.Release()
			return nil, fmt.Errorf("append file %d: %w", f, err)
		}
		if f%sampleEvery == 0 {
			samples = append(samples, rec)
		} else {
			rec.Release()
		}
	}
	q, err := layout.FitQuantiles(samples, QuantileColumns, 0)
	if err != nil {
		return nil, err
	}
	qb, err := q.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("store quantiles: %w", err)
	}
	ds := &Dataset{Version: datasetVersion, Dir: dir, Rows: opts.Rows, Files: opts.Files, Seed: opts.Seed, Partitions: opts.Partitions,
		QuantilesFile: filepath.Join(dir, "quantiles.json")}
	if err := os.WriteFile(ds.QuantilesFile, qb, 0o644); err != nil {
		return nil, fmt.Errorf("store quantiles: %w", err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan files: %w", err)
	}
	seen := map[string]bool{}
	for _, t := range tasks {
		p := t.File.FilePath()
		if seen[p] {
			continue
		}
		seen[p] = true
		ds.Paths = append(ds.Paths, localPath(p))
		ds.InputBytes += t.File.FileSizeBytes()
	}
	return ds, nil
}

// localPath turns a file:// location into a plain path.
func localPath(p string) string { return strings.TrimPrefix(p, "file://") }

// generator draws lineitem-like rows. Every row is independent, so rows of
// one file spread over the whole key range of every column, like the small
// files a streaming writer commits.
type generator struct {
	orderKeys, parts, supps int64
}

func newGenerator(rows int64) generator {
	// TPC-H proportions: about 1.5 order keys, 1/30 parts and 1/600
	// suppliers per line item.
	return generator{orderKeys: max(rows*3/2, 1), parts: max(rows/30, 1), supps: max(rows/600, 1)}
}

var (
	shipInstructs = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	shipModes     = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	commentWords  = strings.Fields("furiously quickly carefully blithely slyly ironic regular final special " +
		"express pending bold even silent unusual deposits requests packages accounts instructions " +
		"foxes theodolites pinto beans dependencies platelets asymptotes courts dolphins sleep wake " +
		"haggle nag boost detect integrate cajole use among above across along after against")
)

// Dates of TPC-H: ship dates from 1992-01-02 over 2,526 days; lines
// received after 1995-06-17 are still open.
const (
	startDay   = 8036 // 1992-01-02
	shipDays   = 2526
	currentDay = 9298 // 1995-06-17
	// partitionStartDay is the first receipt day of a partitioned dataset.
	partitionStartDay = currentDay
)

// batch draws n rows. A receiptDay >= 0 makes every row received that day
// and shipped 1 to 30 days before; otherwise ship dates spread over all of
// TPC-H's days.
func (g generator) batch(sch *arrow.Schema, rng *rand.Rand, n int, receiptDay int32) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	orderkey := b.Field(0).(*array.Int64Builder)
	partkey := b.Field(1).(*array.Int64Builder)
	suppkey := b.Field(2).(*array.Int64Builder)
	linenumber := b.Field(3).(*array.Int32Builder)
	quantity := b.Field(4).(*array.Int32Builder)
	price := b.Field(5).(*array.Float64Builder)
	discount := b.Field(6).(*array.Float64Builder)
	tax := b.Field(7).(*array.Float64Builder)
	returnflag := b.Field(8).(*array.StringBuilder)
	linestatus := b.Field(9).(*array.StringBuilder)
	shipdate := b.Field(10).(*array.Date32Builder)
	commitdate := b.Field(11).(*array.Date32Builder)
	receiptdate := b.Field(12).(*array.Date32Builder)
	instruct := b.Field(13).(*array.StringBuilder)
	mode := b.Field(14).(*array.StringBuilder)
	comment := b.Field(15).(*array.StringBuilder)
	b.Reserve(n)
	var sb strings.Builder
	for range n {
		pk := 1 + rng.Int64N(g.parts)
		q := 1 + rng.Int32N(50)
		orderkey.Append(1 + rng.Int64N(g.orderKeys))
		partkey.Append(pk)
		suppkey.Append(1 + rng.Int64N(g.supps))
		linenumber.Append(1 + rng.Int32N(7))
		quantity.Append(q)
		retail := float64(90000+(pk/10)%20001+100*(pk%1000)) / 100
		price.Append(float64(q) * retail)
		discount.Append(float64(rng.IntN(11)) / 100)
		tax.Append(float64(rng.IntN(9)) / 100)
		ship := startDay + rng.Int32N(shipDays)
		receipt := ship + 1 + rng.Int32N(30)
		if receiptDay >= 0 {
			receipt = receiptDay
			ship = receipt - 1 - rng.Int32N(30)
		}
		switch {
		case receipt > currentDay:
			returnflag.Append("N")
		case rng.IntN(2) == 0:
			returnflag.Append("R")
		default:
			returnflag.Append("A")
		}
		if ship > currentDay {
			linestatus.Append("O")
		} else {
			linestatus.Append("F")
		}
		shipdate.Append(arrow.Date32(ship))
		commitdate.Append(arrow.Date32(ship - 60 + rng.Int32N(121)))
		receiptdate.Append(arrow.Date32(receipt))
		instruct.Append(shipInstructs[rng.IntN(len(shipInstructs))])
		mode.Append(shipModes[rng.IntN(len(shipModes))])
		sb.Reset()
		want := 10 + rng.IntN(34)
		for sb.Len() < want {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(commentWords[rng.IntN(len(commentWords))])
		}
		comment.Append(sb.String()[:want])
	}
	return b.NewRecordBatch()
}
