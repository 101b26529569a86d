package layout_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
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

// setTree cuts col IN set (left: leaf 0, right: leaf 1), both leaves sorted on col.
func setTree(t testing.TB, schema *arrow.Schema, col string, set [][]byte) *layout.Tree {
	t.Helper()
	tr, err := layout.NewTree(schema, &layout.TreeNode{
		Cut:   &layout.TreeCut{Column: col, Set: set},
		Left:  &layout.TreeNode{SortColumn: col, Rows: 2},
		Right: &layout.TreeNode{SortColumn: col, Rows: 3},
		Rows:  5,
	})
	require.NoError(t, err)
	return tr
}

// leavesOf keys every row of rec with tree tr (its layout naming tr's columns) and returns
// each row's leaf.
func leavesOf(t testing.TB, tr *layout.Tree, rec arrow.RecordBatch) []int {
	t.Helper()
	var cols []layout.Column
	for _, c := range tr.Columns() {
		cols = append(cols, layout.Column{Name: c})
	}
	enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyTree, Columns: cols}, rec.Schema(), layout.EncoderOptions{Tree: tr})
	require.NoError(t, err)
	out := make([]int, rec.NumRows())
	for row := range out {
		k, err := enc.AppendKey(nil, rec, row)
		require.NoError(t, err)
		leaf, ok := layout.LeafOfKey(k)
		require.True(t, ok)
		out[row] = leaf
	}
	return out
}

// TestTreeSetCutRoutesEveryType routes a column of each type a set cut accepts (every type
// the sort key encodes) through `x IN (values of some rows)`: a row goes left exactly when
// its value is one of the set's, a null never, a NaN only if the set holds NaN (it does
// not here). The set is given unsorted and with a duplicate; the tree keeps it sorted and
// distinct.
func TestTreeSetCutRoutesEveryType(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, tc := range []struct {
		dt   arrow.DataType
		json string
		in   []int // rows whose values make the set
	}{
		{arrow.BinaryTypes.String, `["b", null, "a", "", "c", "b", "a\u0000z", "ab", "a"]`, []int{4, 2, 3, 6, 4}},
		{arrow.BinaryTypes.LargeString, `["x", "y", null, "x", "z"]`, []int{1, 0}},
		{arrow.BinaryTypes.Binary, `["AAE=", "AA==", null, "AQ==", "AAE="]`, []int{0, 1}},
		{arrow.PrimitiveTypes.Int8, `[1, -1, null, 127, -128, 1, 0]`, []int{1, 4, 3}},
		{arrow.PrimitiveTypes.Int16, `[300, -300, null, 5, 300]`, []int{0}},
		{arrow.PrimitiveTypes.Int32, `[7, 3, null, 3, 9, -7, 0]`, []int{1, 5}},
		{arrow.PrimitiveTypes.Int64, `[10, 20, null, 30, 20, -9223372036854775808, 9223372036854775807]`, []int{1, 5, 6}},
		{arrow.PrimitiveTypes.Uint8, `[0, 255, null, 7, 255]`, []int{1, 0}},
		{arrow.PrimitiveTypes.Uint64, `[18446744073709551615, 1, null, 2]`, []int{0, 3}},
		{arrow.FixedWidthTypes.Boolean, `[true, false, null, true, false]`, []int{0}},
		{arrow.FixedWidthTypes.Date32, `["2026-11-01", "2026-11-02", null, "1970-01-01", "2026-11-01"]`, []int{0, 3}},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, `["2026-11-01T12:00:00", "2026-11-01T12:00:00.000001", null, "2026-11-01T12:00:00"]`, []int{1}},
		{arrow.PrimitiveTypes.Float64, `[1.5, -2.5, null, 0, 1e300, 1.5, -1e-300]`, []int{0, 4, 6}},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			arr, _, err := array.FromJSON(mem, tc.dt, strings.NewReader(tc.json))
			require.NoError(t, err)
			defer arr.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: tc.dt, Nullable: true}}, nil)
			rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
			defer rec.Release()
			var set [][]byte
			in := map[string]bool{}
			for _, r := range tc.in {
				k, err := layout.ValueKey(arr, r)
				require.NoError(t, err)
				set = append(set, k)
				in[arr.ValueStr(r)] = true
			}
			tr := setTree(t, schema, "x", set)
			root := tr.Root()
			require.True(t, slices.IsSortedFunc(root.Cut.Set, bytes.Compare), "kept sorted")
			require.Len(t, root.Cut.Set, len(in), "kept distinct")
			got := leavesOf(t, tr, rec)
			for row, leaf := range got {
				want := 1
				if arr.IsValid(row) && in[arr.ValueStr(row)] {
					want = 0
				}
				require.Equal(t, want, leaf, "row %d (%s)", row, arr.ValueStr(row))
			}
		})
	}
}

