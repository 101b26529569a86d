package layout_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// curveTree cuts a < 10: leaf 0 sorted by b, leaf 1 along the Hilbert curve through a and
// b (descending when desc).
func curveTree(t *testing.T, q *layout.Quantiles, desc bool) (*layout.Tree, error) {
	t.Helper()
	return layout.NewCurveTree(curveSchema(t), &layout.TreeNode{
		Cut:   &layout.TreeCut{Column: "a", Value: int64Key(t, 10)},
		Left:  &layout.TreeNode{SortColumn: "b", Rows: 4},
		Right: &layout.TreeNode{SortColumn: "a", CurveColumn: "b", Descending: desc, Rows: 12},
		Rows:  16,
	}, q)
}

var (
	curveA = []*int64{ptr(1), ptr(12), ptr(40), ptr(11), ptr(3), ptr(25), ptr(33), nil, ptr(18), ptr(10), ptr(29), ptr(14), ptr(37), ptr(20), ptr(15), ptr(9)}
	curveB = []*int64{ptr(5), ptr(90), ptr(2), ptr(13), nil, ptr(47), ptr(71), ptr(8), ptr(30), ptr(66), ptr(9), ptr(51), ptr(80), ptr(1), ptr(22), ptr(3)}
)

func curveSchema(t *testing.T) *arrow.Schema {
	t.Helper()
	rec := int64Record(t, []string{"a", "b"}, curveA, curveB)
	return rec.Schema()
}

// TestTreeCurveKeys: a curve leaf keys its rows by its leaf number, then the key a
// hilbert(a, b) layout gives them with the tree's quantiles (complemented for a
// descending leaf); a leaf sorted on one column keeps its key. So the rewrite, the
// projection and the learner order a curve leaf exactly as a Hilbert layout of the two
// columns would order its rows.
func TestTreeCurveKeys(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, curveA, curveB)
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, 8)
	require.NoError(t, err)
	hil, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyHilbert, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}}, rec.Schema(), layout.EncoderOptions{Quantiles: q})
	require.NoError(t, err)
	l, err := layout.Parse("tree(a, b)")
	require.NoError(t, err)
	for _, desc := range []bool{false, true} {
		tr, err := curveTree(t, q, desc)
		require.NoError(t, err)
		sc, cc := tr.LeafOrder(1)
		require.Equal(t, [2]string{"a", "b"}, [2]string{sc, cc})
		sc, cc = tr.LeafOrder(0)
		require.Equal(t, [2]string{"b", ""}, [2]string{sc, cc})
		enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: tr})
		require.NoError(t, err)
		for row := range int(rec.NumRows()) {
			k, err := enc.AppendKey([]byte("p"), rec, row)
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(k, []byte("p")))
			k = k[1:]
			leaf, ok := layout.LeafOfKey(k)
			require.True(t, ok)
			if curveA[row] == nil || *curveA[row] < 10 {
				require.Equal(t, 0, leaf, "row %d", row)
				want := []byte{0x00}
				if curveB[row] != nil {
					want = append([]byte{0x01}, int64Key(t, *curveB[row])...)
				}
				require.Equal(t, want, k[4:], "row %d: sorted on b", row)
				continue
			}
			require.Equal(t, 1, leaf, "row %d", row)
			want, err := hil.AppendKey(nil, rec, row)
			require.NoError(t, err)
			if desc {
				for i := range want {
					want[i] = ^want[i]
				}
			}
			require.Equal(t, want, k[4:], "row %d: along hilbert(a, b)", row)
		}
	}
}

