package sparktest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/rewriter/spark/sparktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRawClient drives the fake with the client's own session: a query
// comes back as a SQL relation the client then executes, a command's rows
// come back inline, and an error carries Spark's message.
func TestRawClient(t *testing.T) {
	srv := sparktest.Start(t)
	srv.Handle("CALL", sparktest.Rows([]string{"n", "s"}, []any{int64(3), "x"}, []any{nil, nil}))
	srv.Handle("bad", sparktest.Result{Err: &sparktest.Error{ErrorClass: "PARSE_SYNTAX_ERROR", Message: "Syntax error"}})
	s, err := srv.Session(t.Context())
	require.NoError(t, err)

	df, err := s.Sql(t.Context(), "SELECT 1")
	require.NoError(t, err)
	rows, err := df.Collect(t.Context())
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, int32(1), rows[0].At(0))

	df, err = s.Sql(t.Context(), "CALL c.system.p()")
	require.NoError(t, err)
	rows, err = df.Collect(t.Context())
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, int64(3), rows[0].Value("n"))
	require.Nil(t, rows[1].Value("s"))

	_, err = s.Sql(t.Context(), "bad sql")
	require.ErrorContains(t, err, "Syntax error")

	require.Equal(t, []string{"SELECT 1", "CALL c.system.p()", "bad sql"}, srv.Statements())
	ops := srv.Operations()
	require.Len(t, ops, 5, "two for each query, one for the failed command")
	require.Empty(t, ops[1].SQL, "the second is the client's fetch of the relation")
	srv.Stop()
}
