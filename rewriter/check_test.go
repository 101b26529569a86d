package rewriter_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

func TestCheckLayout(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 4, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "city", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 6, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 8, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	for _, tc := range []struct {
		spec string
		mode layout.ZOrderMode
		want []string // substrings of the error; none: valid
	}{
		{spec: "sort(id, name)"},
		{spec: "sort(ID desc)"},
		{spec: "hilbert(id, amount)"},
		{spec: "zorder(id, amount)", mode: layout.ZOrderRank},
		{spec: "zorder(id, ts)"},
		{spec: "binpack"},
		{spec: "current"},
		{spec: "sort(nosuchcol)", want: []string{`no column "nosuchcol"`, "id, name, amount, addr, tags, ts"}},
		{spec: "sort(addr)", want: []string{`column "addr" is a struct<5: city: optional string>`, "primitive columns only"}},
		{spec: "hilbert(addr, id)", want: []string{`column "addr" is a struct`}},
		{spec: "sort(tags)", want: []string{`column "tags" is a list<string>`}},
		{spec: "sort(addr.city)", want: []string{`column "addr.city" (string) is nested`, "top-level columns only"}},
		{spec: `sort("addr.city")`, want: []string{`column "addr.city" (string) is nested`}},
		{spec: "zorder(id, amount)", want: []string{`column "amount" (decimal(10, 2))`, "rejects decimals"}},
		{spec: "zorder(nosuch, addr)", want: []string{`no column "nosuch"`, `column "addr" is a struct`}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			l, err := layout.Parse(tc.spec)
			require.NoError(t, err)
			err = rewriter.CheckLayout(sch, l, tc.mode)
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

// A dry run plans with PlanCompaction: it must refuse what the rewrite
// would, before any data is read.
func TestPlanCompactionRefusesWhatTheRewriteWould(t *testing.T) {
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	for _, tc := range []struct {
		name string
		opts rewriter.CompactOptions
		want string
	}{
		{"unknown column", rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "nosuchcol"}}}}, `no column "nosuchcol"`},
		{"memory below the minimum", rewriter.CompactOptions{Group: rewriter.GroupOptions{MemoryBytes: 1024}}, "memory bytes must be 0 (unbounded) or >= 1 MiB"},
		{"partition matching nothing", rewriter.CompactOptions{Partitions: []string{"bogus"}}, `partition "bogus" matches no data file`},
		{"negative groups per batch", rewriter.CompactOptions{GroupsPerBatch: -1}, "groups per batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rewriter.PlanCompaction(st, tc.opts)
			require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := rewriter.PlanCompaction(st, rewriter.CompactOptions{Group: rewriter.GroupOptions{MemoryBytes: 0}})
	require.NoError(t, err, "zero memory is unbounded")
}

// A layout written with its own target means that size: it wins over
// TargetFileSizeBytes (a flag, or a policy's target_file_size), which in
// turn wins over the table's own target.
func TestLayoutTargetWins(t *testing.T) {
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	sortID := func(target int64) layout.Layout {
		return layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}, TargetFileSizeBytes: target}
	}
	for _, tc := range []struct {
		name string
		opts rewriter.CompactOptions
		want int64
	}{
		{"the layout's target over the policy's", rewriter.CompactOptions{Layout: sortID(64 << 20), TargetFileSizeBytes: 256 << 20}, 64 << 20},
		{"the policy's target for a layout without one", rewriter.CompactOptions{Layout: sortID(0), TargetFileSizeBytes: 256 << 20}, 256 << 20},
		{"the table's own target otherwise", rewriter.CompactOptions{Layout: sortID(0)}, st.TargetFileSizeBytes(512 << 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := rewriter.PlanCompaction(st, tc.opts)
			require.NoError(t, err)
			require.Equal(t, tc.want, plan.TargetFileSizeBytes)
		})
	}
}
