package simulator_test

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-project/floe/simulator"
)

func ExampleParseLayout() {
	l, err := simulator.ParseLayout(`SORT(tenant_id, "Event Time" DESC) target 256MiB`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l)
	fmt.Printf("%+v\n", l.Columns[1])

	_, err = simulator.ParseLayout("zorder(a")
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

	l, _ := simulator.ParseLayout("sort(tenant, amount desc)")
	enc, err := simulator.NewEncoder(l, schema, simulator.EncoderOptions{})
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