// TestTreeSetCutNullsAndNaN: a null goes right of a set cut (left of a range cut, as
// before), a NaN right unless the set holds NaN; and a set cut below a range cut routes
// only the rows that reach it.
func TestTreeSetCutNullsAndNaN(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, math.NaN(), 0, 2, 5, 7}, []bool{true, true, false, true, true, true})
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "b", "a", "", "a", "c"}, []bool{true, true, true, false, true, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	key := func(col, row int) []byte {
		k, err := layout.ValueKey(rec.Column(col), row)
		require.NoError(t, err)
		return k
	}
	require.Equal(t, []int{0, 1, 1, 1, 1, 1}, leavesOf(t, setTree(t, schema, "x", [][]byte{key(0, 0)}), rec), "x = 1: NaN and null right")
	require.Equal(t, []int{0, 0, 1, 1, 1, 1}, leavesOf(t, setTree(t, schema, "x", [][]byte{key(0, 1), key(0, 0)}), rec), "x IN (1, NaN)")
	require.Equal(t, []int{0, 1, 0, 1, 0, 0}, leavesOf(t, setTree(t, schema, "k", [][]byte{key(1, 5), key(1, 0)}), rec), "k IN ('a', 'c'): the null k right")

	// x < 5 (nulls left), then on the right k IN ('a'): leaves 0 (x < 5), 1 (x >= 5 or
	// NaN, k = 'a'), 2 (the rest).
	tr, err := layout.NewTree(schema, &layout.TreeNode{
		Cut:  &layout.TreeCut{Column: "x", Value: key(0, 4)},
		Left: &layout.TreeNode{SortColumn: "k"},
		Right: &layout.TreeNode{
			Cut:  &layout.TreeCut{Column: "k", Set: [][]byte{key(1, 0)}},
			Left: &layout.TreeNode{SortColumn: "x"}, Right: &layout.TreeNode{SortColumn: "x", Descending: true},
		},
	})
	require.NoError(t, err)
	require.Equal(t, []int{0, 2, 0, 0, 1, 2}, leavesOf(t, tr, rec))
	p, err := tr.CutPredicate(*tr.Root().Right.Cut)
	require.NoError(t, err)
	require.Equal(t, "k = 'a'", p)
}