func TestTreeCurveJSON(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, curveA, curveB)
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, 8)
	require.NoError(t, err)
	tr, err := curveTree(t, q, false)
	require.NoError(t, err)
	data, err := json.Marshal(tr)
	require.NoError(t, err)
	require.Contains(t, string(data), `"curve":1`)
	require.Contains(t, string(data), `"quantiles":`)
	back, err := layout.UnmarshalTree(data, rec.Schema())
	require.NoError(t, err)
	require.Equal(t, tr.Root(), back.Root())
	require.Equal(t, "b", back.Root().Right.CurveColumn)
	require.Equal(t, tr.Fingerprint(), back.Fingerprint(), "a curve tree read back keeps its fingerprint")
	// Same keys from the tree read back: its quantiles came back with it.
	l, err := layout.Parse("tree(a, b)")
	require.NoError(t, err)
	e1, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: tr})
	require.NoError(t, err)
	e2, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: back})
	require.NoError(t, err)
	for row := range int(rec.NumRows()) {
		k1, err := e1.AppendKey(nil, rec, row)
		require.NoError(t, err)
		k2, err := e2.AppendKey(nil, rec, row)
		require.NoError(t, err)
		require.Equal(t, k1, k2, "row %d", row)
	}
	// The same cuts with the leaf sorted on a alone: another tree, another fingerprint.
	flat := tr.Root()
	flat.Right.CurveColumn = ""
	single, err := layout.NewCurveTree(rec.Schema(), flat, q)
	require.NoError(t, err)
	require.NotEqual(t, tr.Fingerprint(), single.Fingerprint())
	// A tree without curve leaves persists neither curves nor quantiles, even when
	// given them: the form trees had before curve leaves, which load as they did.
	plain, err := json.Marshal(single)
	require.NoError(t, err)
	require.NotContains(t, string(plain), "curve")
	require.NotContains(t, string(plain), "quantiles")
	old := `{"columns":[{"name":"a","type":"int64","fingerprint":"` + rec.Schema().Field(0).Type.Fingerprint() + `"}],` +
		`"nodes":[{"column":0,"value":"gAAAAAAAAAo=","right":2,"rows":2},{"sort":0,"rows":1},{"sort":0,"desc":true,"rows":1}]}`
	otr, err := layout.UnmarshalTree([]byte(old), rec.Schema())
	require.NoError(t, err)
	require.Equal(t, 2, otr.Leaves())
	require.Nil(t, otr.Quantiles())
	require.Empty(t, otr.Root().Left.CurveColumn)
}

func TestTreeCurveErrors(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, curveA, curveB)
	qa, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a"}, 8)
	require.NoError(t, err)
	_, err = curveTree(t, nil, false)
	require.ErrorIs(t, err, layout.ErrInvalidTree)
	require.ErrorContains(t, err, "curve leaves need the quantiles of their columns")
	_, err = curveTree(t, qa, false)
	require.ErrorIs(t, err, layout.ErrInvalidTree)
	require.ErrorContains(t, err, `"b"`)
	_, err = layout.NewCurveTree(rec.Schema(), &layout.TreeNode{SortColumn: "a", CurveColumn: "A"}, qa)
	require.ErrorContains(t, err, `a curve through "a" twice`)
	_, err = layout.NewCurveTree(rec.Schema(), &layout.TreeNode{
		Cut: &layout.TreeCut{Column: "a", Value: int64Key(t, 1)}, CurveColumn: "b",
		Left: &layout.TreeNode{SortColumn: "a"}, Right: &layout.TreeNode{SortColumn: "a"},
	}, qa)
	require.ErrorContains(t, err, "a node with a cut names a curve column")
	for _, tc := range []struct{ name, data, err string }{
		{"curve on a cut", `{"columns":[A],"nodes":[{"column":0,"value":"gAAAAAAAAAE=","right":2,"curve":0},{"sort":0},{"sort":0}]}`, "node 0 is a cut with a curve column"},
		{"curve without quantiles", `{"columns":[A,B],"nodes":[{"sort":0,"curve":1}]}`, "curve leaves need the quantiles"},
		{"curve out of range", `{"columns":[A],"nodes":[{"sort":0,"curve":4}]}`, "column index 4 out of range"},
		{"bad quantiles", `{"columns":[A],"nodes":[{"sort":0}],"quantiles":{"columns":7}}`, "curve quantiles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := func(i int) string {
				f := rec.Schema().Field(i)
				return `{"name":"` + f.Name + `","type":"int64","fingerprint":"` + f.Type.Fingerprint() + `"}`
			}
			data := strings.ReplaceAll(tc.data, "[A,B]", "["+col(0)+","+col(1)+"]")
			data = strings.ReplaceAll(data, "[A]", "["+col(0)+"]")
			_, err := layout.UnmarshalTree([]byte(data), rec.Schema())
			require.ErrorIs(t, err, layout.ErrInvalidTree)
			require.ErrorContains(t, err, tc.err)
		})
	}
}
