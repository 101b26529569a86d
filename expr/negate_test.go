package expr_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/expr"
)

// One negation for the analyzer and the replay; the replay's copy lacked
// ilike and rlike.
func TestNegate(t *testing.T) {
	for _, tc := range []struct{ op, want expr.Op }{
		{expr.OpEq, expr.OpNotEq}, {expr.OpLt, expr.OpGtEq}, {expr.OpLtEq, expr.OpGt},
		{expr.OpBetween, expr.OpNotBetween}, {expr.OpIn, expr.OpNotIn}, {expr.OpLike, expr.OpNotLike},
		{expr.OpILike, expr.OpNotILike}, {expr.OpNotILike, expr.OpILike},
		{expr.OpRLike, expr.OpNotRLike}, {expr.OpNotRLike, expr.OpRLike},
		{expr.OpIsNull, expr.OpIsNotNull},
	} {
		got, ok := expr.Negate(tc.op)
		require.True(t, ok, tc.op)
		require.Equal(t, tc.want, got, tc.op)
		back, ok := expr.Negate(got)
		require.True(t, ok)
		require.Equal(t, tc.op, back, "negating twice is the identity")
	}
	_, ok := expr.Negate(expr.Op("~~"))
	require.False(t, ok)
}