// TestTreeSetCutErrors: a set cut is refused when it also has a value, holds too many
// values, or a value of the wrong width, each named; an empty set is a range cut without
// its value.
func TestTreeSetCutErrors(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, ints(1), ints(2))
	schema := rec.Schema()
	leaf := func() *layout.TreeNode { return &layout.TreeNode{SortColumn: "a"} }
	cut := func(c layout.TreeCut) *layout.TreeNode { return &layout.TreeNode{Cut: &c, Left: leaf(), Right: leaf()} }
	many := make([][]byte, layout.MaxTreeSetValues+1)
	for i := range many {
		many[i] = int64Key(t, int64(i))
	}
	for _, tc := range []struct {
		name string
		root *layout.TreeNode
		err  []string
	}{
		{"value and set", cut(layout.TreeCut{Column: "a", Value: int64Key(t, 1), Set: [][]byte{int64Key(t, 2)}}), []string{"either a range (a value) or a set"}},
		{"inclusive set", cut(layout.TreeCut{Column: "a", Inclusive: true, Set: [][]byte{int64Key(t, 2)}}), []string{"either a range (a value) or a set"}},
		{"too many", cut(layout.TreeCut{Column: "a", Set: many}), []string{"257 values, at most 256"}},
		{"wrong width", cut(layout.TreeCut{Column: "b", Set: [][]byte{int64Key(t, 2), {1, 2}}}), []string{`set cut on "b"`, "value 1: a value of 2 bytes for a 8-byte int64"}},
		{"unknown column", cut(layout.TreeCut{Column: "zz", Set: [][]byte{{1}}}), []string{`"zz"`}},
		{"empty set", cut(layout.TreeCut{Column: "a", Set: [][]byte{}}), []string{"a value of 0 bytes for a 8-byte int64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layout.NewTree(schema, tc.root)
			require.ErrorIs(t, err, layout.ErrInvalidTree)
			for _, e := range tc.err {
				require.ErrorContains(t, err, e)
			}
		})
	}
	ok, err := layout.NewTree(schema, cut(layout.TreeCut{Column: "a", Set: many[:layout.MaxTreeSetValues]}))
	require.NoError(t, err, "a set of MaxTreeSetValues values is allowed")
	require.Len(t, ok.Root().Cut.Set, layout.MaxTreeSetValues)
}

