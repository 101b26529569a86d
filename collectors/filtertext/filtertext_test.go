package filtertext_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors/filtertext"
	"github.com/floe-project/floe/expr"
)

const tb = "c.db.t"

func pred(col, transform string, op expr.Op, vals ...expr.Value) *expr.Node {
	return &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: tb, Column: col, Transform: transform, Op: op, Values: vals}}
}

func num(s string) expr.Value { return expr.Value{Kind: expr.KindNumber, Text: s} }
func str(s string) expr.Value { return expr.Value{Kind: expr.KindString, Text: s} }

func and(ch ...*expr.Node) *expr.Node { return &expr.Node{Kind: expr.NodeAnd, Children: ch} }
func or(ch ...*expr.Node) *expr.Node  { return &expr.Node{Kind: expr.NodeOr, Children: ch} }

var opaqueFalse = &expr.Node{Kind: expr.NodeOpaque, Text: "false"}

// TestParse covers the grammar every dialect shares and each of the
// Dialect's knobs.
func TestParse(t *testing.T) {
	plain := filtertext.Dialect{}
	list := filtertext.Dialect{List: true}
	marked := filtertext.Dialect{Markers: []string{"optional"}}
	cast := filtertext.Dialect{Cast: func(v expr.Value, typ string) expr.Value {
		if typ == "DATE" {
			v.Kind = expr.KindDate
		}
		return v
	}}
	fns := filtertext.Dialect{
		Quotes: "`", Transforms: true,
		NullTests: map[string]expr.Op{"isnotnull": expr.OpIsNotNull},
		Opaque:    map[string]bool{"is_nan": true},
		Column:    func(s string) string { return s + "!" },
	}
	tests := []struct {
		name string
		d    filtertext.Dialect
		in   string
		want *expr.Node
		err  bool
	}{
		{"empty", plain, "  ", nil, false},
		{"comparisons", plain, "a = 1 AND b <> 'x' AND c >= -2.5e-3", and(pred("a", "", expr.OpEq, num("1")), pred("b", "", expr.OpNotEq, str("x")), pred("c", "", expr.OpGtEq, num("-2.5e-3"))), false},
		{"precedence", plain, "a = 1 OR b = 2 AND c = 3", or(pred("a", "", expr.OpEq, num("1")), and(pred("b", "", expr.OpEq, num("2")), pred("c", "", expr.OpEq, num("3")))), false},
		{"in and like", plain, "a NOT IN (1, 'x') AND b NOT LIKE 'p%'", and(pred("a", "", expr.OpNotIn, num("1"), str("x")), pred("b", "", expr.OpNotLike, str("p%"))), false},
		{"literals", plain, "a = null OR a = TRUE OR a = X'0f' OR a = other", or(pred("a", "", expr.OpEq, expr.Value{Kind: expr.KindNull, Text: "null"}), pred("a", "", expr.OpEq, expr.Value{Kind: expr.KindBool, Text: "true"}), pred("a", "", expr.OpEq, expr.Value{Kind: expr.KindUnknown, Text: "X'0f'"}), pred("a", "", expr.OpEq, expr.Value{Kind: expr.KindUnknown, Text: "other"})), false},
		{"quoted identifier is no keyword", plain, `"and" IS NULL`, pred("and", "", expr.OpIsNull), false},
		{"not true", plain, "NOT true", opaqueFalse, false},
		{"false stays", plain, "false AND a = 1", and(opaqueFalse, pred("a", "", expr.OpEq, num("1"))), false},
		{"true vanishes from and", plain, "true AND a = 1", pred("a", "", expr.OpEq, num("1")), false},
		{"true swallows or", plain, "a = 1 OR true", nil, false},
		{"list", list, "a = 1, , (b = 2 AND c = 3), true", and(pred("a", "", expr.OpEq, num("1")), pred("b", "", expr.OpEq, num("2")), pred("c", "", expr.OpEq, num("3"))), false},
		{"no list", plain, "a = 1, b = 2", nil, true},
		{"marker", marked, "optional: a IN (1) AND optional: b = 2", and(pred("a", "", expr.OpIn, num("1")), pred("b", "", expr.OpEq, num("2"))), false},
		{"marker only with colon", marked, "optional IS NULL", pred("optional", "", expr.OpIsNull), false},
		{"cast", cast, "d < '2024-01-01'::DATE AND n = 1::DECIMAL(18,2)", and(pred("d", "", expr.OpLt, expr.Value{Kind: expr.KindDate, Text: "2024-01-01"}), pred("n", "", expr.OpEq, num("1"))), false},
		{"no cast", plain, "d < '2024-01-01'::DATE", nil, true},
		{"cast without type", cast, "d < 1::", nil, true},
		{"transform", fns, "bucket[16](id) = 3 AND day(`ts`) > 1", and(pred("id!", "bucket[16]", expr.OpEq, num("3")), pred("ts!", "day", expr.OpGt, num("1"))), false},
		{"null test", fns, "isnotnull(x)", pred("x!", "", expr.OpIsNotNull), false},
		{"opaque", fns, "is_nan(f)", &expr.Node{Kind: expr.NodeOpaque, Text: "is_nan(f!)"}, false},
		{"no transforms", plain, "day(ts) = 1", nil, true},
		{"bad operator", plain, "x ~ 1", nil, true},
		{"lone bang", plain, "x ! 1", nil, true},
		{"unterminated string", plain, "x = 'abc", nil, true},
		{"unterminated identifier", plain, `"x = 1`, nil, true},
		{"dangling", plain, "x =", nil, true},
		{"unbalanced", plain, "(x = 1", nil, true},
		{"trailing", plain, "x = 1)", nil, true},
		{"is without null", plain, "x IS 1", nil, true},
		{"not without in", plain, "x NOT 1", nil, true},
		{"open in list", plain, "x IN (1, 2", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.d.Parse(tb, tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a = 1, b IN ('x', 'y,z')", "NOT ((a = 1 OR b != 2) AND c IS NULL)", "day(ts) >= 19814, bucket[16](id) = 3",
		"optional: a IN (1, 3)", "((d >= '2024-02-01'::DATE) AND (d <= '2024-02-10'::DATE))", "isnotnull(x#12) AND (x#12 >= 5)",
	} {
		f.Add(s)
	}
	d := filtertext.Dialect{Quotes: "\"`", List: true, Markers: []string{"optional"}, Transforms: true,
		Cast:      func(v expr.Value, _ string) expr.Value { return v },
		NullTests: map[string]expr.Op{"isnull": expr.OpIsNull}, Opaque: map[string]bool{"is_nan": true}}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := d.Parse("t", s)
		if err == nil && n != nil {
			require.NotEmpty(t, n.Kind)
		}
	})
}
