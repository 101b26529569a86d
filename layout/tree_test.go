package layout_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// int64Key is the ascending sort-key encoding of v (big-endian, sign bit flipped).
func int64Key(t testing.TB, v int64) []byte {
	t.Helper()
	b := array.NewInt64Builder(memory.NewGoAllocator())
	defer b.Release()
	b.Append(v)
	arr := b.NewArray()
	defer arr.Release()
	k, err := layout.ValueKey(arr, 0)
	require.NoError(t, err)
	return k
}

// testTree cuts a < 10 (left: leaf 0 sorted by b), else b <= 5 (leaf 1 sorted by a, leaf 2
// sorted by b descending).
func testTree(t testing.TB, schema *arrow.Schema) *layout.Tree {
	t.Helper()
	root := &layout.TreeNode{
		Cut:  &layout.TreeCut{Column: "a", Value: int64Key(t, 10)},
		Left: &layout.TreeNode{SortColumn: "b", Rows: 10},
		Right: &layout.TreeNode{
			Cut:   &layout.TreeCut{Column: "b", Value: int64Key(t, 5), Inclusive: true},
			Left:  &layout.TreeNode{SortColumn: "a", Rows: 3},
			Right: &layout.TreeNode{SortColumn: "b", Descending: true, Rows: 4},
			Rows:  7,
		},
		Rows: 17,
	}
	tr, err := layout.NewTree(schema, root)
	require.NoError(t, err)
	return tr
}

func TestParseTree(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "tree(a)", want: "tree(a)"},
		{in: "TREE( ts , account_id,kind ) target 64MiB", want: "tree(ts, account_id, kind) target 64MiB"},
		{in: "tree(a nulls first)", want: "tree(a)"},
		{in: "tree()", err: "expected a column name"},
		{in: "tree(a desc)", err: `"desc" is only allowed in sort`},
		{in: "tree(a nulls last)", err: "nulls last is not allowed in tree"},
		{in: "tree(a, b, c, d, e, f, g, h, i)", err: "tree needs 1 to 8 columns, got 9"},
		{in: "tree(a, A)", err: "duplicate column"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			l, err := layout.Parse(tc.in)
			if tc.err != "" {
				require.ErrorIs(t, err, layout.ErrInvalidLayout)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, layout.StrategyTree, l.Strategy)
			require.Equal(t, tc.want, l.String())
			back, err := layout.Parse(l.String())
			require.NoError(t, err)
			require.Equal(t, l, back)
			require.NoError(t, l.Validate())
		})
	}
	bad := layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "a", NullsLast: true}}}
	require.ErrorContains(t, bad.Validate(), "nulls last is not allowed")
}

// TestTreeKeys routes each row by hand through testTree and checks the key: the leaf
// number, then the leaf's sort column; sorting by key groups leaves in order and orders
// each leaf by its column, nulls first (descending, nulls last, in leaf 2).
func TestTreeKeys(t *testing.T) {
	a := []*int64{ptr(3), ptr(10), ptr(9), nil, ptr(50), ptr(11), ptr(12), ptr(10)}
	b := []*int64{ptr(7), ptr(5), nil, ptr(1), ptr(6), ptr(100), ptr(-4), nil}
	rec := int64Record(t, []string{"a", "b"}, a, b)
	tr := testTree(t, rec.Schema())
	require.Equal(t, 3, tr.Leaves())
	require.Equal(t, 2, tr.Depth())
	require.Equal(t, []string{"a", "b"}, tr.Columns())
	l, err := layout.Parse("tree(a, b)")
	require.NoError(t, err)
	enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: tr})
	require.NoError(t, err)
	wantLeaf := func(row int) (leaf int, sortVal *int64) {
		switch {
		case a[row] == nil || *a[row] < 10: // nulls go left
			return 0, b[row]
		case b[row] == nil || *b[row] <= 5:
			return 1, a[row]
		default:
			return 2, b[row]
		}
	}
	keys := make([][]byte, rec.NumRows())
	for row := range keys {
		k, err := enc.AppendKey([]byte("prefix"), rec, row)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(k, []byte("prefix")), "AppendKey only appends")
		k = k[len("prefix"):]
		leaf, v := wantLeaf(row)
		got, ok := layout.LeafOfKey(k)
		require.True(t, ok)
		require.Equal(t, leaf, got, "row %d", row)
		want := []byte{0x00} // a null sorts first in its leaf
		if v != nil {
			want = append([]byte{0x01}, int64Key(t, *v)...)
		}
		if leaf == 2 { // descending: the complement, a null last
			want = []byte{0xFF}
			if v != nil {
				want = append([]byte{0x01}, int64Key(t, *v)...)
				for i := range want {
					want[i] = ^want[i]
				}
			}
		}
		require.Equal(t, want, k[4:], "row %d", row)
		keys[row] = k
	}
	order := []int{0, 1, 2, 3, 4, 5, 6, 7}
	slices.SortStableFunc(order, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
	// leaf 0: rows 0 (b 7), 2 (b null), 3 (b 1) → 2, 3, 0; leaf 1: rows 1 (a 10), 6 (a 12),
	// 7 (a 10, b null) → 1, 7, 6; leaf 2, descending: rows 4 (b 6), 5 (b 100) → 5, 4.
	require.Equal(t, []int{2, 3, 0, 1, 7, 6, 5, 4}, order)
}