// TestTreeSetCutJSON round-trips a tree with a set cut (its values in the JSON's "set"),
// and loads a tree written before set cuts existed (testdata/tree-before-set-cuts.json,
// written by the code of that time) as it did, with the fingerprint that code recorded.
// A hostile set, too large or beside a value, is refused on load.
func TestTreeSetCutJSON(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, ints(1), ints(2))
	schema := rec.Schema()
	tr, err := layout.NewTree(schema, &layout.TreeNode{
		Cut:  &layout.TreeCut{Column: "b", Set: [][]byte{int64Key(t, 9), int64Key(t, 3)}},
		Left: &layout.TreeNode{SortColumn: "a", Rows: 4},
		Right: &layout.TreeNode{
			Cut:  &layout.TreeCut{Column: "a", Value: int64Key(t, 10), Inclusive: true},
			Left: &layout.TreeNode{SortColumn: "b", Rows: 3}, Right: &layout.TreeNode{SortColumn: "b", Rows: 3},
			Rows: 6,
		},
		Rows: 10,
	})
	require.NoError(t, err)
	data, err := json.Marshal(tr)
	require.NoError(t, err)
	require.Contains(t, string(data), `"set":["gAAAAAAAAAM=","gAAAAAAAAAk="]`, "sorted, base64")
	back, err := layout.UnmarshalTree(data, schema)
	require.NoError(t, err)
	require.Equal(t, tr.Root(), back.Root())
	require.Equal(t, tr.Fingerprint(), back.Fingerprint())
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.Equal(t, string(data), string(again))

	// The fingerprint covers the set: another set, or the same value as a range cut,
	// routes rows elsewhere and is named otherwise.
	moved := tr.Root()
	moved.Cut.Set[1] = int64Key(t, 8)
	other, err := layout.NewTree(schema, moved)
	require.NoError(t, err)
	require.NotEqual(t, tr.Fingerprint(), other.Fingerprint())
	asRange := tr.Root()
	asRange.Cut.Value, asRange.Cut.Set = asRange.Cut.Set[0], nil
	ranged, err := layout.NewTree(schema, asRange)
	require.NoError(t, err)
	require.NotEqual(t, tr.Fingerprint(), ranged.Fingerprint())

	old, err := os.ReadFile("testdata/tree-before-set-cuts.json")
	require.NoError(t, err)
	loaded, err := layout.UnmarshalTree(old, schema)
	require.NoError(t, err)
	require.Equal(t, testTree(t, schema).Root(), loaded.Root())
	require.Equal(t, "987c40b7478abc0c", loaded.Fingerprint(), "the fingerprint the tree was recorded with")
	rewritten, err := json.Marshal(loaded)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(old)), string(rewritten), "an old tree is written back byte for byte")

	col := `{"name":"a","type":"int64","fingerprint":"@J"}`
	vals := make([]string, layout.MaxTreeSetValues+1)
	for i := range vals {
		vals[i] = `"gAAAAAAAAAE="`
	}
	for _, tc := range []struct{ name, data, err string }{
		{"too many", `{"columns":[` + col + `],"nodes":[{"column":0,"set":[` + strings.Join(vals, ",") + `],"right":2},{"sort":0},{"sort":0}]}`, "a set cut of 257 values, at most 256"},
		{"set and value", `{"columns":[` + col + `],"nodes":[{"column":0,"value":"gAAAAAAAAAE=","set":["gAAAAAAAAAI="],"right":2},{"sort":0},{"sort":0}]}`, "either a range (a value) or a set"},
		{"short set value", `{"columns":[` + col + `],"nodes":[{"column":0,"set":["gA=="],"right":2},{"sort":0},{"sort":0}]}`, "a value of 1 bytes for a 8-byte int64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layout.UnmarshalTree([]byte(tc.data), schema)
			require.ErrorIs(t, err, layout.ErrInvalidTree)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// TestTreeSetCutPredicate prints set cuts as SQL: IN with the values in key order, = for
// one value, and at most MaxPrintedSetValues values before the count of the rest.
func TestTreeSetCutPredicate(t *testing.T) {
	mem := memory.NewGoAllocator()
	arr, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["web", "o'brien", "api", "a", "b", "c", "d", "e", "f", "g", "h"]`))
	require.NoError(t, err)
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "Kind", Type: arrow.BinaryTypes.String}}, nil)
	keys := make([][]byte, arr.Len())
	for i := range keys {
		keys[i], err = layout.ValueKey(arr, i)
		require.NoError(t, err)
	}
	tr := setTree(t, schema, "kind", keys[:3])
	for _, tc := range []struct {
		set  [][]byte
		want string
	}{
		{keys[:3], "kind IN ('api', 'o''brien', 'web')"},
		{keys[2:3], "kind = 'api'"},
		{append(keys, keys[0]), "kind IN ('a', 'api', 'b', 'c', 'd', 'e', 'f', 'g', … and 3 more)"},
	} {
		got, err := tr.CutPredicate(layout.TreeCut{Column: "kind", Set: tc.set})
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	got, err := tr.CutPredicate(*tr.Root().Cut)
	require.NoError(t, err)
	require.Equal(t, "Kind IN ('api', 'o''brien', 'web')", got)
	_, err = tr.CutPredicate(layout.TreeCut{Column: "kind", Set: [][]byte{[]byte("abc")}})
	require.Error(t, err, "a string key without its terminator")
}

// TestTreeSetCutLongSets routes rows through sets longer than a few values, looked up by
// binary search rather than one by one: every other of 40 strings, and every third of
// 300 int64s (as integers).
func TestTreeSetCutLongSets(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, tc := range []struct {
		dt    arrow.DataType
		n     int
		every int
		value func(i int) string
	}{
		{arrow.BinaryTypes.String, 40, 2, func(i int) string { return `"v` + strings.Repeat("x", i%7) + strconv.Itoa(i) + `"` }},
		{arrow.PrimitiveTypes.Int64, 300, 3, func(i int) string { return strconv.Itoa(i*7919 - 1_000_000) }},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			vals := make([]string, tc.n)
			for i := range vals {
				vals[i] = tc.value(i)
			}
			arr, _, err := array.FromJSON(mem, tc.dt, strings.NewReader("["+strings.Join(vals, ",")+",null]"))
			require.NoError(t, err)
			defer arr.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: tc.dt, Nullable: true}}, nil)
			rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
			defer rec.Release()
			var set [][]byte
			for i := 0; i < tc.n && len(set) < layout.MaxTreeSetValues; i += tc.every {
				k, err := layout.ValueKey(arr, i)
				require.NoError(t, err)
				set = append(set, k)
			}
			require.Greater(t, len(set), 8)
			got := leavesOf(t, setTree(t, schema, "x", set), rec)
			for row, leaf := range got {
				want := 1
				if row < tc.n && row%tc.every == 0 {
					want = 0
				}
				require.Equal(t, want, leaf, "row %d", row)
			}
		})
	}
}
