package layout_test

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-project/floe/layout"
)

func ExampleParse() {
	l, err := layout.Parse(`SORT(tenant_id, "Event Time" DESC) target 256MiB`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l)
	fmt.Printf("%+v\n", l.Columns[1])

	_, err = layout.Parse("zorder(a")
	fmt.Println(err)
	// Output:
	// sort(tenant_id, "Event Time" desc) target 256MiB
	// {Name:Event Time Desc:true NullsLast:true}
	// layout "zorder(a": expected ")" at offset 8
}

func ExampleNewEncoder() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "tenant", Type: arrow.BinaryTypes.String},
		{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"b", "a", "ab", "a"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{5, 7, -1, 0}, []bool{true, true, true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()

	l, _ := layout.Parse("sort(tenant, amount desc)")
	enc, err := layout.NewEncoder(l, schema, layout.EncoderOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rows := []int{0, 1, 2, 3}
	keys := make([][]byte, len(rows))
	for i := range rows {
		keys[i], _ = enc.AppendKey(nil, rec, i)
	}
	slices.SortFunc(rows, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
	for _, r := range rows {
		fmt.Println(rec.Column(0).ValueStr(r), rec.Column(1).ValueStr(r))
	}
	// Output:
	// a 7
	// a (null)
	// ab -1
	// b 5
}

func ExampleFitQuantiles() {
	schema := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32}, {Name: "qty", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range 100 {
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32(19000 + i))
		b.Field(1).(*array.Int64Builder).Append(int64(i % 50))
	}
	sample := b.NewRecordBatch()
	defer sample.Release()

	q, err := layout.FitQuantiles([]arrow.RecordBatch{sample}, []string{"day", "qty"}, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range []int{0, 30, 60, 99} {
		day, _, _ := q.Bucket("day", sample, row)
		qty, _, _ := q.Bucket("qty", sample, row)
		fmt.Printf("row %d: day bucket %d, qty bucket %d\n", row, day, qty)
	}

	// A Hilbert layout over the same columns orders rows by those buckets.
	l, _ := layout.Parse("hilbert(day, qty)")
	enc, err := layout.NewEncoder(l, schema, layout.EncoderOptions{Quantiles: q})
	if err != nil {
		fmt.Println(err)
		return
	}
	key, _ := enc.AppendKey(nil, sample, 99)
	fmt.Printf("key of row 99: %x\n", key)
	// Output:
	// row 0: day bucket 0, qty bucket 0
	// row 30: day bucket 1, qty bucket 2
	// row 60: day bucket 2, qty bucket 0
	// row 99: day bucket 3, qty bucket 3
	// key of row 99: a0
}