func ptr(v int64) *int64 { return &v }

func TestTreeFloatCutsRouteNaNRight(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	fb := b.Field(0).(*array.Float64Builder)
	fb.AppendValues([]float64{-1, 0, math.Copysign(0, -1), 2.5, math.NaN(), math.Inf(1)}, nil)
	fb.AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	cut, err := layout.ValueKey(rec.Column(0), 1) // 0.0
	require.NoError(t, err)
	tr, err := layout.NewTree(schema, &layout.TreeNode{
		Cut: &layout.TreeCut{Column: "x", Value: cut}, Left: &layout.TreeNode{SortColumn: "x"}, Right: &layout.TreeNode{SortColumn: "x"},
	})
	require.NoError(t, err)
	enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "x"}}}, schema, layout.EncoderOptions{Tree: tr})
	require.NoError(t, err)
	var leaves []int
	for row := range int(rec.NumRows()) {
		k, err := enc.AppendKey(nil, rec, row)
		require.NoError(t, err)
		leaf, _ := layout.LeafOfKey(k)
		leaves = append(leaves, leaf)
	}
	// x < 0: -1 and null go left; 0, -0 (equal to 0), 2.5, NaN and +Inf go right.
	require.Equal(t, []int{0, 1, 1, 1, 1, 1, 0}, leaves)
}

func TestTreeErrors(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, ints(1), ints(2))
	schema := rec.Schema()
	short := &layout.TreeNode{Cut: &layout.TreeCut{Column: "a", Value: []byte{1, 2}}, Left: &layout.TreeNode{SortColumn: "a"}, Right: &layout.TreeNode{SortColumn: "a"}}
	for _, tc := range []struct {
		name string
		root *layout.TreeNode
		err  []string
	}{
		{"nil root", nil, []string{"no root"}},
		{"missing child", &layout.TreeNode{Cut: &layout.TreeCut{Column: "a", Value: int64Key(t, 1)}, Left: &layout.TreeNode{SortColumn: "a"}}, []string{"lacks a child"}},
		{"unknown columns", &layout.TreeNode{Cut: &layout.TreeCut{Column: "zz", Value: int64Key(t, 1)}, Left: &layout.TreeNode{SortColumn: "a"}, Right: &layout.TreeNode{SortColumn: "yy"}},
			[]string{`"zz"`, `"yy"`}},
		{"wrong width", short, []string{"a value of 2 bytes for a 8-byte int64"}},
		{"leaf without a sort column", &layout.TreeNode{}, []string{"leaf 0 has no sort column"}},
		{"leaf with children", &layout.TreeNode{SortColumn: "a", Left: &layout.TreeNode{SortColumn: "a"}}, []string{"without a cut has children"}},
		{"descending cut", &layout.TreeNode{Cut: &layout.TreeCut{Column: "a", Value: int64Key(t, 1)}, Descending: true, Left: &layout.TreeNode{SortColumn: "a"}, Right: &layout.TreeNode{SortColumn: "a"}},
			[]string{"a node with a cut is marked descending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layout.NewTree(schema, tc.root)
			require.ErrorIs(t, err, layout.ErrInvalidTree)
			for _, e := range tc.err {
				require.ErrorContains(t, err, e)
			}
		})
	}
	deep := &layout.TreeNode{SortColumn: "a"}
	for range layout.MaxTreeDepth + 1 {
		deep = &layout.TreeNode{Cut: &layout.TreeCut{Column: "a", Value: int64Key(t, 1)}, Left: deep, Right: &layout.TreeNode{SortColumn: "a"}}
	}
	_, err := layout.NewTree(schema, deep)
	require.ErrorContains(t, err, "deeper than 64 levels")

	tr := testTree(t, schema)
	_, err = layout.NewEncoder(layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "a"}}}, schema, layout.EncoderOptions{})
	require.ErrorContains(t, err, "needs the learned tree")
	_, err = layout.NewEncoder(layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "a"}}}, schema, layout.EncoderOptions{Tree: tr})
	require.ErrorContains(t, err, `the tree cuts or sorts on "b", which the layout does not name`)
	other := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}}, nil)
	_, err = layout.NewEncoder(layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}}, other, layout.EncoderOptions{Tree: tr})
	require.ErrorContains(t, err, `column "a" is int32, the tree was learned on int64`)
}

func TestTreeRoundTripJSON(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, ints(1), ints(2))
	tr := testTree(t, rec.Schema())
	data, err := json.Marshal(tr)
	require.NoError(t, err)
	back, err := layout.UnmarshalTree(data, rec.Schema())
	require.NoError(t, err)
	require.Equal(t, tr.Root(), back.Root())
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.JSONEq(t, string(data), string(again))
	require.Equal(t, tr.Fingerprint(), back.Fingerprint(), "a tree read back keeps its fingerprint")
	require.Len(t, tr.Fingerprint(), 16)
	moved := tr.Root()
	moved.Cut.Value = int64Key(t, 11)
	other, err := layout.NewTree(rec.Schema(), moved)
	require.NoError(t, err)
	require.NotEqual(t, tr.Fingerprint(), other.Fingerprint(), "a tree that routes rows elsewhere has another")
	require.Equal(t, int64(17), back.Root().Rows)
	require.True(t, back.Root().Right.Right.Descending)
	require.Contains(t, string(data), `"desc":true`)

	// Bound to a schema that spells the columns differently and holds others.
	wide := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String}, {Name: "B", Type: arrow.PrimitiveTypes.Int64}, {Name: "A", Type: arrow.PrimitiveTypes.Int64}}, nil)
	_, err = layout.UnmarshalTree(data, wide)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		data string
		err  string
	}{
		{"not json", `{`, "load tree"},
		{"no nodes", `{"columns":[],"nodes":[]}`, "no nodes"},
		{"type changed", `{"columns":[{"name":"a","type":"int32","fingerprint":"x"}],"nodes":[{"sort":0}]}`, `column "a" was learned as int32`},
		{"missing column", `{"columns":[{"name":"q","fingerprint":"x"}],"nodes":[{"sort":0}]}`, `"q"`},
		{"column index out of range", `{"columns":[],"nodes":[{"sort":3}]}`, "column index 3 out of range"},
		{"both", `{"columns":[],"nodes":[{"sort":0,"column":0}]}`, "both a cut and a leaf"},
		{"neither", `{"columns":[],"nodes":[{}]}`, "neither a cut nor a leaf"},
		{"descending cut", `{"columns":[A],"nodes":[{"column":0,"value":"gAAAAAAAAAE=","right":2,"desc":true},{"sort":0},{"sort":0}]}`, "node 0 is a cut marked descending"},
		{"right child wrong", `{"columns":[A],"nodes":[{"column":0,"value":"gAAAAAAAAAE=","right":5},{"sort":0},{"sort":0}]}`, "right child 5, but its left subtree ends at 2"},
		{"left out of range", `{"columns":[A],"nodes":[{"column":0,"value":"gAAAAAAAAAE=","right":1}]}`, "node 1 out of range"},
		{"dangling nodes", `{"columns":[A],"nodes":[{"sort":0},{"sort":0}]}`, "nodes 1 to 1 are not in the tree"},
		{"short value", `{"columns":[A],"nodes":[{"column":0,"value":"gA==","right":2},{"sort":0},{"sort":0}]}`, "a value of 1 bytes for a 8-byte int64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			colA := `{"name":"a","type":"int64","fingerprint":` + strconv.Quote(rec.Schema().Field(0).Type.Fingerprint()) + `}`
			_, err := layout.UnmarshalTree([]byte(strings.ReplaceAll(tc.data, "[A]", "["+colA+"]")), rec.Schema())
			require.Error(t, err)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func FuzzUnmarshalTree(f *testing.F) {
	rec := int64Record(f, []string{"a", "b"}, span(0, 30), span(-15, 15))
	tr := testTree(f, rec.Schema())
	good, err := json.Marshal(tr)
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"columns":[{"name":"a","type":"int64","fingerprint":"x"}],"nodes":[{"sort":0}]}`))
	f.Add([]byte(`{"columns":[],"nodes":[{"column":0,"right":2},{"sort":0},{"sort":0}]}`))
	f.Add([]byte(`{"nodes":null}`))
	set, err := json.Marshal(setTree(f, rec.Schema(), "b", [][]byte{int64Key(f, 3), int64Key(f, -7)}))
	require.NoError(f, err)
	f.Add(set)
	f.Add([]byte(`{"columns":[],"nodes":[{"column":0,"set":["gAAAAAAAAAE=",""],"value":"","right":2},{"sort":0},{"sort":0}]}`))
	l, err := layout.Parse("tree(a, b)")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		loaded, err := layout.UnmarshalTree(data, rec.Schema())
		if err != nil {
			return
		}
		enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: loaded})
		require.NoError(t, err, "a tree that loads on a schema keys its records")
		for row := range int(rec.NumRows()) {
			k, err := enc.AppendKey(nil, rec, row)
			require.NoError(t, err)
			leaf, ok := layout.LeafOfKey(k)
			require.True(t, ok)
			require.Less(t, leaf, loaded.Leaves())
		}
	})
}
